//! Fit: tfidf -> reduce -> cluster -> describe -> trends -> map -> evaluate, from prepared documents
//! to an [`Analysis`].
//!
//! Each stage is built from its part of the settings and takes the previous stage's output.
//! Topic ids are matched to the previous run's here, right after the topics are described, so
//! every later table and chart uses the stable ids; then the topics are named and merged as a
//! report from sums does it ([`super::topics`]).

use super::prepare::{LeftOut, Prepared};
use super::{topics, PipelineError};
use crate::cluster::guided::Guides;
use crate::cluster::{Clustering, KSelection};
use crate::config::Settings;
use crate::describe::matching::{self, DriftRow, PreviousTopics};
use crate::describe::per_class::PerClass;
use crate::describe::similarity;
use crate::describe::trends::{self, Trends};
use crate::describe::{self, TopicSummary};
use crate::embed::{FeatureSpace, SHORT_FEATURES};
use crate::evaluate::{self, Metrics, Scored};
use crate::ingest::Corpus;
use crate::layout;
use crate::model::{SavedEmbedding, SavedModel};
use crate::progress::{thousands, Progress};
use crate::reduce::Reducer;
use crate::render::{Analysis, Scope};
use crate::tokenize::TokenizedCorpus;
use crate::vectorize::TfIdf;
use ndarray::Array2;
use std::path::Path;

/// Runs the analysis stages on `prepared`; `previous` holds the topics whose ids to keep. The
/// document map's descent, which runs on one core, goes on a thread of its own while the topics
/// are described, named and scored (those stages leave the other core idle part of the time).
pub fn fit(
    settings: &Settings,
    (mut prepared, model): (Prepared, FitModel),
    previous: Option<PreviousTopics>,
    progress: &mut Progress,
) -> Result<Analysis, PipelineError> {
    let mut c = cluster_documents(settings, &mut prepared, model, previous.as_ref(), progress)?;
    // The map is laid out for the fitted topics, which the model places documents into (naming
    // may merge the reported ones below).
    let fitted = MapTopics::of(&c.clustering);
    let graphed = neighbours(settings, &fitted, &c.vectors, progress)?;
    std::thread::scope(|scope| {
        let layout_job = scope.spawn(|| {
            let start = std::time::Instant::now();
            let embedded = settings.map.descend(graphed, settings.cluster.seed());
            (embedded, start.elapsed().as_secs_f64())
        });
        let mut summary = describe(
            settings,
            &prepared,
            &c.tfidf,
            &c.clustering,
            &c.reducer,
            progress,
        )?;
        named(settings, &mut summary, &mut c, progress);
        let fingerprints = matching::fingerprints(&summary, &prepared.tokens);
        let (mut drift, next_id) = keep_ids(&mut summary, &fingerprints, previous.as_ref());
        let shaped = topics::name_and_merge(
            settings,
            &mut summary,
            &mut c.clustering,
            None,
            drift.as_mut(),
            next_id,
            progress,
        );
        let vocabulary = prepared.tokens.terms.len();
        let periods = prepared.periods(settings.trends.period);
        let Prepared {
            corpus,
            tokens,
            fitted: cleaner,
            cleaned,
            ..
        } = prepared;
        let per_class = per_class(settings, &corpus, (tokens, &c), progress)?;
        let (trends, similarity) = trends(&periods, &c.clustering, progress)?;
        let descended = layout_job.join().expect("the layout thread does not panic");
        let merged = shaped.fine.is_some().then_some(&c.clustering);
        let map = finish_map(settings, descended, &c.vectors, &fitted, merged, progress)?;
        // Last, when the fit's working memory is gone (its sample distances are large).
        let metrics = evaluate(settings, &corpus, &c.clustering, &c.vectors, progress)?;
        Ok(Analysis {
            scope: Scope::Documents,
            corpus,
            vocabulary,
            // A fit prepares with `Cleaning::Fit`; without rules it cleans markup only.
            cleaner: cleaner.unwrap_or_else(crate::clean::TextCleaner::markup_only),
            cleaned: Some(cleaned),
            tfidf: c.tfidf,
            reducer: c.reducer,
            embedding: c.embedding,
            clustering: c.clustering,
            warnings: with_k_edge(c.k_selection.as_ref(), shaped.warnings),
            k_selection: c.k_selection,
            summary,
            trends,
            map,
            similarity,
            metrics,
            fingerprints,
            drift,
            next_id,
            tree: shaped.tree,
            fine: shaped.fine,
            per_class,
        })
    })
}

/// What the stages up to the topics made: the TF-IDF model (its matrix released), the
/// reduction, the vectors k-means clustered, the sentence model's part, the named topics'
/// vectors and the topics.
struct Clustered {
    tfidf: TfIdf,
    reducer: Reducer,
    vectors: Array2<f32>,
    embedding: Option<SavedEmbedding>,
    guides: Option<Guides>,
    clustering: Clustering,
    k_selection: Option<KSelection>,
}

/// The sentence model a fit's documents are embedded with, as they are prepared: kept from
/// the documents for the named topics when there are any (and let go before k-means runs),
/// else let go as soon as the documents have their vectors; and where the vectors are cached.
pub struct FitModel {
    loaded: crate::embed::Loaded,
    cache: std::path::PathBuf,
}

impl FitModel {
    pub fn new(settings: &Settings) -> FitModel {
        FitModel {
            loaded: match settings.cluster.named().is_empty() {
                true => crate::embed::Loaded::once(),
                false => crate::embed::Loaded::default(),
            },
            cache: settings.output.dir.join("cache"),
        }
    }

    /// How the preparation embeds the documents (`None` without a model), each vector after
    /// room for the LSA part when the features may be `both`.
    pub fn embedder<'a>(&'a self, settings: &'a Settings) -> Option<super::prepare::Embedder<'a>> {
        super::prepare::Embedder::of(
            Some(&settings.embed),
            Some(&self.cache),
            &self.loaded,
            settings.embed.lead(settings.reduce.dims()),
        )
    }
}

/// tfidf -> reduce -> the features k-means clusters -> the named topics' vectors -> cluster.
fn cluster_documents(
    settings: &Settings,
    prepared: &mut Prepared,
    FitModel { loaded: model, .. }: FitModel,
    previous: Option<&PreviousTopics>,
    progress: &mut Progress,
) -> Result<Clustered, PipelineError> {
    let mut tfidf = vectorize(settings, prepared, progress)?;
    let (reducer, lsa) = reduce(settings, &tfidf, progress)?;
    let (vectors, embedding) = features(settings, prepared, &tfidf, lsa, progress)?;
    let space = embedding
        .as_ref()
        .map_or(FeatureSpace::Tfidf, |e| e.features);
    let guides = super::guides::guides(
        settings,
        prepared,
        (&tfidf, &reducer, &model),
        space,
        progress,
    )?;
    drop(model);
    let previous_k = previous.and_then(|p| p.fitted_k);
    let (clustering, k_selection) = cluster(
        settings,
        &vectors,
        &tfidf,
        (previous_k, guides.as_ref()),
        progress,
    )?;
    // Later stages work on the reduced vectors and the tokens; the sparse matrix can go.
    tfidf.release_matrix();
    Ok(Clustered {
        tfidf,
        reducer,
        vectors,
        embedding,
        guides,
        clustering,
        k_selection,
    })
}

/// Each named topic's name on the topic fitted around it (see [`describe::named`]); a name
/// whose topic ended without documents is warned about. With zero-shot thresholds, the named
/// topics' vectors go into the model for `assign`.
fn named(settings: &Settings, summary: &mut TopicSummary, c: &mut Clustered, progress: &Progress) {
    let Some(g) = &c.guides else {
        return;
    };
    let names: Vec<&str> = settings
        .cluster
        .named()
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    let spaces = (c.clustering.centroids().view(), g.vectors.view());
    let topic_of = describe::named::attach(summary, spaces, &names, c.clustering.named());
    for (name, t) in names.iter().zip(&topic_of) {
        if t.is_none() {
            progress.warn(&format!(
                "named topic {name:?} found no documents: no topic carries its name"
            ));
        }
    }
    if let Some(e) = c
        .embedding
        .as_mut()
        .filter(|_| g.thresholds.iter().any(Option::is_some))
    {
        e.zero_shot = (0..g.len())
            .filter_map(|j| {
                topic_of[j].map(|topic| crate::model::SavedZeroShot {
                    topic,
                    min_similarity: g.thresholds[j],
                    vector: g.vectors.row(j).to_vec(),
                })
            })
            .collect();
    }
}

/// The report's warnings: what the log said about the range of an automatic k, then `rest`.
fn with_k_edge(selection: Option<&KSelection>, rest: Vec<String>) -> Vec<String> {
    selection
        .and_then(|s| s.edge.clone())
        .into_iter()
        .chain(rest)
        .collect()
}

/// Step 1 of the document map (on every core, before the descent goes to a thread of its
/// own): the sample's neighbour graph.
fn neighbours(
    settings: &Settings,
    fitted: &MapTopics,
    vectors: &Array2<f32>,
    progress: &mut Progress,
) -> Result<layout::Graphed, PipelineError> {
    progress.stage(
        "neighbours",
        |_| {
            Ok(settings
                .map
                .neighbours(vectors.view(), fitted.topics(), settings.cluster.seed()))
        },
        |g: &layout::Graphed| match g {
            Ok(g) => format!("{} edges between the map's sample", thousands(g.edges())),
            Err(_) => "none: the map is linear".into(),
        },
    )
}

/// Step 3 of the document map, once the descent (and its seconds) is back: every document
/// placed, and the labels put on the reported topics (`merged`, when naming merged the fitted
/// ones).
fn finish_map(
    settings: &Settings,
    (embedded, secs): (layout::Embedded, f64),
    vectors: &Array2<f32>,
    fitted: &MapTopics,
    merged: Option<&Clustering>,
    progress: &mut Progress,
) -> Result<layout::Map, PipelineError> {
    progress.finished("layout", secs, Some(layout_detail(&embedded)));
    let mut map = progress.stage(
        "map",
        |_| {
            Ok::<_, PipelineError>(
                settings
                    .map
                    .finish(embedded, vectors.view(), fitted.topics()),
            )
        },
        map_detail,
    )?;
    if let Some(c) = merged {
        map.centres = layout::anchors(&map.documents, c.assignments(), c.k());
    }
    Ok(map)
}

/// What the descent did, for its stage line.
fn layout_detail(embedded: &layout::Embedded) -> String {
    match embedded {
        Ok(_) => "the map's sample, beside describe".into(),
        Err(_) => "none: the map is linear".into(),
    }
}

/// How the map was made, in a stage line's few words (the chart's note says it in full).
fn map_detail(map: &layout::Map) -> String {
    match &map.landmarks {
        Some(l) => {
            // A streaming run's fit places no one: its documents are placed as they stream.
            let on_map = map.documents.iter().filter(|p| p[0].is_finite()).count();
            format!(
                "{} embedded, {} placed among them",
                thousands(l.coords.len()),
                thousands(on_map.saturating_sub(l.coords.len()))
            )
        }
        None => map.note.clone(),
    }
}

/// The fitted topics the map is laid out for.
struct MapTopics {
    assignments: Vec<usize>,
    centroids: Array2<f32>,
    sizes: Vec<usize>,
}

impl MapTopics {
    fn of(clustering: &Clustering) -> MapTopics {
        MapTopics {
            assignments: clustering.assignments().to_vec(),
            centroids: clustering.centroids().clone(),
            sizes: clustering.sizes().to_vec(),
        }
    }

    fn topics(&self) -> layout::Topics<'_> {
        layout::Topics {
            assignments: &self.assignments,
            centroids: self.centroids.view(),
            sizes: &self.sizes,
        }
    }
}

/// TF-IDF of the prepared documents; documents left without a feature (every word outside the
/// vocabulary's bounds) are dropped from both.
fn vectorize(
    settings: &Settings,
    prepared: &mut Prepared,
    progress: &mut Progress,
) -> Result<TfIdf, PipelineError> {
    let mut tfidf = progress.stage(
        "tfidf",
        |_| settings.tfidf.fit(&prepared.tokens),
        |t: &TfIdf| format!("{} features", thousands(t.features().len())),
    )?;
    let zero: Vec<usize> = (0..tfidf.matrix().n_rows())
        .filter(|&i| tfidf.matrix().row(i).0.is_empty())
        .collect();
    if !zero.is_empty() {
        let keep = prepared.drop_rows(&zero, LeftOut::NotInVocabulary, progress)?;
        tfidf.retain_rows(&keep);
    }
    Ok(tfidf)
}

/// The reduction (LSA) fitted on the TF-IDF matrix, with the reduced document vectors.
fn reduce(
    settings: &Settings,
    tfidf: &TfIdf,
    progress: &mut Progress,
) -> Result<(Reducer, Array2<f32>), PipelineError> {
    Ok(progress.stage(
        "reduce",
        |_| settings.reduce.fit(tfidf.matrix()),
        |(r, _): &(Reducer, Array2<f32>)| format!("{} dims", r.dims()),
    )?)
}

/// What k-means clusters (`[cluster] features`): the LSA vectors as they are, or the
/// documents' sentence vectors (made as they were prepared), alone or beside them; with what
/// the model saves of the sentence model. A default chosen by the documents' length is said.
fn features(
    settings: &Settings,
    prepared: &mut Prepared,
    tfidf: &TfIdf,
    lsa: Array2<f32>,
    progress: &Progress,
) -> Result<(Array2<f32>, Option<SavedEmbedding>), PipelineError> {
    let params = &settings.embed;
    if !params.features.embeds() {
        return Ok((lsa, None));
    }
    let sentences = prepared.take_sentences()?;
    let language = settings.tokenize.language();
    let (space, median) = params.for_documents(tfidf.matrix(), language);
    let (kept, whole) = (params.kept_dims(space), sentences.view().ncols());
    let mut notes = Vec::new();
    if params.by_length {
        let side = match median < SHORT_FEATURES {
            true => "under",
            false => "at least",
        };
        notes.push(format!(
            "the default: a median document of {median} terms, {side} {SHORT_FEATURES}"
        ));
        if median < SHORT_FEATURES && space == FeatureSpace::Both {
            notes.push(format!(
                "beside the words, as the static table spells {language} in bytes"
            ));
        }
    }
    if kept < whole {
        notes.push(format!(
            "the first {kept} of the sentence vectors' {whole} values"
        ));
    }
    if !notes.is_empty() {
        progress.info(&format!("features {} ({})", space.name(), notes.join("; ")));
    }
    let vectors = params.features(space, lsa, Some(sentences));
    Ok((vectors, SavedEmbedding::of(params, space)))
}

/// k-means on the reduced vectors (k chosen when automatic), refined on the TF-IDF rows.
fn cluster(
    settings: &Settings,
    vectors: &Array2<f32>,
    tfidf: &TfIdf,
    (previous_k, guides): (Option<usize>, Option<&Guides>),
    progress: &mut Progress,
) -> Result<(Clustering, Option<KSelection>), PipelineError> {
    let selection = progress.stage(
        "cluster",
        |bar| {
            settings.cluster.fit(
                vectors.view(),
                tfidf.matrix(),
                (previous_k, guides),
                |step| bar.set_message(format!("cluster: {step}")),
            )
        },
        |(c, _)| match c.refine_passes() {
            0 => format!("k = {}", c.k()),
            1 => format!("k = {}, refined in 1 pass", c.k()),
            p => format!("k = {}, refined in {p} passes", c.k()),
        },
    )?;
    if let Some(sel) = &selection.1 {
        if let Some(k) = sel.kept_previous {
            progress.info(&format!(
                "k = {k} kept from the previous run: within {}% of the silhouette's rise of where the rule lands (k = {})",
                (crate::cluster::auto_k::rule::KEEP * 100.0).round(),
                sel.curve_k.max(sel.floor)
            ));
        }
        if let Some(edge) = &sel.edge {
            progress.warn(edge);
        }
    }
    Ok(selection)
}

/// The topics of `clustering` described from the documents: terms, labels, representatives.
fn describe(
    settings: &Settings,
    prepared: &Prepared,
    tfidf: &TfIdf,
    clustering: &Clustering,
    reducer: &Reducer,
    progress: &mut Progress,
) -> Result<TopicSummary, PipelineError> {
    progress.stage(
        "describe",
        |_| {
            let term_vectors = reducer.term_vectors();
            Ok::<_, PipelineError>(describe::describe(
                &prepared.tokens,
                tfidf,
                clustering,
                &settings.describe,
                term_vectors.as_ref().map(|v| v.view()),
            ))
        },
        |s: &TopicSummary| format!("{} topics", s.topics.len()),
    )
}

/// The reported topics per class of `describe.per-class` (none without it), described from the
/// documents' `tokens`, which are dropped once this is done.
fn per_class(
    settings: &Settings,
    corpus: &Corpus,
    (tokens, c): (TokenizedCorpus, &Clustered),
    progress: &mut Progress,
) -> Result<Option<PerClass>, PipelineError> {
    let Some(column) = settings.describe.per_class() else {
        return Ok(None);
    };
    let classes: Vec<Option<&str>> = corpus
        .documents
        .iter()
        .map(|d| d.class.as_deref())
        .collect();
    let per_class = progress.stage(
        "per-class",
        |_| {
            let term_vectors = c.reducer.term_vectors();
            Ok::<_, PipelineError>(describe::per_class::per_class(
                column,
                &classes,
                (c.clustering.assignments(), c.clustering.k()),
                (&tokens, &c.tfidf),
                &settings.describe,
                term_vectors.as_ref().map(|v| v.view()),
            ))
        },
        |p: &PerClass| format!("{} classes of {column:?}", p.classes.len()),
    )?;
    Ok(Some(per_class))
}

/// Stable ids: keeps the previous run's ids for the topics that match it. Returns the drift
/// table (none on a first run) and the first id no topic has had.
fn keep_ids(
    summary: &mut TopicSummary,
    fingerprints: &[Vec<(String, f64)>],
    previous: Option<&PreviousTopics>,
) -> (Option<Vec<DriftRow>>, usize) {
    match previous {
        Some(prev) => {
            let m = matching::keep_ids(summary, fingerprints, prev);
            (Some(m.drift), m.next_id)
        }
        None => (None, summary.topics.len()),
    }
}

/// Each topic's documents by period, and the topics' similarities.
fn trends(
    periods: &[String],
    clustering: &Clustering,
    progress: &mut Progress,
) -> Result<(Trends, Vec<Vec<f64>>), PipelineError> {
    progress.stage(
        "trends",
        |_| -> Result<_, PipelineError> {
            let tr = trends::trends(periods, clustering.assignments(), clustering.k());
            let sim = similarity::centroid_similarity(clustering.centroids().view());
            Ok((tr, sim))
        },
        |(t, _): &(Trends, Vec<Vec<f64>>)| format!("{} periods", t.periods.len()),
    )
}

/// The scores against the corpus's ground-truth labels, when it has them.
fn evaluate(
    settings: &Settings,
    corpus: &Corpus,
    clustering: &Clustering,
    vectors: &Array2<f32>,
    progress: &mut Progress,
) -> Result<Option<Metrics>, PipelineError> {
    if !corpus.has_label {
        return Ok(None);
    }
    let labels: Vec<Option<&str>> = corpus
        .documents
        .iter()
        .map(|d| d.label.as_deref())
        .collect();
    let scored = Scored {
        assignments: clustering.assignments(),
        k: clustering.k(),
        inertia: clustering.inertia(),
    };
    let metrics = progress.stage(
        "evaluate",
        |_| {
            evaluate::evaluate(
                &labels,
                scored,
                vectors.view(),
                settings.cluster.silhouette_sample(),
                settings.cluster.seed(),
            )
        },
        |m: &Metrics| format!("V {:.3}  ARI {:.3}", m.v_measure, m.ari),
    )?;
    Ok(Some(metrics))
}

/// The topics of the previous run, whose ids this run keeps: `[output] previous` when the
/// pipeline names one (an error when it cannot be read), else the report already in `--out`,
/// else `DIR/latest` (a warning when it cannot be read: ids then start afresh).
pub fn previous_topics(
    settings: &Settings,
    out: Option<&Path>,
    progress: &Progress,
) -> Result<Option<PreviousTopics>, PipelineError> {
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
            return Err(crate::model::ModelError::NotFound { path: file }.into());
        }
        return Ok(None);
    }
    match SavedModel::load(&file) {
        Ok(m) => Ok(Some(m.previous_topics())),
        Err(e) if explicit.is_none() => {
            progress.warn(&format!("topic ids start afresh: {e}"));
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}
