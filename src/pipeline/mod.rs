//! The one place that runs the stages in order:
//!
//! ```text
//! prepare: ingest -> clean -> tokenize
//! fit:     vectorize (TF-IDF) -> reduce (LSA) -> cluster (k-means) -> describe -> trends -> evaluate
//! present: export (CSV, JSON) / charts (PNG, SVG) -> report (HTML)
//! ```
//!
//! `run` is prepare, fit and present; `assign` is prepare and the saved model's projection.
//! With `[cluster] fit-sample` a run streams instead ([`stream`]): prepare and fit a sample,
//! then prepare and assign the inputs chunk by chunk into sums, and present from the sums
//! ([`summed`]), as `topicmap report` does from sums made elsewhere (Spark).
//! Both stage their report folder so it appears whole, and both write `run.json`
//! ([`run_info`]). Each stage is built from its part of [`Settings`]; this module decides
//! nothing about how a stage works.

mod assign;
mod error;
mod fit;
mod prepare;
mod run_info;
mod stream;
mod summed;

pub use assign::{
    default_root as default_assign_root, AssignOptions, AssignOutput, Assignment, StreamInput,
};
pub use error::PipelineError;
pub use prepare::{LeftOut, Prepared};

use crate::config::Settings;
use crate::ingest::Corpus;
use crate::model::SavedModel;
use crate::progress::Progress;
use crate::staging::{Destination, Staging};
use crate::tables::{self, frames};
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
    let prepared = prepare::prepare(
        &settings.inputs,
        settings.output.on_bad_document,
        &settings.tokenize,
        &mut progress,
    )?;
    let analysis = fit::fit(settings, prepared, previous, &mut progress)?;
    write_report("run", settings, &analysis, opts, started, &mut progress)
}

/// What `topicmap report` was asked to do.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// The model the documents were assigned with (a report folder or its `model.json`).
    pub model: PathBuf,
    /// The aggregates folder (see `tables::aggregates`).
    pub aggregates: PathBuf,
    pub run: RunOptions,
}

/// Builds the report of a model and the sums of the documents assigned with it (an engine's
/// aggregates), without the documents, and writes it as a run writes its own.
pub fn report(settings: &Settings, opts: &ReportOptions) -> Result<RunOutcome, PipelineError> {
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
        |a: &crate::describe::aggregate::Aggregates| {
            format!(
                "{} documents from {} inputs",
                crate::progress::thousands(a.documents()),
                a.sources.len()
            )
        },
    )?;
    let analysis = summed::analysis(settings, model, agg, &mut progress)?;
    for line in prepare::skipped_summary(&analysis.corpus.skipped) {
        progress.warn(&line);
    }
    write_report(
        "report",
        settings,
        &analysis,
        &opts.run,
        started,
        &mut progress,
    )
}

/// Writes an analysis's report folder (staged, so it appears whole) with its `run.json`.
fn write_report(
    command: &'static str,
    settings: &Settings,
    analysis: &crate::render::Analysis,
    opts: &RunOptions,
    started: chrono::DateTime<chrono::Utc>,
    progress: &mut Progress,
) -> Result<RunOutcome, PipelineError> {
    let staging = begin_staging(settings, opts, started)?;
    finish_report(command, settings, analysis, staging, started, progress)
}

/// The staged report folder of a run: `--out`, else a dated folder in the pipeline's history.
fn begin_staging(
    settings: &Settings,
    opts: &RunOptions,
    started: chrono::DateTime<chrono::Utc>,
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
fn finish_report(
    command: &'static str,
    settings: &Settings,
    analysis: &crate::render::Analysis,
    staging: Staging,
    started: chrono::DateTime<chrono::Utc>,
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

/// Ingest and parse every input, without clustering (`topicmap check`).
pub fn check(settings: &Settings, quiet: bool) -> Result<Corpus, PipelineError> {
    let mut progress = Progress::new(quiet);
    prepare::ingest_stage(
        &settings.inputs,
        settings.output.on_bad_document,
        &mut progress,
    )
}

/// Places new documents into a saved model's topics and writes `documents` and the trend tables
/// for the new batch into a folder (with the sums, for `--aggregates`), or the documents table
/// as an Arrow stream on stdout.
pub fn assign(opts: &AssignOptions) -> Result<RunOutcome, PipelineError> {
    let started = chrono::Utc::now();
    let mut progress = Progress::new(opts.quiet);
    let model_bytes = crate::model::read_bytes(&opts.model)?;
    let placer = assign::Placer::new(SavedModel::from_bytes(&opts.model, &model_bytes)?);
    let corpus = match &opts.stdin {
        None => None,
        Some(s) => {
            let mut raw = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut raw).map_err(
                |source| crate::ingest::IngestError::Io {
                    path: "stdin".into(),
                    source,
                },
            )?;
            let corpus = progress.stage(
                "ingest",
                |_| {
                    crate::ingest::ingest_arrow(
                        &raw,
                        &s.name,
                        &s.spec,
                        s.source_column.as_deref(),
                        opts.on_bad,
                    )
                },
                |c: &Corpus| format!("{} docs from stdin", c.len()),
            )?;
            for line in prepare::skipped_summary(&corpus.skipped) {
                progress.warn(&line);
            }
            Some(corpus)
        }
    };
    let (formats, aggregates, dir) = match &opts.out {
        AssignOutput::Arrow { emit_terms } => {
            let a = assign::assign(&placer, opts, corpus, *emit_terms, &mut progress)?;
            let p = &a.placed;
            let mut df = frames::documents(&p.corpus, &p.clustering, &a.summary);
            if let Some(features) = &p.features {
                df = frames::documents_with_terms(df, &p.corpus, &a.periods, features)
                    .map_err(|e| export_error("stdout", e))?;
            }
            let out = std::io::BufWriter::new(std::io::stdout().lock());
            tables::arrow_stream(out, &df).map_err(|e| export_error("stdout", e))?;
            return Ok(RunOutcome {
                dir: PathBuf::from("-"),
                documents: p.corpus.len(),
                k: p.clustering.k(),
                warnings: prepare::skipped_summary(&p.corpus.skipped),
            });
        }
        AssignOutput::Dir {
            dir,
            formats,
            aggregates,
        } => (formats, *aggregates, dir),
    };
    let a = assign::assign(&placer, opts, corpus, aggregates.is_some(), &mut progress)?;
    let dest = match dir {
        Some(dir) => Destination::Exact(dir.clone()),
        None => Destination::History {
            root: assign::default_root(&opts.model, &placer.model.name),
        },
    };
    let staging = Staging::begin(dest, &stamp(started))?;
    let dir = staging.path().to_path_buf();
    let p = &a.placed;
    let documents = frames::documents(&p.corpus, &p.clustering, &a.summary);
    let topic_trends = frames::topic_trends(&a.summary, &a.trends);
    let trends = frames::trends(&a.summary, &a.trends);
    for (name, df) in [
        ("documents", &documents),
        ("topic_trends", &topic_trends),
        ("trends", &trends),
    ] {
        for f in formats {
            match f {
                tables::OutputFormat::Csv => tables::csv_file(&dir, name, df)?,
                tables::OutputFormat::Parquet => tables::parquet_file(&dir, name, df)?,
                tables::OutputFormat::Xlsx => {}
            }
        }
    }
    if let Some(keep) = aggregates {
        let mut agg = placer.aggregates(keep);
        p.add_to(&mut agg, opts.period);
        let sub = dir.join("aggregates");
        std::fs::create_dir_all(&sub).map_err(|source| tables::ExportError::Io {
            path: sub.clone(),
            source,
        })?;
        let meta = tables::aggregates::Meta {
            format: tables::aggregates::FORMAT.into(),
            version: tables::aggregates::VERSION,
            model_sha256: crate::model::sha256_hex(&model_bytes),
            representatives: keep,
        };
        tables::aggregates::write(&sub, &agg, &meta)?;
    }
    let warnings = prepare::skipped_summary(&p.corpus.skipped);
    run_info::write_assign(
        &dir,
        &opts.model,
        &p.corpus,
        p.clustering.sizes(),
        started,
        &progress,
        &warnings,
    )?;
    let final_dir = staging.commit()?;
    let (n, k) = (p.corpus.len(), p.clustering.k());
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

fn export_error(path: &str, source: polars::prelude::PolarsError) -> PipelineError {
    tables::ExportError::Table {
        path: path.into(),
        source,
    }
    .into()
}

/// A run's folder name in a history layout: its UTC start time.
fn stamp(started: chrono::DateTime<chrono::Utc>) -> String {
    started.format("%Y%m%dT%H%M%SZ").to_string()
}
