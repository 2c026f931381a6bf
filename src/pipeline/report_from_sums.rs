//! `topicmap report`: the report folder of a model and the sums of the documents assigned with
//! it elsewhere (an engine's aggregates, e.g. Spark's), built without the documents.
//!
//! The model and the aggregates are read and matched (the aggregates name their model by its
//! sha256), the analysis is built from the sums ([`super::summed`]), and the folder is written
//! as a run writes its own ([`super::report_folder`]).

use super::{prepare, report_folder, summed, PipelineError, RunOptions, RunOutcome};
use crate::config::Settings;
use crate::describe::aggregate::Aggregates;
use crate::model::SavedModel;
use crate::progress::{thousands, Progress};
use crate::tables;
use std::path::PathBuf;

/// What `topicmap report` was asked to do.
#[derive(Debug, Clone)]
pub struct SumsReportOptions {
    /// The model the documents were assigned with (a report folder or its `model.json`).
    pub model: PathBuf,
    /// The aggregates folder (see `tables::aggregates`).
    pub aggregates: PathBuf,
    pub run: RunOptions,
}

/// Builds the report of a model and the sums of the documents assigned with it (an engine's
/// aggregates), without the documents, and writes it as a run writes its own.
pub fn report_from_sums(
    settings: &Settings,
    opts: &SumsReportOptions,
) -> Result<RunOutcome, PipelineError> {
    let started = chrono::Utc::now();
    let mut progress = Progress::new(opts.run.quiet);
    let bytes = crate::model::read_bytes(&opts.model)?;
    let model = SavedModel::from_bytes(&opts.model, &bytes)?;
    let ids: Vec<usize> = model.topics.iter().map(|t| t.id).collect();
    let sha = crate::model::sha256_hex(&bytes);
    let n_features = model.stems.len();
    let agg = progress.stage(
        "aggregates",
        |_| tables::aggregates::read(&opts.aggregates, &ids, n_features, &sha),
        |a: &Aggregates| {
            format!(
                "{} documents from {} inputs",
                thousands(a.documents()),
                a.sources.len()
            )
        },
    )?;
    let analysis = summed::analysis(settings, model, agg, &mut progress)?;
    for line in prepare::skipped_summary(&analysis.corpus.skipped) {
        progress.warn(&line);
    }
    report_folder::write_report(
        "report",
        settings,
        &analysis,
        &opts.run,
        started,
        &mut progress,
    )
}
