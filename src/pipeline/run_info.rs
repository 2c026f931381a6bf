//! `run.json`: how a report was made, for `run` and `assign` alike.
//!
//! Both commands write the same header (tool, version, command, start time, inputs with their
//! sha256, skipped, renamed and duplicate documents, warnings, stage timings and peak memory);
//! each adds what it alone knows: the resolved settings and fit figures of a run, the model and
//! topic sizes of an assignment. Apart from the timings, memory and start time, two runs with the same
//! inputs and seed write identical bytes.

use crate::clean::CleanReport;
use crate::cluster::KSelection;
use crate::config::Settings;
use crate::describe::trends;
use crate::ingest::{Corpus, Duplicate, Renamed, Skipped, SourceFile};
use crate::progress::Progress;
use crate::render::Analysis;
use crate::tables::{self, ExportError};
use serde::Serialize;
use std::path::Path;

/// What every `run.json` says.
#[derive(Debug, Serialize)]
struct Header<'a> {
    tool: &'static str,
    version: &'static str,
    command: &'static str,
    started_at: String,
    inputs: &'a [SourceFile],
    skipped: &'a [Skipped],
    renamed_ids: &'a [Renamed],
    /// Documents that repeat another's whole text (kept; also in `duplicates.csv`).
    #[serde(skip_serializing_if = "<[Duplicate]>::is_empty")]
    duplicates: &'a [Duplicate],
    warnings: &'a [String],
    timings_seconds: Vec<(String, f64)>,
    /// Peak resident memory so far at the end of each stage (a measurement, like the timings).
    peak_rss_mib_after_stage: Vec<(String, f64)>,
}

impl<'a> Header<'a> {
    fn new(
        command: &'static str,
        corpus: &'a Corpus,
        started: chrono::DateTime<chrono::Utc>,
        progress: &Progress,
        warnings: &'a [String],
    ) -> Self {
        Header {
            tool: "topicmap",
            version: env!("CARGO_PKG_VERSION"),
            command,
            started_at: started.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            inputs: &corpus.sources,
            skipped: &corpus.skipped,
            renamed_ids: &corpus.renamed,
            duplicates: &corpus.duplicates,
            warnings,
            timings_seconds: progress
                .stages()
                .iter()
                .map(|s| (s.name.clone(), (s.secs * 1000.0).round() / 1000.0))
                .collect(),
            peak_rss_mib_after_stage: progress
                .stages()
                .iter()
                .filter_map(|s| Some((s.name.clone(), s.peak_mib?.round())))
                .collect(),
        }
    }
}

#[derive(Debug, Serialize)]
struct Counts {
    documents: usize,
    skipped: usize,
    vocabulary: usize,
    features: usize,
    k: usize,
}

#[derive(Debug, Serialize)]
struct TfIdfInfo {
    min_df_applied: usize,
    max_df_applied: usize,
}

/// The rest of a run's `run.json`.
#[derive(Debug, Serialize)]
struct Fitted<'a> {
    settings: &'a Settings,
    counts: Counts,
    tfidf: TfIdfInfo,
    reduction: String,
    /// What k-means clustered, when not the reduced TF-IDF vectors alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    clustered_on: Option<String>,
    /// k-means restarts applied (the `runs` default depends on the corpus size).
    kmeans_restarts: usize,
    k_selection: Option<&'a KSelection>,
    trend_measure: &'static str,
    /// The clean stage: the boilerplate found and what was removed.
    clean: CleanReport,
    /// How the document map was laid out.
    map: MapInfo<'a>,
    /// How a report from sums was made (absent for a run over the documents themselves).
    #[serde(skip_serializing_if = "Option::is_none")]
    built_from: Option<&'static str>,
}

/// The document map's layout: its method and the note the chart shows.
#[derive(Debug, Serialize)]
struct MapInfo<'a> {
    method: crate::layout::MapMethod,
    note: &'a str,
}

/// The rest of an assignment's `run.json`.
#[derive(Debug, Serialize)]
struct Assigned<'a> {
    model: String,
    documents: usize,
    sizes: &'a [usize],
    /// The model's clean stage and what it removed from these documents.
    clean: &'a CleanReport,
    /// The settings taken from the model's pipeline (the flags gave the others).
    from_model: &'a [String],
}

#[derive(Debug, Serialize)]
struct RunJson<'a, T> {
    #[serde(flatten)]
    header: Header<'a>,
    #[serde(flatten)]
    body: T,
}

/// Writes a run's `run.json` into `dir`.
pub fn write_run(
    command: &'static str,
    dir: &Path,
    settings: &Settings,
    a: &Analysis,
    started: chrono::DateTime<chrono::Utc>,
    progress: &Progress,
    warnings: &[String],
) -> Result<(), ExportError> {
    let (min_df, max_df) = a.tfidf.df_bounds();
    let n = a.summary.documents;
    let body = Fitted {
        settings,
        counts: Counts {
            documents: n,
            skipped: a.corpus.skipped.len(),
            vocabulary: a.vocabulary,
            features: a.tfidf.features().len(),
            k: a.clustering.k(),
        },
        tfidf: TfIdfInfo {
            min_df_applied: min_df,
            max_df_applied: max_df,
        },
        reduction: format!("{} to {} dims", a.reducer.method(), a.reducer.dims()),
        clustered_on: a.clustered_on(),
        kmeans_restarts: settings.cluster.runs_for(n),
        built_from: match &a.scope {
            crate::render::Scope::Documents => None,
            crate::render::Scope::Summed { .. } => Some(
                "counts summed over every document, assigned with model.json (no per-document tables)",
            ),
        },
        k_selection: a.k_selection.as_ref(),
        trend_measure: trends::MEASURE,
        clean: a.cleaner.report(a.cleaned),
        map: MapInfo {
            method: a.map.method,
            note: &a.map.note,
        },
    };
    let header = Header::new(command, &a.corpus, started, progress, warnings);
    tables::write_json(&dir.join("run.json"), &RunJson { header, body })
}

/// What an assignment's `run.json` says of its batch.
#[derive(Debug, Clone, Copy)]
pub struct Batch<'a> {
    /// The model's path, as given.
    pub model: &'a Path,
    /// The model's clean stage and what it removed.
    pub clean: &'a CleanReport,
    /// The settings taken from the model's pipeline.
    pub from_model: &'a [String],
    pub corpus: &'a Corpus,
    pub sizes: &'a [usize],
}

/// Writes an assignment's `run.json` into `dir`.
pub fn write_assign(
    dir: &Path,
    batch: Batch<'_>,
    started: chrono::DateTime<chrono::Utc>,
    progress: &Progress,
    warnings: &[String],
) -> Result<(), ExportError> {
    let body = Assigned {
        model: batch.model.display().to_string(),
        documents: batch.corpus.len(),
        sizes: batch.sizes,
        clean: batch.clean,
        from_model: batch.from_model,
    };
    let header = Header::new("assign", batch.corpus, started, progress, warnings);
    tables::write_json(&dir.join("run.json"), &RunJson { header, body })
}
