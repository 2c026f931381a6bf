//! What to read: one [`InputSpec`] per `[[input]]` of a pipeline file (or per file given to
//! `topicmap assign`), and what to do with a document that cannot be used.
//!
//! These are the ingest stage's parameters. The configuration layer fills them from the
//! pipeline file; ingest never sees the file's schema.

use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// Input file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputFormat {
    PaperList,
    Csv,
    Tsv,
    Parquet,
    Json,
    Ndjson,
    /// An Arrow IPC stream (`.arrows`; what `topicmap assign --in arrow` reads on stdin).
    Arrow,
}

impl InputFormat {
    /// The names a pipeline file or `--format` may use, for messages.
    pub const NAMES: &'static str = "paper-list, csv, tsv, parquet, json, ndjson or arrow";

    /// Parses a `format` value (`jsonl` is accepted for `ndjson`).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "paper-list" => Self::PaperList,
            "csv" => Self::Csv,
            "tsv" => Self::Tsv,
            "parquet" => Self::Parquet,
            "json" => Self::Json,
            "ndjson" | "jsonl" => Self::Ndjson,
            "arrow" => Self::Arrow,
            _ => return None,
        })
    }

    /// Infers the format from a file extension: `.txt`/`.md` are paper lists.
    pub fn from_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "txt" | "md" | "text" => Self::PaperList,
            "csv" => Self::Csv,
            "tsv" | "tab" => Self::Tsv,
            "parquet" | "pq" => Self::Parquet,
            "json" => Self::Json,
            "ndjson" | "jsonl" => Self::Ndjson,
            "arrows" => Self::Arrow,
            _ => return None,
        })
    }

    /// The name as a pipeline file writes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::PaperList => "paper-list",
            Self::Csv => "csv",
            Self::Tsv => "tsv",
            Self::Parquet => "parquet",
            Self::Json => "json",
            Self::Ndjson => "ndjson",
            Self::Arrow => "arrow",
        }
    }
}

impl fmt::Display for InputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One input: a file or a glob, and how to read its rows. This is also what a pipeline file's
/// `[[input]]` keys mean (the same names, kebab-case; `path` is `pattern`): the configuration's
/// `InputOptions` only reads them. A paper list has no columns: `text`, `id`, `time` and `label`
/// are for tables.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputSpec {
    /// The path or glob as written in the pipeline file (relative to it) or on the command line.
    pub pattern: String,
    /// The same, resolved against the pipeline file's folder (where it is read; machine
    /// specific, so left out of `run.json`).
    #[serde(skip)]
    pub resolved: PathBuf,
    /// `paper-list`, `csv`, `tsv`, `parquet`, `json`, `ndjson` (or `jsonl`) or `arrow`. `None`:
    /// inferred per file from its extension (`.txt` and `.md` are paper lists).
    pub format: Option<InputFormat>,
    /// Table columns joined (with a space) into the text. Default: `title` + `abstract` when
    /// both exist, else `abstract`, else `text`.
    pub text: Option<Vec<String>>,
    /// Id column. Default: `<file-stem>:<row>`.
    pub id: Option<String>,
    /// Title column (shown in reports). Default: `title` when the table has one.
    pub title: Option<String>,
    /// Year or date column.
    pub time: Option<String>,
    /// Ground-truth label column.
    pub label: Option<String>,
    /// The column whose values are the documents' classes for topics per class. Not a key of
    /// `[[input]]`: the configuration sets it on every input from `[describe] per-class`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Batch name (the period) of inputs without a time column. Default: the file stem.
    pub batch: Option<String>,
    /// Keep only the rows whose column holds one of the values (applied before `limit`).
    pub filter: Option<FilterSpec>,
    /// At most this many documents from this input (after filtering), in file order.
    pub limit: Option<usize>,
}

impl InputSpec {
    /// A file read with every default: format from the extension, default columns.
    pub fn file(path: impl Into<PathBuf>) -> InputSpec {
        let resolved = path.into();
        InputSpec {
            pattern: resolved.display().to_string(),
            resolved,
            format: None,
            text: None,
            id: None,
            title: None,
            time: None,
            label: None,
            class: None,
            batch: None,
            filter: None,
            limit: None,
        }
    }

    /// The columns this input names (text, id, title, time, label, class, filter), for the
    /// header check that runs before a table is parsed.
    pub fn named_columns(&self) -> Vec<&str> {
        let mut cols: Vec<&str> = self.text.iter().flatten().map(String::as_str).collect();
        cols.extend(
            [&self.id, &self.title, &self.time, &self.label, &self.class]
                .into_iter()
                .flatten()
                .map(String::as_str),
        );
        cols.extend(self.filter.as_ref().map(|f| f.column.as_str()));
        cols
    }
}

/// `[input.filter]`: keep only the rows whose `column` holds one of `values`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilterSpec {
    pub column: String,
    pub values: Vec<String>,
}

/// What to do with a document that cannot be used (empty text, unreadable row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnBadDocument {
    /// Leave it out, warn, and list it in `run.json` (the default).
    #[default]
    Skip,
    /// Stop the run at the first one.
    Fail,
}

impl OnBadDocument {
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "skip" => Some(Self::Skip),
            "fail" => Some(Self::Fail),
            _ => None,
        }
    }
}

impl fmt::Display for OnBadDocument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Skip => "skip",
            Self::Fail => "fail",
        })
    }
}
