//! `topicmap assign`: new documents into a saved model's topics, without refitting.
//!
//! The documents come from files or, as an Arrow IPC stream, from stdin (an engine's
//! partition); they are prepared as a fit prepares its own and placed into the model's topics
//! ([`super::place`]). The batch goes to a folder (the documents and trend tables, `run.json`,
//! and with `--aggregates` the sums `topicmap report` reads), or as the documents table in an
//! Arrow stream to stdout.

use super::place::{self, Placed, Placer};
use super::report_folder::stamp;
use super::{prepare, run_info, table_error, PipelineError, RunOutcome};
use crate::describe::trends::{self, Trends};
use crate::describe::TopicSummary;
use crate::ingest::{Corpus, InputSpec, OnBadDocument, PeriodUnit};
use crate::model::SavedModel;
use crate::progress::Progress;
use crate::staging::{Destination, Staging};
use crate::tables::{self, aggregates, frames, OutputFormat};
use chrono::{DateTime, Utc};
use std::path::{Path, PathBuf};

/// What `topicmap assign` was asked to do.
#[derive(Debug, Clone)]
pub struct AssignOptions {
    /// A report folder holding `model.json`, or the file itself.
    pub model: PathBuf,
    /// Input files (none when the documents come on stdin).
    pub inputs: Vec<InputSpec>,
    /// Documents on stdin as an Arrow IPC stream, instead of files.
    pub stdin: Option<StreamInput>,
    pub out: AssignOutput,
    /// `None`: the model's (see `assign_defaults`), else year.
    pub period: Option<PeriodUnit>,
    /// `None`: the model's (see `assign_defaults`), else skip.
    pub on_bad: Option<OnBadDocument>,
    /// The settings taken from the model's pipeline, as `key = value` (filled by
    /// `assign_defaults::resolve`).
    pub from_model: Vec<String>,
    pub quiet: bool,
}

/// An Arrow IPC stream on stdin: its columns (`spec`'s text, id, time, label), the name its
/// rows are shown under, or the column naming each row's input file, and the column giving
/// each row's row in that file (else rows are numbered in stream order).
#[derive(Debug, Clone)]
pub struct StreamInput {
    pub spec: InputSpec,
    pub name: String,
    pub source_column: Option<String>,
    pub row_column: Option<String>,
}

/// Where `topicmap assign` writes.
#[derive(Debug, Clone)]
pub enum AssignOutput {
    /// A folder (see [`AssignFolder`]).
    Dir(AssignFolder),
    /// The documents table as an Arrow IPC stream on stdout; with `emit_terms`, each row's
    /// feature counts too, and a row per skipped document (see `tables::documents_with_terms`).
    Arrow { emit_terms: bool },
}

/// The folder `topicmap assign` writes: `documents` and the trend tables in `formats` (CSV,
/// Parquet), `run.json`, and with `aggregates`, the sums (`aggregates/`, keeping that many
/// representatives per topic).
#[derive(Debug, Clone)]
pub struct AssignFolder {
    /// `None`: a dated folder beside the model's (see [`default_root`]).
    pub dir: Option<PathBuf>,
    pub formats: Vec<OutputFormat>,
    pub aggregates: Option<usize>,
}

/// Places new documents into a saved model's topics and writes `documents` and the trend tables
/// for the new batch into a folder (with the sums, for `--aggregates`), or the documents table
/// as an Arrow stream on stdout.
pub fn assign(opts: &AssignOptions) -> Result<RunOutcome, PipelineError> {
    let started = Utc::now();
    let mut progress = Progress::new(opts.quiet);
    let model_bytes = crate::model::read_bytes(&opts.model)?;
    let placer = Placer::new(SavedModel::from_bytes(&opts.model, &model_bytes)?)?;
    let opts = &super::assign_defaults::resolve(opts, &placer.model);
    if let Some(line) = opts.from_model_line() {
        progress.note(&line);
    }
    let corpus = match &opts.stdin {
        None => None,
        Some(s) => Some(read_stdin(s, opts.on_bad(), &mut progress)?),
    };
    match &opts.out {
        AssignOutput::Arrow { emit_terms } => {
            let batch = assign_batch(&placer, opts, corpus, *emit_terms, &mut progress)?;
            to_stdout(&batch)
        }
        AssignOutput::Dir(folder) => {
            let features = folder.aggregates.is_some();
            let batch = assign_batch(&placer, opts, corpus, features, &mut progress)?;
            let model_sha256 = crate::model::sha256_hex(&model_bytes);
            to_folder(
                &placer,
                opts,
                folder,
                &batch,
                &model_sha256,
                started,
                &progress,
            )
        }
    }
}

/// Reads the Arrow IPC stream on stdin into a corpus, with its warnings.
fn read_stdin(
    s: &StreamInput,
    on_bad: OnBadDocument,
    progress: &mut Progress,
) -> Result<Corpus, PipelineError> {
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut raw).map_err(|source| {
        crate::ingest::IngestError::Io {
            path: "stdin".into(),
            source,
        }
    })?;
    let corpus = progress.stage(
        "ingest",
        |_| {
            let columns = (s.source_column.as_deref(), s.row_column.as_deref());
            crate::ingest::ingest_arrow(&raw, &s.name, &s.spec, columns, on_bad)
        },
        |c: &Corpus| format!("{} docs from stdin", c.len()),
    )?;
    for line in prepare::skipped_summary(&corpus.skipped) {
        progress.warn(&line);
    }
    Ok(corpus)
}

/// Writes the batch's documents table (with each row's feature counts, when placed with them)
/// as an Arrow IPC stream to stdout.
fn to_stdout(batch: &Assignment) -> Result<RunOutcome, PipelineError> {
    let p = &batch.placed;
    let mut df = frames::documents(&p.corpus, &p.clustering, &batch.summary, &p.map);
    if let Some(features) = &p.features {
        df = frames::documents_with_terms(df, &p.corpus, &batch.periods, features)
            .map_err(|e| table_error("stdout", e))?;
    }
    let out = std::io::BufWriter::new(std::io::stdout().lock());
    tables::arrow_stream(out, &df).map_err(|e| table_error("stdout", e))?;
    Ok(RunOutcome {
        dir: PathBuf::from("-"),
        documents: p.corpus.len(),
        k: p.clustering.k(),
        warnings: prepare::skipped_summary(&p.corpus.skipped),
    })
}

/// Writes the batch into its folder (staged, so it appears whole): the tables, the sums when
/// asked, and `run.json`.
fn to_folder(
    placer: &Placer,
    opts: &AssignOptions,
    folder: &AssignFolder,
    batch: &Assignment,
    model_sha256: &str,
    started: DateTime<Utc>,
    progress: &Progress,
) -> Result<RunOutcome, PipelineError> {
    let dest = match &folder.dir {
        Some(dir) => Destination::Exact(dir.clone()),
        None => Destination::History {
            root: default_root(&opts.model, &placer.model.name),
        },
    };
    let staging = Staging::begin(dest, &stamp(started))?;
    let dir = staging.path().to_path_buf();
    write_tables(&dir, batch, &folder.formats)?;
    if let Some(keep) = folder.aggregates {
        write_aggregates(
            &dir,
            placer,
            &batch.placed,
            keep,
            opts.period(),
            model_sha256,
        )?;
    }
    let p = &batch.placed;
    let warnings = prepare::skipped_summary(&p.corpus.skipped);
    let batch = run_info::Batch {
        model: &opts.model,
        clean: &placer.model.cleaner().report(Some(p.cleaned)),
        from_model: &opts.from_model,
        corpus: &p.corpus,
        sizes: p.clustering.sizes(),
    };
    run_info::write_assign(&dir, batch, started, progress, &warnings)?;
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

/// The batch's `documents`, `topic_trends` and `trends` tables in each of `formats` (CSV,
/// Parquet; the workbook is a run's).
fn write_tables(
    dir: &Path,
    batch: &Assignment,
    formats: &[OutputFormat],
) -> Result<(), PipelineError> {
    let p = &batch.placed;
    let documents = frames::documents(&p.corpus, &p.clustering, &batch.summary, &p.map);
    let topic_trends = frames::topic_trends(&batch.summary, &batch.trends);
    let trends = frames::trends(&batch.summary, &batch.trends);
    for (name, df) in [
        ("documents", &documents),
        ("topic_trends", &topic_trends),
        ("trends", &trends),
    ] {
        for f in formats {
            match f {
                OutputFormat::Csv => tables::csv_file(dir, name, df)?,
                OutputFormat::Parquet => tables::parquet_file(dir, name, df)?,
                OutputFormat::Xlsx => {}
            }
        }
    }
    Ok(())
}

/// The sums of the batch (periods bucketed by `period`, `keep` representatives per topic) in
/// `dir/aggregates`, naming the model by its sha256.
fn write_aggregates(
    dir: &Path,
    placer: &Placer,
    placed: &Placed,
    keep: usize,
    period: PeriodUnit,
    model_sha256: &str,
) -> Result<(), PipelineError> {
    let mut agg = placer.aggregates(keep);
    placed.add_to(&mut agg, period);
    let sub = dir.join("aggregates");
    std::fs::create_dir_all(&sub).map_err(|source| tables::ExportError::Io {
        path: sub.clone(),
        source,
    })?;
    let meta = aggregates::Meta {
        format: aggregates::FORMAT.into(),
        version: aggregates::VERSION,
        model_sha256: model_sha256.to_string(),
        representatives: keep,
    };
    aggregates::write(&sub, &agg, &meta)?;
    Ok(())
}

/// New documents placed into saved topics.
#[derive(Debug)]
pub struct Assignment {
    pub placed: Placed,
    /// The model's topics with this batch's sizes.
    pub summary: TopicSummary,
    /// Each document's period.
    pub periods: Vec<String>,
    pub trends: Trends,
}

/// Places the documents of `corpus` (read already, e.g. from an Arrow stream; `None`: read
/// `opts.inputs`) into `placer`'s topics, with each document's feature counts when `features`.
fn assign_batch(
    placer: &Placer,
    opts: &AssignOptions,
    corpus: Option<Corpus>,
    features: bool,
    progress: &mut Progress,
) -> Result<Assignment, PipelineError> {
    let model = &placer.model;
    let cleaning = prepare::Cleaning::Apply(model.cleaner());
    let embedder = placer.embedder();
    let corpus = match corpus {
        Some(c) => c,
        None => prepare::ingest_stage(&opts.inputs, opts.on_bad(), progress)?,
    };
    let prepared = prepare::prepare_corpus(
        corpus,
        opts.on_bad(),
        cleaning,
        &model.tokenize,
        embedder,
        progress,
    )?;
    let placed = place::place(placer, prepared, features, progress)?;
    let clustering = &placed.clustering;
    let summary = placer.summary(
        clustering.sizes(),
        &crate::describe::outlier_counts(clustering),
    );
    let periods: Vec<String> = placed
        .corpus
        .documents
        .iter()
        .map(|d| d.period(opts.period()))
        .collect();
    let trends = trends::trends(&periods, clustering.assignments(), clustering.k());
    Ok(Assignment {
        placed,
        summary,
        periods,
        trends,
    })
}

/// Where assignments go without `--out`: `<pipeline output>-assigned/` beside the model's own
/// pipeline folder (`output/x/latest` or `output/x/runs/<stamp>` give
/// `output/x-assigned`), or `<name>-assigned` beside any other model folder.
pub fn default_root(model_path: &Path, model_name: &str) -> PathBuf {
    let dir = if model_path.is_file() {
        model_path.parent().unwrap_or(Path::new("."))
    } else {
        model_path
    };
    let parent = dir.parent();
    let pipeline_dir = match (dir.file_name(), parent) {
        (Some(n), Some(p)) if n == "latest" => Some(p),
        (_, Some(p)) if p.file_name().is_some_and(|n| n == "runs") => p.parent(),
        _ => None,
    };
    match pipeline_dir {
        Some(p) => {
            let name = p.file_name().map_or_else(
                || model_name.to_string(),
                |n| n.to_string_lossy().to_string(),
            );
            p.with_file_name(format!("{name}-assigned"))
        }
        None => parent
            .unwrap_or(Path::new("."))
            .join(format!("{model_name}-assigned")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_go_beside_the_models_pipeline_folder() {
        let r = |p: &str| default_root(Path::new(p), "nips");
        assert_eq!(
            r("output/nips/latest"),
            PathBuf::from("output/nips-assigned")
        );
        assert_eq!(
            r("/data/out/nips/runs/20261201T000000Z"),
            PathBuf::from("/data/out/nips-assigned")
        );
        assert_eq!(r("/tmp/fit"), PathBuf::from("/tmp/nips-assigned"));
    }
}
