//! Topics after describe: curated names, the topic tree, and the coarser report merged along it.
//!
//! A fit ([`super::fit`]) and a report from sums ([`super::summed`]) describe their topics
//! differently (from the documents, or from the sums), and then both go through this one
//! sequence ([`name_and_merge`]):
//!
//! ```text
//! described topics -> curated names (describe.names) -> topic tree -> merged along the tree
//!                                                                     (describe.merge-to)
//! ```
//!
//! With `merge-to`, the reported topics are the merged ones and the fitted ones are kept
//! beside them (the model saves the fitted topics).

use crate::cluster::Clustering;
use crate::config::Settings;
use crate::describe::hierarchy::{self, TopicTree};
use crate::describe::matching::DriftRow;
use crate::describe::{names, TopicSummary};
use crate::progress::Progress;
use crate::render::FineTopics;

/// What the sequence after describe made of the topics.
pub(super) struct Shaped {
    /// The curated names' warnings (already shown).
    pub warnings: Vec<String>,
    pub tree: Option<TopicTree>,
    /// The fitted topics, when the report shows them merged.
    pub fine: Option<FineTopics>,
    /// Each fitted topic's reported topic (by index; the same index without a merge).
    pub merged_into: Vec<usize>,
}

/// Names the described topics of `summary` (keeping `drift` in step), builds their tree (merged
/// topics numbered from `next_id`), and, with `describe.merge-to`, makes `summary` and
/// `clustering` the topics merged along it. `distances` are those of the documents `summary`'s
/// representatives index: `None` for the clustering's own documents.
pub(super) fn name_and_merge(
    settings: &Settings,
    summary: &mut TopicSummary,
    clustering: &mut Clustering,
    distances: Option<&[f32]>,
    drift: Option<&mut Vec<DriftRow>>,
    next_id: usize,
    progress: &Progress,
) -> Shaped {
    let warnings = apply_names(settings, summary, drift, next_id, progress);
    let d = &settings.describe;
    let tree = hierarchy::build(summary, next_id, d.label_terms(), d.label_max_share());
    let merged = {
        let distances = distances.unwrap_or(clustering.distances());
        merge_along_tree(
            settings,
            tree.as_ref(),
            summary,
            clustering,
            distances,
            progress,
        )
    };
    let mut merged_into: Vec<usize> = (0..clustering.k()).collect();
    let fine = merged.map(|m| {
        for (g, members) in m.groups.iter().enumerate() {
            for &t in members {
                merged_into[t] = g;
            }
        }
        FineTopics {
            clustering: std::mem::replace(clustering, m.clustering),
            summary: std::mem::replace(summary, m.summary),
        }
    });
    Shaped {
        warnings,
        tree,
        fine,
        merged_into,
    }
}

/// Curated names (`describe.names`), now that the ids are the pipeline's stable ones; returns
/// the warnings, each shown as it is found.
fn apply_names(
    settings: &Settings,
    summary: &mut TopicSummary,
    drift: Option<&mut Vec<DriftRow>>,
    next_id: usize,
    progress: &Progress,
) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Some(n) = &settings.names {
        for w in names::apply(summary, &n.names, drift, next_id) {
            progress.warn(&w);
            warnings.push(w);
        }
    }
    warnings
}

/// Topics merged along the topic hierarchy, for a coarser report (see [`merge_along_tree`]).
struct Merged {
    summary: TopicSummary,
    clustering: Clustering,
    /// The fitted topic indices of each reported topic.
    groups: Vec<Vec<usize>>,
}

/// A coarser report (`describe.merge-to = n`): the topics of `summary` and `clustering` merged
/// along `tree` into n. `distances` are those of the documents `summary`'s representatives
/// index. None without `merge-to`, or when it asks for no fewer topics than there are.
fn merge_along_tree(
    settings: &Settings,
    tree: Option<&TopicTree>,
    summary: &TopicSummary,
    clustering: &Clustering,
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
