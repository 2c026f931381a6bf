//! Automatic k: sweep a range, score each k, pick one by a stated rule.
//!
//! Each k in `k-min..=k-max` (capped at a fifth of the documents, so topics keep a few members)
//! is fitted with two k-means++ restarts, then scored with the silhouette coefficient on a seeded
//! sample (the sample's distances are computed once for the whole sweep) and with inertia. **Rule:** the k with the highest silhouette; ties go to the smaller k. The winner is
//! then refitted with the full number of restarts. The whole table is kept for `k_selection.csv`
//! and its chart.

use super::{ClusterError, Clustering, KMeansParams};
use crate::evaluate::silhouette::SilhouetteSample;
use ndarray::ArrayView2;

/// The rule, as written in `run.json` and the README.
pub const RULE: &str =
    "highest silhouette (sampled, Euclidean on the reduced vectors); ties to the smaller k";

/// One k of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct KScore {
    pub k: usize,
    pub silhouette: f64,
    /// scikit-learn's inertia: sum of squared distances to the centroids.
    pub inertia: f64,
}

/// The sweep's table and the chosen k.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KSelection {
    pub scores: Vec<KScore>,
    pub chosen: usize,
    pub rule: &'static str,
}

/// The k range actually swept for `n` documents.
pub fn effective_range(k_min: usize, k_max: usize, n: usize) -> (usize, usize) {
    let cap = (n / 5).max(2);
    let hi = k_max.min(cap).max(2);
    (k_min.min(hi), hi)
}

/// Sweeps k and returns the table and the chosen k.
pub fn sweep(
    x: ArrayView2<f32>,
    base: &KMeansParams,
    k_min: usize,
    k_max: usize,
    sample: usize,
    seed: u64,
    mut on_k: impl FnMut(usize),
) -> Result<KSelection, ClusterError> {
    let n = x.nrows();
    if n < 3 {
        return Err(ClusterError::TooFewForAutoK { docs: n });
    }
    let (lo, hi) = effective_range(k_min, k_max, n);
    let sil = SilhouetteSample::new(x, Some(sample), seed)?;
    let mut scores = Vec::new();
    for k in lo..=hi {
        on_k(k);
        let fit: Clustering = base.clone().with_k(k).runs_at_most(2).check()?.fit(x)?;
        let s = sil.score(fit.assignments()).unwrap_or(f64::NEG_INFINITY);
        scores.push(KScore {
            k,
            silhouette: s,
            inertia: fit.inertia(),
        });
    }
    let chosen = choose(&scores).ok_or(ClusterError::NoKScored)?;
    Ok(KSelection {
        scores,
        chosen,
        rule: RULE,
    })
}

/// Applies [`RULE`].
pub fn choose(scores: &[KScore]) -> Option<usize> {
    scores
        .iter()
        .filter(|s| s.silhouette.is_finite())
        .max_by(|a, b| a.silhouette.total_cmp(&b.silhouette).then(b.k.cmp(&a.k)))
        .map(|s| s.k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    #[test]
    fn rule_prefers_highest_silhouette_then_smaller_k() {
        let s = |k, silhouette| KScore {
            k,
            silhouette,
            inertia: 0.0,
        };
        assert_eq!(
            choose(&[s(2, 0.1), s(3, 0.3), s(4, 0.3), s(5, 0.2)]),
            Some(3)
        );
        assert_eq!(choose(&[s(2, f64::NEG_INFINITY)]), None);
    }

    #[test]
    fn sweep_finds_three_blobs() {
        let mut rows = Vec::new();
        for i in 0..60 {
            let j = ((i * 7919) % 100) as f32 / 500.0;
            let (cx, cy) = [(0.0, 0.0), (4.0, 0.0), (0.0, 4.0)][i % 3];
            rows.extend_from_slice(&[cx + j, cy - j]);
        }
        let x = Array2::from_shape_vec((60, 2), rows).unwrap();
        let sel = sweep(x.view(), &KMeansParams::new(2), 2, 8, 1000, 1, |_| {}).unwrap();
        assert_eq!(sel.chosen, 3, "{:?}", sel.scores);
        assert_eq!(sel.scores.len(), 7);
        assert!(sel.scores[0].inertia > sel.scores[1].inertia);
    }
}
