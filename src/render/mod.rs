//! Render: turn an [`Analysis`] into the report folder's files.
//!
//! The analysis stages end in one value, [`Analysis`]; this module is the adapter from it to
//! the three writers, each of which takes its own small input types and knows nothing of the
//! pipeline: [`table_files`] (CSV, Parquet, `report.xlsx` and `model.json`, through `tables`,
//! `workbook` and `model`), [`chart_files`] (PNG and SVG, through `chart`) and [`html_files`]
//! (`report.html` and `summary.md`, through `html`).

pub mod chart_files;
pub mod html_files;
pub mod table_files;

use crate::chart::ChartError;
use crate::cluster::{Clustering, KSelection};
use crate::config::Settings;
use crate::describe::hierarchy::TopicTree;
use crate::describe::matching::DriftRow;
use crate::describe::per_class::PerClass;
use crate::describe::trends::Trends;
use crate::describe::TopicSummary;
use crate::evaluate::Metrics;
use crate::ingest::Corpus;
use crate::layout::Map;
use crate::progress::Progress;
use crate::reduce::Reducer;
use crate::tables::{ExportError, OutputFormat};
use crate::vectorize::TfIdf;
use std::path::{Path, PathBuf};

/// A file of the report that could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
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
/// notes are added). The workbook, the longest single writer, is written on a thread of its
/// own meanwhile, and recorded as the `workbook` stage when it is done.
pub fn write_all(
    settings: &Settings,
    a: &Analysis,
    dir: &Path,
    started: chrono::DateTime<chrono::Utc>,
    warnings: &mut Vec<String>,
    progress: &mut Progress,
) -> Result<(), RenderError> {
    let t = table_files::ReportTables::new(a);
    std::thread::scope(|scope| {
        let workbook = settings
            .output
            .formats
            .contains(&OutputFormat::Xlsx)
            .then(|| {
                if let Some(note) = workbook_note(settings, a) {
                    keep_warning(progress, warnings, note);
                }
                spawn_workbook(scope, settings, a, &t, started, dir)
            });
        let drawn = export_and_draw(settings, a, &t, dir, warnings, progress)?;
        progress.stage(
            "report",
            |_| html_files::write_report(settings, a, &drawn, warnings, started, dir),
            |_| "report.html, summary.md".to_string(),
        )?;
        if let Some(handle) = workbook {
            finish_workbook(handle, progress)?;
        }
        Ok(())
    })
}

/// What the workbook thread hands back: its result, and how long it took in seconds.
type WorkbookDone = (Result<(), RenderError>, f64);

/// Says so when the workbook's Documents sheet holds only the first of the documents.
fn workbook_note(settings: &Settings, a: &Analysis) -> Option<String> {
    let max = settings.output.workbook_documents;
    let total = a.documents_listed().filter(|&n| n > max)?;
    Some(format!(
        "report.xlsx holds the first {max} of {total} documents (output.workbook-documents); documents.csv has all"
    ))
}

/// Starts writing `report.xlsx` on a thread of `scope`, timed.
fn spawn_workbook<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    settings: &Settings,
    a: &'scope Analysis,
    t: &'scope table_files::ReportTables,
    started: chrono::DateTime<chrono::Utc>,
    dir: &'scope Path,
) -> std::thread::ScopedJoinHandle<'scope, WorkbookDone> {
    let about = about(settings, a, started);
    let chart_topics = a.trends.most_moving(settings.trends.top);
    let max = settings.output.workbook_documents;
    scope.spawn(move || {
        let start = std::time::Instant::now();
        let done = table_files::write_workbook(a, t, &about, &chart_topics, max, dir);
        (done, start.elapsed().as_secs_f64())
    })
}

/// Waits for the workbook and records it as the `workbook` stage.
fn finish_workbook(
    handle: std::thread::ScopedJoinHandle<'_, WorkbookDone>,
    progress: &mut Progress,
) -> Result<(), RenderError> {
    let (done, secs) = handle.join().expect("the workbook thread does not panic");
    progress.finished(
        "workbook",
        secs,
        done.as_ref().ok().map(|_| "report.xlsx".into()),
    );
    done
}

/// Writes the tables and the model (the `export` stage) and, when charts are on, draws them
/// meanwhile (the `charts` stage); the charts' notes join `warnings`. Returns the charts drawn.
fn export_and_draw(
    settings: &Settings,
    a: &Analysis,
    t: &table_files::ReportTables,
    dir: &Path,
    warnings: &mut Vec<String>,
    progress: &mut Progress,
) -> Result<Vec<chart_files::DrawnChart>, RenderError> {
    let input = fit_input(settings);
    let meta = crate::model::ModelMeta {
        name: &settings.name,
        title: &settings.title,
        input: &input,
        tokenizer: &settings.tokenize,
    };
    let formats = &settings.output.formats;
    // The tables and the model (tens of megabytes of JSON) are written side by side, and
    // the charts are drawn meanwhile: each of the two stages alone leaves a core idle.
    let export = || {
        let (files, model) = rayon::join(
            || table_files::write_files(a, t, formats, dir),
            || table_files::write_model(meta, a, dir),
        );
        files.and(model)
    };
    let names: Vec<String> = formats
        .iter()
        .filter(|f| **f != OutputFormat::Xlsx)
        .map(|f| f.to_string())
        .collect();
    let export_detail = |_: &()| format!("tables as {}, model.json", names.join(", "));
    if !settings.charts.enabled {
        progress.stage("export", |_| export(), export_detail)?;
        return Ok(Vec::new());
    }
    let style = &settings.charts.style;
    let ((), drawn) = progress.side_by_side(
        ("export", export, export_detail),
        (
            "charts",
            || chart_files::draw_charts(style, settings.trends.top, a, &dir.join("charts")),
            |c: &Vec<chart_files::DrawnChart>| {
                format!("{} charts", c.iter().filter(|c| c.svg.is_some()).count())
            },
        ),
    )?;
    for note in drawn.iter().flat_map(|c| &c.notes) {
        keep_warning(progress, warnings, note.clone());
    }
    Ok(drawn)
}

/// Prints `note` as a warning now and keeps it for the report.
fn keep_warning(progress: &Progress, warnings: &mut Vec<String>, note: String) {
    progress.warn(&note);
    warnings.push(note);
}

/// What an [`Analysis`] holds of the documents.
#[derive(Debug)]
pub enum Scope {
    /// Every document: `corpus`, `clustering` and `map` are per document (`run`).
    Documents,
    /// Only sums over the documents (a streaming run, or `topicmap report` from Spark's
    /// aggregates): `corpus` holds the representatives alone, `clustering` the centroids and
    /// sizes, `summary.documents` counts every document. The documents table is written where
    /// they were assigned (the streaming pass, or the engine), so the report writes none, nor
    /// a document map; `model.json` is this model as it is.
    Summed {
        model: Box<crate::model::SavedModel>,
        /// The first rows of the documents table, when the documents were written beside
        /// the report (a streaming run): what the workbook's Documents sheet shows.
        documents: Option<DocumentsHead>,
    },
}

/// The first rows of a documents table written elsewhere, and how many rows it has in all.
#[derive(Debug)]
pub struct DocumentsHead {
    pub first: polars::prelude::DataFrame,
    pub total: usize,
}

/// Everything the analysis stages found: the one value the presentation reads.
#[derive(Debug)]
pub struct Analysis {
    /// Whether the documents themselves are here, or only sums over them.
    pub scope: Scope,
    /// The clustered documents (texts cut to snippets), with the inputs and the skipped rows.
    pub corpus: Corpus,
    /// Distinct terms the tokenizer found (before the TF-IDF bounds).
    pub vocabulary: usize,
    /// The clean stage's fitted rules (saved in the model).
    pub cleaner: crate::clean::TextCleaner,
    /// What they removed from this run's documents (none when the report is built from sums).
    pub cleaned: Option<crate::clean::CleanTally>,
    /// The vocabulary and IDF (the matrix itself is released after clustering).
    pub tfidf: TfIdf,
    pub reducer: Reducer,
    /// The sentence model the topics were clustered with, and its static table (none for
    /// `tfidf` features; a report from sums keeps its model's).
    pub embedding: Option<crate::model::SavedEmbedding>,
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
    /// What the reader should know about the analysis (a named topic that vanished, ...).
    pub warnings: Vec<String>,
    /// The topic hierarchy (none with fewer than two topics).
    pub tree: Option<TopicTree>,
    /// The fitted topics, when the report shows them merged (`describe.merge-to`): the model
    /// keeps these.
    pub fine: Option<FineTopics>,
    /// The reported topics per class of `describe.per-class` (none without it, or from sums).
    pub per_class: Option<PerClass>,
}

impl Analysis {
    /// What k-means clustered, in words, when the sentence model took part (none for the
    /// reduced TF-IDF vectors alone).
    pub fn clustered_on(&self) -> Option<String> {
        use crate::embed::{EmbedMethod, FeatureSpace};
        let e = self.embedding.as_ref()?;
        let how = match e.method {
            EmbedMethod::Transformer => "the transformer",
            EmbedMethod::Static => "static token vectors",
        };
        let sentences = format!("sentence vectors ({} dims, by {how})", e.dims);
        Some(match e.features {
            FeatureSpace::Tfidf => return None,
            FeatureSpace::Embedding => sentences,
            FeatureSpace::Both => format!(
                "the reduced TF-IDF vectors and {sentences}, the sentence vectors weighing {}",
                e.weight
            ),
        })
    }

    /// Whether every document is here (see [`Scope`]).
    pub fn per_document(&self) -> bool {
        matches!(self.scope, Scope::Documents)
    }

    /// How many documents the documents table has, when it is here or its first rows are.
    pub fn documents_listed(&self) -> Option<usize> {
        match &self.scope {
            Scope::Documents => Some(self.corpus.len()),
            Scope::Summed { documents, .. } => documents.as_ref().map(|h| h.total),
        }
    }
}

/// The fitted topics behind a merged report.
#[derive(Debug)]
pub struct FineTopics {
    pub clustering: Clustering,
    pub summary: TopicSummary,
}

/// What the workbook's About sheet says: the run, its counts and settings, and its inputs.
fn about(
    settings: &Settings,
    a: &Analysis,
    started: chrono::DateTime<chrono::Utc>,
) -> crate::workbook::About {
    use crate::workbook::AboutValue::{Number, Text};
    let mut rows = vec![
        ("title".to_string(), Text(settings.title.clone())),
        (
            "run date".into(),
            Text(started.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
        ),
        (
            "tool".into(),
            Text(format!("topicmap {}", env!("CARGO_PKG_VERSION"))),
        ),
        ("documents".into(), Number(a.summary.documents as f64)),
        (
            "skipped documents".into(),
            Number(a.corpus.skipped.len() as f64),
        ),
        ("topics".into(), Number(a.clustering.k() as f64)),
        ("features".into(), Number(a.tfidf.features().len() as f64)),
        (
            "reduction".into(),
            Text(format!("{}, {} dims", a.reducer.method(), a.reducer.dims())),
        ),
    ];
    if let Some(on) = a.clustered_on() {
        rows.push(("clustered on".into(), Text(on)));
    }
    // Every setting, keyed as the pipeline file writes it (`cluster.max-iter`).
    if let serde_json::Value::Object(sections) = serde_json::to_value(settings).unwrap_or_default()
    {
        for (section, v) in &sections {
            flatten(&section.replace('_', "-"), v, &mut rows);
        }
    }
    crate::workbook::About {
        rows,
        inputs: a
            .corpus
            .sources
            .iter()
            .map(|s| {
                (
                    s.path.display().to_string(),
                    s.format.to_string(),
                    s.bytes,
                    s.sha256.clone(),
                    s.documents,
                )
            })
            .collect(),
        created: started,
    }
}

/// `cluster.k.mode = auto`-style rows of a JSON value (arrays of plain values joined).
fn flatten(
    key: &str,
    v: &serde_json::Value,
    rows: &mut Vec<(String, crate::workbook::AboutValue)>,
) {
    use crate::workbook::AboutValue::{Number, Text};
    use serde_json::Value;
    match v {
        Value::Object(m) => m
            .iter()
            .for_each(|(k, v)| flatten(&format!("{key}.{}", k.replace('_', "-")), v, rows)),
        Value::Array(items) if items.iter().any(|i| i.is_object() || i.is_array()) => items
            .iter()
            .enumerate()
            .for_each(|(i, v)| flatten(&format!("{key}.{i}"), v, rows)),
        Value::Array(items) => {
            let text: Vec<String> = items.iter().map(plain).collect();
            rows.push((key.to_string(), Text(text.join(", "))));
        }
        Value::Number(n) => rows.push((key.to_string(), Number(n.as_f64().unwrap_or(f64::NAN)))),
        Value::Null => rows.push((key.to_string(), Text("(default)".into()))),
        other => rows.push((key.to_string(), Text(plain(other)))),
    }
}

fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The input columns, period and bad-document policy a model keeps of its pipeline.
pub fn fit_input(settings: &Settings) -> crate::model::FitInput {
    crate::model::FitInput::of(
        &settings.inputs,
        settings.trends.period,
        settings.output.on_bad_document,
    )
}
