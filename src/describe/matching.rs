//! Stable topic ids across refits: match this run's topics to the previous run's.
//!
//! Two fits of the same pipeline live in different LSA spaces, so centroids cannot be compared
//! directly; their topics' class-based term weights can. Each pair of (new, previous) topics is
//! scored by the cosine of their weighted terms, keyed by stem, and the one-to-one matching that
//! maximises the total similarity is found with the Hungarian algorithm. A pair below
//! [`MIN_SIMILARITY`] is not a match. Matched topics keep their previous id; new topics get fresh
//! ids, never reusing an id a vanished topic had; vanished topics are listed.

use super::TopicSummary;
use crate::tokenize::TokenizedCorpus;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// Below this cosine, two topics are not the same topic.
pub const MIN_SIMILARITY: f64 = 0.2;

/// A topic of the previous run, as saved in its model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopicFingerprint {
    pub id: usize,
    pub label: String,
    pub share: f64,
    /// Weighted terms keyed by stem (space-separated stems for phrases).
    pub terms: Vec<(String, f64)>,
    /// Named by the user: it matches the topic of the same name, and no other named one.
    pub named: bool,
}

/// One line of `drift.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftRow {
    pub previous_id: Option<usize>,
    pub id: Option<usize>,
    pub label: String,
    pub previous_label: String,
    pub similarity: f64,
    pub share_change: f64,
    /// `matched`, `new` or `vanished`.
    pub status: &'static str,
    /// The curated name of the previous topic, when it had one (see [`super::names`]).
    pub name: String,
}

/// The outcome of matching.
#[derive(Debug, Clone, PartialEq)]
pub struct Matching {
    /// The id of each current topic, by index.
    pub ids: Vec<usize>,
    /// The next fresh id after this run.
    pub next_id: usize,
    pub drift: Vec<DriftRow>,
}

/// Each topic's weighted terms keyed by stem (space-separated stems for phrases): what a later
/// run matches against, independent of this run's term ids.
pub fn fingerprints(summary: &TopicSummary, tokens: &TokenizedCorpus) -> Vec<Vec<(String, f64)>> {
    summary
        .topics
        .iter()
        .map(|t| {
            t.terms
                .iter()
                .map(|w| {
                    let key: Vec<&str> = w
                        .stems
                        .iter()
                        .map(|&s| tokens.terms[s as usize].stem.as_str())
                        .collect();
                    (key.join(" "), w.weight)
                })
                .collect()
        })
        .collect()
}

/// The previous run's topics, as its model saved them, and the first id none of its topics
/// (nor any vanished before them) has had.
#[derive(Debug, Clone, PartialEq)]
pub struct PreviousTopics {
    pub topics: Vec<TopicFingerprint>,
    pub next_id: usize,
    /// The number of topics the previous run fitted (before any merge), which an automatic k
    /// keeps while it scores close to the best.
    pub fitted_k: Option<usize>,
}

/// Gives `summary`'s topics the ids of the previous run's matching topics (fresh ids for the
/// rest) and returns the matching.
pub fn keep_ids(
    summary: &mut TopicSummary,
    fingerprints: &[Vec<(String, f64)>],
    previous: &PreviousTopics,
) -> Matching {
    let current: Vec<TopicFingerprint> = summary
        .topics
        .iter()
        .zip(fingerprints)
        .map(|(t, f)| TopicFingerprint {
            id: t.id,
            label: t.label.clone(),
            share: t.share,
            terms: f.clone(),
            named: t.named,
        })
        .collect();
    let m = match_topics(&current, &previous.topics, previous.next_id);
    for (t, &id) in summary.topics.iter_mut().zip(&m.ids) {
        t.id = id;
    }
    m
}

/// Cosine similarity of two weighted term lists.
pub fn similarity(a: &[(String, f64)], b: &[(String, f64)]) -> f64 {
    let map: FxHashMap<&str, f64> = b.iter().map(|(t, w)| (t.as_str(), *w)).collect();
    let dot: f64 = a
        .iter()
        .filter_map(|(t, w)| map.get(t.as_str()).map(|v| v * w))
        .sum();
    let na = a.iter().map(|(_, w)| w * w).sum::<f64>().sqrt();
    let nb = b.iter().map(|(_, w)| w * w).sum::<f64>().sqrt();
    if na > 0.0 && nb > 0.0 {
        dot / (na * nb)
    } else {
        0.0
    }
}

/// Matches `current` topics (fingerprints with ids ignored) to `previous` ones.
/// `next_id` is the first id never used by the previous runs.
pub fn match_topics(
    current: &[TopicFingerprint],
    previous: &[TopicFingerprint],
    next_id: usize,
) -> Matching {
    let sim = similarities(current, previous);
    let assignment = best_assignment(&sim, current.len(), previous.len());
    let mut next = next_id.max(previous.iter().map(|p| p.id + 1).max().unwrap_or(0));
    let mut ids = vec![usize::MAX; current.len()];
    let mut matched_prev = vec![false; previous.len()];
    let mut drift = Vec::new();
    // Pairs at least [`MIN_SIMILARITY`] alike keep the previous id.
    for (i, c) in current.iter().enumerate() {
        let j = assignment[i];
        if j < previous.len() && sim[i][j] >= MIN_SIMILARITY {
            ids[i] = previous[j].id;
            matched_prev[j] = true;
            drift.push(DriftRow::matched(c, &previous[j], sim[i][j]));
        }
    }
    // Fresh ids for new topics, in the current order (largest first).
    for (i, c) in current.iter().enumerate() {
        if ids[i] == usize::MAX {
            ids[i] = next;
            next += 1;
            let best = sim[i].iter().copied().fold(0.0f64, f64::max);
            drift.push(DriftRow::new_topic(c, ids[i], best));
        }
    }
    for (p, _) in previous.iter().zip(&matched_prev).filter(|(_, &m)| !m) {
        drift.push(DriftRow::vanished(p));
    }
    Matching {
        ids,
        next_id: next,
        drift,
    }
}

/// `sim[i][j]`: the similarity of current topic `i` and previous topic `j`. Two named topics
/// of the same name (case aside) are one topic, whatever their terms ([`SAME_NAME`]); two of
/// different names are never one.
fn similarities(current: &[TopicFingerprint], previous: &[TopicFingerprint]) -> Vec<Vec<f64>> {
    current
        .iter()
        .map(|c| {
            previous
                .iter()
                .map(|p| match (c.named, p.named) {
                    (true, true) if c.label.to_lowercase() == p.label.to_lowercase() => SAME_NAME,
                    (true, true) => 0.0,
                    _ => similarity(&c.terms, &p.terms),
                })
                .collect()
        })
        .collect()
}

/// The similarity two named topics of one name count as: above any pair of term lists (at
/// most 1), so the assignment always pairs them.
const SAME_NAME: f64 = 2.0;

/// The previous topic (column) of each of the `n` current ones that maximises the total
/// similarity, `m` or more for none: the Hungarian algorithm on `1 - similarity`, padded square.
fn best_assignment(sim: &[Vec<f64>], n: usize, m: usize) -> Vec<usize> {
    let size = n.max(m);
    let cost: Vec<Vec<f64>> = (0..size)
        .map(|i| {
            (0..size)
                .map(|j| if i < n && j < m { 1.0 - sim[i][j] } else { 1.0 })
                .collect()
        })
        .collect();
    hungarian(&cost)
}

impl DriftRow {
    /// A current topic that matches a previous one at `similarity` (and keeps its id).
    fn matched(current: &TopicFingerprint, previous: &TopicFingerprint, similarity: f64) -> Self {
        DriftRow {
            previous_id: Some(previous.id),
            id: Some(previous.id),
            label: current.label.clone(),
            previous_label: previous.label.clone(),
            name: String::new(),
            similarity,
            share_change: current.share - previous.share,
            status: "matched",
        }
    }

    /// A current topic that matches none, given the fresh `id`; `best` is its highest
    /// similarity to a previous topic.
    fn new_topic(current: &TopicFingerprint, id: usize, best: f64) -> Self {
        DriftRow {
            previous_id: None,
            id: Some(id),
            label: current.label.clone(),
            previous_label: String::new(),
            name: String::new(),
            similarity: best,
            share_change: current.share,
            status: "new",
        }
    }

    /// A previous topic no current topic matches.
    fn vanished(previous: &TopicFingerprint) -> Self {
        DriftRow {
            previous_id: Some(previous.id),
            id: None,
            label: String::new(),
            previous_label: previous.label.clone(),
            name: String::new(),
            similarity: 0.0,
            share_change: -previous.share,
            status: "vanished",
        }
    }
}

/// Minimum-cost perfect assignment of a square cost matrix (Hungarian algorithm, O(n^3),
/// Jonker-Volgenant style potentials). Returns the column of each row.
pub fn hungarian(cost: &[Vec<f64>]) -> Vec<usize> {
    let n = cost.len();
    if n == 0 {
        return Vec::new();
    }
    let inf = f64::INFINITY;
    // 1-based arrays as in the classic formulation; p[j] = row matched to column j.
    let mut u = vec![0.0; n + 1];
    let mut v = vec![0.0; n + 1];
    let mut p = vec![0usize; n + 1];
    let mut way = vec![0usize; n + 1];
    for i in 1..=n {
        p[0] = i;
        let mut j0 = 0usize;
        let mut minv = vec![inf; n + 1];
        let mut used = vec![false; n + 1];
        loop {
            used[j0] = true;
            let i0 = p[j0];
            let mut delta = inf;
            let mut j1 = 0usize;
            for j in 1..=n {
                if !used[j] {
                    let cur = cost[i0 - 1][j - 1] - u[i0] - v[j];
                    if cur < minv[j] {
                        minv[j] = cur;
                        way[j] = j0;
                    }
                    if minv[j] < delta {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            }
            for j in 0..=n {
                if used[j] {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
            if p[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut result = vec![0usize; n];
    for j in 1..=n {
        if p[j] > 0 {
            result[p[j] - 1] = j - 1;
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(id: usize, label: &str, share: f64, terms: &[(&str, f64)]) -> TopicFingerprint {
        TopicFingerprint {
            id,
            label: label.into(),
            share,
            terms: terms.iter().map(|(t, w)| (t.to_string(), *w)).collect(),
            named: false,
        }
    }

    #[test]
    fn hungarian_finds_the_optimum_not_the_greedy_choice() {
        // Greedy would take (0,0) = 1 and then (1,1) = 10; the optimum is (0,1) + (1,0) = 2 + 2.
        let cost = vec![vec![1.0, 2.0], vec![2.0, 10.0]];
        assert_eq!(hungarian(&cost), vec![1, 0]);
        let cost = vec![
            vec![4.0, 1.0, 3.0],
            vec![2.0, 0.0, 5.0],
            vec![3.0, 2.0, 2.0],
        ];
        assert_eq!(hungarian(&cost), vec![1, 0, 2]);
    }

    #[test]
    fn matched_topics_keep_ids_new_ones_get_fresh_ids_and_vanished_are_listed() {
        let previous = vec![
            fp(3, "graph networks", 0.5, &[("graph", 1.0), ("node", 0.5)]),
            fp(
                7,
                "reinforcement learning",
                0.3,
                &[("reinforc", 1.0), ("reward", 0.8)],
            ),
            fp(9, "kernels", 0.2, &[("kernel", 1.0)]),
        ];
        // The current run finds the RL topic first, then graphs, then something new.
        let current = vec![
            fp(
                0,
                "reinforcement, reward",
                0.4,
                &[("reward", 1.0), ("reinforc", 0.9)],
            ),
            fp(
                1,
                "graph, node",
                0.4,
                &[("graph", 0.9), ("node", 0.6), ("edg", 0.2)],
            ),
            fp(2, "diffusion", 0.2, &[("diffus", 1.0)]),
        ];
        let m = match_topics(&current, &previous, 12);
        assert_eq!(m.ids, vec![7, 3, 12]);
        assert_eq!(m.next_id, 13);
        let vanished: Vec<_> = m.drift.iter().filter(|d| d.status == "vanished").collect();
        assert_eq!(vanished.len(), 1);
        assert_eq!(vanished[0].previous_id, Some(9));
        let rl = m.drift.iter().find(|d| d.id == Some(7)).unwrap();
        assert!((rl.share_change - 0.1).abs() < 1e-12 && rl.similarity > 0.9);
    }
}
