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
//! and row, so the same inputs and seed give the same sample, and the same report. The
//! documents table is joined from the parts in [`documents`].

mod documents;

use super::place::{self, Placed, Placer};
use super::{fit, prepare, report_folder, summed, table_error, PipelineError};
use super::{RunOptions, RunOutcome};
use crate::cluster::KSelection;
use crate::config::Settings;
use crate::describe::aggregate::Aggregates;
use crate::describe::matching::{DriftRow, PreviousTopics};
use crate::evaluate::Metrics;
use crate::ingest::stream::{self, Count, StreamOptions};
use crate::ingest::{Corpus, Renamed, SourceFile};
use crate::model::SavedModel;
use crate::progress::{thousands, Progress};
use crate::render::{Analysis, DocumentsHead, Scope};
use crate::tables::{self, frames, OutputFormat};
use crate::tokenize::TokenizerValidParams;
use std::path::{Path, PathBuf};

/// Bytes of a CSV or TSV file per chunk (about 55,000 abstracts). The reader, the worker and
/// the sink each hold a chunk's worth at once, so this sets most of the pass's memory: 128 MiB
/// chunks peaked at 2.9 GiB on 10M abstracts, 64 MiB at 2.1 GiB, with the same outputs
/// (docs/benchmarks.md).
const CHUNK_BYTES: usize = 64 << 20;
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
    let previous = fit::previous_topics(settings, opts.out.as_deref(), &progress)?;
    let (fit, seen, tokenizer) =
        fit_on_sample(settings, fit_sample, previous, opts.quiet, &mut progress)?;
    // `language = "auto"` resolved on the sample: the model and the report say what was chosen.
    let settings = &Settings {
        tokenize: tokenizer,
        ..settings.clone()
    };
    let input = crate::render::fit_input(settings);
    let meta = crate::model::ModelMeta {
        name: &settings.name,
        title: &settings.title,
        input: &input,
        tokenizer: &settings.tokenize,
    };
    let model = crate::render::table_files::saved_model(meta, &fit);
    let placer = Placer::new(model.clone())?;
    // The rest of the fit (the sample's documents, vectors, map) goes before the second pass.
    let kept = FromFit::keep(fit);

    let staging = report_folder::begin_staging(settings, opts, started)?;
    let dir = staging.path().to_path_buf();
    let parts_dir = dir.join(".documents-parts");
    std::fs::create_dir_all(&parts_dir).map_err(|source| tables::ExportError::Io {
        path: parts_dir.clone(),
        source,
    })?;
    let pass = progress.stage(
        "assign",
        |bar| assign_all(settings, &placer, &parts_dir, bar, opts.quiet, seen),
        |p: &Pass| {
            format!(
                "{} documents in {} chunks",
                thousands(p.aggregates.documents()),
                p.parts.len()
            )
        },
    )?;
    let (mut analysis, parts) = from_sums(settings, model, pass, kept, &mut progress)?;

    let (formats, head) = (&settings.output.formats, workbook_head(settings));
    let written = progress.stage(
        "documents",
        |_| documents::write_documents(&dir, &parts, &analysis.summary, formats, head),
        |h: &DocumentsHead| format!("documents.csv, {} rows", thousands(h.total)),
    )?;
    if let Scope::Summed { documents, .. } = &mut analysis.scope {
        *documents = Some(written);
    }
    std::fs::remove_dir_all(&parts_dir).map_err(|source| tables::ExportError::Io {
        path: parts_dir.clone(),
        source,
    })?;
    report_folder::finish_report("run", settings, &analysis, staging, started, &mut progress)
}

/// Pass 1: a seeded sample of `n` documents, prepared and fitted as a run fits its documents.
/// Returns the fit, the number of documents in the inputs and the tokenizer (its language resolved).
fn fit_on_sample(
    settings: &Settings,
    n: usize,
    previous: Option<PreviousTopics>,
    quiet: bool,
    progress: &mut Progress,
) -> Result<(Analysis, Count, TokenizerValidParams), PipelineError> {
    let sample = progress.stage(
        "sample",
        |bar| reservoir(settings, n, bar, quiet),
        |s: &Sample| {
            format!(
                "{} of {} documents",
                thousands(s.corpus.len()),
                counted(s.seen)
            )
        },
    )?;
    let seen = sample.seen;
    let on_bad = settings.output.on_bad_document;
    let cleaning = prepare::Cleaning::Fit(&settings.clean);
    let model = fit::FitModel::new(settings);
    let prepared = prepare::prepare_corpus(
        sample.corpus,
        on_bad,
        cleaning,
        &settings.tokenize,
        model.embedder(settings),
        progress,
    )?;
    let tokenizer = prepared.tokenizer.clone();
    // Every document is placed on the map in pass 2: the fit lays out its sample only.
    let settings = &Settings {
        tokenize: tokenizer.clone(),
        map: settings.map.clone().sample_only(),
        ..settings.clone()
    };
    let fit = fit::fit(settings, (prepared, model), previous, progress)?;
    Ok((fit, seen, tokenizer))
}

/// What the report keeps of the sample's fit.
struct FromFit {
    k_selection: Option<KSelection>,
    drift: Option<Vec<DriftRow>>,
    warnings: Vec<String>,
    /// The silhouette needs vectors: the report's is the sample's.
    metrics: Option<Metrics>,
}

impl FromFit {
    fn keep(fit: Analysis) -> FromFit {
        let Analysis {
            k_selection,
            drift,
            warnings,
            metrics,
            ..
        } = fit;
        FromFit {
            k_selection,
            drift,
            warnings,
            metrics,
        }
    }
}

/// The report's analysis: the sums of pass 2 described ([`summed::analysis`]) with the inputs
/// pass 2 read and what the sample's fit found. Returns it with the part files still to join.
fn from_sums(
    settings: &Settings,
    model: SavedModel,
    pass: Pass,
    fit: FromFit,
    progress: &mut Progress,
) -> Result<(Analysis, Vec<PathBuf>), PipelineError> {
    let Pass {
        aggregates,
        parts,
        sources,
        renamed,
        cleaned,
    } = pass;
    for r in renamed.iter().take(5) {
        progress.warn(&r.to_string());
    }
    let mut analysis = summed::analysis(settings, model, aggregates, progress)?;
    analysis.corpus.sources = sources;
    analysis.corpus.renamed = renamed;
    analysis.cleaned = Some(cleaned);
    analysis.k_selection = fit.k_selection;
    analysis.drift = fit.drift;
    analysis.warnings.extend(fit.warnings);
    if let (Some(m), Some(f)) = (&mut analysis.metrics, &fit.metrics) {
        m.silhouette = f.silhouette;
        m.silhouette_sample = f.silhouette_sample;
    }
    for line in prepare::skipped_summary(&analysis.corpus.skipped) {
        progress.warn(&line);
    }
    Ok((analysis, parts))
}

/// The rows of the documents table the workbook shows (none without one).
fn workbook_head(settings: &Settings) -> usize {
    if settings.output.formats.contains(&OutputFormat::Xlsx) {
        settings.output.workbook_documents
    } else {
        0
    }
}

/// A count of documents for the log, "about" when it is estimated.
fn counted(count: Count) -> String {
    match count {
        Count::Exact(n) => thousands(n),
        Count::About(n) => format!("about {}", thousands(n)),
    }
}

/// The sample of pass 1.
struct Sample {
    corpus: Corpus,
    /// Documents in the inputs.
    seen: Count,
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
    /// What the sample's clean rules removed from every document.
    cleaned: crate::clean::CleanTally,
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
    total: Count,
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
        let (tx, rx) = std::sync::mpsc::sync_channel::<Placed>(1);
        let sink = scope.spawn(move || sink(settings, placer, parts_dir, rx));
        let mut done = 0usize;
        let mut cleaned = crate::clean::CleanTally::default();
        let cleaner = placer.model.cleaner();
        let streamed = stream::stream(&settings.inputs, opts, |_, chunk: Corpus| {
            let prepared = prepare::prepare_chunk(
                chunk,
                on_bad,
                cleaner,
                &analyzer,
                &placer.model.tokenize,
                placer.embedder(),
            )?;
            let placed = place::place(placer, prepared, true, &quiet_progress)?;
            cleaned.add(&placed.cleaned);
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
                        counted(total)
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
                cleaned,
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
    rx: std::sync::mpsc::Receiver<Placed>,
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
        let df = frames::documents(&placed.corpus, &placed.clustering, &labels, &placed.map)
            .drop("topic_label")
            .map_err(|e| table_error("documents", e))?;
        let path = parts_dir.join(format!("part-{:06}.arrows", parts.len()));
        let file = std::fs::File::create(&path).map_err(|source| tables::ExportError::Io {
            path: path.clone(),
            source,
        })?;
        tables::arrow_stream(std::io::BufWriter::new(file), &df)
            .map_err(|e| table_error(&path.display().to_string(), e))?;
        parts.push(path);
        renamed.extend(placed.corpus.renamed);
    }
    Ok((aggregates, parts, renamed))
}

/// A progress line on stderr during a long stage.
fn note(bar: &indicatif::ProgressBar, quiet: bool, line: &str) {
    bar.suspend(|| crate::progress::info(quiet, line));
}
