//! Tables (CSV, TSV, Parquet, JSON, NDJSON) read through polars.
//!
//! Text tables are read with every column as a string (no schema inference), so an odd year or a
//! numeric-looking id never changes type under us; typed formats (Parquet, JSON) are cast to
//! strings column by column. The pipeline's `text` columns are joined with a space, in order.
//! Rows are numbered from 1, header excluded, in every message.

use super::{file_stem, DocProblem, Document, IngestError, Skipped, TimeValue};
use super::{InputFormat, InputSpec, OnBadDocument};
use polars::prelude::*;
use std::io::Cursor;
use std::path::Path;

/// Turns one table (parsed by [`load_frame`]) into documents. `path` is where it was read (for
/// errors), `shown` the path outputs show (for the skipped-row records); `rows` numbers the
/// table's rows in their file (a chunk of a streamed file starts further down; an engine's
/// partition gives each row's number).
/// `select`, when given, is asked for each usable row (by its row number) whether to build its
/// document: a sample builds few (every usable row still counts towards `limit`).
///
/// The input's columns are found first; then each row that passes the filter is checked (a
/// bad one is skipped or fails the read, by `on_bad`), until `limit` usable rows; the selected
/// ones become documents, and their texts are joined last.
#[allow(clippy::too_many_arguments)]
pub fn read(
    path: &Path,
    shown: &Path,
    df: DataFrame,
    input: &InputSpec,
    source: usize,
    rows: Rows<'_>,
    on_bad: OnBadDocument,
    skipped: &mut Vec<Skipped>,
    mut select: Option<&mut dyn FnMut(usize) -> bool>,
) -> Result<Vec<Document>, IngestError> {
    let columns = Columns::find(path, &df, input)?;
    let stem = file_stem(path);
    let batch = input.batch.clone().unwrap_or_else(|| stem.clone());
    let mut bad = BadRows {
        path,
        shown,
        on_bad,
        skipped,
    };
    let mut docs = Vec::with_capacity(df.height());
    // Table row of each kept document.
    let mut kept = Vec::with_capacity(df.height());
    // Usable rows so far (built or not), for `limit`.
    let mut taken = 0usize;
    for i in 0..df.height() {
        let row = rows.at(i);
        if !columns.passes_filter(i) {
            continue;
        }
        if input.limit.is_some_and(|l| taken >= l) {
            break;
        }
        let time = match columns.check(path, i, row)? {
            Ok(time) => time,
            Err(problem) => {
                bad.report(row, problem)?;
                continue;
            }
        };
        taken += 1;
        if let Some(select) = select.as_deref_mut() {
            if !select(row) {
                continue;
            }
        }
        docs.push(columns.document(i, row, source, &stem, &batch, time));
        kept.push(i);
    }
    columns.fill_texts(&mut docs, &kept);
    Ok(docs)
}

/// How a table's rows are numbered in their file (1-based, header excluded).
#[derive(Debug, Clone, Copy)]
pub enum Rows<'a> {
    /// Table row `i` is file row `n + i + 1`.
    After(usize),
    /// Table row `i` is file row `rows[i]`.
    Given(&'a [usize]),
}

impl Rows<'_> {
    /// The file row of table row `i`.
    #[inline]
    fn at(&self, i: usize) -> usize {
        match self {
            Rows::After(n) => n + i + 1,
            Rows::Given(rows) => rows[i],
        }
    }
}

/// A non-empty cell, trimmed.
#[inline]
fn cell(c: &Cells, i: usize) -> Option<&str> {
    c.get(i).map(str::trim).filter(|s| !s.is_empty())
}

/// A row's parsed time (`None` without a time column), or why the row is not a document.
type RowCheck = Result<Option<(String, TimeValue)>, DocProblem>;

/// The input's columns in one table, as cells by row.
struct Columns<'a> {
    /// The columns joined into the text, by name and as cells.
    text_names: Vec<String>,
    texts: Vec<Cells>,
    ids: Option<Cells>,
    titles: Option<Cells>,
    /// The time column, with its name.
    times: Option<(Cells, &'a str)>,
    labels: Option<Cells>,
    /// The class column (`[describe] per-class`).
    classes: Option<Cells>,
    /// The filter's column and the values it keeps.
    filter: Option<(Cells, &'a [String])>,
}

impl<'a> Columns<'a> {
    /// Finds the columns `input` names in `df` (the title column by default when there is
    /// one), each read as text.
    fn find(path: &Path, df: &DataFrame, input: &'a InputSpec) -> Result<Self, IngestError> {
        let names: Vec<String> = df
            .get_column_names()
            .iter()
            .map(|s| s.to_string())
            .collect();
        let text_names = text_columns(path, input, &names)?;
        let column = |name: &str| text_cells(path, df, &names, name);
        let texts = text_names
            .iter()
            .map(|c| column(c))
            .collect::<Result<Vec<_>, _>>()?;
        let ids = input.id.as_deref().map(column).transpose()?;
        let titles = match &input.title {
            Some(t) => Some(column(t)?),
            None if names.iter().any(|n| n == "title") => Some(column("title")?),
            None => None,
        };
        let times = match input.time.as_deref() {
            Some(name) => Some((column(name)?, name)),
            None => None,
        };
        let labels = input.label.as_deref().map(column).transpose()?;
        let classes = input.class.as_deref().map(column).transpose()?;
        let filter = match &input.filter {
            Some(f) => Some((column(&f.column)?, f.values.as_slice())),
            None => None,
        };
        Ok(Columns {
            text_names,
            texts,
            ids,
            titles,
            times,
            labels,
            classes,
            filter,
        })
    }

    /// Whether row `i` passes the input's filter (every row does without one).
    #[inline]
    fn passes_filter(&self, i: usize) -> bool {
        match &self.filter {
            Some((col, values)) => cell(col, i).is_some_and(|v| values.iter().any(|x| x == v)),
            None => true,
        }
    }

    /// Checks table row `i` (file row `row`): some text, and a time when there is a time
    /// column. A time that cannot be parsed fails the read.
    fn check(&self, path: &Path, i: usize, row: usize) -> Result<RowCheck, IngestError> {
        if self.texts.iter().all(|c| cell(c, i).is_none()) {
            return Ok(Err(DocProblem::EmptyText {
                columns: self.text_names.clone(),
            }));
        }
        let Some((col, name)) = &self.times else {
            return Ok(Ok(None));
        };
        let Some(raw) = cell(col, i) else {
            return Ok(Err(DocProblem::EmptyTime {
                column: name.to_string(),
            }));
        };
        match TimeValue::parse(raw) {
            Ok(t) => Ok(Ok(Some((raw.to_string(), t)))),
            Err(problem) => Err(IngestError::BadCell {
                path: path.to_path_buf(),
                row,
                column: name.to_string(),
                problem,
            }),
        }
    }

    /// The document of table row `i` (file row `row`), without its text: the id column's
    /// value or `<stem>:<row>`.
    fn document(
        &self,
        i: usize,
        row: usize,
        source: usize,
        stem: &str,
        batch: &str,
        time: Option<(String, TimeValue)>,
    ) -> Document {
        let text_of = |c: &Option<Cells>| c.as_ref().and_then(|c| cell(c, i)).map(str::to_string);
        Document {
            id: text_of(&self.ids).unwrap_or_else(|| format!("{stem}:{row}")),
            source,
            row,
            title: text_of(&self.titles),
            text: String::new(),
            time,
            label: text_of(&self.labels),
            class: text_of(&self.classes),
            batch: batch.to_string(),
        }
    }

    /// Joins each document's text columns (table rows `kept`) with a space. The texts, most of
    /// the memory, are built after all the small fields and each at its final size, so they
    /// lie together: once they are cut to snippets, their pages are freed whole.
    fn fill_texts(&self, docs: &mut [Document], kept: &[usize]) {
        for (d, &i) in docs.iter_mut().zip(kept) {
            let parts = || self.texts.iter().filter_map(|c| cell(c, i));
            let mut text = String::with_capacity(parts().map(|p| p.len() + 1).sum::<usize>());
            for part in parts() {
                if !text.is_empty() {
                    text.push(' ');
                }
                text.push_str(part);
            }
            d.text = text;
        }
    }
}

/// Column `name` of `df` (whose columns are `names`) as text cells.
fn text_cells(
    path: &Path,
    df: &DataFrame,
    names: &[String],
    name: &str,
) -> Result<Cells, IngestError> {
    let col = df.column(name).map_err(|_| IngestError::MissingColumn {
        path: path.to_path_buf(),
        column: name.to_string(),
        available: names.join(", "),
    })?;
    let not_text = |e| IngestError::ColumnType {
        path: path.to_path_buf(),
        column: name.to_string(),
        source: PolarsMessage(e),
    };
    let col = col.cast(&DataType::String).map_err(not_text)?;
    Ok(Cells::new(col.str().map_err(not_text)?))
}

/// Where bad rows go: skipped (recorded with the file's shown path) or the read fails.
struct BadRows<'a> {
    path: &'a Path,
    shown: &'a Path,
    on_bad: OnBadDocument,
    skipped: &'a mut Vec<Skipped>,
}

impl BadRows<'_> {
    /// Row `row` cannot be a document because of `reason`.
    fn report(&mut self, row: usize, reason: DocProblem) -> Result<(), IngestError> {
        match self.on_bad {
            OnBadDocument::Fail => Err(IngestError::BadDocument {
                path: self.path.to_path_buf(),
                row,
                reason,
            }),
            OnBadDocument::Skip => {
                self.skipped.push(Skipped {
                    file: self.shown.to_path_buf(),
                    row,
                    reason: reason.to_string(),
                });
                Ok(())
            }
        }
    }
}

/// The columns joined into the text: the input's `text`, or the first of title + abstract,
/// abstract and text that the table has.
fn text_columns(
    path: &Path,
    input: &InputSpec,
    names: &[String],
) -> Result<Vec<String>, IngestError> {
    let has = |c: &str| names.iter().any(|n| n == c);
    Ok(match &input.text {
        Some(cols) => cols.clone(),
        None if has("title") && has("abstract") => vec!["title".into(), "abstract".into()],
        None if has("abstract") => vec!["abstract".into()],
        None if has("text") => vec!["text".into()],
        None => {
            return Err(IngestError::NoTextColumns {
                path: path.to_path_buf(),
                available: names.join(", "),
            })
        }
    })
}

/// Checks, before anything else reads the file, that a CSV's or TSV's header row (or a Parquet
/// file's schema) has every column the input names, so a misspelt column fails at once rather
/// than after the whole file was checked, hashed and parsed (on a 1 GB table, seconds). Other
/// formats have no header to read first; their columns are checked after parsing.
pub fn check_header(
    path: &Path,
    format: InputFormat,
    raw: &[u8],
    input: &InputSpec,
) -> Result<(), IngestError> {
    let names: Vec<String> = match format {
        InputFormat::Csv | InputFormat::Tsv => {
            let sep = if format == InputFormat::Tsv {
                b'\t'
            } else {
                b','
            };
            let end = header_end(raw);
            // The header's own bytes get the file checks (UTF-16, UTF-8, NUL), so a bad
            // encoding is reported as such, not as missing columns.
            let head = super::check_text(path, &raw[..end])?;
            split_header(head, sep as char)
        }
        InputFormat::Arrow => match IpcStreamReader::new(Cursor::new(raw)).schema() {
            Ok(schema) => schema.iter_names().map(|n| n.to_string()).collect(),
            Err(_) => return Ok(()),
        },
        InputFormat::Parquet => match ParquetReader::new(Cursor::new(raw)).schema() {
            Ok(schema) => schema.iter_names().map(|n| n.to_string()).collect(),
            // Not a readable Parquet file: the full read says why.
            Err(_) => return Ok(()),
        },
        _ => return Ok(()),
    };
    text_columns(path, input, &names)?;
    let missing = input
        .named_columns()
        .into_iter()
        .find(|c| !names.iter().any(|n| n == c));
    match missing {
        Some(column) => Err(IngestError::MissingColumn {
            path: path.to_path_buf(),
            column: column.to_string(),
            available: names.join(", "),
        }),
        None => Ok(()),
    }
}

/// Where a CSV's first record ends: the first line break outside quotes.
fn header_end(raw: &[u8]) -> usize {
    let mut quoted = false;
    for (i, &b) in raw.iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b'\n' | b'\r' if !quoted => return i,
            _ => {}
        }
    }
    raw.len()
}

/// The field names of a header record (RFC 4180 quoting).
fn split_header(head: &str, sep: char) -> Vec<String> {
    let mut names = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = head.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (_, '"') => quoted = !quoted,
            (false, c) if c == sep => names.push(std::mem::take(&mut field)),
            (_, c) => field.push(c),
        }
    }
    names.push(field);
    names
}

/// A text column's cells by row number. polars' own `get(i)` finds the row's chunk by walking
/// the chunks from the front, and a large CSV is parsed into thousands of chunks, so reading
/// every row that way grows with rows x chunks. Here the chunk is found by binary search over
/// the chunks' first rows.
struct Cells {
    chunks: Vec<<StringType as PolarsDataType>::Array>,
    /// First row of each chunk, ascending.
    starts: Vec<usize>,
}

impl Cells {
    fn new(column: &StringChunked) -> Cells {
        let chunks: Vec<_> = column.downcast_iter().cloned().collect();
        let starts = chunks
            .iter()
            .scan(0, |at, c| {
                let start = *at;
                *at += c.len();
                Some(start)
            })
            .collect();
        Cells { chunks, starts }
    }

    fn get(&self, row: usize) -> Option<&str> {
        let chunk = self.starts.partition_point(|&s| s <= row).checked_sub(1)?;
        self.chunks[chunk].get(row - self.starts[chunk])
    }
}

/// Parses the bytes into a DataFrame with polars.
pub fn load_frame(path: &Path, format: InputFormat, raw: &[u8]) -> Result<DataFrame, IngestError> {
    let err = |e: PolarsError| IngestError::Table {
        path: path.to_path_buf(),
        source: PolarsMessage(e),
    };
    let cursor = Cursor::new(raw);
    match format {
        InputFormat::Csv | InputFormat::Tsv => {
            let sep = if format == InputFormat::Tsv {
                b'\t'
            } else {
                b','
            };
            CsvReadOptions::default()
                .with_has_header(true)
                .with_infer_schema_length(Some(0))
                .map_parse_options(|p| p.with_separator(sep))
                .into_reader_with_file_handle(cursor)
                .finish()
                .map_err(err)
        }
        InputFormat::Parquet => ParquetReader::new(cursor).finish().map_err(err),
        InputFormat::Json => JsonReader::new(cursor)
            .with_json_format(JsonFormat::Json)
            .finish()
            .map_err(err),
        InputFormat::Ndjson => JsonReader::new(cursor)
            .with_json_format(JsonFormat::JsonLines)
            .finish()
            .map_err(err),
        InputFormat::Arrow => IpcStreamReader::new(cursor).finish().map_err(err),
        InputFormat::PaperList => unreachable!("paper lists are parsed by paper_list"),
    }
}

/// A polars error, shown by its first meaningful line (polars' messages can span several, which
/// would break the one-cause-per-line error output).
#[derive(Debug)]
pub struct PolarsMessage(pub PolarsError);

impl std::fmt::Display for PolarsMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.0.to_string();
        let first = s
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        f.write_str(first)
    }
}

impl std::error::Error for PolarsMessage {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_are_split_with_quotes() {
        assert_eq!(
            split_header("id,\"title, long\",\"a \"\"b\"\"\",year", ','),
            ["id", "title, long", "a \"b\"", "year"]
        );
        assert_eq!(header_end(b"a,\"b\nc\",d\r\n1,2,3"), 9);
        assert_eq!(header_end(b"only"), 4);
    }

    #[test]
    fn a_missing_column_is_found_in_the_header() {
        let mut input = InputSpec::file("t.csv");
        input.text = Some(vec!["abstract".into()]);
        input.time = Some("year".into());
        let raw = b"id,abstract,yaer\n1,text,2020\n";
        let e = check_header(Path::new("t.csv"), InputFormat::Csv, raw, &input).unwrap_err();
        assert!(
            matches!(&e, IngestError::MissingColumn { column, .. } if column == "year"),
            "{e}"
        );
        input.time = Some("yaer".into());
        check_header(Path::new("t.csv"), InputFormat::Csv, raw, &input).unwrap();
        let e = check_header(
            Path::new("t.csv"),
            InputFormat::Csv,
            b"\xff\xfei\x00d\x00",
            &input,
        )
        .unwrap_err();
        assert!(matches!(e, IngestError::Utf16(..)), "{e}");
    }

    #[test]
    fn cells_find_every_row_across_chunks() {
        let part = |v: &[Option<&str>]| StringChunked::new("c".into(), v);
        let mut col = part(&[Some("a"), None, Some("b")]);
        col.append(&part(&[])).unwrap();
        col.append(&part(&[Some("c")])).unwrap();
        col.append(&part(&[Some("d"), Some("e")])).unwrap();
        assert!(col.chunks().len() >= 3, "the test needs several chunks");
        let cells = Cells::new(&col);
        let got: Vec<Option<&str>> = (0..col.len()).map(|i| cells.get(i)).collect();
        assert_eq!(
            got,
            [Some("a"), None, Some("b"), Some("c"), Some("d"), Some("e")]
        );
    }
}
