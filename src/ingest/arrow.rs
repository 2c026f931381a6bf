//! Arrow IPC streams: an engine's partition piped into `topicmap assign --in arrow`, read as a
//! table (one input file, or one per value of a source column) with the input's columns.
//!
//! An engine may split a file over several partitions and hand rows over in any order, so it
//! can name each row's file (a source column) and its 1-based row in that file (a row column)
//! explicitly: documents, skipped rows and error messages then carry those rows, and the
//! output is the same row for row whatever the partitioning (see `distributed/spark`).

use super::{
    sha256_hex, table, Corpus, Ids, IngestError, InputFormat, InputSpec, OnBadDocument, SourceFile,
};
use polars::prelude::{DataFrame, DataType, IdxCa, IdxSize, NamedFrom};
use std::path::{Path, PathBuf};

/// Reads one Arrow IPC stream (an engine's partition piped into `topicmap assign --in arrow`)
/// as a table called `name`, with `input`'s columns. With `source_column`, each row's input
/// file is that column's value instead (a partition may hold rows of several files), and rows
/// are numbered within their file in stream order, or, with `row_column`, by that column (each
/// row's 1-based row in its file, as the engine read it). Bad rows are handled as in a file.
///
/// The rows are grouped by their file (one group without `source_column`), and each group is
/// read as a file of its own, its ids made unique against the earlier groups'.
pub fn ingest_arrow(
    raw: &[u8],
    name: &str,
    input: &InputSpec,
    (source_column, row_column): (Option<&str>, Option<&str>),
    on_bad: OnBadDocument,
) -> Result<Corpus, IngestError> {
    let path = PathBuf::from(name);
    let df = table::load_frame(&path, InputFormat::Arrow, raw)?;
    let mut corpus = Corpus::default();
    let mut ids = Ids::default();
    let rows_of = |part: &DataFrame| match row_column {
        Some(col) => given_rows(part, &path, col).map(Some),
        None => Ok(None),
    };
    match source_column {
        // The whole stream is one file, with its size and sha256.
        None => {
            let rows = rows_of(&df)?;
            let part = (df, rows);
            read_arrow_part(&mut corpus, &mut ids, part, name, Some(raw), input, on_bad)?
        }
        Some(col) => {
            for (source_name, rows) in rows_by_source(&df, &path, col, name)? {
                let part =
                    df.take(&IdxCa::new("rows".into(), rows))
                        .map_err(|e| IngestError::Table {
                            path: path.clone(),
                            source: table::PolarsMessage(e),
                        })?;
                let rows = rows_of(&part)?;
                read_arrow_part(
                    &mut corpus,
                    &mut ids,
                    (part, rows),
                    &source_name,
                    None,
                    input,
                    on_bad,
                )?;
            }
        }
    }
    corpus.has_time = input.time.is_some();
    corpus.has_label = input.label.is_some();
    Ok(corpus)
}

/// The rows of each input file of an Arrow stream, by the file named in column `col` (`name`
/// for an empty cell), files in order of first sight.
fn rows_by_source(
    df: &DataFrame,
    path: &Path,
    col: &str,
    name: &str,
) -> Result<Vec<(String, Vec<IdxSize>)>, IngestError> {
    let values = df
        .column(col)
        .and_then(|c| c.cast(&DataType::String))
        .map_err(|_| IngestError::MissingColumn {
            path: path.to_path_buf(),
            column: col.to_string(),
            available: df
                .get_column_names()
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    let values = values.str().expect("cast to string");
    let mut groups: Vec<(String, Vec<IdxSize>)> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = Default::default();
    for i in 0..values.len() {
        let v = values.get(i).unwrap_or(name).to_string();
        let g = *at.entry(v.clone()).or_insert_with(|| {
            groups.push((v, Vec::new()));
            groups.len() - 1
        });
        groups[g].1.push(i as _);
    }
    Ok(groups)
}

/// Each row's 1-based row in its file, from column `col` of `part` (an integer column
/// without gaps or zeros).
fn given_rows(part: &DataFrame, path: &Path, col: &str) -> Result<Vec<usize>, IngestError> {
    let available = || {
        part.get_column_names()
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let values = part
        .column(col)
        .and_then(|c| c.cast(&DataType::UInt64))
        .map_err(|_| IngestError::MissingColumn {
            path: path.to_path_buf(),
            column: col.to_string(),
            available: available(),
        })?;
    let values = values.u64().expect("cast to u64");
    (0..values.len())
        .map(|i| match values.get(i) {
            Some(row) if row > 0 => Ok(row as usize),
            _ => Err(IngestError::Table {
                path: path.to_path_buf(),
                source: table::PolarsMessage(polars::error::PolarsError::ComputeError(
                    format!(
                        "row column {col:?}: stream row {} has no row number (1 or more)",
                        i + 1
                    )
                    .into(),
                )),
            }),
        })
        .collect()
}

/// Reads the rows `part` of an Arrow stream (with each row's row in its file, when given) as
/// the input file `source_name` into `corpus`, its ids made unique against `ids`. `whole`:
/// the stream's bytes, when the part is all of it (the file's size and sha256 are then the
/// stream's; unknown otherwise).
fn read_arrow_part(
    corpus: &mut Corpus,
    ids: &mut Ids,
    (part, rows): (DataFrame, Option<Vec<usize>>),
    source_name: &str,
    whole: Option<&[u8]>,
    input: &InputSpec,
    on_bad: OnBadDocument,
) -> Result<(), IngestError> {
    let shown = PathBuf::from(source_name);
    let before = corpus.documents.len();
    let source = corpus.sources.len();
    let numbers = match &rows {
        Some(rows) => table::Rows::Given(rows),
        None => table::Rows::After(0),
    };
    let docs = table::read(
        &shown,
        &shown,
        part,
        input,
        source,
        numbers,
        on_bad,
        &mut corpus.skipped,
        None,
    )?;
    corpus.documents.extend(docs);
    let docs = &mut corpus.documents[before..];
    ids.dedupe(docs, &mut corpus.renamed, source, (&shown, &shown), on_bad)?;
    corpus.sources.push(SourceFile {
        path: shown.clone(),
        location: shown,
        format: InputFormat::Arrow,
        bytes: whole.map_or(0, |raw| raw.len() as u64),
        sha256: whole.map(sha256_hex).unwrap_or_default(),
        list_title: None,
        documents: corpus.documents.len() - before,
    });
    Ok(())
}
