//! Stream: a run over more documents than memory holds (`[cluster] fit-sample = N`).
//!
//! ```text
//! pass 1: stream the inputs -> seeded reservoir sample of N documents -> fit (as `run`)
//! pass 2: stream the inputs -> per chunk: clean, tokenize, place (as `assign`) -> sums
//!         + the chunk's documents table (without labels, to a part file)
//! report: the sums -> topics, terms, labels, trends, scores (pipeline::summed)
//!         -> documents.csv from the parts, labelled -> the usual report
//! ```
//!
//! Memory is bounded by the sample's fit, one chunk, and the sums (topics x features): not by
//! the corpus. Labels, terms and trends come from every document's counts; the sample only
//! decides the topics. The sample is drawn with the pipeline's seed by keys of each row's file
//! and row, so the same inputs and seed give the same sample, and the same report.

use super::assign::{self, Placer};
use super::{prepare, summed, PipelineError, RunOptions, RunOutcome};
use crate::config::Settings;
use crate::describe::aggregate::Aggregates;
use crate::ingest::stream::{self, StreamOptions};
use crate::ingest::{Corpus, Renamed, SourceFile};
use crate::progress::{thousands, Progress};
use crate::render::{DocumentsHead, Scope};
use crate::tables::{self, csv::CsvAppender, frames, OutputFormat};
use polars::prelude::*;
use std::path::{Path, PathBuf};

/// Bytes of a CSV or TSV file per chunk (about 110,000 abstracts).
const CHUNK_BYTES: usize = 128 << 20;
/// Representatives kept per topic in the sums.
const KEEP: usize = 10;
/// A progress line every this many documents.
const REPORT_EVERY: usize = 1_000_000;

/// Runs the pipeline in two passes over the inputs (see the module docs).
pub fn run(
    settings: &Settings,
    opts: &RunOptions,
    fit_sample: usize,
) -> Result<RunOutcome, PipelineError> {
    let started = chrono::Utc::now();
    let mut progress = Progress::new(opts.quiet);
    let on_bad = settings.output.on_bad_document;
    let previous = super::fit::previous_topics(settings, opts.out.as_deref(), &progress)?;

    let quiet = opts.quiet;
    let sample = progress.stage(
        "sample",
        |bar| reservoir(settings, fit_sample, bar, quiet),
        |s: &Sample| {
            format!(
                "{} of {} documents",
                thousands(s.corpus.len()),
                thousands(s.seen)
            )
        },
    )?;
    let seen = sample.seen;
    let prepared =
        prepare::prepare_corpus(sample.corpus, on_bad, &settings.tokenize, &mut progress)?;
    let fit = super::fit::fit(settings, prepared, previous, &mut progress)?;
    let meta = crate::model::ModelMeta {
        name: &settings.name,
        title: &settings.title,
        tokenizer: &settings.tokenize,
    };
    let model = crate::render::table_files::saved_model(meta, &fit);
    let placer = Placer::new(model.clone());
    // What the report keeps of the fit; the rest (the sample's documents, vectors, map) goes
    // before the second pass.
    let crate::render::Analysis {
        k_selection,
        drift,
        warnings: fit_warnings,
        metrics: fit_metrics,
        ..
    } = fit;

    let staging = super::begin_staging(settings, opts, started)?;
    let dir = staging.path().to_path_buf();
    let parts_dir = dir.join(".documents-parts");
    std::fs::create_dir_all(&parts_dir).map_err(|source| tables::ExportError::Io {
        path: parts_dir.clone(),
        source,
    })?;
    let passed = progress.stage(
        "assign",
        |bar| assign_all(settings, &placer, &parts_dir, bar, quiet, seen),
        |p: &Pass| {
            format!(
                "{} documents in {} chunks",
                thousands(p.aggregates.documents()),
                p.parts.len()
            )
        },
    )?;
    let Pass {
        aggregates,
        parts,
        sources,
        renamed,
    } = passed;
    for r in renamed.iter().take(5) {
        progress.warn(&r.to_string());
    }
    let mut analysis = summed::analysis(settings, model, aggregates, &mut progress)?;
    analysis.corpus.sources = sources;
    analysis.corpus.renamed = renamed;
    analysis.k_selection = k_selection;
    analysis.drift = drift;
    analysis.warnings.extend(fit_warnings);
    if let (Some(m), Some(f)) = (&mut analysis.metrics, &fit_metrics) {
        // The silhouette needs vectors: it is the sample's.
        m.silhouette = f.silhouette;
        m.silhouette_sample = f.silhouette_sample;
    }
    for line in prepare::skipped_summary(&analysis.corpus.skipped) {
        progress.warn(&line);
    }
    let formats = &settings.output.formats;
    let head = if formats.contains(&OutputFormat::Xlsx) {
        settings.output.workbook_documents
    } else {
        0
    };
    let written = progress.stage(
        "documents",
        |_| write_documents(&dir, &parts, &analysis.summary, formats, head),
        |h: &DocumentsHead| format!("documents.csv, {} rows", thousands(h.total)),
    )?;
    if let Scope::Summed { documents, .. } = &mut analysis.scope {
        *documents = Some(written);
    }
    std::fs::remove_dir_all(&parts_dir).map_err(|source| tables::ExportError::Io {
        path: parts_dir.clone(),
        source,
    })?;
    super::finish_report("run", settings, &analysis, staging, started, &mut progress)
}

/// The sample of pass 1.
struct Sample {
    corpus: Corpus,
    /// Documents streamed.
    seen: usize,
}

/// Pass 1: a seeded sample of `n` documents (see `ingest::stream::sample`), in input order.
fn reservoir(
    settings: &Settings,
    n: usize,
    bar: &indicatif::ProgressBar,
    quiet: bool,
) -> Result<Sample, PipelineError> {
    let opts = StreamOptions {
        chunk_bytes: CHUNK_BYTES,
        on_bad: settings.output.on_bad_document,
        dedupe: false,
    };
    let mut reported = 0;
    let (corpus, seen) =
        stream::sample(&settings.inputs, opts, settings.cluster.seed(), n, |seen| {
            if seen / REPORT_EVERY > reported {
                reported = seen / REPORT_EVERY;
                note(
                    bar,
                    quiet,
                    &format!("sample    {} documents read", thousands(seen)),
                );
            }
        })?;
    Ok(Sample { corpus, seen })
}

/// What pass 2 found.
struct Pass {
    aggregates: Aggregates,
    /// The documents tables (without labels), one part file per chunk, in input order.
    parts: Vec<PathBuf>,
    sources: Vec<SourceFile>,
    renamed: Vec<Renamed>,
}

/// Pass 2: every document placed into the model's topics, chunk by chunk. Three threads overlap:
/// the reader parses the next chunk, this one cleans, tokenizes and places the current one (on
/// every core), and a sink adds the one before to the sums and writes its part file.
fn assign_all(
    settings: &Settings,
    placer: &Placer,
    parts_dir: &Path,
    bar: &indicatif::ProgressBar,
    quiet: bool,
    total: usize,
) -> Result<Pass, PipelineError> {
    let on_bad = settings.output.on_bad_document;
    let opts = StreamOptions {
        chunk_bytes: CHUNK_BYTES,
        on_bad,
        dedupe: true,
    };
    let analyzer = crate::tokenize::Analyzer::new(&placer.model.tokenize);
    let quiet_progress = Progress::new(true);
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<assign::Placed>(1);
        let sink = scope.spawn(move || sink(settings, placer, parts_dir, rx));
        let mut done = 0usize;
        let streamed = stream::stream(&settings.inputs, opts, |_, chunk: Corpus| {
            let prepared = prepare::prepare_chunk(chunk, on_bad, &analyzer)?;
            let placed = assign::place(placer, prepared, true, &quiet_progress)?;
            let before = done / REPORT_EVERY;
            done += placed.corpus.documents.len();
            // A closed channel: the sink stopped on an error, which is returned below.
            tx.send(placed).map_err(|_| Halt::Sink)?;
            if done / REPORT_EVERY > before {
                note(
                    bar,
                    quiet,
                    &format!(
                        "assign    {} of {} documents",
                        thousands(done),
                        thousands(total)
                    ),
                );
            }
            Ok::<(), Halt>(())
        });
        drop(tx);
        let sunk = sink.join().expect("the sink thread does not panic");
        match (streamed, sunk) {
            (_, Err(e)) | (Err(Halt::Pipeline(e)), _) => Err(e),
            (Err(Halt::Sink), Ok(_)) => unreachable!("the sink stopped without an error"),
            (Ok(sources), Ok((aggregates, parts, renamed))) => Ok(Pass {
                aggregates,
                parts,
                sources,
                renamed,
            }),
        }
    })
}

/// Why pass 2 stopped early: an error of its own, or the sink's (which the sink returns).
enum Halt {
    Pipeline(PipelineError),
    Sink,
}

impl<E: Into<PipelineError>> From<E> for Halt {
    fn from(e: E) -> Self {
        Halt::Pipeline(e.into())
    }
}

/// The sink of pass 2: adds each placed chunk to the sums and writes its documents table
/// (without labels) to a part file, in the order the chunks come.
#[allow(clippy::type_complexity)]
fn sink(
    settings: &Settings,
    placer: &Placer,
    parts_dir: &Path,
    rx: std::sync::mpsc::Receiver<assign::Placed>,
) -> Result<(Aggregates, Vec<PathBuf>, Vec<Renamed>), PipelineError> {
    let mut aggregates = placer.aggregates(KEEP);
    let mut parts = Vec::new();
    let mut renamed = Vec::new();
    // The parts are written without labels (the report's labels come from all the sums): the
    // summary only numbers the topics.
    let k = placer.model.topics.len();
    let labels = placer.summary(&vec![0; k], &vec![0; k]);
    for placed in rx {
        placed.add_to(&mut aggregates, settings.trends.period);
        let df = frames::documents(&placed.corpus, &placed.clustering, &labels)
            .drop("topic_label")
            .map_err(|e| super::export_error("documents", e))?;
        let path = parts_dir.join(format!("part-{:06}.arrows", parts.len()));
        let file = std::fs::File::create(&path).map_err(|source| tables::ExportError::Io {
            path: path.clone(),
            source,
        })?;
        tables::arrow_stream(std::io::BufWriter::new(file), &df)
            .map_err(|e| super::export_error(&path.display().to_string(), e))?;
        parts.push(path);
        renamed.extend(placed.corpus.renamed);
    }
    Ok((aggregates, parts, renamed))
}

/// A progress line on stderr during a long stage.
fn note(bar: &indicatif::ProgressBar, quiet: bool, line: &str) {
    bar.suspend(|| crate::progress::info(quiet, line));
}

/// Writes `documents.csv` (and `documents.parquet` when asked) from the part files, with each
/// topic's label from `summary`, and returns the rows written with the first `head` of them
/// (for the workbook).
fn write_documents(
    dir: &Path,
    parts: &[PathBuf],
    summary: &crate::describe::TopicSummary,
    formats: &[OutputFormat],
    head: usize,
) -> Result<DocumentsHead, PipelineError> {
    let label_of: std::collections::HashMap<u32, &str> = summary
        .topics
        .iter()
        .map(|t| (t.id as u32, t.label.as_str()))
        .collect();
    let csv_path = dir.join("documents.csv");
    let parquet_path = dir.join("documents.parquet");
    let err = |p: &Path| {
        let p = p.display().to_string();
        move |e: PolarsError| super::export_error(&p, e)
    };
    let mut csv = formats
        .contains(&OutputFormat::Csv)
        .then(|| CsvAppender::create(&csv_path))
        .transpose()
        .map_err(err(&csv_path))?;
    let mut parquet: Option<polars::io::parquet::write::BatchedWriter<std::fs::File>> = None;
    let mut rows = 0;
    let mut first: Option<DataFrame> = None;
    for part in parts {
        let read = || -> PolarsResult<DataFrame> {
            let file = std::fs::File::open(part)?;
            IpcStreamReader::new(file).finish()
        };
        let mut df = read().map_err(err(part))?;
        let labels: Vec<&str> = df
            .column("topic_id")
            .and_then(|c| c.u32().cloned())
            .map_err(err(part))?
            .into_no_null_iter()
            .map(|id| label_of.get(&id).copied().unwrap_or(""))
            .collect();
        df.insert_column(4, frames::text("topic_label", labels))
            .map_err(err(part))?;
        rows += df.height();
        let have = first.as_ref().map_or(0, DataFrame::height);
        if have < head {
            let more = df.slice(0, head - have);
            match &mut first {
                Some(f) => {
                    f.vstack_mut(&more).map_err(err(part))?;
                }
                None => first = Some(more),
            }
        }
        if let Some(c) = &mut csv {
            c.append(&df).map_err(err(&csv_path))?;
        }
        if formats.contains(&OutputFormat::Parquet) {
            if parquet.is_none() {
                let file = std::fs::File::create(&parquet_path).map_err(|source| {
                    tables::ExportError::Io {
                        path: parquet_path.clone(),
                        source,
                    }
                })?;
                parquet = Some(
                    ParquetWriter::new(file)
                        .batched(df.schema())
                        .map_err(err(&parquet_path))?,
                );
            }
            if let Some(w) = &mut parquet {
                w.write_batch(&df).map_err(err(&parquet_path))?;
            }
        }
        std::fs::remove_file(part).map_err(|source| tables::ExportError::Io {
            path: part.clone(),
            source,
        })?;
    }
    if let Some(c) = csv {
        c.finish().map_err(err(&csv_path))?;
    }
    if let Some(w) = parquet {
        w.finish().map_err(err(&parquet_path))?;
    }
    Ok(DocumentsHead {
        first: first.unwrap_or_default(),
        total: rows,
    })
}
