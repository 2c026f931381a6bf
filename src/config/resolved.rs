//! The resolved sections that are no stage's parameters: the names file, trends, charts and
//! output, as [`Settings`](super::Settings) carries them and `run.json` shows them; and
//! [`normalize`], the lexical path clean-up their paths go through.
//!
//! They live apart from `settings.rs` because `sections.rs` builds them and `settings.rs` calls
//! `sections.rs`: settings -> sections -> resolved, with no way back.

use crate::chart::ChartStyle;
use crate::describe::names::Names;
use crate::ingest::{OnBadDocument, PeriodUnit};
use crate::tables::OutputFormat;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A names file and the names it holds.
#[derive(Debug, Clone, Serialize)]
pub struct TopicNames {
    /// The file as the pipeline writes it.
    pub file: String,
    /// Where it was read.
    #[serde(skip)]
    pub path: PathBuf,
    pub names: Names,
}

#[derive(Debug, Clone, Serialize)]
pub struct TrendsSettings {
    /// The time bucket for dates (default `year`).
    pub period: PeriodUnit,
    /// Topics drawn individually in the share-over-time chart (default 8).
    pub top: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChartsSettings {
    /// Default true.
    pub enabled: bool,
    /// Size and scale (defaults: 1920 x 1080, scale 1.0); the title is the pipeline's.
    #[serde(flatten)]
    pub style: ChartStyle,
}

#[derive(Debug, Clone, Serialize)]
pub struct OutputSettings {
    /// The pipeline's output root (default `output/<name>` under the current folder).
    #[serde(skip)]
    pub dir: PathBuf,
    /// The same as the pipeline file writes it (or the default).
    #[serde(rename = "dir")]
    pub dir_as_written: String,
    /// Default `skip` (counted and reported).
    pub on_bad_document: OnBadDocument,
    /// The run whose topic ids are kept. Default: `dir/latest`, when it exists. `None` when the
    /// pipeline says `previous = "none"`.
    #[serde(skip)]
    pub previous: Option<PathBuf>,
    /// `[output] previous` as the pipeline file writes it, when it does.
    #[serde(rename = "previous", skip_serializing_if = "Option::is_none")]
    pub previous_as_written: Option<String>,
    /// The formats the tables are written in (default csv and xlsx).
    pub formats: Vec<OutputFormat>,
    /// Most documents report.xlsx's Documents sheet holds (default 100,000, at most Excel's
    /// 1,048,575 rows).
    pub workbook_documents: usize,
}

/// Removes `.` and `name/..` pairs without touching the file system, so messages and printed
/// paths read `output/x`, not `pipelines/../output/x`.
pub fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    if out.is_empty() {
        PathBuf::from(".")
    } else {
        out.iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_normalised_lexically() {
        assert_eq!(
            normalize(Path::new("pipelines/../output/x")),
            PathBuf::from("output/x")
        );
        assert_eq!(
            normalize(Path::new("pipelines/../../shared/a.csv")),
            PathBuf::from("../shared/a.csv")
        );
        assert_eq!(normalize(Path::new("./a/./b")), PathBuf::from("a/b"));
        assert_eq!(normalize(Path::new("a/..")), PathBuf::from("."));
    }
}
