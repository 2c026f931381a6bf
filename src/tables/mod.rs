//! Export: the report's tables, in every format asked for, and the JSON files.
//!
//! Each table is built once as a polars `DataFrame` ([`frames`]) and written by one writer per
//! format: CSV ([`csv`], with the spreadsheet rules), Parquet (polars), and one workbook for all
//! tables ([`crate::workbook`]). JSON files (`run.json`, `metrics.json`, `model.json`) are streamed with
//! serde. Apart from the timings and the run date, two runs with the same inputs and seed write
//! identical bytes.

pub mod aggregates;
pub mod csv;
pub mod frames;

use polars::prelude::*;
use std::path::{Path, PathBuf};

/// Export failures, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot write {path}")]
    Table {
        path: PathBuf,
        #[source]
        source: PolarsError,
    },
    #[error("cannot write {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}")]
    Xlsx {
        path: PathBuf,
        #[source]
        source: rust_xlsxwriter::XlsxError,
    },
    #[error("cannot write {path}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

fn werr(path: &Path) -> impl Fn(PolarsError) -> ExportError + '_ {
    move |source| ExportError::Table {
        path: path.to_path_buf(),
        source,
    }
}

/// The formats tables can be written in (`[output] formats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputFormat {
    /// One UTF-8 CSV per table, for spreadsheets and scripts.
    Csv,
    /// `report.xlsx`: every table in one workbook, typed cells, native charts.
    Xlsx,
    /// One Parquet file per table (documents, topics, terms, topic_trends), typed.
    Parquet,
}

impl OutputFormat {
    /// What `[output] formats` holds when the pipeline says nothing.
    pub const DEFAULT: [OutputFormat; 2] = [OutputFormat::Csv, OutputFormat::Xlsx];
    pub const NAMES: &'static str = "csv, xlsx or parquet";

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "csv" => Some(Self::Csv),
            "xlsx" => Some(Self::Xlsx),
            "parquet" => Some(Self::Parquet),
            _ => None,
        }
    }
}

impl std::fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Csv => "csv",
            Self::Xlsx => "xlsx",
            Self::Parquet => "parquet",
        })
    }
}

/// Writes `df` as `dir/<name>.csv`.
pub fn csv_file(dir: &Path, name: &str, df: &DataFrame) -> Result<(), ExportError> {
    let path = dir.join(format!("{name}.csv"));
    csv::write_csv(&path, df).map_err(werr(&path))
}

/// Writes `df` as `dir/<name>.parquet` (zstd-compressed, the text exactly as it is).
pub fn parquet_file(dir: &Path, name: &str, df: &DataFrame) -> Result<(), ExportError> {
    let path = dir.join(format!("{name}.parquet"));
    let write = || -> Result<(), PolarsError> {
        let mut df = df.clone();
        let mut file = std::fs::File::create(&path)?;
        ParquetWriter::new(&mut file).finish(&mut df)?;
        file.sync_all()?;
        Ok(())
    };
    write().map_err(werr(&path))
}

/// Writes `df` as an Arrow IPC stream to `out` (stdout, for an engine). The oldest Arrow
/// layout (plain UTF-8 strings, no view types) is what every Arrow reader takes.
pub fn arrow_stream(out: impl std::io::Write, df: &DataFrame) -> Result<(), PolarsError> {
    let mut df = df.clone();
    IpcStreamWriter::new(out)
        .with_compat_level(CompatLevel::oldest())
        .finish(&mut df)
}

/// Writes any serializable value as pretty JSON, streamed.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), ExportError> {
    write_json_as(path, value, true)
}

/// Writes a value as compact JSON, streamed: for the model, whose millions of numbers would
/// each take a line of their own in pretty JSON (a larger file, slower to write and to read
/// back on the next run).
pub fn write_json_compact<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), ExportError> {
    write_json_as(path, value, false)
}

fn write_json_as<T: serde::Serialize>(
    path: &Path,
    value: &T,
    pretty: bool,
) -> Result<(), ExportError> {
    use std::io::Write;
    let io = |source| ExportError::Io {
        path: path.to_path_buf(),
        source,
    };
    let json = |source| ExportError::Json {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::create(path).map_err(io)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
    if pretty {
        serde_json::to_writer_pretty(&mut out, value).map_err(json)?;
    } else {
        serde_json::to_writer(&mut out, value).map_err(json)?;
    }
    out.write_all(b"\n").map_err(io)?;
    out.into_inner()
        .map_err(|e| io(e.into_error()))?
        .sync_all()
        .map_err(io)
}
