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
use crate::describe::map::{self as topic_map, Map};
use crate::describe::matching::{self, DriftRow};
use crate::describe::trends::{self, Trends};
use crate::describe::{self, DescribeParams, TopicSummary};
use crate::evaluate::{self, Metrics};
use crate::export;
use crate::ingest::{self, Corpus, Skipped};
use crate::model::{SavedModel, SavedTopic};
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
    #[error(transparent)]
    Model(#[from] crate::model::ModelError),
}

/// Everything the stages produced, for the writers.
struct Outcome {
    corpus: Corpus,
    tokens: TokenizedCorpus,
    tfidf: TfIdf,
    reducer: Reducer,
    clustering: Clustering,
    k_selection: Option<KSelection>,
    summary: TopicSummary,
    trends: Trends,
    map: Map,
    similarity: Vec<Vec<f64>>,
    metrics: Option<Metrics>,
    /// Stem-keyed term weights of each topic (its fingerprint for matching later runs).
    fingerprints: Vec<Vec<(String, f64)>>,
    drift: Option<Vec<DriftRow>>,
    next_id: usize,
}

/// Runs the whole pipeline and writes the report.
pub fn run(settings: &Settings, opts: &RunOptions) -> Result<RunOutcome, PipelineError> {
    let started = chrono::Utc::now();
    let mut progress = Progress::new(opts.quiet);
    let outcome = analyse(settings, opts.out.as_deref(), &mut progress)?;

    let dest = match &opts.out {
        Some(dir) => Destination::Exact(dir.clone()),
        None => Destination::History {
            root: settings.output.dir.clone(),
        },
    };
    let staging = Staging::begin(dest, &started.format("%Y%m%dT%H%M%SZ").to_string())?;
    let dir = staging.path().to_path_buf();
    // Skipped documents: the first five, then a count (run.json lists them all).
    let skipped = &outcome.corpus.skipped;
    let mut warnings: Vec<String> = skipped
        .iter()
        .take(5)
        .map(|k| format!("skipped {} row {}: {}", k.file.display(), k.row, k.reason))
        .collect();
    if skipped.len() > 5 {
        warnings.push(format!(
            "... and {} more skipped documents (all are listed in run.json)",
            skipped.len() - 5
        ));
    }
    // The tables and the model (tens of megabytes of JSON) are written side by side, and the
    // charts are drawn meanwhile: each of the two stages alone leaves a core idle.
    let export = || {
        let (tables, model) = rayon::join(
            || write_tables(&outcome, &dir),
            || write_model(settings, &outcome, &dir),
        );
        tables.and(model)
    };
    let export_detail = |_: &()| "CSV tables".to_string();
    let charts = if settings.charts.enabled {
        let ((), charts) = progress.side_by_side(
            ("export", export, export_detail),
            (
                "charts",
                || draw_charts(settings, &outcome, &dir.join("charts")),
                |c: &Vec<DrawnChart>| {
                    format!("{} charts", c.iter().filter(|c| c.svg.is_some()).count())
                },
            ),
        )?;
        for c in &charts {
            for n in &c.notes {
                progress.warn(n);
                warnings.push(n.clone());
            }
        }
        charts
    } else {
        progress.stage("export", |_| export(), export_detail)?;
        Vec::new()
    };
    progress.stage(
        "report",
        |_| write_report(settings, &outcome, &charts, &warnings, started, &dir),
        |_| "report.html, summary.md".to_string(),
    )?;
    let info = RunInfo::new(settings, &outcome, started, &progress, &warnings);
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
    warn_skipped(progress, &corpus.skipped);
    Ok(corpus)
}

/// Warns about skipped documents: the first five, then a count (all are listed in run.json).
fn warn_skipped(progress: &Progress, skipped: &[Skipped]) {
    for s in skipped.iter().take(5) {
        progress.warn(&format!(
            "skipped {} row {}: {}",
            s.file.display(),
            s.row,
            s.reason
        ));
    }
    if skipped.len() > 5 {
        progress.warn(&format!(
            "... and {} more skipped documents (listed in run.json)",
            skipped.len() - 5
        ));
    }
}

/// The analysis stages, in order.
fn analyse(
    settings: &Settings,
    opts_out: Option<&std::path::Path>,
    progress: &mut Progress,
) -> Result<Outcome, PipelineError> {
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
        |_| {
            let tokens = TokenizedCorpus::build(&corpus, &analyzer);
            // From here on the text is only shown as a snippet; the tokens carry the rest. (In
            // the stage, so the freed text is handed back to the system at its end.)
            corpus.shorten_texts(export::SNIPPET_CHARS + 1);
            Ok::<_, PipelineError>(tokens)
        },
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
        .runs(settings.cluster.runs_for(n))
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
            // Refinement passes touch every TF-IDF entry k times each; above the mini-batch
            // threshold they cost more than they give (arXiv 75k: V 0.253 -> 0.254 for +0.6 s;
            // 1M documents, k = 50: +30 s), so large corpora keep the mini-batch topics.
            let refine = settings.cluster.refine_iter;
            if refine > 0
                && settings.reduce.method != ReduceKind::None
                && n <= settings.cluster.minibatch_above
            {
                bar.set_message("cluster: refining topics on the TF-IDF vectors");
                return Ok((c.refine(vectors.view(), tfidf.matrix(), refine), sel));
            }
            Ok((c, sel))
        },
        |(c, _)| match c.refine_passes() {
            0 => format!("k = {}", c.k()),
            p => format!("k = {}, refined in {p} passes", c.k()),
        },
    )?;
    // Later stages work on the reduced vectors and the tokens; the sparse matrix can go.
    tfidf.release_matrix();

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

    // Stable ids: keep the previous run's ids for the topics that match it.
    let mut summary = summary;
    let fingerprints = matching::fingerprints(&summary, &tokens);
    let previous = previous_model(settings, opts_out, progress)?;
    let (drift, next_id) = match previous {
        Some(prev) => {
            let m = matching::keep_ids(&mut summary, &fingerprints, &prev);
            (Some(m.drift), m.next_id)
        }
        None => (None, summary.topics.len()),
    };

    let (trends, map, similarity) = progress.stage(
        "trends",
        |_| -> Result<_, PipelineError> {
            let periods: Vec<String> = corpus
                .documents
                .iter()
                .map(|d| match &d.time {
                    Some((_, t)) => t.period(settings.trends.period),
                    None => d.batch.clone(),
                })
                .collect();
            let tr = trends::trends(&periods, clustering.assignments(), clustering.k());
            let map = topic_map::project(
                vectors.view(),
                clustering.centroids().view(),
                clustering.sizes(),
            );
            let sim = topic_map::centroid_similarity(clustering.centroids().view());
            Ok((tr, map, sim))
        },
        |(t, _, _): &(Trends, Map, Vec<Vec<f64>>)| format!("{} periods", t.periods.len()),
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
        clustering,
        k_selection,
        summary,
        trends,
        map,
        similarity,
        metrics,
        fingerprints,
        drift,
        next_id,
    })
}

/// The previous run's model, if there is one to keep ids from.
fn previous_model(
    settings: &Settings,
    out: Option<&std::path::Path>,
    progress: &Progress,
) -> Result<Option<SavedModel>, PipelineError> {
    let explicit = settings
        .output
        .previous
        .as_ref()
        .filter(|p| !p.ends_with("latest"));
    let candidate = match (explicit, out) {
        (Some(p), _) => Some(p.clone()),
        (None, Some(dir)) if dir.join(crate::model::FILE).is_file() => Some(dir.to_path_buf()),
        (None, _) => settings.output.previous.clone(),
    };
    let Some(path) = candidate else {
        return Ok(None);
    };
    let file = if path.is_dir() {
        path.join(crate::model::FILE)
    } else {
        path.clone()
    };
    if !file.is_file() {
        if explicit.is_some() {
            return Err(crate::model::ModelError::Read {
                path: file,
                message: "output.previous names no model.json".into(),
            }
            .into());
        }
        return Ok(None);
    }
    match SavedModel::load(&file) {
        Ok(m) => Ok(Some(m)),
        Err(e) if explicit.is_none() => {
            progress.warn(&format!("topic ids start afresh: {e}"));
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// Cleans every document's text and title; paper-list documents get a snippet as their title.
fn clean_corpus(corpus: &mut Corpus) {
    let cleaner = Cleaner::new();
    corpus
        .documents
        .par_iter_mut()
        .for_each_init(String::new, |buf, d| {
            clean_in_place(&cleaner, &mut d.text, buf);
            match &mut d.title {
                Some(t) => clean_in_place(&cleaner, t, buf),
                None => d.title = Some(export::snippet(&d.text, 80)),
            }
        });
}

/// Cleans `text` through the reusable `buf` and copies the result back into `text`'s own
/// allocation (`clone_from` reuses it when it fits, nearly always: cleaning mostly removes).
/// Allocating a new string per document instead would leave the old ones as holes between live
/// data, memory the process could not hand back (on 1M abstracts, 550 MiB).
fn clean_in_place(cleaner: &Cleaner, text: &mut String, buf: &mut String) {
    cleaner.clean_into(text, buf);
    text.clone_from(buf);
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
            "{what}: first is {} in {} row {}: {reason}",
            d.id,
            corpus.sources[d.source].path.display(),
            d.row
        )));
    }
    progress.warn(&format!("{} documents left out: {reason}", rows.len()));
    for &i in rows {
        let d = &corpus.documents[i];
        corpus.skipped.push(Skipped {
            file: corpus.sources[d.source].path.clone(),
            row: d.row,
            reason: format!("{}: {reason}", d.id),
        });
    }
    let keep = keep_mask(corpus.len(), rows);
    let mut it = keep.iter();
    corpus.documents.retain(|_| *it.next().unwrap_or(&true));
    tokens.retain_docs(&keep);
    Ok(())
}

/// The default LSA dimensions: five per topic, within 20..=100. Few topics are separated by
/// few directions, and every extra direction adds noise to k-means; scikit-learn's example uses
/// 100 whatever k is.
pub fn auto_dims(k: usize) -> usize {
    (5 * k).clamp(20, 100)
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
    let k = match settings.cluster.k {
        KChoice::Fixed { k } => k,
        KChoice::Auto { k_max, .. } => k_max,
    };
    let dims = settings.reduce.dims.unwrap_or_else(|| auto_dims(k));
    let params = ReduceParams::new()
        .method(method)
        .dims(dims.min(cap))
        .n_iter(settings.reduce.n_iter)
        .seed(settings.cluster.seed);
    Ok(params.check()?.fit(m)?)
}

/// Writes the CSV tables and `metrics.json`.
fn write_tables(o: &Outcome, dir: &std::path::Path) -> Result<(), PipelineError> {
    export::documents_csv(
        &dir.join("documents.csv"),
        &o.corpus,
        &o.clustering,
        &o.summary,
    )?;
    export::topics_csv(&dir.join("topics.csv"), &o.corpus, &o.summary)?;
    export::terms_csv(&dir.join("terms.csv"), &o.summary)?;
    export::topic_trends_csv(&dir.join("topic_trends.csv"), &o.summary, &o.trends)?;
    export::trends_csv(&dir.join("trends.csv"), &o.summary, &o.trends)?;
    if let Some(sel) = &o.k_selection {
        export::k_selection_csv(&dir.join("k_selection.csv"), sel)?;
    }
    if let Some(m) = &o.metrics {
        export::write_json(&dir.join("metrics.json"), m)?;
    }
    if let Some(d) = &o.drift {
        export::drift_csv(&dir.join("drift.csv"), d)?;
    }
    Ok(())
}

/// Writes `model.json` (see [`crate::model`]).
fn write_model(
    settings: &Settings,
    o: &Outcome,
    dir: &std::path::Path,
) -> Result<(), PipelineError> {
    let topics = o
        .summary
        .topics
        .iter()
        .zip(&o.fingerprints)
        .map(|(t, f)| SavedTopic {
            id: t.id,
            label: t.label.clone(),
            size: t.size,
            share: t.share,
            terms: f.clone(),
        })
        .collect();
    let model = SavedModel::new(
        &settings.name,
        &settings.title,
        &settings.tokenize,
        &o.tfidf,
        &o.reducer,
        o.clustering.centroids(),
        o.clustering.term_centroids(),
        topics,
        o.next_id,
    );
    export::write_json_compact(&dir.join(crate::model::FILE), &model)?;
    Ok(())
}

/// A chart that was drawn (its SVG text, for the report) or skipped (with a note).
struct DrawnChart {
    name: &'static str,
    caption: String,
    svg: Option<String>,
    notes: Vec<String>,
}

impl DrawnChart {
    /// What the report needs of a chart: its SVG text (read back) and any notes.
    fn new(name: &'static str, caption: String, oc: chart::ChartOutcome) -> DrawnChart {
        let (svg, notes) = match oc {
            chart::ChartOutcome::Written { svg, warnings, .. } => {
                (std::fs::read_to_string(svg).ok(), warnings)
            }
            chart::ChartOutcome::Skipped { reason } => {
                (None, vec![format!("chart {name} skipped: {reason}")])
            }
        };
        DrawnChart {
            name,
            caption,
            svg,
            notes,
        }
    }
}

/// Draws every chart into `dir`.
fn draw_charts(
    settings: &Settings,
    o: &Outcome,
    dir: &std::path::Path,
) -> Result<Vec<DrawnChart>, PipelineError> {
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
    let label = |t: usize| topics[t].label.clone();
    let periods: Vec<String> = o.trends.periods.iter().map(|p| p.label.clone()).collect();
    let points: Vec<chart::MapPoint> = o
        .map
        .documents
        .iter()
        .zip(o.clustering.assignments())
        .map(|(p, &t)| chart::MapPoint {
            x: p[0],
            y: p[1],
            topic_id: topics[t].id,
        })
        .collect();
    let centres: Vec<chart::MapTopic> = o
        .map
        .centres
        .iter()
        .enumerate()
        .map(|(t, p)| chart::MapTopic {
            topic_id: topics[t].id,
            label: label(t),
            x: p[0],
            y: p[1],
        })
        .collect();
    // The document map (a dot per document) takes longest: it is drawn on another thread while
    // the other charts are drawn here. The report lists them in a fixed order either way.
    let (map, first) = rayon::join(
        || chart::document_map(dir, &style, &points, &centres),
        || -> Result<Vec<DrawnChart>, PipelineError> {
            let mut drawn = Vec::new();
            let mut add = |name, caption, oc| drawn.push(DrawnChart::new(name, caption, oc));
            // Trend charts first: they tell the story. The lines are the topics that moved most.
            let top = settings.trends.top.min(topics.len());
            let mut moving: Vec<usize> = o.trends.trends.iter().map(|t| t.topic_id).collect();
            let slope = |t: usize| {
                o.trends
                    .trends
                    .iter()
                    .find(|x| x.topic_id == t)
                    .map_or(0.0, |x| x.slope)
            };
            moving.sort_by(|&a, &b| slope(b).abs().total_cmp(&slope(a).abs()).then(a.cmp(&b)));
            moving.truncate(top);
            moving.sort_unstable();
            let mut series: Vec<chart::TopicSeries> = moving
                .iter()
                .map(|&t| chart::TopicSeries {
                    topic_id: topics[t].id,
                    label: label(t),
                    values: o.trends.shares[t].clone(),
                })
                .collect();
            if topics.len() > top {
                let other: Vec<f64> = (0..periods.len())
                    .map(|j| {
                        (0..topics.len())
                            .filter(|t| !moving.contains(t))
                            .map(|t| o.trends.shares[t][j])
                            .sum()
                    })
                    .collect();
                series.push(chart::TopicSeries {
                    topic_id: usize::MAX,
                    label: "other".into(),
                    values: other,
                });
            }
            add(
                "topic_share_over_time",
                format!("Share of each period's documents in the {top} topics that moved most."),
                chart::topic_share_over_time(dir, &style, &periods, &series)?,
            );
            let n_movers = 5.min(topics.len() / 2).max(1);
            let movers: Vec<chart::Mover> = if periods.len() >= 2 {
                let t = &o.trends.trends;
                t.iter()
                    .take(n_movers)
                    .chain(t.iter().rev().take(n_movers).rev())
                    .filter(|m| m.slope.abs() > 1e-9)
                    .map(|m| chart::Mover {
                        topic_id: topics[m.topic_id].id,
                        label: label(m.topic_id),
                        change: m.slope,
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let unit = if o.trends.timed {
                "per year"
            } else {
                "per batch"
            };
            add(
                "trend_movers",
                format!("Fastest rising and declining topics: change in share, percentage points {unit}."),
                chart::movers(
                    dir,
                    &style,
                    &movers,
                    &format!("change in share (percentage points {unit})"),
                )?,
            );
            add(
                "topic_sizes",
                "Documents per topic.".into(),
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
            );
            add(
                "top_terms",
                "The words that set each topic apart (class-based TF-IDF).".into(),
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
            );
            Ok(drawn)
        },
    );
    let mut drawn = first?;
    let mut add = |name, caption, oc| drawn.push(DrawnChart::new(name, caption, oc));
    add(
        "document_map",
        "Every document on the two main axes of the topic centroids, coloured by topic.".into(),
        map?,
    );
    let labels: Vec<String> = topics.iter().map(|t| t.label.clone()).collect();
    add(
        "topic_similarity",
        "Cosine similarity of topic centroids: related topics light up.".into(),
        chart::similarity_heatmap(dir, &style, &labels, &o.similarity)?,
    );
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
        add(
            "k_selection",
            format!("How k = {} was chosen: {}.", sel.chosen, sel.rule),
            chart::k_selection(dir, &style, &points, sel.chosen)?,
        );
    }
    Ok(drawn)
}

/// Writes `report.html` and `summary.md`.
fn write_report(
    settings: &Settings,
    o: &Outcome,
    charts: &[DrawnChart],
    warnings: &[String],
    started: chrono::DateTime<chrono::Utc>,
    dir: &std::path::Path,
) -> Result<(), PipelineError> {
    use crate::report::{self, ReportChart, ReportData, ReportDoc, ReportTopic};
    let timed_periods = o.trends.periods.len() >= 2;
    let topics = &o.summary.topics;
    let data = ReportData {
        title: settings.title.clone(),
        corpus: format!(
            "{} file{}, {} documents{}",
            o.corpus.sources.len(),
            if o.corpus.sources.len() == 1 { "" } else { "s" },
            thousands(o.corpus.len()),
            if o.corpus.skipped.is_empty() {
                String::new()
            } else {
                format!(" ({} left out)", o.corpus.skipped.len())
            }
        ),
        documents: o.corpus.len(),
        periods: o.trends.periods.iter().map(|p| p.label.clone()).collect(),
        k: o.clustering.k(),
        k_rule: match &o.k_selection {
            Some(sel) => format!(
                "automatic, {}..{}: {}",
                sel.scores[0].k,
                sel.scores[sel.scores.len() - 1].k,
                sel.rule
            ),
            None => "fixed in the pipeline file".into(),
        },
        run_date: started.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        settings: vec![
            ("pipeline".into(), settings.pipeline.display().to_string()),
            ("seed".into(), settings.cluster.seed.to_string()),
            (
                "reduction".into(),
                format!("{:?}, {} dims", settings.reduce.method, o.reducer.dims()),
            ),
            ("features".into(), thousands(o.tfidf.features().len())),
            (
                "min-df / max-df applied".into(),
                format!("{} / {}", o.tfidf.df_bounds().0, o.tfidf.df_bounds().1),
            ),
            (
                "k-means restarts".into(),
                settings.cluster.runs_for(o.corpus.len()).to_string(),
            ),
            (
                "period".into(),
                format!("{:?}", settings.trends.period).to_lowercase(),
            ),
        ],
        topics: topics
            .iter()
            .enumerate()
            .map(|(index, t)| ReportTopic {
                id: t.id,
                label: t.label.clone(),
                size: t.size,
                share: t.share,
                terms: t.terms.iter().map(|w| (w.text.clone(), w.weight)).collect(),
                representatives: t
                    .representatives
                    .iter()
                    .map(|&i| ReportDoc {
                        id: o.corpus.documents[i].id.clone(),
                        title: export::display_title(&o.corpus, i).into_owned(),
                        snippet: export::snippet(
                            &o.corpus.documents[i].text,
                            export::SNIPPET_CHARS,
                        ),
                    })
                    .collect(),
                shares_by_period: if timed_periods {
                    o.trends.shares[index].clone()
                } else {
                    Vec::new()
                },
                colour: chart::palette_hex(t.id),
            })
            .collect(),
        charts: charts
            .iter()
            .filter_map(|c| {
                c.svg.as_ref().map(|svg| ReportChart {
                    name: c.name.into(),
                    caption: c.caption.clone(),
                    svg: svg.clone(),
                })
            })
            .collect(),
        movers: if timed_periods {
            let t = &o.trends.trends;
            t.iter()
                .filter(|m| m.slope > 0.0)
                .chain(t.iter().rev().filter(|m| m.slope < 0.0))
                .map(|m| report::Mover {
                    topic_id: topics[m.topic_id].id,
                    label: topics[m.topic_id].label.clone(),
                    change: m.slope / 100.0,
                })
                .collect()
        } else {
            Vec::new()
        },
        trend_measure: trends::MEASURE.into(),
        metrics: o.metrics.as_ref().map(|m| {
            vec![
                ("V-measure".into(), m.v_measure),
                ("ARI".into(), m.ari),
                ("NMI".into(), m.nmi),
                ("homogeneity".into(), m.homogeneity),
                ("completeness".into(), m.completeness),
            ]
        }),
        warnings: warnings.to_vec(),
    };
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| export::ExportError::Write {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    };
    write("report.html", report::render_html(&data))?;
    write("summary.md", report::render_markdown(&data))?;
    Ok(())
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
    /// k-means restarts applied (the `runs` default depends on the corpus size).
    kmeans_restarts: usize,
    k_selection: Option<&'a KSelection>,
    trend_measure: &'static str,
    timings_seconds: Vec<(String, f64)>,
    /// Peak resident memory so far at the end of each stage (a measurement, like the timings).
    peak_rss_mib_after_stage: Vec<(String, f64)>,
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
        progress: &Progress,
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
            kmeans_restarts: settings.cluster.runs_for(o.corpus.len()),
            k_selection: o.k_selection.as_ref(),
            trend_measure: trends::MEASURE,
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
            warnings,
        }
    }
}

/// What `topicmap assign` was asked to do.
#[derive(Debug, Clone)]
pub struct AssignOptions {
    pub model: PathBuf,
    pub inputs: Vec<crate::config::InputSettings>,
    pub out: Option<PathBuf>,
    pub period: crate::config::Period,
    pub quiet: bool,
}

/// Places new documents into a saved model's topics, with the fit's own preprocessing, and
/// writes `documents.csv` and the trend tables for the new batch.
pub fn assign(opts: &AssignOptions) -> Result<RunOutcome, PipelineError> {
    let started = chrono::Utc::now();
    let mut progress = Progress::new(opts.quiet);
    let model = SavedModel::load(&opts.model)?;
    let mut corpus = progress.stage(
        "ingest",
        |_| ingest::ingest(&opts.inputs, OnBadDocument::Skip),
        |c: &Corpus| format!("{} docs from {} files", thousands(c.len()), c.sources.len()),
    )?;
    clean_corpus(&mut corpus);
    let analyzer = Analyzer::from_settings(&model.tokenize);
    let tokens = TokenizedCorpus::build(&corpus, &analyzer);
    let tfidf = model.tfidf();
    let matrix = tfidf.transform(&tokens);
    let zero: Vec<usize> = (0..matrix.n_rows())
        .filter(|&i| matrix.row(i).0.is_empty())
        .collect();
    let keep = keep_mask(matrix.n_rows(), &zero);
    let rows: Vec<usize> = (0..matrix.n_rows()).filter(|&i| keep[i]).collect();
    for &i in &zero {
        let d = &corpus.documents[i];
        corpus.skipped.push(Skipped {
            file: corpus.sources[d.source].path.clone(),
            row: d.row,
            reason: format!("{}: no word in the model's vocabulary", d.id),
        });
    }
    warn_skipped(&progress, &corpus.skipped);
    let mut it = keep.iter();
    corpus.documents.retain(|_| *it.next().unwrap_or(&true));
    if corpus.is_empty() {
        return Err(PipelineError::Tokenize(
            "no document shares a word with the model's vocabulary".into(),
        ));
    }
    let matrix = matrix.select_rows(&rows);
    let vectors = model.reducer.transform(&matrix)?;
    let centroids = model.centroid_matrix();
    let clustering = match model.term_centroid_matrix() {
        Some(terms) => {
            Clustering::assign_terms(centroids.view(), terms.view(), vectors.view(), &matrix)
        }
        None => Clustering::assign(centroids.view(), vectors.view()),
    };
    let n = clustering.assignments().len();
    let summary = TopicSummary {
        topics: model
            .topics
            .iter()
            .enumerate()
            .map(|(index, t)| describe::Topic {
                id: t.id,
                label: t.label.clone(),
                size: clustering.sizes()[index],
                share: clustering.sizes()[index] as f64 / n as f64,
                terms: Vec::new(),
                representatives: Vec::new(),
            })
            .collect(),
        documents: n,
    };
    let periods: Vec<String> = corpus
        .documents
        .iter()
        .map(|d| match &d.time {
            Some((_, t)) => t.period(opts.period),
            None => d.batch.clone(),
        })
        .collect();
    let tr = trends::trends(&periods, clustering.assignments(), clustering.k());
    let dest = match &opts.out {
        Some(dir) => Destination::Exact(dir.clone()),
        None => Destination::History {
            root: PathBuf::from("output").join(format!("{}-assigned", model.name)),
        },
    };
    let staging = Staging::begin(dest, &started.format("%Y%m%dT%H%M%SZ").to_string())?;
    let dir = staging.path().to_path_buf();
    export::documents_csv(&dir.join("documents.csv"), &corpus, &clustering, &summary)?;
    export::topic_trends_csv(&dir.join("topic_trends.csv"), &summary, &tr)?;
    export::trends_csv(&dir.join("trends.csv"), &summary, &tr)?;
    #[derive(Serialize)]
    struct AssignInfo<'a> {
        tool: &'static str,
        version: &'static str,
        command: &'static str,
        started_at: String,
        model: String,
        inputs: &'a [ingest::SourceFile],
        documents: usize,
        skipped: &'a [Skipped],
        sizes: &'a [usize],
    }
    export::write_json(
        &dir.join("run.json"),
        &AssignInfo {
            tool: "topicmap",
            version: env!("CARGO_PKG_VERSION"),
            command: "assign",
            started_at: started.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            model: opts.model.display().to_string(),
            inputs: &corpus.sources,
            documents: n,
            skipped: &corpus.skipped,
            sizes: clustering.sizes(),
        },
    )?;
    let final_dir = staging.commit()?;
    progress.note(&format!(
        "assigned  {} documents to {} topics: {}",
        n,
        clustering.k(),
        final_dir.display()
    ));
    Ok(RunOutcome {
        dir: final_dir,
        documents: n,
        k: clustering.k(),
        warnings: Vec::new(),
    })
}
