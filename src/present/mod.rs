//! Present: turn an [`Analysis`] into the report folder's files.
//!
//! The analysis stages end in one value, [`Analysis`]; this module is the adapter from it to
//! the three writers, each of which takes its own small input types and knows nothing of the
//! pipeline: [`tables`] (CSV and `model.json`, through `export` and `model`), [`charts`] (PNG and
//! SVG, through `chart`) and [`report`] (`report.html` and `summary.md`, through `report`).

pub mod charts;
pub mod report;
pub mod tables;

use crate::chart::ChartError;
use crate::cluster::{Clustering, KSelection};
use crate::config::Settings;
use crate::describe::map::Map;
use crate::describe::matching::DriftRow;
use crate::describe::trends::Trends;
use crate::describe::TopicSummary;
use crate::evaluate::Metrics;
use crate::export::ExportError;
use crate::ingest::Corpus;
use crate::progress::Progress;
use crate::reduce::Reducer;
use crate::vectorize::TfIdf;
use std::path::{Path, PathBuf};

/// A file of the report that could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PresentError {
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error(transparent)]
    Chart(#[from] ChartError),
    #[error("cannot write {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Writes every file of the report into `dir`: tables and model (the `export` stage), charts,
/// then the report, which embeds the charts and lists `warnings` (to which the charts' own
/// notes are added).
pub fn write_all(
    settings: &Settings,
    a: &Analysis,
    dir: &Path,
    started: chrono::DateTime<chrono::Utc>,
    warnings: &mut Vec<String>,
    progress: &mut Progress,
) -> Result<(), PresentError> {
    let meta = crate::model::ModelMeta {
        name: &settings.name,
        title: &settings.title,
        tokenizer: &settings.tokenize,
    };
    // The tables and the model (tens of megabytes of JSON) are written side by side, and the
    // charts are drawn meanwhile: each of the two stages alone leaves a core idle.
    let export = || {
        let (t, m) = rayon::join(
            || tables::write_tables(a, dir),
            || tables::write_model(meta, a, dir),
        );
        t.and(m)
    };
    let export_detail = |_: &()| "CSV tables".to_string();
    let drawn = if settings.charts.enabled {
        let style = &settings.charts.style;
        let ((), drawn) = progress.side_by_side(
            ("export", export, export_detail),
            (
                "charts",
                || charts::draw_charts(style, settings.trends.top, a, &dir.join("charts")),
                |c: &Vec<charts::DrawnChart>| {
                    format!("{} charts", c.iter().filter(|c| c.svg.is_some()).count())
                },
            ),
        )?;
        for note in drawn.iter().flat_map(|c| &c.notes) {
            progress.warn(note);
            warnings.push(note.clone());
        }
        drawn
    } else {
        progress.stage("export", |_| export(), export_detail)?;
        Vec::new()
    };
    progress.stage(
        "report",
        |_| report::write_report(settings, a, &drawn, warnings, started, dir),
        |_| "report.html, summary.md".to_string(),
    )
}

/// Everything the analysis stages found: the one value the presentation reads.
#[derive(Debug)]
pub struct Analysis {
    /// The clustered documents (texts cut to snippets), with the inputs and the skipped rows.
    pub corpus: Corpus,
    /// Distinct terms the tokenizer found (before the TF-IDF bounds).
    pub vocabulary: usize,
    /// The vocabulary and IDF (the matrix itself is released after clustering).
    pub tfidf: TfIdf,
    pub reducer: Reducer,
    pub clustering: Clustering,
    pub k_selection: Option<KSelection>,
    pub summary: TopicSummary,
    pub trends: Trends,
    pub map: Map,
    /// Cosine similarity of the topic centroids, by topic index.
    pub similarity: Vec<Vec<f64>>,
    pub metrics: Option<Metrics>,
    /// Stem-keyed term weights of each topic (its fingerprint for matching later runs).
    pub fingerprints: Vec<Vec<(String, f64)>>,
    /// How this run's topics map onto the previous run's, when there was one.
    pub drift: Option<Vec<DriftRow>>,
    /// The first topic id no topic of this pipeline has had.
    pub next_id: usize,
}
