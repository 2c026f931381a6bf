//! The streaming run's documents table: joined from the part files pass 2 wrote (one per
//! chunk, without labels), each row labelled with its topic's label from the sums.
//!
//! The parts are read one at a time (the next on a thread of its own while the current one is
//! written) and appended to `documents.csv` (and `documents.parquet` when asked), so the table
//! is never whole in memory; the first rows are kept for the workbook's Documents sheet.

use super::super::{table_error, PipelineError};
use crate::describe::TopicSummary;
use crate::render::DocumentsHead;
use crate::tables::{self, csv::CsvAppender, frames, OutputFormat};
use polars::io::parquet::write::BatchedWriter;
use polars::prelude::*;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Writes `documents.csv` (and `documents.parquet` when asked) from the part files, with each
/// topic's label from `summary`, and returns the rows written with the first `head` of them
/// (for the workbook). Each part file is removed once it is written.
pub(super) fn write_documents(
    dir: &Path,
    parts: &[PathBuf],
    summary: &TopicSummary,
    formats: &[OutputFormat],
    head: usize,
) -> Result<DocumentsHead, PipelineError> {
    let label_of: HashMap<u32, &str> = summary
        .topics
        .iter()
        .map(|t| (t.id as u32, t.label.as_str()))
        .collect();
    let mut documents = DocumentsWriter::create(dir, formats, head)?;
    // A reader thread reads and labels the next part while this one writes the current one.
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let label_of = &label_of;
        let reader = scope.spawn(move || {
            for part in parts {
                let labelled = labelled_part(part, label_of);
                let failed = labelled.is_err();
                // A closed channel: the writer stopped on an error of its own.
                if tx.send((part, labelled)).is_err() || failed {
                    break;
                }
            }
        });
        for (part, labelled) in rx {
            documents.append(&labelled?, part)?;
            std::fs::remove_file(part).map_err(|source| tables::ExportError::Io {
                path: part.clone(),
                source,
            })?;
        }
        reader.join().expect("the part reader does not panic");
        Ok::<(), PipelineError>(())
    })?;
    documents.finish()
}

/// A part file's documents with their `topic_label` column put back, as the fifth column
/// (where a run's documents table has it).
fn labelled_part(part: &Path, label_of: &HashMap<u32, &str>) -> Result<DataFrame, PipelineError> {
    let err = err(part);
    let read = || -> PolarsResult<DataFrame> {
        let file = File::open(part)?;
        IpcStreamReader::new(file).finish()
    };
    let mut df = read().map_err(&err)?;
    let labels: Vec<&str> = df
        .column("topic_id")
        .and_then(|c| c.u32().cloned())
        .map_err(&err)?
        .into_no_null_iter()
        .map(|id| label_of.get(&id).copied().unwrap_or(""))
        .collect();
    df.insert_column(4, frames::text("topic_label", labels))
        .map_err(&err)?;
    Ok(df)
}

/// The documents table written part by part: its CSV and Parquet files (each when asked), the
/// rows so far, and the first `head` rows.
struct DocumentsWriter {
    csv_path: PathBuf,
    parquet_path: PathBuf,
    csv: Option<CsvAppender>,
    /// Whether to write `documents.parquet`; its writer is made with the first part's schema.
    to_parquet: bool,
    parquet: Option<BatchedWriter<File>>,
    head: usize,
    first: Option<DataFrame>,
    rows: usize,
}

impl DocumentsWriter {
    /// Starts `dir/documents.csv` when `formats` has CSV; Parquet starts with the first part.
    fn create(
        dir: &Path,
        formats: &[OutputFormat],
        head: usize,
    ) -> Result<DocumentsWriter, PipelineError> {
        let csv_path = dir.join("documents.csv");
        let csv = formats
            .contains(&OutputFormat::Csv)
            .then(|| CsvAppender::create(&csv_path))
            .transpose()
            .map_err(err(&csv_path))?;
        Ok(DocumentsWriter {
            csv,
            csv_path,
            parquet_path: dir.join("documents.parquet"),
            to_parquet: formats.contains(&OutputFormat::Parquet),
            parquet: None,
            head,
            first: None,
            rows: 0,
        })
    }

    /// Appends the documents of `part` (its errors name the part file).
    fn append(&mut self, df: &DataFrame, part: &Path) -> Result<(), PipelineError> {
        self.rows += df.height();
        let have = self.first.as_ref().map_or(0, DataFrame::height);
        if have < self.head {
            let more = df.slice(0, self.head - have);
            match &mut self.first {
                Some(f) => {
                    f.vstack_mut(&more).map_err(err(part))?;
                }
                None => self.first = Some(more),
            }
        }
        if let Some(c) = &mut self.csv {
            c.append(df).map_err(err(&self.csv_path))?;
        }
        if self.to_parquet {
            if self.parquet.is_none() {
                self.parquet = Some(self.start_parquet(df)?);
            }
            if let Some(w) = &mut self.parquet {
                w.write_batch(df).map_err(err(&self.parquet_path))?;
            }
        }
        Ok(())
    }

    /// `documents.parquet`'s writer, for rows like those of `df`.
    fn start_parquet(&self, df: &DataFrame) -> Result<BatchedWriter<File>, PipelineError> {
        let file = File::create(&self.parquet_path).map_err(|source| tables::ExportError::Io {
            path: self.parquet_path.clone(),
            source,
        })?;
        ParquetWriter::new(file)
            .batched(df.schema())
            .map_err(err(&self.parquet_path))
    }

    /// Closes the files; returns the rows written and the first `head` of them.
    fn finish(self) -> Result<DocumentsHead, PipelineError> {
        if let Some(c) = self.csv {
            c.finish().map_err(err(&self.csv_path))?;
        }
        if let Some(w) = self.parquet {
            w.finish().map_err(err(&self.parquet_path))?;
        }
        Ok(DocumentsHead {
            first: self.first.unwrap_or_default(),
            total: self.rows,
        })
    }
}

/// A table error naming `path`.
fn err(path: &Path) -> impl Fn(PolarsError) -> PipelineError {
    let path = path.display().to_string();
    move |e| table_error(&path, e)
}
