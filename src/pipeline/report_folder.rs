//! Report folder: where a run's (or `topicmap report`'s) files go, staged so the folder appears
//! whole, with its `run.json` written last.
//!
//! A report folder is `--out` when given, else a dated folder in the pipeline's history
//! (`staging::Destination`). Both the in-memory run and the streaming run write through here;
//! the streaming run begins the folder early (its documents table is written during the second
//! pass) and finishes it at the end.

use super::{prepare, run_info, PipelineError, RunOptions, RunOutcome};
use crate::config::Settings;
use crate::progress::Progress;
use crate::render::Analysis;
use crate::staging::{Destination, Staging};
use chrono::{DateTime, Utc};

/// Writes an analysis's report folder (staged, so it appears whole) with its `run.json`.
pub(super) fn write_report(
    command: &'static str,
    settings: &Settings,
    analysis: &Analysis,
    opts: &RunOptions,
    started: DateTime<Utc>,
    progress: &mut Progress,
) -> Result<RunOutcome, PipelineError> {
    let staging = begin_staging(settings, opts, started)?;
    finish_report(command, settings, analysis, staging, started, progress)
}

/// The staged report folder of a run: `--out`, else a dated folder in the pipeline's history.
pub(super) fn begin_staging(
    settings: &Settings,
    opts: &RunOptions,
    started: DateTime<Utc>,
) -> Result<Staging, PipelineError> {
    let dest = match &opts.out {
        Some(dir) => Destination::Exact(dir.clone()),
        None => Destination::History {
            root: settings.output.dir.clone(),
        },
    };
    Ok(Staging::begin(dest, &stamp(started))?)
}

/// Writes the report of `analysis` into `staging` with its `run.json`, and puts it in place.
pub(super) fn finish_report(
    command: &'static str,
    settings: &Settings,
    analysis: &Analysis,
    staging: Staging,
    started: DateTime<Utc>,
    progress: &mut Progress,
) -> Result<RunOutcome, PipelineError> {
    let dir = staging.path().to_path_buf();
    let mut warnings = prepare::skipped_summary(&analysis.corpus.skipped);
    warnings.extend(analysis.warnings.iter().cloned());
    crate::render::write_all(settings, analysis, &dir, started, &mut warnings, progress)?;
    run_info::write_run(
        command, &dir, settings, analysis, started, progress, &warnings,
    )?;
    let final_dir = staging.commit()?;
    progress.done("report", &final_dir);
    Ok(RunOutcome {
        dir: final_dir,
        documents: analysis.summary.documents,
        k: analysis.clustering.k(),
        warnings,
    })
}

/// A run's folder name in a history layout: its UTC start time.
pub(super) fn stamp(started: DateTime<Utc>) -> String {
    started.format("%Y%m%dT%H%M%SZ").to_string()
}
