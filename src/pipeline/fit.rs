//! Fit: tfidf -> reduce -> cluster -> describe -> trends -> evaluate, from prepared documents
//! to an [`Analysis`].
//!
//! Each stage is built from its part of the settings and takes the previous stage's output.
//! Topic ids are matched to the previous run's here, right after the topics are described, so
//! every later table and chart uses the stable ids.

use super::prepare::{LeftOut, Prepared};
use super::PipelineError;
use crate::config::Settings;
use crate::describe::matching::{self, PreviousTopics};
use crate::describe::similarity;
use crate::describe::trends::{self, Trends};
use crate::describe::{self, TopicSummary};
use crate::describe::{hierarchy, names};
use crate::evaluate::{self, Metrics, Scored};
use crate::layout;
use crate::model::SavedModel;
use crate::progress::{thousands, Progress};
use crate::reduce::Reducer;
use crate::render::Analysis;
use crate::vectorize::TfIdf;
use ndarray::Array2;
use std::path::Path;

/// Runs the analysis stages on `prepared`; `previous` holds the topics whose ids to keep.
pub fn fit(
    settings: &Settings,
    mut prepared: Prepared,
    previous: Option<PreviousTopics>,
    progress: &mut Progress,
) -> Result<Analysis, PipelineError> {
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

    let (reducer, vectors) = progress.stage(
        "reduce",
        |_| settings.reduce.fit(tfidf.matrix()),
        |(r, _): &(Reducer, Array2<f32>)| format!("{} dims", r.dims()),
    )?;

    let (mut clustering, k_selection) = progress.stage(
        "cluster",
        |bar| {
            settings
                .cluster
                .fit(vectors.view(), tfidf.matrix(), |step| {
                    bar.set_message(format!("cluster: {step}"))
                })
        },
        |(c, _)| match c.refine_passes() {
            0 => format!("k = {}", c.k()),
            1 => format!("k = {}, refined in 1 pass", c.k()),
            p => format!("k = {}, refined in {p} passes", c.k()),
        },
    )?;
    // Later stages work on the reduced vectors and the tokens; the sparse matrix can go.
    tfidf.release_matrix();

    let mut summary = progress.stage(
        "describe",
        |_| {
            let term_vectors = reducer.term_vectors();
            Ok::<_, PipelineError>(describe::describe(
                &prepared.tokens,
                &tfidf,
                &clustering,
                &settings.describe,
                term_vectors.as_ref().map(|v| v.view()),
            ))
        },
        |s: &TopicSummary| format!("{} topics", s.topics.len()),
    )?;

    // Stable ids: keep the previous run's ids for the topics that match it.
    let fingerprints = matching::fingerprints(&summary, &prepared.tokens);
    let (mut drift, next_id) = match &previous {
        Some(prev) => {
            let m = matching::keep_ids(&mut summary, &fingerprints, prev);
            (Some(m.drift), m.next_id)
        }
        None => (None, summary.topics.len()),
    };
    // Curated names, now that the ids are this pipeline's stable ones.
    let mut warnings = Vec::new();
    if let Some(n) = &settings.names {
        for w in names::apply(&mut summary, &n.names, drift.as_mut(), next_id) {
            progress.warn(&w);
            warnings.push(w);
        }
    }
    let tree = hierarchy::build(
        &summary,
        next_id,
        settings.describe.label_terms(),
        settings.describe.label_max_share(),
    );
    // A coarser report: topics merged along the tree; the model keeps the fitted topics.
    let fine = merge_along_tree(
        settings,
        tree.as_ref(),
        &summary,
        &clustering,
        clustering.distances(),
        progress,
    )
    .map(|m| m.report(&mut summary, &mut clustering).0);
    let vocabulary = prepared.tokens.terms.len();
    let periods = prepared.periods(settings.trends.period);
    let Prepared { corpus, tokens, .. } = prepared;
    drop(tokens);

    let (trends, map, similarity) = progress.stage(
        "trends",
        |_| -> Result<_, PipelineError> {
            let tr = trends::trends(&periods, clustering.assignments(), clustering.k());
            let map = layout::project(
                vectors.view(),
                clustering.centroids().view(),
                clustering.sizes(),
            );
            let sim = similarity::centroid_similarity(clustering.centroids().view());
            Ok((tr, map, sim))
        },
        |(t, _, _): &(Trends, layout::Map, Vec<Vec<f64>>)| format!("{} periods", t.periods.len()),
    )?;

    let metrics = if corpus.has_label {
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
        Some(progress.stage(
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
        )?)
    } else {
        None
    };

    Ok(Analysis {
        scope: crate::render::Scope::Documents,
        corpus,
        vocabulary,
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
        warnings,
        tree,
        fine,
    })
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

/// Topics merged along the topic hierarchy, for a coarser report (see [`merge_along_tree`]).
pub(super) struct Merged {
    summary: TopicSummary,
    clustering: crate::cluster::Clustering,
    /// The fitted topic indices of each reported topic.
    groups: Vec<Vec<usize>>,
}

impl Merged {
    /// Makes `summary` and `clustering` the merged topics; returns the fitted ones (which the
    /// model keeps) and the groups.
    pub(super) fn report(
        self,
        summary: &mut TopicSummary,
        clustering: &mut crate::cluster::Clustering,
    ) -> (crate::render::FineTopics, Vec<Vec<usize>>) {
        let fine = crate::render::FineTopics {
            clustering: std::mem::replace(clustering, self.clustering),
            summary: std::mem::replace(summary, self.summary),
        };
        (fine, self.groups)
    }
}

/// A coarser report (`describe.merge-to = n`): the topics of `summary` and `clustering` merged
/// along `tree` into n. `distances` are those of the documents `summary`'s representatives
/// index. None without `merge-to`, or when it asks for no fewer topics than there are.
pub(super) fn merge_along_tree(
    settings: &Settings,
    tree: Option<&hierarchy::TopicTree>,
    summary: &TopicSummary,
    clustering: &crate::cluster::Clustering,
    distances: &[f32],
    progress: &Progress,
) -> Option<Merged> {
    let d = &settings.describe;
    let (n, tree) = (d.merge_to()?, tree?);
    if n >= summary.topics.len() {
        return None;
    }
    let index = |id: usize| {
        summary
            .topics
            .iter()
            .position(|t| t.id == id)
            .expect("a topic of the tree")
    };
    let groups: Vec<Vec<usize>> = tree
        .cut(n)
        .iter()
        .map(|g| g.iter().map(|&id| index(id)).collect())
        .collect();
    let merged = hierarchy::merge_summary(
        summary,
        &groups,
        distances,
        d.top_terms(),
        d.label_terms(),
        d.label_max_share(),
        d.representatives(),
    );
    progress.info(&format!(
        "reporting {} topics, merged from {} along the topic hierarchy (describe.merge-to)",
        merged.topics.len(),
        summary.topics.len()
    ));
    Some(Merged {
        summary: merged,
        clustering: clustering.merge(&groups),
        groups,
    })
}
