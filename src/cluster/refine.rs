//! Refinement: spherical k-means on the TF-IDF vectors, started from the k-means topics.
//!
//! k-means runs on the LSA vectors because a few dozen directions make its start robust (on the
//! raw TF-IDF vectors it collapses into one giant cluster). Those directions also blur topics
//! that differ in rarer words. A few passes of spherical k-means (Dhillon and Modha, 2001) in the
//! full TF-IDF space, started from the k-means topics, sharpen them: each topic becomes the
//! normalised mean of its documents' TF-IDF rows, and each document moves to the topic of highest
//! cosine similarity (its gain is measured in the README's quality benchmark). The cluster stage
//! skips it above the mini-batch threshold, where its passes over every TF-IDF entry cost more
//! than they give.
//!
//! Every pass is deterministic whatever the thread count: a topic's mean is summed by one thread,
//! in document order, and a document's similarities are summed in its row order. The passes end
//! when fewer than 0.1% of documents move, or after `max_iter`; the returned assignment is always
//! the argmax against the returned centroids, so a saved model reproduces it exactly.

use crate::vectorize::CsrMatrix;
use ndarray::{Array2, ArrayView2, Axis};
use rayon::prelude::*;

/// Passes stop once at most this fraction of documents changes topic.
const STOP_FRACTION: f64 = 0.001;

/// The refined topics.
#[derive(Debug, Clone, PartialEq)]
pub struct Refined {
    pub assignments: Vec<usize>,
    /// Cosine similarity of each document to its topic's centroid.
    pub similarities: Vec<f32>,
    /// Term-space centroids: `k × n_features`, rows of unit length.
    pub centroids: Array2<f32>,
    /// Passes run.
    pub passes: usize,
}

/// Refines `start` (one topic per row of `x`, topics `0..k`) by spherical k-means on `x`.
/// A topic that loses all its documents keeps its previous centroid.
pub fn refine(x: &CsrMatrix, start: &[usize], k: usize, max_iter: usize) -> Refined {
    let mut labels = start.to_vec();
    let mut centroids = Array2::<f32>::zeros((k, x.n_cols()));
    let mut passes = 0;
    loop {
        update_centroids(x, &labels, &mut centroids);
        let (new, sims) = assign(x, centroids.view());
        passes += 1;
        let moved = new.iter().zip(&labels).filter(|(a, b)| a != b).count();
        labels = new;
        if moved as f64 <= STOP_FRACTION * labels.len() as f64 || passes >= max_iter {
            return Refined {
                assignments: labels,
                similarities: sims,
                centroids,
                passes,
            };
        }
    }
}

/// Each topic's centroid: the normalised sum of its rows (rows of empty topics are kept).
fn update_centroids(x: &CsrMatrix, labels: &[usize], centroids: &mut Array2<f32>) {
    let k = centroids.nrows();
    let mut members = vec![Vec::new(); k];
    for (i, &c) in labels.iter().enumerate() {
        members[c].push(i);
    }
    centroids
        .axis_iter_mut(Axis(0))
        .into_par_iter()
        .zip(members.par_iter())
        .for_each(|(mut row, docs)| {
            if docs.is_empty() {
                return;
            }
            let mut sum = vec![0f64; row.len()];
            for &i in docs {
                let (cols, vals) = x.row(i);
                for (&c, &v) in cols.iter().zip(vals) {
                    sum[c as usize] += v as f64;
                }
            }
            let norm = sum.iter().map(|v| v * v).sum::<f64>().sqrt();
            if norm > 0.0 {
                row.iter_mut()
                    .zip(&sum)
                    .for_each(|(r, &s)| *r = (s / norm) as f32);
            }
        });
}

/// Each row's topic of highest cosine similarity (ties to the lower topic) and that similarity.
pub fn assign(x: &CsrMatrix, centroids: ArrayView2<f32>) -> (Vec<usize>, Vec<f32>) {
    let (topics, best, _) = assign_with_runner_up(x, centroids);
    (topics, best)
}

/// As [`assign`], with each row's similarity to its second most similar topic as well (its own
/// when there is only one topic).
pub fn assign_with_runner_up(
    x: &CsrMatrix,
    centroids: ArrayView2<f32>,
) -> (Vec<usize>, Vec<f32>, Vec<f32>) {
    let k = centroids.nrows();
    // Feature-major copy, so one nonzero touches k contiguous weights.
    let by_feature = centroids.t().as_standard_layout().into_owned();
    let by_feature = by_feature.as_slice().expect("standard layout");
    let (topics, (best, second)): (Vec<usize>, (Vec<f32>, Vec<f32>)) = (0..x.n_rows())
        .into_par_iter()
        .with_min_len(256)
        .map_init(
            || vec![0f32; k],
            |scores, i| {
                scores.iter_mut().for_each(|s| *s = 0.0);
                let (cols, vals) = x.row(i);
                let mut norm = 0f32;
                for (&c, &v) in cols.iter().zip(vals) {
                    norm += v * v;
                    let w = &by_feature[c as usize * k..(c as usize + 1) * k];
                    scores.iter_mut().zip(w).for_each(|(s, &w)| *s += v * w);
                }
                let mut best = (0usize, f32::NEG_INFINITY);
                let mut second = f32::NEG_INFINITY;
                for (c, &s) in scores.iter().enumerate() {
                    if s > best.1 {
                        second = best.1;
                        best = (c, s);
                    } else if s > second {
                        second = s;
                    }
                }
                if !second.is_finite() {
                    second = best.1;
                }
                let norm = norm.sqrt();
                let scale = |s: f32| if norm > 0.0 { s / norm } else { 0.0 };
                (best.0, scale(best.1), scale(second))
            },
        )
        .map(|(t, b, s)| (t, (b, s)))
        .unzip();
    (topics, best, second)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows over 6 terms: topic A uses terms 0-2, topic B terms 3-5.
    fn two_topics() -> CsrMatrix {
        let rows: Vec<Vec<(u32, f32)>> = vec![
            vec![(0, 1.0), (1, 1.0)],
            vec![(1, 1.0), (2, 1.0)],
            vec![(0, 1.0), (2, 1.0)],
            vec![(3, 1.0), (4, 1.0)],
            vec![(4, 1.0), (5, 1.0)],
            vec![(3, 1.0), (5, 1.0), (2, 0.2)],
        ];
        let mut indptr = vec![0];
        let (mut idx, mut val) = (Vec::new(), Vec::new());
        for mut r in rows {
            r.sort_by_key(|p| p.0);
            let n = r.iter().map(|p| p.1 * p.1).sum::<f32>().sqrt();
            for (c, v) in r {
                idx.push(c);
                val.push(v / n);
            }
            indptr.push(idx.len());
        }
        CsrMatrix::new(6, indptr, idx, val).unwrap()
    }

    #[test]
    fn a_bad_start_is_repaired_and_the_result_is_its_own_argmax() {
        let x = two_topics();
        // Document 2 starts in the wrong topic.
        let r = refine(&x, &[0, 0, 1, 1, 1, 1], 2, 20);
        assert_eq!(r.assignments, vec![0, 0, 0, 1, 1, 1]);
        let (again, sims) = assign(&x, r.centroids.view());
        assert_eq!(again, r.assignments);
        assert_eq!(sims, r.similarities);
        for row in r.centroids.outer_iter() {
            let n: f32 = row.iter().map(|v| v * v).sum();
            assert!((n - 1.0).abs() < 1e-5, "centroids have unit length: {n}");
        }
        assert!(r.similarities.iter().all(|&s| s > 0.5 && s <= 1.0 + 1e-6));
    }

    #[test]
    fn a_topic_without_documents_stays_empty_and_passes_are_bounded() {
        let x = two_topics();
        let r = refine(&x, &[0, 0, 0, 1, 1, 1], 3, 1);
        assert_eq!(r.passes, 1);
        assert!(r.centroids.row(2).iter().all(|&v| v == 0.0));
        assert!(r.assignments.iter().all(|&c| c < 2));
    }

    #[test]
    fn thread_count_does_not_change_the_result() {
        let x = two_topics();
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| refine(&x, &[1, 0, 1, 0, 1, 0], 2, 20))
        };
        assert_eq!(run(1), run(2));
    }
}
