//! The one place that runs the stages in order:
//!
//! ```text
//! ingest -> clean -> tokenize -> vectorize (TF-IDF) -> reduce (LSA) -> cluster (k-means)
//!        -> describe (labels) -> evaluate -> export (CSV, JSON) / chart (PNG, SVG)
//! ```
//!
//! Each stage takes the previous stage's one output type. This file decides nothing about how a
//! stage works; it only wires them, times them, and stages the report folder so it appears whole.

use crate::chart;
use crate::clean::Cleaner;
use crate::cluster::{self, Clustering, KMeansParams, KSelection};
use crate::config::{KChoice, OnBadDocument, ReduceKind, Settings};
use crate::describe::{self, DescribeParams, TopicSummary};
use crate::evaluate::{self, Metrics};
use crate::export;
use crate::ingest::{self, Corpus, Skipped};
use crate::output::{Destination, Staging};
use crate::progress::{thousands, Progress};
use crate::reduce::{ReduceMethod, ReduceParams, Reducer};
use crate::tokenize::{Analyzer, TokenizedCorpus};
use crate::vectorize::{TfIdf, TfIdfParams};
use ndarray::Array2;
use rayon::prelude::*;
use serde::Serialize;
use std::path::PathBuf;

/// How a run is invoked (beyond the pipeline file).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Write the report exactly here instead of the pipeline's history folder.
    pub out: Option<PathBuf>,
    pub quiet: bool,
}

/// What a finished run reports back.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub dir: PathBuf,
    pub documents: usize,
    pub k: usize,
    pub warnings: Vec<String>,
}

/// Any stage's failure.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Ingest(#[from] ingest::IngestError),
    #[error("tokenize: {0}")]
    Tokenize(String),
    #[error("tfidf: {0}")]
    TfIdf(#[from] crate::vectorize::TfIdfError),
    #[error("reduce: {0}")]
    Reduce(#[from] crate::reduce::ReduceError),
    #[error("cluster: {0}")]
    Cluster(String),
    #[error("evaluate: {0}")]
    Evaluate(#[from] evaluate::metrics::MetricsError),
    #[error(transparent)]
    Export(#[from] export::ExportError),
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    #[error("chart: {0}")]
    Chart(#[from] chart::ChartError),
}

/// Everything the stages produced, for the writers.
struct Outcome {
    corpus: Corpus,
    tokens: TokenizedCorpus,
    tfidf: TfIdf,
    reducer: Reducer,
    vectors: Array2<f32>,
    clustering: Clustering,
    k_selection: Option<KSelection>,
    summary: TopicSummary,
    metrics: Option<Metrics>,
}

/// Runs the whole pipeline and writes the report.
pub fn run(settings: &Settings, opts: &RunOptions) -> Result<RunOutcome, PipelineError> {
    let started = chrono::Utc::now();
    let mut progress = Progress::new(opts.quiet);
    let outcome = analyse(settings, &mut progress)?;

    let dest = match &opts.out {
        Some(dir) => Destination::Exact(dir.clone()),
        None => Destination::History {
            root: settings.output.dir.clone(),
        },
    };
    let staging = Staging::begin(dest, &started.format("%Y%m%dT%H%M%SZ").to_string())?;
    let dir = staging.path().to_path_buf();
    let mut warnings = Vec::new();
    progress.stage(
        "export",
        |_| -> Result<(), PipelineError> {
            let o = &outcome;
            export::documents_csv(
                &dir.join("documents.csv"),
                &o.corpus,
                &o.clustering,
                &o.summary,
            )?;
            export::topics_csv(&dir.join("topics.csv"), &o.corpus, &o.summary)?;
            export::terms_csv(&dir.join("terms.csv"), &o.summary)?;
            if let Some(sel) = &o.k_selection {
                export::k_selection_csv(&dir.join("k_selection.csv"), sel)?;
            }
            if let Some(m) = &o.metrics {
                export::write_json(&dir.join("metrics.json"), m)?;
            }
            Ok(())
        },
        |_| "documents.csv, topics.csv, terms.csv".to_string(),
    )?;
    if settings.charts.enabled {
        let notes = progress.stage(
            "charts",
            |_| draw_charts(settings, &outcome, &dir.join("charts")),
            |n: &Vec<String>| format!("{} notes", n.len()),
        )?;
        for n in &notes {
            progress.warn(n);
        }
        warnings.extend(notes);
    }
    let info = RunInfo::new(settings, &outcome, started, progress.timings(), &warnings);
    export::write_json(&dir.join("run.json"), &info)?;
    let final_dir = staging.commit()?;
    progress.note(&format!("report    {}", final_dir.display()));
    Ok(RunOutcome {
        dir: final_dir,
        documents: outcome.corpus.len(),
        k: outcome.clustering.k(),
        warnings,
    })
}

/// Ingest and parse every input, without clustering (`topicmap check`).
pub fn check(settings: &Settings, quiet: bool) -> Result<Corpus, PipelineError> {
    let mut progress = Progress::new(quiet);
    let corpus = ingest_stage(settings, &mut progress)?;
    Ok(corpus)
}

fn ingest_stage(settings: &Settings, progress: &mut Progress) -> Result<Corpus, PipelineError> {
    let corpus = progress.stage(
        "ingest",
        |_| ingest::ingest(&settings.inputs, settings.output.on_bad_document),
        |c: &Corpus| format!("{} docs from {} files", thousands(c.len()), c.sources.len()),
    )?;
    for s in &corpus.skipped {
        progress.warn(&format!(
            "skipped {} row {}: {}",
            s.file.display(),
            s.row,
            s.reason
        ));
    }
    Ok(corpus)
}

/// The analysis stages, in order.
fn analyse(settings: &Settings, progress: &mut Progress) -> Result<Outcome, PipelineError> {
    let mut corpus = ingest_stage(settings, progress)?;

    progress.stage(
        "clean",
        |_| -> Result<(), PipelineError> {
            clean_corpus(&mut corpus);
            Ok(())
        },
        |_| String::new(),
    )?;

    let analyzer = Analyzer::from_settings(&settings.tokenize);
    let mut tokens = progress.stage(
        "tokenize",
        |_| Ok::<_, PipelineError>(TokenizedCorpus::build(&corpus, &analyzer)),
        |t: &TokenizedCorpus| format!("{} terms", thousands(t.terms.len())),
    )?;
    let empty = tokens.empty_docs();
    drop_documents(
        settings,
        progress,
        &mut corpus,
        &mut tokens,
        &empty,
        "no words left after cleaning and stop-word removal",
    )?;

    let tparams = TfIdfParams::new()
        .min_df(settings.tokenize.min_df)
        .max_df(settings.tokenize.max_df)
        .max_features(settings.tokenize.max_features)
        .ngram_range(settings.tokenize.ngram_range)
        .sublinear_tf(settings.tfidf.sublinear_tf)
        .smooth_idf(settings.tfidf.smooth_idf)
        .norm(settings.tfidf.norm)
        .check()?;
    let mut tfidf = progress.stage(
        "tfidf",
        |_| tparams.fit(&tokens),
        |t: &TfIdf| format!("{} features", thousands(t.features().len())),
    )?;
    let zero: Vec<usize> = (0..tfidf.matrix().n_rows())
        .filter(|&i| tfidf.matrix().row(i).0.is_empty())
        .collect();
    if !zero.is_empty() {
        drop_documents(
            settings,
            progress,
            &mut corpus,
            &mut tokens,
            &zero,
            "none of its words is in the vocabulary (min-df / max-df)",
        )?;
        tfidf.retain_rows(&keep_mask(tfidf.matrix().n_rows(), &zero));
    }
    let n = corpus.len();
    if n == 0 {
        return Err(PipelineError::Tokenize(
            "all documents are empty after cleaning and tokenizing".into(),
        ));
    }
    if let KChoice::Fixed { k } = settings.cluster.k {
        if k > n {
            return Err(PipelineError::Cluster(format!(
                "cluster.k = {k} is larger than the number of documents ({n})"
            )));
        }
    }

    let (reducer, vectors) = progress.stage(
        "reduce",
        |_| reduce(settings, &tfidf),
        |(r, _): &(Reducer, Array2<f32>)| format!("{} dims", r.dims()),
    )?;

    let base = KMeansParams::new(1)
        .seed(settings.cluster.seed)
        .runs(settings.cluster.runs)
        .max_iter(settings.cluster.max_iter)
        .tolerance(settings.cluster.tolerance)
        .minibatch_above(settings.cluster.minibatch_above);
    let (clustering, k_selection) = progress.stage(
        "cluster",
        |bar| -> Result<(Clustering, Option<KSelection>), PipelineError> {
            let (k, sel) = match settings.cluster.k {
                KChoice::Fixed { k } => (k, None),
                KChoice::Auto { k_min, k_max } => {
                    let sel = cluster::auto_k::sweep(
                        vectors.view(),
                        &base,
                        k_min,
                        k_max,
                        settings.cluster.silhouette_sample,
                        settings.cluster.seed,
                        |k| bar.set_message(format!("cluster: trying k = {k}")),
                    )
                    .map_err(|e| PipelineError::Cluster(e.to_string()))?;
                    (sel.chosen, Some(sel))
                }
            };
            let c = base
                .clone()
                .with_k(k)
                .check()
                .and_then(|p| p.fit(vectors.view()))
                .map_err(|e| PipelineError::Cluster(e.to_string()))?;
            Ok((c, sel))
        },
        |(c, _)| format!("k = {}", c.k()),
    )?;

    let dparams = DescribeParams {
        top_terms: settings.describe.top_terms,
        label_terms: settings.describe.label_terms,
        phrases: settings.describe.phrases,
        representatives: settings.describe.representatives,
    };
    let summary = progress.stage(
        "describe",
        |_| Ok::<_, PipelineError>(describe::describe(&tokens, &tfidf, &clustering, &dparams)),
        |s: &TopicSummary| format!("{} topics", s.topics.len()),
    )?;

    let metrics = if corpus.has_label {
        let labels: Vec<Option<&str>> = corpus
            .documents
            .iter()
            .map(|d| d.label.as_deref())
            .collect();
        Some(progress.stage(
            "evaluate",
            |_| {
                evaluate::evaluate(
                    &labels,
                    &clustering,
                    vectors.view(),
                    settings.cluster.silhouette_sample,
                    settings.cluster.seed,
                )
            },
            |m: &Metrics| format!("V {:.3}  ARI {:.3}", m.v_measure, m.ari),
        )?)
    } else {
        None
    };

    Ok(Outcome {
        corpus,
        tokens,
        tfidf,
        reducer,
        vectors,
        clustering,
        k_selection,
        summary,
        metrics,
    })
}

/// Cleans every document's text and title; paper-list documents get a snippet as their title.
fn clean_corpus(corpus: &mut Corpus) {
    let cleaner = Cleaner::new();
    corpus
        .documents
        .par_iter_mut()
        .for_each_init(String::new, |buf, d| {
            cleaner.clean_into(&d.text, buf);
            std::mem::swap(&mut d.text, buf);
            d.title = match d.title.take() {
                Some(t) => Some(cleaner.clean(&t)),
                None => Some(export::snippet(&d.text, 80)),
            };
        });
}

fn keep_mask(n: usize, drop: &[usize]) -> Vec<bool> {
    let mut keep = vec![true; n];
    drop.iter().for_each(|&i| keep[i] = false);
    keep
}

/// Leaves documents out (recorded in the corpus's skipped list), or fails in `fail` mode.
fn drop_documents(
    settings: &Settings,
    progress: &Progress,
    corpus: &mut Corpus,
    tokens: &mut TokenizedCorpus,
    rows: &[usize],
    reason: &str,
) -> Result<(), PipelineError> {
    if rows.is_empty() {
        return Ok(());
    }
    if settings.output.on_bad_document == OnBadDocument::Fail || rows.len() == corpus.len() {
        let d = &corpus.documents[rows[0]];
        let what = if rows.len() == corpus.len() {
            "all documents are empty".to_string()
        } else {
            format!(
                "{} documents cannot be used (on-bad-document = \"fail\")",
                rows.len()
            )
        };
        return Err(PipelineError::Tokenize(format!(
            "{what}: first is {} in {}: {reason}",
            d.id,
            corpus.sources[d.source].path.display()
        )));
    }
    progress.warn(&format!("{} documents left out: {reason}", rows.len()));
    for &i in rows {
        let d = &corpus.documents[i];
        corpus.skipped.push(Skipped {
            file: corpus.sources[d.source].path.clone(),
            row: i + 1,
            reason: format!("{}: {reason}", d.id),
        });
    }
    let keep = keep_mask(corpus.len(), rows);
    let mut it = keep.iter();
    corpus.documents.retain(|_| *it.next().unwrap_or(&true));
    tokens.retain_docs(&keep);
    Ok(())
}

/// Reduces the TF-IDF matrix; dims are capped below the corpus rank for tiny corpora.
fn reduce(settings: &Settings, tfidf: &TfIdf) -> Result<(Reducer, Array2<f32>), PipelineError> {
    let m = tfidf.matrix();
    let method = match settings.reduce.method {
        ReduceKind::None => ReduceMethod::None,
        ReduceKind::Lsa => ReduceMethod::Lsa,
        ReduceKind::RandomProjection => ReduceMethod::RandomProjection,
    };
    let cap = m.n_rows().min(m.n_cols()).saturating_sub(1).max(1);
    let params = ReduceParams::new()
        .method(method)
        .dims(settings.reduce.dims.min(cap))
        .n_iter(settings.reduce.n_iter)
        .seed(settings.cluster.seed);
    Ok(params.check()?.fit(m)?)
}

/// Draws every chart; returns notes (skipped charts, font fallbacks).
fn draw_charts(
    settings: &Settings,
    o: &Outcome,
    dir: &std::path::Path,
) -> Result<Vec<String>, PipelineError> {
    std::fs::create_dir_all(dir).map_err(|e| crate::output::OutputError::Io {
        path: dir.to_path_buf(),
        source: e,
    })?;
    let style = chart::ChartStyle {
        width: settings.charts.width,
        height: settings.charts.height,
        scale: settings.charts.scale,
        title: settings.title.clone(),
    };
    let topics = &o.summary.topics;
    let mut outcomes = vec![
        chart::topic_sizes(
            dir,
            &style,
            &topics
                .iter()
                .map(|t| chart::TopicBar {
                    topic_id: t.id,
                    label: t.label.clone(),
                    size: t.size,
                    share: t.share,
                })
                .collect::<Vec<_>>(),
        )?,
        chart::top_terms(
            dir,
            &style,
            &topics
                .iter()
                .map(|t| chart::TopicTerms {
                    topic_id: t.id,
                    label: t.label.clone(),
                    terms: t.terms.iter().map(|w| (w.text.clone(), w.weight)).collect(),
                })
                .collect::<Vec<_>>(),
        )?,
    ];
    if let Some(sel) = &o.k_selection {
        let points: Vec<chart::KScore> = sel
            .scores
            .iter()
            .map(|s| chart::KScore {
                k: s.k,
                silhouette: s.silhouette,
                inertia: s.inertia,
            })
            .collect();
        outcomes.push(chart::k_selection(dir, &style, &points, sel.chosen)?);
    }
    let mut notes = Vec::new();
    for (name, oc) in ["topic_sizes", "top_terms", "k_selection"]
        .iter()
        .zip(outcomes)
    {
        match oc {
            chart::ChartOutcome::Written { warnings, .. } => notes.extend(warnings),
            chart::ChartOutcome::Skipped { reason } => {
                notes.push(format!("chart {name} skipped: {reason}"))
            }
        }
    }
    Ok(notes)
}

/// The contents of `run.json`.
#[derive(Debug, Serialize)]
struct RunInfo<'a> {
    tool: &'static str,
    version: &'static str,
    started_at: String,
    settings: &'a Settings,
    inputs: &'a [ingest::SourceFile],
    counts: Counts,
    skipped: &'a [Skipped],
    tfidf: TfIdfInfo,
    reduction: String,
    k_selection: Option<&'a KSelection>,
    timings_seconds: Vec<(String, f64)>,
    warnings: &'a [String],
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

impl<'a> RunInfo<'a> {
    fn new(
        settings: &'a Settings,
        o: &'a Outcome,
        started: chrono::DateTime<chrono::Utc>,
        timings: &[(String, f64)],
        warnings: &'a [String],
    ) -> Self {
        let (min_df, max_df) = o.tfidf.df_bounds();
        RunInfo {
            tool: "topicmap",
            version: env!("CARGO_PKG_VERSION"),
            started_at: started.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            settings,
            inputs: &o.corpus.sources,
            counts: Counts {
                documents: o.corpus.len(),
                skipped: o.corpus.skipped.len(),
                vocabulary: o.tokens.terms.len(),
                features: o.tfidf.features().len(),
                k: o.clustering.k(),
            },
            skipped: &o.corpus.skipped,
            tfidf: TfIdfInfo {
                min_df_applied: min_df,
                max_df_applied: max_df,
            },
            reduction: format!("{:?} to {} dims", settings.reduce.method, o.reducer.dims()),
            k_selection: o.k_selection.as_ref(),
            timings_seconds: timings
                .iter()
                .map(|(n, s)| (n.clone(), (s * 1000.0).round() / 1000.0))
                .collect(),
            warnings,
        }
    }
}
