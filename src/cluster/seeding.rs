//! Starting centroids for k-means: greedy k-means++, as scikit-learn seeds its `KMeans`.
//!
//! linfa's k-means++ draws one candidate per step. The greedy variant (Arthur and Vassilvitskii
//! 2007, section 5; scikit-learn's `_kmeans_plusplus`) draws `2 + ln k` candidates by D² sampling
//! and keeps the one that lowers the potential (the sum of squared distances to the nearest
//! centroid) most. Its starts are better, so fewer restarts end in a poor local optimum, such as
//! one catch-all topic. linfa then runs Lloyd's iterations from these centroids
//! (`KMeansInit::Precomputed`).
//!
//! Repeatable whatever the thread count: rows are processed in fixed blocks, and the partial sums
//! of each block are added in block order.

use ndarray::{Array2, ArrayView2, Axis};
use rand::Rng;
use rayon::prelude::*;

/// Rows per parallel block; fixed so the order of summation never depends on the threads.
const BLOCK: usize = 4096;

/// `k` starting centroids chosen among the rows of `x` (needs `1 <= k <= x.nrows()`).
pub fn greedy_kmeans_pp(x: ArrayView2<f32>, k: usize, rng: &mut impl Rng) -> Array2<f32> {
    let n = x.nrows();
    assert!(k >= 1 && k <= n, "k = {k} for {n} rows");
    let first = rng.gen_range(0..n);
    greedy_kmeans_pp_around(x, crate::sample::rows(x, &[first]).view(), k, rng)
}

/// `k` starting centroids: the `given` ones (named topics', say) first, the others chosen among
/// the rows of `x` as [`greedy_kmeans_pp`] chooses them after its first (needs
/// `1 <= given.nrows() <= k <= given.nrows() + x.nrows()`).
pub fn greedy_kmeans_pp_around(
    x: ArrayView2<f32>,
    given: ArrayView2<f32>,
    k: usize,
    rng: &mut impl Rng,
) -> Array2<f32> {
    let (n, m) = (x.nrows(), given.nrows());
    assert!(
        m >= 1 && m <= k && k <= n + m,
        "k = {k}, {m} given, {n} rows"
    );
    let trials = 2 + (k as f64).ln().floor() as usize;
    let norms: Vec<f32> = x.outer_iter().map(|r| r.dot(&r)).collect();
    let mut centers = Array2::<f32>::zeros((k, x.ncols()));
    centers.slice_mut(ndarray::s![..m, ..]).assign(&given);
    // Nothing is chosen yet, so every row is infinitely far from the current centroids.
    let mut closest = vec![f32::INFINITY; n];
    for j in 0..m {
        closest = distances(x, &norms, given.slice(ndarray::s![j..j + 1, ..]), &closest).0;
    }
    let mut potential: f64 = closest.iter().map(|&d| d as f64).sum();

    let mut cumulative = vec![0f64; n];
    for c in m..k {
        let mut acc = 0f64;
        for (cum, &d) in cumulative.iter_mut().zip(&closest) {
            acc += d as f64;
            *cum = acc;
        }
        let candidates: Vec<usize> = (0..trials)
            .map(|_| {
                let r = rng.gen::<f64>() * potential;
                cumulative.partition_point(|&v| v < r).min(n - 1)
            })
            .collect();
        let rows = crate::sample::rows(x, &candidates);
        let (mins, pots) = distances(x, &norms, rows.view(), &closest);
        // The candidate that leaves the lowest potential (ties: the earliest drawn).
        let best = (0..trials).fold(0, |b, t| if pots[t] < pots[b] { t } else { b });
        closest = mins
            .chunks_exact(trials)
            .map(|row| row[best])
            .collect::<Vec<_>>();
        potential = pots[best];
        centers.row_mut(c).assign(&x.row(candidates[best]));
    }
    centers
}

/// For each row and each candidate, the squared distance to the nearest of (current centroids,
/// that candidate), as an `n x candidates` row-major list, and each candidate's potential.
fn distances(
    x: ArrayView2<f32>,
    norms: &[f32],
    candidates: ArrayView2<f32>,
    closest: &[f32],
) -> (Vec<f32>, Vec<f64>) {
    let t = candidates.nrows();
    let cand_norms: Vec<f32> = candidates.outer_iter().map(|c| c.dot(&c)).collect();
    let blocks: Vec<(Vec<f32>, Vec<f64>)> = x
        .axis_chunks_iter(Axis(0), BLOCK)
        .into_par_iter()
        .enumerate()
        .map(|(b, block)| {
            let dots = block.dot(&candidates.t());
            let start = b * BLOCK;
            let mut mins = Vec::with_capacity(block.nrows() * t);
            let mut pots = vec![0f64; t];
            for (i, d) in dots.outer_iter().enumerate() {
                let row = start + i;
                for (j, pot) in pots.iter_mut().enumerate() {
                    let sq = sq_distance(norms[row], cand_norms[j], d[j]).min(closest[row]);
                    mins.push(sq);
                    *pot += sq as f64;
                }
            }
            (mins, pots)
        })
        .collect();
    let mut mins = Vec::with_capacity(x.nrows() * t);
    let mut pots = vec![0f64; t];
    for (m, p) in blocks {
        mins.extend_from_slice(&m);
        pots.iter_mut().zip(&p).for_each(|(a, b)| *a += b);
    }
    (mins, pots)
}

fn sq_distance(row_norm: f32, cand_norm: f32, dot: f32) -> f32 {
    (row_norm + cand_norm - 2.0 * dot).max(0.0)
}

/// Squared Euclidean distance between two rows (for tests).
#[cfg(test)]
fn sq(a: ndarray::ArrayView1<f32>, b: ndarray::ArrayView1<f32>) -> f32 {
    let d = &a - &b;
    d.dot(&d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_xoshiro::rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256Plus;

    /// Three tight, far-apart groups of 40 rows each.
    fn groups() -> Array2<f32> {
        let mut rows = Vec::new();
        for g in 0..3 {
            for i in 0..40 {
                let j = (i as f32 * 0.91).sin() * 0.05;
                rows.extend_from_slice(&[g as f32 * 10.0 + j, (g % 2) as f32 * 7.0 - j, j]);
            }
        }
        Array2::from_shape_vec((120, 3), rows).unwrap()
    }

    #[test]
    fn one_start_in_each_separated_group() {
        let x = groups();
        for seed in 0..20 {
            let c = greedy_kmeans_pp(x.view(), 3, &mut Xoshiro256Plus::seed_from_u64(seed));
            let mut hit: Vec<usize> = c
                .outer_iter()
                .map(|row| {
                    (0..120)
                        .min_by(|&a, &b| sq(row, x.row(a)).partial_cmp(&sq(row, x.row(b))).unwrap())
                        .unwrap()
                        / 40
                })
                .collect();
            hit.sort();
            assert_eq!(hit, vec![0, 1, 2], "seed {seed}: starts {c:?}");
        }
    }

    #[test]
    fn starts_are_rows_and_repeat_with_the_seed() {
        let x = groups();
        let a = greedy_kmeans_pp(x.view(), 5, &mut Xoshiro256Plus::seed_from_u64(3));
        let b = greedy_kmeans_pp(x.view(), 5, &mut Xoshiro256Plus::seed_from_u64(3));
        assert_eq!(a, b);
        for c in a.outer_iter() {
            assert!(x.outer_iter().any(|r| r == c), "{c} is not a row");
        }
    }

    #[test]
    fn identical_rows_do_not_break_sampling() {
        let x = Array2::<f32>::ones((10, 4));
        let c = greedy_kmeans_pp(x.view(), 3, &mut Xoshiro256Plus::seed_from_u64(1));
        assert_eq!(c, Array2::<f32>::ones((3, 4)));
    }

    #[test]
    fn potentials_match_a_direct_computation() {
        let x = groups();
        let norms: Vec<f32> = x.outer_iter().map(|r| r.dot(&r)).collect();
        let closest: Vec<f32> = x.outer_iter().map(|r| sq(r, x.row(0))).collect();
        let cands = x.select(Axis(0), &[50, 100]);
        let (mins, pots) = distances(x.view(), &norms, cands.view(), &closest);
        for t in 0..2 {
            let direct: f64 = x
                .outer_iter()
                .zip(&closest)
                .map(|(r, &c)| sq(r, cands.row(t)).min(c) as f64)
                .sum();
            assert!((pots[t] - direct).abs() < 1e-2 * direct.max(1.0), "{t}");
            assert!((mins[7 * 2 + t] - sq(x.row(7), cands.row(t)).min(closest[7])).abs() < 1e-3);
        }
    }
}
