//! Automatic k: sweep a range, score each k by the silhouette, read k off the curve by a
//! stated rule ([`rule`]).
//!
//! Text rarely holds separated clusters. On the LSA vectors of 20 Newsgroups, THUCNews or
//! arXiv the silhouette stays between 0.01 and 0.11 at every k and rises with k, so "highest
//! silhouette" drifts to the top of any range; the gap statistic, Calinski–Harabasz,
//! Davies–Bouldin, BIC, stability, prediction strength, coherence and centroid merge gaps each
//! drift to an edge or follow noise (docs/benchmarks.md, "Automatic k"). A prior on the
//! corpus size alone (the rule before issue 53, `sqrt(n) / 10` topics) gets large corpora
//! right but small ones wrong: 1,000 documents of ten distinct newsgroups got 3 topics. What
//! the curve does show is its *shape*: it climbs while k splits real groups and levels off
//! once it only splits topics further. So the rule reads the curve's knee:
//!
//! - a silhouette of at least [`rule::CLEAR`] (separated groups) is a clear peak: taken;
//! - else the curve is smoothed (each k with its neighbours) over k <= [`rule::WINDOW`], and k
//!   is the first k where it has made [`rule::LEVEL`] (60%) of its rise over the range;
//! - unless it first *falls* from an early peak (a few broad groups, then finer topics): then
//!   k is where that fall ends; or it climbs to an interior peak and falls back by at least
//!   half its rise ([`rule::PEAK_DROP`]): then k is that peak;
//! - never below the floor `floor(sqrt(n) / 10)`, which keeps large corpora at the
//!   resolution their readers look for (arXiv's 75,000 abstracts: 20 topics, the range's top);
//! - a scheduled rerun keeps the previous k while it sits within [`rule::KEEP`] of the rise of
//!   where the rule lands, so a slightly larger corpus keeps its topics unless the data changed;
//! - when the winner is the top of the range (or the bottom, above 2), the range is too narrow:
//!   [`KSelection::edge`] says so, for the log, `run.json` and the report.
//!
//! On a panel of 14 labelled sets (20 Newsgroups subsets of 900 to 18,000 documents, THUCNews,
//! arXiv categories), three runs each, the pick lands within 1.5x of the class count with V at
//! least 0.9 of V at the true k in 35 of 42 runs, against 12 for the size prior
//! (docs/benchmarks.md, "Automatic k", with `scripts/auto_k_eval.py`).
//!
//! Each k in `k-min..=k-max` (capped at a fifth of the documents, so topics keep a few
//! members) is fitted with two k-means++ restarts of [`SWEEP_PASSES`] passes on at most
//! [`SWEEP_ROWS`] documents (a seeded sample beyond that), then scored with the silhouette on a
//! seeded sample (its distances computed once for the whole sweep); the winner is refitted on
//! every document with the full number of restarts. The table is kept for `k_selection.csv`,
//! `run.json` and the chart, with the evidence that decided.

pub mod rule;

use super::silhouette::SilhouetteSample;
use super::{ClusterError, Clustering, KMeansParams};
use ndarray::ArrayView2;
use rand::SeedableRng;

pub use rule::Evidence;

/// The rule, as written in `run.json` and the report.
pub const RULE: &str = "a silhouette >= 0.25 is a clear peak; else, on the silhouette averaged \
     with its neighbours (k <= 20): where an early fall of it ends, or a peak it falls back from \
     by half its rise, or the first k that made 60% of its rise; never below \
     floor(sqrt(documents) / 10); a previous k stays within 10% of the rise of that point";

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
    /// The silhouette averaged with its neighbours': the curve the rule reads (`None` beyond
    /// its window).
    pub smoothed: Option<f64>,
    /// How much of the smoothed silhouette's rise over the window k has made (0 at its lowest,
    /// 1 at its highest).
    pub rise: Option<f64>,
}

/// The sweep's table and the chosen k.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KSelection {
    pub scores: Vec<KScore>,
    pub chosen: usize,
    pub rule: &'static str,
    /// What decided `chosen`.
    pub decided_by: Evidence,
    /// What the curve alone gave (before the floor and the previous k), and how it was read.
    pub curve_k: usize,
    pub curve_by: Evidence,
    /// The documents clustered, and the floor `floor(sqrt(n) / 10)` for them.
    pub documents: usize,
    pub floor: usize,
    /// Documents each k was fitted on (all, or a sample of [`SWEEP_ROWS`]).
    pub swept_rows: usize,
    /// The previous run's k, when it was kept though the curve pointed elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept_previous: Option<usize>,
    /// Set when the chosen k is at an edge of the range that bounds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edge: Option<String>,
}

impl KSelection {
    /// Which evidence decided, with this corpus's numbers, in a sentence or two (the chart's
    /// footnote and the report).
    pub fn explained(&self) -> String {
        let (k, c) = (self.chosen, self.curve_k);
        let mut text = match self.curve_by {
            Evidence::ClearPeak => format!(
                "A clear silhouette peak at k = {c} (at least {}).",
                rule::CLEAR
            ),
            Evidence::Fall => format!(
                "The silhouette first falls from an early peak (a few broad groups); the fall \
                 ends at k = {c}."
            ),
            Evidence::Peak => {
                format!("The silhouette, smoothed, peaks at k = {c} and falls back after it.")
            }
            Evidence::Flat => "The silhouette is flat over the range.".to_string(),
            _ => format!(
                "The silhouette, smoothed, made {:.0}% of its rise by k = {c} (its knee).",
                rule::LEVEL * 100.0
            ),
        };
        match self.decided_by {
            Evidence::Floor => text.push_str(&format!(
                " k = {k}: the floor √n / 10 for {} documents.",
                crate::progress::thousands(self.documents)
            )),
            Evidence::Previous => text.push_str(&format!(
                " k = {k}: the previous run's k, kept (within {:.0}% of the rise of that point).",
                rule::KEEP * 100.0
            )),
            _ => {}
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

/// Sweeps k and returns the table and the chosen k. `previous` is the k of the run this one
/// follows (see [`rule::KEEP`]).
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
    let swept = crate::sample::rows(x, &rows);
    let sil = SilhouetteSample::new(swept.view(), Some(sample), seed)?;
    let mut fits = Vec::new();
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
        fits.push((k, s, fit.inertia()));
    }
    let ks: Vec<usize> = fits.iter().map(|f| f.0).collect();
    let silhouettes: Vec<f64> = fits.iter().map(|f| f.1).collect();
    let verdict = rule::decide(&ks, &silhouettes, n, previous).ok_or(ClusterError::NoKScored)?;
    let scores = fits
        .iter()
        .enumerate()
        .map(|(i, &(k, silhouette, inertia))| KScore {
            k,
            silhouette,
            inertia,
            smoothed: verdict.curve.smoothed[i],
            rise: verdict.curve.rise[i],
        })
        .collect();
    let chosen = verdict.k;
    Ok(KSelection {
        edge: edge(chosen, (lo, hi), (k_min, k_max), n),
        scores,
        chosen,
        rule: RULE,
        decided_by: verdict.evidence,
        curve_k: verdict.curve_k,
        curve_by: verdict.curve_by,
        documents: n,
        floor: verdict.floor,
        swept_rows: rows.len(),
        kept_previous: (verdict.evidence == Evidence::Previous).then_some(chosen),
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
