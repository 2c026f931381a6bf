//! External clustering scores (homogeneity, completeness, V-measure, adjusted Rand index and
//! normalized mutual information) of a predicted labeling against ground-truth labels, plus the
//! error type shared by the whole `evaluate` module.
//!
//! Why it is done this way:
//! - The definitions, the natural logarithms and every degenerate case follow scikit-learn 1.9
//!   (`sklearn.metrics.cluster._supervised`) line by line, so numbers can be checked against
//!   sklearn and compared with published results. NMI uses arithmetic averaging of the two
//!   entropies (sklearn's default `average_method="arithmetic"`), V-measure uses `beta = 1`.
//! - The contingency table is built once and every score is derived from it, so the cost is
//!   O(n) plus O(non-zero cells). Labels are first mapped to dense ids in increasing label order
//!   (like `np.unique`) with a lookup table when the label values are small, or by sorting the
//!   distinct values when they are not; the table itself is dense when it is not much larger
//!   than the input and otherwise built by sorting packed (class, cluster) keys. Nothing is
//!   hashed, so the result is identical on every run.
//! - Pair counts for the ARI are exact integers (`i128`), as sklearn's Python integers are, so
//!   1,000,000 items (about 10^12 pairs) cannot overflow.

use thiserror::Error;

/// Errors of the `evaluate` module, one variant per rule.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MetricsError {
    /// `truth` and `pred` must have the same length.
    #[error("truth and pred must have the same length (got {truth} and {pred})")]
    LengthMismatch {
        /// Length of the ground-truth labels.
        truth: usize,
        /// Length of the predicted labels.
        pred: usize,
    },
    /// External scores need at least one item.
    #[error("labels cannot be empty")]
    EmptyLabels,
}

/// External scores of a clustering against ground-truth labels (sklearn 1.9 definitions;
/// NMI with arithmetic averaging, sklearn's default; V-measure with `beta = 1`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExternalScores {
    /// `sklearn.metrics.homogeneity_score`: each cluster contains only members of one class.
    pub homogeneity: f64,
    /// `sklearn.metrics.completeness_score`: all members of a class are in one cluster.
    pub completeness: f64,
    /// `sklearn.metrics.v_measure_score` (harmonic mean of the two above, `beta = 1`).
    pub v_measure: f64,
    /// `sklearn.metrics.adjusted_rand_score`.
    pub ari: f64,
    /// `sklearn.metrics.normalized_mutual_info_score` with `average_method="arithmetic"`.
    pub nmi: f64,
}

/// Computes all [`ExternalScores`] of `pred` against `truth` in one pass over a shared
/// contingency table.
///
/// `truth` and `pred` are cluster ids (any `u32` values; they need not be contiguous) of the same
/// items, in the same order. Degenerate cases follow sklearn: a single class and a single cluster
/// give 1.0 everywhere; one side with a single group gives homogeneity or completeness 1.0 and
/// NMI/ARI 0.0 (unless the other side is all singletons and equal, see sklearn).
///
/// # Errors
/// [`MetricsError::LengthMismatch`] when the lengths differ, [`MetricsError::EmptyLabels`] when
/// both are empty.
pub fn external_scores(truth: &[u32], pred: &[u32]) -> Result<ExternalScores, MetricsError> {
    external_scores_with(truth, pred, dense_table_limit(truth.len()))
}

/// Largest number of cells for which the contingency table is stored densely.
fn dense_table_limit(n: usize) -> usize {
    n.saturating_mul(4).saturating_add(1 << 16)
}

/// [`external_scores`] with an explicit dense-table limit (tests force the sparse path with 0).
fn external_scores_with(
    truth: &[u32],
    pred: &[u32],
    dense_limit: usize,
) -> Result<ExternalScores, MetricsError> {
    if truth.len() != pred.len() {
        return Err(MetricsError::LengthMismatch {
            truth: truth.len(),
            pred: pred.len(),
        });
    }
    if truth.is_empty() {
        return Err(MetricsError::EmptyLabels);
    }
    let table = Contingency::new(truth, pred, dense_limit);
    Ok(table.scores())
}

/// Maps labels to dense ids `0..k` in increasing label order (like `np.unique`); returns the ids
/// and `k`.
fn dense_ids(labels: &[u32]) -> (Vec<u32>, usize) {
    let max = labels.iter().copied().max().unwrap_or(0) as usize;
    if max < labels.len().saturating_mul(4).saturating_add(1 << 16) {
        // Lookup table indexed by label value: O(n + max).
        let mut lut = vec![u32::MAX; max + 1];
        for &l in labels {
            lut[l as usize] = 0;
        }
        let mut k = 0u32;
        for slot in lut.iter_mut().filter(|s| **s == 0) {
            *slot = k;
            k += 1;
        }
        let ids = labels.iter().map(|&l| lut[l as usize]).collect();
        (ids, k as usize)
    } else {
        // Large, sparse label values: sort the distinct values and binary-search them.
        let mut uniq = labels.to_vec();
        uniq.sort_unstable();
        uniq.dedup();
        let ids = labels
            .iter()
            .map(|l| uniq.binary_search(l).unwrap_or(0) as u32)
            .collect();
        (ids, uniq.len())
    }
}

/// Non-zero cells of the class x cluster contingency table with its margins.
struct Contingency {
    /// Number of items.
    n: u64,
    /// Items per class (row sums).
    rows: Vec<u64>,
    /// Items per cluster (column sums).
    cols: Vec<u64>,
    /// Non-zero cells `(class, cluster, count)` in row-major order.
    cells: Vec<(u32, u32, u64)>,
}

impl Contingency {
    fn new(truth: &[u32], pred: &[u32], dense_limit: usize) -> Self {
        let (ci, kc) = dense_ids(truth);
        let (kj, kk) = dense_ids(pred);
        let mut rows = vec![0u64; kc];
        let mut cols = vec![0u64; kk];
        for (&i, &j) in ci.iter().zip(&kj) {
            rows[i as usize] += 1;
            cols[j as usize] += 1;
        }
        let cells = match kc.checked_mul(kk) {
            Some(size) if size <= dense_limit => {
                let mut dense = vec![0u64; size];
                for (&i, &j) in ci.iter().zip(&kj) {
                    dense[i as usize * kk + j as usize] += 1;
                }
                dense
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| c > 0)
                    .map(|(idx, &c)| ((idx / kk) as u32, (idx % kk) as u32, c))
                    .collect()
            }
            _ => {
                let mut keys: Vec<u64> = ci
                    .iter()
                    .zip(&kj)
                    .map(|(&i, &j)| (u64::from(i) << 32) | u64::from(j))
                    .collect();
                keys.sort_unstable();
                let mut cells: Vec<(u32, u32, u64)> = Vec::new();
                for key in keys {
                    let (i, j) = ((key >> 32) as u32, key as u32);
                    match cells.last_mut() {
                        Some(last) if last.0 == i && last.1 == j => last.2 += 1,
                        _ => cells.push((i, j, 1)),
                    }
                }
                cells
            }
        };
        Self {
            n: truth.len() as u64,
            rows,
            cols,
            cells,
        }
    }

    /// sklearn `_entropy` from the group sizes: natural log, 0 for a single group.
    fn entropy(counts: &[u64], n: u64) -> f64 {
        if counts.len() == 1 {
            return 0.0;
        }
        let n = n as f64;
        let log_n = n.ln();
        -counts
            .iter()
            .map(|&c| {
                let c = c as f64;
                (c / n) * (c.ln() - log_n)
            })
            .sum::<f64>()
    }

    /// sklearn `mutual_info_score` from the contingency table, term by term.
    fn mutual_info(&self) -> f64 {
        if self.rows.len() == 1 || self.cols.len() == 1 {
            return 0.0;
        }
        let n = self.n as f64;
        let log_n = n.ln();
        // pi.sum() and pj.sum() are both n.
        let log_margins = log_n + log_n;
        let mut mi = 0.0f64;
        for &(i, j, c) in &self.cells {
            let c_nm = c as f64 / n;
            let outer = u128::from(self.rows[i as usize]) * u128::from(self.cols[j as usize]);
            let log_outer = -(outer as f64).ln() + log_margins;
            let term = c_nm * ((c as f64).ln() - log_n) + c_nm * log_outer;
            if term.abs() >= f64::EPSILON {
                mi += term;
            }
        }
        mi.max(0.0)
    }

    /// sklearn `adjusted_rand_score` via the pair confusion matrix (ordered pairs).
    fn adjusted_rand(&self) -> f64 {
        let n = i128::from(self.n);
        let mut sum_sq = 0i128;
        let mut dot_cols = 0i128;
        let mut dot_rows = 0i128;
        for &(i, j, c) in &self.cells {
            let c = i128::from(c);
            sum_sq += c * c;
            dot_cols += c * i128::from(self.cols[j as usize]);
            dot_rows += c * i128::from(self.rows[i as usize]);
        }
        let tp = sum_sq - n;
        let fp = dot_cols - sum_sq;
        let fn_ = dot_rows - sum_sq;
        let tn = n * n - fp - fn_ - sum_sq;
        if fn_ == 0 && fp == 0 {
            return 1.0;
        }
        let exact = (|| {
            let num = tp.checked_mul(tn)?.checked_sub(fn_.checked_mul(fp)?)?;
            let den = (tp + fn_)
                .checked_mul(fn_ + tn)?
                .checked_add((tp + fp).checked_mul(fp + tn)?)?;
            Some((num, den))
        })();
        match exact {
            // Python evaluates 2.0 * int / int as float(int) * 2.0 / float(int).
            Some((num, den)) => 2.0 * (num as f64) / (den as f64),
            None => {
                let (tp, tn, fp, fn_) = (tp as f64, tn as f64, fp as f64, fn_ as f64);
                2.0 * (tp * tn - fn_ * fp) / ((tp + fn_) * (fn_ + tn) + (tp + fp) * (fp + tn))
            }
        }
    }

    fn scores(&self) -> ExternalScores {
        let h_true = Self::entropy(&self.rows, self.n);
        let h_pred = Self::entropy(&self.cols, self.n);
        let mi = self.mutual_info();
        let homogeneity = if h_true != 0.0 { mi / h_true } else { 1.0 };
        let completeness = if h_pred != 0.0 { mi / h_pred } else { 1.0 };
        let v_measure = if homogeneity + completeness == 0.0 {
            0.0
        } else {
            2.0 * homogeneity * completeness / (homogeneity + completeness)
        };
        let nmi = if self.rows.len() == 1 && self.cols.len() == 1 {
            1.0
        } else if mi == 0.0 {
            0.0
        } else {
            mi / ((h_true + h_pred) / 2.0)
        };
        ExternalScores {
            homogeneity,
            completeness,
            v_measure,
            ari: self.adjusted_rand(),
            nmi,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_abs_diff_eq;

    const EPS: f64 = 1e-12;

    /// Expected values in the order h, c, v, ari, nmi.
    fn check(truth: &[u32], pred: &[u32], want: [f64; 5]) {
        for limit in [dense_table_limit(truth.len()), 0] {
            let s = external_scores_with(truth, pred, limit).expect("valid input");
            let got = [s.homogeneity, s.completeness, s.v_measure, s.ari, s.nmi];
            for (g, w) in got.iter().zip(want) {
                assert_abs_diff_eq!(*g, w, epsilon = EPS);
            }
        }
    }

    // Values below: python3 -c "from sklearn.metrics import *; t=...; p=...;
    //   print(homogeneity_completeness_v_measure(t, p), adjusted_rand_score(t, p),
    //   normalized_mutual_info_score(t, p))"  (scikit-learn 1.9.1)

    #[test]
    fn sklearn_docstring_examples() {
        // v_measure_score([0, 0, 1, 1], [0, 0, 1, 2]) ~= 0.8, adjusted_rand_score ~= 0.57
        check(
            &[0, 0, 1, 1],
            &[0, 0, 1, 2],
            [
                0.9999999999999999,
                0.6666666666666666,
                0.7999999999999999,
                0.5714285714285714,
                0.7999999999999999,
            ],
        );
        // adjusted_rand_score([0, 0, 1, 2], [0, 0, 1, 1]) ~= 0.57
        check(
            &[0, 0, 1, 2],
            &[0, 0, 1, 1],
            [
                0.6666666666666666,
                0.9999999999999999,
                0.7999999999999999,
                0.5714285714285714,
                0.7999999999999999,
            ],
        );
        // homogeneity_score([0, 0, 1, 1], [1, 1, 0, 0]) == 1.0
        check(&[0, 0, 1, 1], &[1, 1, 0, 0], [1.0; 5]);
        // adjusted_rand_score([0, 0, 0, 0], [0, 1, 2, 3]) == 0.0
        check(&[0, 0, 0, 0], &[0, 1, 2, 3], [1.0, 0.0, 0.0, 0.0, 0.0]);
        // adjusted_rand_score([0, 0, 1, 1], [0, 1, 0, 1]) == -0.5
        check(&[0, 0, 1, 1], &[0, 1, 0, 1], [0.0, 0.0, 0.0, -0.5, 0.0]);
        // homogeneity_completeness_v_measure([0,0,1,1,2,2], [0,0,1,2,2,2]) ~= (0.71, 0.771, 0.74)
        check(
            &[0, 0, 1, 1, 2, 2],
            &[0, 0, 1, 2, 2, 2],
            [
                0.7103099178571525,
                0.7715561736794712,
                0.739667376800759,
                0.4444444444444444,
                0.7396673768007592,
            ],
        );
        // mutual_info_score docstring labels
        check(
            &[0, 1, 1, 0, 1, 0],
            &[0, 1, 0, 0, 1, 1],
            [
                0.08170416594551037,
                0.08170416594551037,
                0.08170416594551037,
                -0.1111111111111111,
                0.08170416594551037,
            ],
        );
    }

    #[test]
    fn degenerate_cases_match_sklearn() {
        // One class, one cluster.
        check(&[0, 0, 0, 0], &[5, 5, 5, 5], [1.0; 5]);
        check(&[3], &[9], [1.0; 5]);
        // Every point its own cluster on both sides.
        check(&[0, 1, 2, 3], &[0, 1, 2, 3], [1.0; 5]);
        // All singletons against a single cluster.
        check(&[0, 1, 2, 3], &[0, 0, 0, 0], [0.0, 1.0, 0.0, 0.0, 0.0]);
    }

    const T1: [u32; 50] = [
        3, 2, 2, 3, 2, 3, 3, 0, 0, 1, 1, 3, 3, 0, 1, 3, 0, 3, 0, 1, 3, 1, 1, 1, 2, 1, 3, 1, 1, 2,
        2, 2, 2, 3, 3, 3, 2, 2, 1, 3, 1, 0, 3, 0, 3, 2, 0, 0, 1, 0,
    ];
    const P1: [u32; 50] = [
        0, 2, 4, 2, 4, 4, 4, 3, 2, 2, 1, 2, 1, 1, 4, 0, 0, 0, 4, 3, 4, 1, 3, 1, 2, 0, 3, 4, 3, 0,
        2, 1, 4, 4, 0, 2, 4, 4, 3, 3, 0, 3, 2, 0, 1, 2, 3, 2, 3, 4,
    ];
    const T2: [u32; 50] = [
        2, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 2, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 2, 2, 0, 1, 1,
        1, 0, 0, 1, 2, 0, 1, 2, 2, 0, 0, 2, 0, 0, 1, 2, 0, 1, 1, 0,
    ];
    const P2: [u32; 50] = [
        99, 99, 99, 10, 3, 3, 99, 10, 10, 99, 3, 3, 10, 42, 10, 10, 99, 42, 10, 10, 10, 10, 10, 10,
        10, 99, 42, 3, 10, 99, 10, 3, 3, 10, 42, 3, 99, 42, 99, 3, 3, 99, 3, 3, 99, 42, 3, 10, 10,
        3,
    ];
    const B: u32 = 4_000_000_000;
    const T3: [u32; 50] = [
        7, 7, 7, 7, B, 1000, 7, 7, 1000, 1000, 7, B, B, 1000, B, 1000, 7, 7, 7, B, 7, 1000, 7, B,
        7, 1000, B, 1000, B, B, B, B, 1000, 1000, B, 1000, B, B, 1000, 1000, B, B, 7, 7, 7, 1000,
        7, 1000, 1000, B,
    ];
    const P3: [u32; 50] = [
        7, 2, 7, 8, 6, 6, 3, 7, 1, 6, 9, 9, 2, 3, 6, 3, 7, 2, 1, 0, 4, 2, 2, 9, 8, 8, 5, 1, 7, 6,
        9, 4, 1, 5, 4, 6, 3, 3, 1, 9, 7, 4, 2, 6, 4, 6, 0, 1, 7, 0,
    ];

    #[test]
    fn random_labelings_match_sklearn() {
        // t, p = T1, P1 (drawn with numpy default_rng(7)); sklearn call as above.
        check(
            &T1,
            &P1,
            [
                0.10103385439953382,
                0.08709135757394865,
                0.09354594685399603,
                -0.0007994306493911654,
                0.09354594685399603,
            ],
        );
        // t, p = T2, P2 (P2: 80% noisy copy of T2 with ids 3/10/42, noise id 99).
        check(
            &T2,
            &P2,
            [
                0.7930889112335232,
                0.6180959729668875,
                0.6947425071320663,
                0.6214272121788773,
                0.6947425071320662,
            ],
        );
        // t, p = T3, P3 (T3 uses ids 7, 1000, 4000000000).
        check(
            &T3,
            &P3,
            [
                0.25352032338603336,
                0.12460144793822935,
                0.1670837374163171,
                0.027111766875691626,
                0.16708373741631707,
            ],
        );
    }

    #[test]
    fn invariant_under_relabeling_and_item_order() {
        let base = external_scores(&T1, &P1).expect("valid");
        // Rename ids with a non-monotone injective map on both sides.
        let t: Vec<u32> = T1.iter().map(|&x| (3 - x) * 1_000_003 + 17).collect();
        let p: Vec<u32> = P1.iter().map(|&x| u32::MAX - x * 7).collect();
        let renamed = external_scores(&t, &p).expect("valid");
        // Reverse the item order.
        let tr: Vec<u32> = T1.iter().rev().copied().collect();
        let pr: Vec<u32> = P1.iter().rev().copied().collect();
        let reordered = external_scores(&tr, &pr).expect("valid");
        for other in [renamed, reordered] {
            assert_abs_diff_eq!(base.homogeneity, other.homogeneity, epsilon = EPS);
            assert_abs_diff_eq!(base.completeness, other.completeness, epsilon = EPS);
            assert_abs_diff_eq!(base.v_measure, other.v_measure, epsilon = EPS);
            assert_abs_diff_eq!(base.ari, other.ari, epsilon = EPS);
            assert_abs_diff_eq!(base.nmi, other.nmi, epsilon = EPS);
        }
        // Swapping truth and prediction swaps homogeneity and completeness only.
        let swapped = external_scores(&P1, &T1).expect("valid");
        assert_abs_diff_eq!(base.homogeneity, swapped.completeness, epsilon = EPS);
        assert_abs_diff_eq!(base.completeness, swapped.homogeneity, epsilon = EPS);
        assert_abs_diff_eq!(base.ari, swapped.ari, epsilon = EPS);
        assert_abs_diff_eq!(base.nmi, swapped.nmi, epsilon = EPS);
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(
            external_scores(&[0, 1], &[0]),
            Err(MetricsError::LengthMismatch { truth: 2, pred: 1 })
        );
        assert_eq!(external_scores(&[], &[]), Err(MetricsError::EmptyLabels));
    }

    #[test]
    fn large_input_has_exact_pair_counts() {
        // 1,000,000 items, truth = i % 10, pred = i % 20: every cluster lies inside one class,
        // so homogeneity = 1 and, by hand, completeness = ln 10 / ln 20 and
        // ARI = 2 (tp tn - fn fp) / (...) with the pair counts below.
        let n = 1_000_000u32;
        let truth: Vec<u32> = (0..n).map(|i| i % 10).collect();
        let pred: Vec<u32> = (0..n).map(|i| i % 20).collect();
        // Its time is measured by `cargo bench --bench metrics`, not asserted here.
        let s = external_scores(&truth, &pred).expect("valid");
        assert_abs_diff_eq!(s.homogeneity, 1.0, epsilon = 1e-12);
        assert_abs_diff_eq!(s.completeness, 10f64.ln() / 20f64.ln(), epsilon = 1e-12);
        // Ordered pairs: tp = 20 * 50000^2 - n, fn = 10 * 100000^2 - 20 * 50000^2, fp = 0,
        // tn = n^2 - fn - tp - n.
        let nn = f64::from(n);
        let tp = 20.0 * 5e4 * 5e4 - nn;
        let fn_ = 10.0 * 1e5 * 1e5 - 20.0 * 5e4 * 5e4;
        let tn = nn * nn - fn_ - tp - nn;
        let ari = 2.0 * (tp * tn) / ((tp + fn_) * (fn_ + tn) + tp * tn);
        assert_abs_diff_eq!(s.ari, ari, epsilon = 1e-12);
    }
}
