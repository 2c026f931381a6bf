//! Evaluate: how good is a clustering? External scores against a label column (homogeneity,
//! completeness, V-measure, ARI, NMI) and internal ones (sampled silhouette, inertia), all with
//! scikit-learn's definitions so numbers compare side by side with its baseline. The silhouette
//! is [`crate::cluster::silhouette`]'s, the one automatic k chose k by.

pub mod metrics;

use ndarray::ArrayView2;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// The contents of `metrics.json`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Metrics {
    /// Documents scored (those with a label and a topic).
    pub documents: usize,
    /// Distinct labels among them.
    pub classes: usize,
    pub k: usize,
    pub homogeneity: f64,
    pub completeness: f64,
    pub v_measure: f64,
    pub ari: f64,
    pub nmi: f64,
    /// Mean silhouette on a seeded sample of `silhouette_sample` documents (reduced vectors).
    pub silhouette: Option<f64>,
    pub silhouette_sample: usize,
    /// Sum of squared distances to the centroids (scikit-learn's `inertia_`).
    pub inertia: f64,
}

/// The external scores from a contingency table alone (`table[label][topic]` documents), for a
/// report built from sums: no silhouette, and the inertia unknown (NaN, `null` in
/// metrics.json).
pub fn from_contingency(
    table: &std::collections::BTreeMap<String, Vec<u64>>,
    k: usize,
) -> Result<Metrics, metrics::MetricsError> {
    let (mut truth, mut pred) = (Vec::new(), Vec::new());
    for (class, row) in table.values().enumerate() {
        for (topic, &n) in row.iter().enumerate() {
            for _ in 0..n {
                truth.push(class as u32);
                pred.push(topic as u32);
            }
        }
    }
    let ext = metrics::external_scores(&truth, &pred)?;
    Ok(Metrics {
        documents: truth.len(),
        classes: table.values().filter(|r| r.iter().any(|&n| n > 0)).count(),
        k,
        homogeneity: ext.homogeneity,
        completeness: ext.completeness,
        v_measure: ext.v_measure,
        ari: ext.ari,
        nmi: ext.nmi,
        silhouette: None,
        silhouette_sample: 0,
        inertia: f64::NAN,
    })
}

/// A clustering to score: each row's topic, the number of topics, and the inertia (scikit-learn's
/// sum of squared distances) as the clustering computed it.
#[derive(Debug, Clone, Copy)]
pub struct Scored<'a> {
    pub assignments: &'a [usize],
    pub k: usize,
    pub inertia: f64,
}

/// Scores a clustering against `labels` (one per row; `None` rows are left out of the external
/// scores). The silhouette is computed on a seeded sample of `sample` rows of `x`.
pub fn evaluate(
    labels: &[Option<&str>],
    clustering: Scored<'_>,
    x: ArrayView2<f32>,
    sample: usize,
    seed: u64,
) -> Result<Metrics, metrics::MetricsError> {
    let mut ids: FxHashMap<&str, u32> = FxHashMap::default();
    let (mut truth, mut pred) = (Vec::new(), Vec::new());
    for (l, &p) in labels.iter().zip(clustering.assignments) {
        if let Some(l) = l {
            let n = ids.len() as u32;
            truth.push(*ids.entry(l).or_insert(n));
            pred.push(p as u32);
        }
    }
    let ext = metrics::external_scores(&truth, &pred)?;
    let sil = crate::cluster::silhouette::SilhouetteSample::new(x, Some(sample), seed)
        .ok()
        .and_then(|s| s.score(clustering.assignments).ok().map(|v| (v, s.len())));
    Ok(Metrics {
        documents: truth.len(),
        classes: ids.len(),
        k: clustering.k,
        homogeneity: ext.homogeneity,
        completeness: ext.completeness,
        v_measure: ext.v_measure,
        ari: ext.ari,
        nmi: ext.nmi,
        silhouette: sil.map(|s| s.0),
        silhouette_sample: sil.map_or(0, |s| s.1),
        inertia: clustering.inertia,
    })
}
