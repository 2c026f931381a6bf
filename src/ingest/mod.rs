//! Ingest: read every `[[input]]` into one [`Corpus`] of [`Document`]s.
//!
//! Paper lists (the seeds' plain-text format) are parsed by hand in [`paper_list`]; tables (CSV,
//! TSV, Parquet, JSON, NDJSON) go through polars in [`table`], and an Arrow stream on stdin in
//! `arrow`. Every file is checked before it is parsed (`files`: exists, is a file, not empty,
//! UTF-8 text; [`csv_lint`] for CSV structure) so that a bad input fails with the file's name
//! and, where it applies, the row and column, before anything is written. The raw bytes' size
//! and sha256 are kept for `run.json`. [`stream`] reads the same inputs a chunk at a time.

mod arrow;
pub mod csv_lint;
mod files;
mod ids;
mod input;
pub mod paper_list;
pub mod stream;
pub mod table;
pub mod time;

pub use arrow::ingest_arrow;
pub(crate) use files::sha256_hex;
pub use files::{check_text, map_checked, read_checked, FileBytes};
pub use ids::Ids;
pub use input::{FilterSpec, InputFormat, InputSpec, OnBadDocument};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
pub use time::{PeriodUnit, TimeError, TimeValue};

/// One document, as read from its input.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// `<file-stem>:<n>` for paper lists, the id column (or `<file-stem>:<row>`) for tables.
    pub id: String,
    /// Index into [`Corpus::sources`].
    pub source: usize,
    /// 1-based data row in its file (tables, header excluded) or document number (paper lists),
    /// so a problem found in a later stage still names the row the user can open.
    pub row: usize,
    /// Display title: the title column, or a snippet of the text for paper lists (filled after cleaning).
    pub title: Option<String>,
    /// The text to analyse (raw after ingest, plain after the clean stage).
    pub text: String,
    /// Raw time value and its parsed form, when the input names a time column.
    pub time: Option<(String, TimeValue)>,
    /// Ground-truth label, when the input names a label column.
    pub label: Option<String>,
    /// Its class for topics per class (`[describe] per-class`): the cell of that column, when
    /// the input is a table and the cell is not empty.
    pub class: Option<String>,
    /// Batch name: the input's `batch` setting or the file stem. Used as the period when there is no time.
    pub batch: String,
}

impl Document {
    /// The document's period for trends: its time bucketed by `unit`, or its batch.
    pub fn period(&self, unit: PeriodUnit) -> String {
        match &self.time {
            Some((_, t)) => t.period(unit),
            None => self.batch.clone(),
        }
    }
}

/// One input file that was read.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SourceFile {
    /// The path as the pipeline file writes it (a glob's match relative to the pipeline's
    /// folder): what outputs show, the same on every machine.
    pub path: PathBuf,
    /// Where it was read (relative to the current folder, or absolute), for messages.
    #[serde(skip)]
    pub location: PathBuf,
    pub format: InputFormat,
    pub bytes: u64,
    pub sha256: String,
    /// Paper lists: the first non-empty line.
    pub list_title: Option<String>,
    /// Documents taken from this file.
    pub documents: usize,
}

/// A document that was left out, and why.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Skipped {
    pub file: PathBuf,
    /// 1-based data row (tables, header excluded) or document number (paper lists).
    pub row: usize,
    pub reason: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "skipped {} row {}: {}",
            self.file.display(),
            self.row,
            self.reason
        )
    }
}

/// A document whose id repeated an earlier one's: it is kept, under a new id.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Renamed {
    pub file: PathBuf,
    /// 1-based data row (tables, header excluded) or document number (paper lists).
    pub row: usize,
    pub id: String,
    pub new_id: String,
}

impl std::fmt::Display for Renamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} row {}: duplicate id {:?} renamed {:?} (the document is kept)",
            self.file.display(),
            self.row,
            self.id,
            self.new_id
        )
    }
}

/// A document whose whole text (as topics see it, after cleaning) repeats an earlier
/// document's: a cross-listed abstract, a record exported twice. It is kept and analysed like
/// any other, and listed in `duplicates.csv` so the reader can judge the counts.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Duplicate {
    pub id: String,
    /// The id of the first document with the same text.
    pub duplicate_of: String,
    pub file: PathBuf,
    /// 1-based data row (tables, header excluded) or document number (paper lists).
    pub row: usize,
}

/// All documents of a run, in input order.
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    pub documents: Vec<Document>,
    pub sources: Vec<SourceFile>,
    pub skipped: Vec<Skipped>,
    /// Documents kept under a new id because their id repeated an earlier one.
    pub renamed: Vec<Renamed>,
    /// Documents whose whole text repeats an earlier one's (found by the clean stage).
    pub duplicates: Vec<Duplicate>,
    /// Whether any input named a time / label column.
    pub has_time: bool,
    pub has_label: bool,
}

/// Cuts the text of each of `docs` to its first `max_chars` characters and frees the rest.
/// Used once the tokens hold what the analysis needs, so the text (most of a corpus's memory)
/// is not kept through clustering only to show snippets. All snippets are made while every
/// full text of `docs` is still alive, so none lands in a freed text; then the texts are freed
/// together and their pages (they were allocated side by side, see `table::read`) go back to
/// the system. Shrinking each text in place would leave a hole after every snippet instead.
pub fn shorten_texts(docs: &mut [Document], max_chars: usize) {
    let snippets: Vec<Option<String>> = docs
        .iter()
        .map(|d| {
            let (cut, _) = d.text.char_indices().nth(max_chars)?;
            Some(d.text[..cut].to_string())
        })
        .collect();
    for (d, s) in docs.iter_mut().zip(snippets) {
        if let Some(s) = s {
            d.text = s;
        }
    }
}

impl Corpus {
    pub fn len(&self) -> usize {
        self.documents.len()
    }
    pub fn is_empty(&self) -> bool {
        self.documents.is_empty()
    }
}

/// Why a row of an input cannot become a document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocProblem {
    #[error("empty text in column(s) {}", .columns.join(", "))]
    EmptyText { columns: Vec<String> },
    #[error("empty time in column {column:?}")]
    EmptyTime { column: String },
    #[error("duplicate id {id:?} (first seen in {} row {first_row})", first_file.display())]
    DuplicateId {
        id: String,
        first_file: PathBuf,
        first_row: usize,
    },
}

/// Ingest errors: each names the file, and the row and column where that applies.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("input {0}: file not found")]
    NotFound(PathBuf),
    #[error("input {0}: the glob matched no files")]
    NoMatch(String),
    #[error("input {0}: bad glob pattern")]
    BadGlob(String, #[source] glob::PatternError),
    #[error("input {0}: is a directory, not a file")]
    IsDirectory(PathBuf),
    #[error("input {path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("input {0}: the file is empty")]
    Empty(PathBuf),
    #[error("input {0}: the file is UTF-16 ({1}); save it as UTF-8")]
    Utf16(PathBuf, &'static str),
    #[error("input {path}: not valid UTF-8 at byte {offset} (line {line}, column {column}); save it as UTF-8")]
    NotUtf8 {
        path: PathBuf,
        offset: usize,
        line: usize,
        column: usize,
    },
    #[error("input {path}: binary data (a NUL byte at byte {offset}, line {line}); expected text")]
    Binary {
        path: PathBuf,
        offset: usize,
        line: usize,
    },
    #[error("input {0}: cannot tell the format from the extension; set format = \"paper-list\" | \"csv\" | \"tsv\" | \"parquet\" | \"json\" | \"ndjson\"")]
    UnknownFormat(PathBuf),
    #[error("input {path}: cannot parse the table: {source}")]
    Table {
        path: PathBuf,
        source: table::PolarsMessage,
    },
    #[error("input {path}: no text columns set and none of title+abstract, abstract or text exist (columns: {available}); set text = [\"...\"]")]
    NoTextColumns { path: PathBuf, available: String },
    #[error("input {path}: column {column:?} cannot be read as text")]
    ColumnType {
        path: PathBuf,
        column: String,
        #[source]
        source: table::PolarsMessage,
    },
    #[error("input {path}: column {column:?} not found (columns: {available})")]
    MissingColumn {
        path: PathBuf,
        column: String,
        available: String,
    },
    #[error("input {path}: row {row}, column {column:?}: {problem}")]
    BadCell {
        path: PathBuf,
        row: usize,
        column: String,
        problem: TimeError,
    },
    #[error("input {path}: row {row} (line {line}): {problem}")]
    Malformed {
        path: PathBuf,
        row: usize,
        line: usize,
        problem: csv_lint::Problem,
    },
    #[error("input {path}: row {row}: {reason} (on-bad-document = \"fail\")")]
    BadDocument {
        path: PathBuf,
        row: usize,
        reason: DocProblem,
    },
    #[error("input {path}: no documents (the file has a title line but nothing after it)")]
    NoDocuments { path: PathBuf },
}

/// Reads every input, in order.
pub fn ingest(inputs: &[InputSpec], on_bad: OnBadDocument) -> Result<Corpus, IngestError> {
    let mut corpus = Corpus::default();
    let mut ids = Ids::default();
    for input in inputs {
        for (path, shown) in expand(input)? {
            read_file(&mut corpus, input, path, shown, on_bad, Some(&mut ids))?;
        }
    }
    Ok(corpus)
}

/// The format of `path`: the input's, else from the extension.
pub fn format_of(input: &InputSpec, path: &Path) -> Result<InputFormat, IngestError> {
    match input.format {
        Some(f) => Ok(f),
        None => InputFormat::from_path(path).ok_or_else(|| IngestError::UnknownFormat(path.into())),
    }
}

/// Reads one file of `input` (read at `path`, shown as `shown`) into `corpus`, its ids made
/// unique against `ids` (the read's ids so far) when given.
pub fn read_file(
    corpus: &mut Corpus,
    input: &InputSpec,
    path: PathBuf,
    shown: PathBuf,
    on_bad: OnBadDocument,
    ids: Option<&mut Ids>,
) -> Result<(), IngestError> {
    let format = format_of(input, &path)?;
    let before = corpus.documents.len();
    let source = corpus.sources.len();
    let (bytes, sha256, list_title) = if format == InputFormat::PaperList {
        let raw = read_checked(&path)?;
        let text = check_text(&path, &raw)?;
        let list = paper_list::parse(text, &path, input, source);
        if list.documents.is_empty() {
            return Err(IngestError::NoDocuments { path });
        }
        corpus.documents.extend(list.documents);
        (raw.len() as u64, sha256_hex(&raw), list.title)
    } else {
        let raw = map_checked(&path)?;
        table::check_header(&path, format, &raw, input)?;
        // The checksum (for run.json) is computed while the text is checked and linted
        // (one core each); then polars parses with every core.
        let check = || -> Result<(), IngestError> {
            if matches!(format, InputFormat::Parquet | InputFormat::Arrow) {
                return Ok(());
            }
            let text = check_text(&path, &raw)?;
            lint(&path, format, text)
        };
        let (checked, sha) = rayon::join(check, || sha256_hex(&raw));
        checked?;
        let df = table::load_frame(&path, format, &raw);
        // The file's bytes are freed before documents are built, so the raw file, the
        // table and the documents are never all in memory at once.
        let bytes = raw.len() as u64;
        drop(raw);
        let docs = table::read(
            &path,
            &shown,
            df?,
            input,
            source,
            table::Rows::After(0),
            on_bad,
            &mut corpus.skipped,
            None,
        )?;
        corpus.documents.extend(docs);
        (bytes, sha, None)
    };
    corpus.has_time |= input.time.is_some();
    if let Some(ids) = ids {
        let docs = &mut corpus.documents[before..];
        ids.dedupe(docs, &mut corpus.renamed, source, (&path, &shown), on_bad)?;
    }
    corpus.has_label |= input.label.is_some();
    corpus.sources.push(SourceFile {
        path: shown,
        location: path,
        format,
        bytes,
        sha256,
        list_title,
        documents: corpus.documents.len() - before,
    });
    Ok(())
}

/// Lints a CSV or TSV text (other formats need none): a broken quote or a row of the wrong
/// width is reported with its row and line.
pub fn lint(path: &Path, format: InputFormat, text: &str) -> Result<(), IngestError> {
    if !matches!(format, InputFormat::Csv | InputFormat::Tsv) {
        return Ok(());
    }
    let sep = if format == InputFormat::Tsv {
        b'\t'
    } else {
        b','
    };
    csv_lint::lint(text, sep).map_err(|e| IngestError::Malformed {
        path: path.to_path_buf(),
        row: e.row,
        line: e.line,
        problem: e.problem,
    })
}

/// The files an input names, sorted, each with the path outputs show for it: the path as the
/// pipeline writes it, or for a glob's match, the written glob's folder joined with the match's
/// remainder (`data/*.txt` matches `data/a.txt`, wherever the pipeline file is). Errors when a
/// plain path is missing or a glob matches nothing.
pub fn expand(input: &InputSpec) -> Result<Vec<(PathBuf, PathBuf)>, IngestError> {
    let text = input.resolved.to_string_lossy().to_string();
    let is_glob = |s: &str| s.contains(['*', '?', '[']);
    if !is_glob(&text) {
        let p = input.resolved.clone();
        return match std::fs::metadata(&p) {
            Ok(m) if m.is_dir() => Err(IngestError::IsDirectory(p)),
            Ok(_) => Ok(vec![(p, PathBuf::from(&input.pattern))]),
            Err(_) => Err(IngestError::NotFound(p)),
        };
    }
    let mut paths: Vec<PathBuf> = glob::glob(&text)
        .map_err(|e| IngestError::BadGlob(input.pattern.clone(), e))?
        .filter_map(Result::ok)
        .filter(|p| p.is_file())
        .collect();
    if paths.is_empty() {
        return Err(IngestError::NoMatch(text));
    }
    paths.sort();
    // The folders before the first component with a wildcard, as resolved and as written.
    let literal = |p: &Path| -> PathBuf {
        p.components()
            .take_while(|c| !is_glob(&c.as_os_str().to_string_lossy()))
            .collect()
    };
    let (resolved_dir, written_dir) =
        (literal(&input.resolved), literal(Path::new(&input.pattern)));
    Ok(paths
        .into_iter()
        .map(|p| {
            let shown = match p.strip_prefix(&resolved_dir) {
                Ok(rest) => written_dir.join(rest),
                Err(_) => p.clone(),
            };
            (p, shown)
        })
        .collect())
}

/// The file stem, used in ids and as the default batch name.
pub fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "input".into())
}

/// The text people read for a document: its title, or a snippet of its text.
pub fn display_title(corpus: &Corpus, i: usize) -> Cow<'_, str> {
    let d = &corpus.documents[i];
    match &d.title {
        Some(t) => Cow::Borrowed(t),
        None => Cow::Owned(snippet(&d.text, 80)),
    }
}

/// The longest snippet of a document's text that any output shows (the report's representative
/// documents).
pub const SNIPPET_CHARS: usize = 300;

/// The first `max` chars of `text`, cut at a word boundary, with "…" when cut.
pub fn snippet(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    let cut = match cut.rfind(' ') {
        Some(p) if p > max / 2 => &cut[..p],
        _ => &cut[..],
    };
    format!("{}…", cut.trim_end_matches([' ', ',', ';', ':', '.']))
}
