//! The one place that runs the stages in order:
//!
//! ```text
//! prepare: ingest -> clean -> (embed, with a sentence model) -> tokenize
//! fit:     vectorize (TF-IDF) -> reduce (LSA) -> cluster (k-means) -> describe -> trends -> evaluate
//! render:  tables (CSV, Parquet, JSON) / workbook (XLSX) / charts (PNG, SVG) -> html (HTML)
//! ```
//!
//! `run` is prepare, fit and render ([`prepare`], [`fit`], then the report folder:
//! [`report_folder`]). With `[cluster] fit-sample` a run streams instead ([`stream`]): prepare
//! and fit a sample, then prepare and place the inputs chunk by chunk ([`place`]) into sums,
//! and render from the sums ([`summed`]), as `topicmap report` does from sums made elsewhere
//! (Spark; [`report_from_sums`]). `topicmap assign` is prepare and the saved model's placement
//! ([`assign`]). A fit and a report from sums name and merge their topics the same way
//! ([`topics`]); every report folder gets its `run.json` ([`run_info`]). Each stage is built
//! from its part of [`Settings`]; this module decides nothing about how a stage works.

mod assign;
mod assign_defaults;
mod error;
mod fit;
mod guides;
mod place;
mod prepare;
mod report_folder;
mod report_from_sums;
mod run_info;
mod stream;
mod summed;
mod topics;

pub use assign::{
    assign, default_root as default_assign_root, AssignFolder, AssignOptions, AssignOutput,
    Assignment, StreamInput,
};
pub use error::PipelineError;
pub use prepare::{LeftOut, Prepared, DETECTION_SEED};
pub use report_from_sums::{report_from_sums, SumsReportOptions};

use crate::config::Settings;
use crate::ingest::Corpus;
use crate::progress::Progress;
use error::table_error;
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
    if let Some(n) = settings.cluster.fit_sample() {
        return stream::run(settings, opts, n);
    }
    let started = chrono::Utc::now();
    let mut progress = Progress::new(opts.quiet);
    let previous = fit::previous_topics(settings, opts.out.as_deref(), &progress)?;
    let model = fit::FitModel::new(settings);
    let prepared = prepare::prepare(
        &settings.inputs,
        settings.output.on_bad_document,
        prepare::Cleaning::Fit(&settings.clean),
        &settings.tokenize,
        model.embedder(settings),
        &mut progress,
    )?;
    // `language = "auto"` resolved on the documents: the model and run.json say what was chosen.
    let settings = &Settings {
        tokenize: prepared.tokenizer.clone(),
        ..settings.clone()
    };
    let analysis = fit::fit(settings, (prepared, model), previous, &mut progress)?;
    report_folder::write_report("run", settings, &analysis, opts, started, &mut progress)
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
