//! Automatic k: sweep a range, score each k, pick one by a stated rule.
//!
//! Text rarely holds separated clusters. On the LSA vectors of 20 Newsgroups, THUCNews or
//! arXiv the silhouette stays between 0.01 and 0.11 at every k and rises with k, so "highest
//! silhouette" drifts to the top of any range; the gap statistic, Calinski–Harabasz,
//! Davies–Bouldin, BIC, stability, prediction strength, coherence and centroid merge gaps each
//! drift to an edge or follow noise (docs/benchmarks.md, "Automatic k"). What is left to decide
//! k on such data is the resolution a reader wants, and on labelled sets people's choices grow
//! like the square root of the corpus (about 10 topics for 10,000 documents). So the rule is
//! the silhouette (the data) less a penalty for straying from that resolution:
//!
//! ```text
//! score(k) = silhouette(k) - 0.2 * |ln(k / k0)|,   k0 = sqrt(n) / 10
//! ```
//!
//! - The weight 0.2 is more than three times the silhouette's rise per e-fold of k on the sets
//!   measured (at most 0.06), so that rise alone cannot move k; a clear peak, as separated
//!   clusters give (silhouette 0.5 and more), wins wherever it is.
//! - Ties go to the smaller k. A rerun that names its previous report keeps the previous k
//!   when that k's score is within [`KEEP_PREVIOUS`] of the best: a scheduled report on a
//!   slightly larger corpus keeps its k unless the data changed.
//! - When the winner is the top of the range (or the bottom, above 2), the range is too
//!   narrow: [`KSelection::edge`] says so, for the log, `run.json` and the report.
//!
//! Each k in `k-min..=k-max` (capped at a fifth of the documents, so topics keep a few
//! members) is fitted with two k-means++ restarts of [`SWEEP_PASSES`] passes on at most
//! [`SWEEP_ROWS`] documents (a seeded sample beyond that), then scored with the silhouette on a seeded sample (its distances
//! computed once for the whole sweep); the winner is refitted on every document with the full
//! number of restarts. The table is kept for `k_selection.csv`, `run.json` and the chart.

use super::silhouette::SilhouetteSample;
use super::{ClusterError, Clustering, KMeansParams};
use ndarray::{ArrayView2, Axis};
use rand::SeedableRng;

/// The rule, as written in `run.json` and the report.
pub const RULE: &str = "score = silhouette - 0.2 * |ln(k / k0)|, k0 = sqrt(documents) / 10; \
     highest score wins, ties to the smaller k";

/// Weight of the resolution penalty, per e-fold of k away from `k0`.
pub const PENALTY: f64 = 0.2;

/// Documents per unit of `sqrt(n)` in the resolution `k0 = sqrt(n) / RESOLUTION`.
pub const RESOLUTION: f64 = 10.0;

/// A previous run's k stays while its score is within this of the best (the penalty moves
/// by 0.01 when `k0` moves by 7%, i.e. the corpus grows by 14%).
pub const KEEP_PREVIOUS: f64 = 0.01;

/// Most documents the sweep fits each k on (a seeded sample above this; the winner is refitted
/// on all of them). Twice the silhouette sample: enough to tell a clear peak.
pub const SWEEP_ROWS: usize = 10_000;

/// Lloyd passes of each fit of the sweep (its two restarts' screening passes, no tail to
/// convergence): the silhouette of a nearly settled fit ranks k as well, at a fraction of
/// the time.
pub const SWEEP_PASSES: u64 = 20;

/// One k of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct KScore {
    pub k: usize,
    pub silhouette: f64,
    /// scikit-learn's inertia: sum of squared distances to the centroids (of the swept rows).
    pub inertia: f64,
    /// The rule's score: the silhouette less the resolution penalty.
    pub score: f64,
}

/// The sweep's table and the chosen k.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KSelection {
    pub scores: Vec<KScore>,
    pub chosen: usize,
    pub rule: &'static str,
    /// The documents clustered, and the resolution `k0` for them.
    pub documents: usize,
    pub resolution_k: f64,
    /// Documents each k was fitted on (all, or a sample of [`SWEEP_ROWS`]).
    pub swept_rows: usize,
    /// The previous run's k, when it was kept though another scored a little higher.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept_previous: Option<usize>,
    /// Set when the chosen k is at an edge of the range that bounds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edge: Option<String>,
}

impl KSelection {
    /// The rule with this corpus's numbers, in a sentence or two (the chart's footnote).
    pub fn explained(&self) -> String {
        let mut text = format!(
            "Score = silhouette − {PENALTY} · |ln(k / k₀)|, k₀ = √n / {RESOLUTION} = {:.1} for {} \
             documents: where the silhouette stays low at every k, as on most text, k₀ decides.",
            self.resolution_k,
            crate::progress::thousands(self.documents)
        );
        if let Some(k) = self.kept_previous {
            text.push_str(&format!(
                " The previous run's k = {k} was kept (within {KEEP_PREVIOUS} of the best)."
            ));
        }
        if let Some(edge) = &self.edge {
            text.push_str(&format!(" Note: {edge}."));
        }
        text
    }
}

/// The k range actually swept for `n` documents.
pub fn effective_range(k_min: usize, k_max: usize, n: usize) -> (usize, usize) {
    let cap = (n / 5).max(2);
    let hi = k_max.min(cap).max(2);
    (k_min.min(hi), hi)
}

/// The resolution a reader of `n` documents looks for: `sqrt(n) / 10` topics.
pub fn resolution_k(n: usize) -> f64 {
    (n as f64).sqrt() / RESOLUTION
}

/// The rule's score of `k` with silhouette `silhouette`, for resolution `k0`.
pub fn score(k: usize, silhouette: f64, k0: f64) -> f64 {
    silhouette - PENALTY * (k as f64 / k0.max(f64::MIN_POSITIVE)).ln().abs()
}

/// Sweeps k and returns the table and the chosen k. `previous` is the k of the run this one
/// follows (see [`KEEP_PREVIOUS`]).
pub fn sweep(
    x: ArrayView2<f32>,
    base: &KMeansParams,
    (k_min, k_max): (usize, usize),
    sample: usize,
    seed: u64,
    previous: Option<usize>,
    mut on_k: impl FnMut(usize),
) -> Result<KSelection, ClusterError> {
    let n = x.nrows();
    if n < 3 {
        return Err(ClusterError::TooFewForAutoK { docs: n });
    }
    let (lo, hi) = effective_range(k_min, k_max, n);
    let rows = sweep_rows(n, seed);
    let swept = x.select(Axis(0), &rows);
    let sil = SilhouetteSample::new(swept.view(), Some(sample), seed)?;
    let k0 = resolution_k(n);
    let mut scores = Vec::new();
    for k in lo..=hi {
        on_k(k);
        let fit: Clustering = base
            .clone()
            .with_k(k)
            .runs_at_most(2)
            .max_iter(SWEEP_PASSES)
            .check()?
            .fit(swept.view())?;
        let s = sil.score(fit.assignments()).unwrap_or(f64::NEG_INFINITY);
        scores.push(KScore {
            k,
            silhouette: s,
            inertia: fit.inertia(),
            score: score(k, s, k0),
        });
    }
    let best = choose(&scores).ok_or(ClusterError::NoKScored)?;
    let kept_previous = previous.filter(|&p| keeps(&scores, best, p));
    let chosen = kept_previous.unwrap_or(best);
    Ok(KSelection {
        edge: edge(chosen, (lo, hi), (k_min, k_max), n),
        scores,
        chosen,
        rule: RULE,
        documents: n,
        resolution_k: k0,
        swept_rows: rows.len(),
        kept_previous,
    })
}

/// The rows the sweep fits on: all of them up to [`SWEEP_ROWS`], else a seeded sample (in row
/// order).
fn sweep_rows(n: usize, seed: u64) -> Vec<usize> {
    if n <= SWEEP_ROWS {
        return (0..n).collect();
    }
    let mut rng = rand_xoshiro::Xoshiro256Plus::seed_from_u64(seed ^ 0x006b_5f73_7765_6570);
    let mut rows = rand::seq::index::sample(&mut rng, n, SWEEP_ROWS).into_vec();
    rows.sort_unstable();
    rows
}

/// Whether the previous run's k `previous` stays instead of `best`: it was swept, it is not
/// the best, and its score is within [`KEEP_PREVIOUS`] of the best's.
fn keeps(scores: &[KScore], best: usize, previous: usize) -> bool {
    let score_of = |k: usize| scores.iter().find(|s| s.k == k).map(|s| s.score);
    match (score_of(best), score_of(previous)) {
        (Some(b), Some(p)) => previous != best && p >= b - KEEP_PREVIOUS,
        _ => false,
    }
}

/// Applies [`RULE`]: the highest finite score, ties to the smaller k.
pub fn choose(scores: &[KScore]) -> Option<usize> {
    scores
        .iter()
        .filter(|s| s.score.is_finite())
        .max_by(|a, b| a.score.total_cmp(&b.score).then(b.k.cmp(&a.k)))
        .map(|s| s.k)
}

/// What to say when `chosen` sits at an edge of the swept range `(lo, hi)`: the top edge (the
/// corpus may hold more topics than the range allows), or a bottom edge above 2. `k_max` and
/// `k_min` are the pipeline's range; the top may be lowered by the corpus size instead.
fn edge(
    chosen: usize,
    (lo, hi): (usize, usize),
    (k_min, k_max): (usize, usize),
    n: usize,
) -> Option<String> {
    if chosen == hi && hi > lo {
        let why = if hi < k_max {
            format!("a fifth of the {n} documents")
        } else {
            format!("cluster.k-max = {k_max}")
        };
        return Some(format!(
            "the chosen k = {chosen} is the top of the range tried ({why}): the corpus may hold \
             more topics; raise cluster.k-max or set cluster.k"
        ));
    }
    (chosen == lo && lo > 2 && lo == k_min).then(|| {
        format!(
            "the chosen k = {chosen} is the bottom of the range tried (cluster.k-min = {k_min}): \
             the corpus may hold fewer topics; lower cluster.k-min or set cluster.k"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    fn s(k: usize, silhouette: f64, k0: f64) -> KScore {
        KScore {
            k,
            silhouette,
            inertia: 0.0,
            score: score(k, silhouette, k0),
        }
    }

    #[test]
    fn the_resolution_decides_when_the_silhouette_only_creeps_up() {
        // THUCNews-like: the silhouette rises by 0.005 a step, k0 = 14.1 (20,000 documents).
        let k0 = resolution_k(20_000);
        let table: Vec<KScore> = (2..=20)
            .map(|k| s(k, 0.01 + 0.005 * k as f64, k0))
            .collect();
        assert_eq!(choose(&table), Some(14));
        // A clear peak wins wherever it is.
        let mut peaked = table.clone();
        peaked[1] = s(3, 0.6, k0);
        assert_eq!(choose(&peaked), Some(3));
        // Ties go to the smaller k; non-finite scores never win.
        let tie = |k, score| KScore {
            k,
            silhouette: 0.0,
            inertia: 0.0,
            score,
        };
        assert_eq!(choose(&[tie(4, 0.1), tie(3, 0.1), tie(5, 0.05)]), Some(3));
        assert_eq!(choose(&[tie(2, 0.1), tie(3, f64::NAN)]), Some(2));
        assert_eq!(choose(&[s(2, f64::NEG_INFINITY, 2.0)]), None);
    }

    #[test]
    fn a_previous_k_stays_while_it_scores_close_to_the_best() {
        let t: Vec<KScore> = [(8, 0.05), (9, 0.045), (10, 0.035)]
            .into_iter()
            .map(|(k, score)| KScore {
                k,
                silhouette: 0.0,
                inertia: 0.0,
                score,
            })
            .collect();
        assert!(keeps(&t, 8, 9), "0.005 below the best");
        assert!(!keeps(&t, 8, 10), "0.015 below the best");
        assert!(
            !keeps(&t, 8, 8) && !keeps(&t, 8, 11),
            "the best itself, or not swept"
        );
    }

    #[test]
    fn the_edges_are_named() {
        let top = edge(20, (2, 20), (2, 20), 75_000).unwrap();
        assert!(
            top.contains("top of the range tried (cluster.k-max = 20)"),
            "{top}"
        );
        let capped = edge(6, (2, 6), (2, 20), 30).unwrap();
        assert!(capped.contains("a fifth of the 30 documents"), "{capped}");
        assert!(
            edge(2, (2, 20), (2, 20), 100).is_none(),
            "2 is the floor, not an edge"
        );
        assert!(edge(5, (5, 20), (5, 20), 100)
            .unwrap()
            .contains("lower cluster.k-min"));
        assert!(edge(9, (2, 20), (2, 20), 10_000).is_none());
    }

    /// Three blobs of `per` points each.
    fn blobs(per: usize) -> Array2<f32> {
        let mut rows = Vec::new();
        for i in 0..3 * per {
            let j = ((i * 7919) % 100) as f32 / 500.0;
            let (cx, cy) = [(0.0, 0.0), (4.0, 0.0), (0.0, 4.0)][i % 3];
            rows.extend_from_slice(&[cx + j, cy - j]);
        }
        Array2::from_shape_vec((3 * per, 2), rows).unwrap()
    }

    #[test]
    fn sweep_finds_three_blobs() {
        let x = blobs(20);
        let base = KMeansParams::new(2);
        let sel = sweep(x.view(), &base, (2, 8), 1000, 1, None, |_| {}).unwrap();
        assert_eq!(sel.chosen, 3, "{:?}", sel.scores);
        assert_eq!((sel.scores.len(), sel.swept_rows), (7, 60));
        assert!(sel.scores[0].inertia > sel.scores[1].inertia);
        assert!(sel.edge.is_none() && sel.kept_previous.is_none());
        // A previous k that scores far below is not kept.
        let again = sweep(x.view(), &base, (2, 8), 1000, 1, Some(5), |_| {}).unwrap();
        assert_eq!((again.chosen, again.kept_previous), (3, None));
    }

    #[test]
    fn a_large_corpus_is_swept_on_a_sample() {
        let rows = sweep_rows(SWEEP_ROWS * 3, 7);
        assert_eq!(rows.len(), SWEEP_ROWS);
        assert!(rows.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(rows, sweep_rows(SWEEP_ROWS * 3, 7), "seeded");
        assert_eq!(sweep_rows(10, 7), (0..10).collect::<Vec<_>>());
    }
}
