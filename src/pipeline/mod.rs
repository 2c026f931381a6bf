//! The one place that runs the stages in order:
//!
//! ```text
//! prepare: ingest -> clean -> tokenize
//! fit:     vectorize (TF-IDF) -> reduce (LSA) -> cluster (k-means) -> describe -> trends -> evaluate
//! present: export (CSV, JSON) / charts (PNG, SVG) -> report (HTML)
//! ```
//!
//! `run` is prepare, fit and present; `assign` is prepare and the saved model's projection.
//! Both stage their report folder so it appears whole, and both write `run.json`
//! ([`run_info`]). Each stage is built from its part of [`Settings`]; this module decides
//! nothing about how a stage works.

mod assign;
mod error;
mod fit;
mod prepare;
mod run_info;

pub use assign::{default_root as default_assign_root, AssignOptions, Assignment};
pub use error::PipelineError;
pub use prepare::{LeftOut, Prepared};

use crate::config::Settings;
use crate::export::{self, tables};
use crate::ingest::Corpus;
use crate::model::SavedModel;
use crate::output::{Destination, Staging};
use crate::progress::Progress;
use std::path::PathBuf;

/// How a run is invoked (beyond the pipeline file).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Write the report exactly here instead of the pipeline's history folder.
    pub out: Option<PathBuf>,
    pub quiet: bool,
}

/// What a finished run (or assignment) reports back.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub dir: PathBuf,
    pub documents: usize,
    pub k: usize,
    pub warnings: Vec<String>,
}

/// Runs the whole pipeline and writes the report.
pub fn run(settings: &Settings, opts: &RunOptions) -> Result<RunOutcome, PipelineError> {
    let started = chrono::Utc::now();
    let mut progress = Progress::new(opts.quiet);
    let previous = fit::previous_topics(settings, opts.out.as_deref(), &progress)?;
    let prepared = prepare::prepare(
        &settings.inputs,
        settings.output.on_bad_document,
        &settings.tokenize,
        &mut progress,
    )?;
    let analysis = fit::fit(settings, prepared, previous, &mut progress)?;

    let dest = match &opts.out {
        Some(dir) => Destination::Exact(dir.clone()),
        None => Destination::History {
            root: settings.output.dir.clone(),
        },
    };
    let staging = Staging::begin(dest, &stamp(started))?;
    let dir = staging.path().to_path_buf();
    let mut warnings = prepare::skipped_summary(&analysis.corpus.skipped);
    warnings.extend(analysis.warnings.iter().cloned());
    crate::present::write_all(
        settings,
        &analysis,
        &dir,
        started,
        &mut warnings,
        &mut progress,
    )?;
    run_info::write_run(&dir, settings, &analysis, started, &progress, &warnings)?;
    let final_dir = staging.commit()?;
    progress.done("report", &final_dir);
    Ok(RunOutcome {
        dir: final_dir,
        documents: analysis.corpus.len(),
        k: analysis.clustering.k(),
        warnings,
    })
}

/// Ingest and parse every input, without clustering (`topicmap check`).
pub fn check(settings: &Settings, quiet: bool) -> Result<Corpus, PipelineError> {
    let mut progress = Progress::new(quiet);
    prepare::ingest_stage(
        &settings.inputs,
        settings.output.on_bad_document,
        &mut progress,
    )
}

/// Places new documents into a saved model's topics and writes `documents.csv` and the trend
/// tables for the new batch.
pub fn assign(opts: &AssignOptions) -> Result<RunOutcome, PipelineError> {
    let started = chrono::Utc::now();
    let mut progress = Progress::new(opts.quiet);
    let model = SavedModel::load(&opts.model)?;
    let a = assign::assign(&model, opts, &mut progress)?;
    let dest = match &opts.out {
        Some(dir) => Destination::Exact(dir.clone()),
        None => Destination::History {
            root: assign::default_root(&opts.model, &model.name),
        },
    };
    let staging = Staging::begin(dest, &stamp(started))?;
    let dir = staging.path().to_path_buf();
    let documents = tables::documents(&a.corpus, &a.clustering, &a.summary);
    export::csv_file(&dir, "documents", &documents)?;
    export::csv_file(
        &dir,
        "topic_trends",
        &tables::topic_trends(&a.summary, &a.trends),
    )?;
    export::csv_file(&dir, "trends", &tables::trends(&a.summary, &a.trends))?;
    let warnings = prepare::skipped_summary(&a.corpus.skipped);
    run_info::write_assign(
        &dir,
        &opts.model,
        &a.corpus,
        a.clustering.sizes(),
        started,
        &progress,
        &warnings,
    )?;
    let final_dir = staging.commit()?;
    let (n, k) = (a.corpus.len(), a.clustering.k());
    progress.info(&format!(
        "assigned  {n} documents to {k} topics: {}",
        final_dir.display()
    ));
    Ok(RunOutcome {
        dir: final_dir,
        documents: n,
        k,
        warnings,
    })
}

/// A run's folder name in a history layout: its UTC start time.
fn stamp(started: chrono::DateTime<chrono::Utc>) -> String {
    started.format("%Y%m%dT%H%M%SZ").to_string()
}
