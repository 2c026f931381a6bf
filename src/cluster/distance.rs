//! Euclidean distance for linfa's k-means, summed in independent lanes so that it vectorises.
//!
//! Why: linfa's `L2Dist` sums `(a - b)^2` through ndarray-stats one element after another. A
//! floating-point sum in a fixed order cannot be vectorised, so every 100-dimensional distance is
//! a chain of 100 dependent additions, and linfa's k-means spends most of its time there: each
//! Lloyd pass and each mini-batch assigns every row to its closest centroid, one distance per
//! centroid. [`LaneL2`] is the same metric with the sum split into [`LANES`] running sums over
//! fixed positions (sum `j` takes elements `j`, `j + LANES`, ...), added at the end in a fixed
//! tree. The compiler turns the lanes into SIMD registers; the result depends only on the two
//! vectors, never on the thread count or the CPU, so clustering stays repeatable.

use linfa_nn::distance::Distance;
use ndarray::{ArrayView, Dimension, Zip};

/// Number of independent partial sums: four 4-wide (SSE) or two 8-wide (AVX) registers.
pub const LANES: usize = 16;

/// Euclidean (L2) distance; `rdistance` is its square. Drop-in for linfa's `L2Dist`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LaneL2;

impl Distance<f32> for LaneL2 {
    #[inline]
    fn distance<D: Dimension>(&self, a: ArrayView<f32, D>, b: ArrayView<f32, D>) -> f32 {
        self.rdistance(a, b).sqrt()
    }

    #[inline]
    fn rdistance<D: Dimension>(&self, a: ArrayView<f32, D>, b: ArrayView<f32, D>) -> f32 {
        assert_eq!(
            a.shape(),
            b.shape(),
            "distance between arrays of different shapes"
        );
        match (a.as_slice(), b.as_slice()) {
            (Some(a), Some(b)) => squared_l2(a, b),
            // Not contiguous (never the case for k-means rows): the plain sum.
            _ => {
                let mut sum = 0.0f32;
                Zip::from(&a)
                    .and(&b)
                    .for_each(|&x, &y| sum += (x - y) * (x - y));
                sum
            }
        }
    }

    #[inline]
    fn rdist_to_dist(&self, rdist: f32) -> f32 {
        rdist.sqrt()
    }

    #[inline]
    fn dist_to_rdist(&self, dist: f32) -> f32 {
        dist * dist
    }
}

/// `sum((a - b)^2)` in [`LANES`] partial sums, then a fixed pairwise tree and the tail.
///
/// On x86-64 CPUs with AVX the same sums run in 8-wide registers (detected once, at run time);
/// the operations and their order are the same, so the result is bit-identical either way.
///
/// # Panics
/// If the slices differ in length.
#[inline]
pub fn squared_l2(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "squared_l2: slices of different lengths");
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has(crate::simd::Level::Avx) {
        // SAFETY: the CPU supports AVX, checked just above.
        return unsafe { squared_l2_avx(a, b) };
    }
    lanes(a, b)
}

/// [`lanes`] in two 8-wide AVX registers (lanes 0..8 and 8..16), written out because the
/// compiler splits the portable loop into 2-wide pieces. The reduction tree and the tail are
/// the portable ones, so the result is bit-identical.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn squared_l2_avx(a: &[f32], b: &[f32]) -> f32 {
    use std::arch::x86_64::{
        _mm256_add_ps, _mm256_loadu_ps, _mm256_mul_ps, _mm256_setzero_ps, _mm256_storeu_ps,
        _mm256_sub_ps,
    };
    let full = a.len() / LANES * LANES;
    let (mut lo, mut hi) = (_mm256_setzero_ps(), _mm256_setzero_ps());
    for i in (0..full).step_by(LANES) {
        // SAFETY: `i + LANES <= full <= a.len() == b.len()`, so all 16 reads are in bounds.
        unsafe {
            let d0 = _mm256_sub_ps(
                _mm256_loadu_ps(a.as_ptr().add(i)),
                _mm256_loadu_ps(b.as_ptr().add(i)),
            );
            let d1 = _mm256_sub_ps(
                _mm256_loadu_ps(a.as_ptr().add(i + 8)),
                _mm256_loadu_ps(b.as_ptr().add(i + 8)),
            );
            lo = _mm256_add_ps(lo, _mm256_mul_ps(d0, d0));
            hi = _mm256_add_ps(hi, _mm256_mul_ps(d1, d1));
        }
    }
    // The tree's first step (lane j += lane j + 8), then the rest as in `lanes`.
    let mut acc = [0.0f32; LANES / 2];
    // SAFETY: `acc` holds exactly 8 floats.
    unsafe { _mm256_storeu_ps(acc.as_mut_ptr(), _mm256_add_ps(lo, hi)) };
    finish(&mut acc, &a[full..], &b[full..])
}

/// The lane sums; `a` and `b` have the same length.
#[inline(always)]
fn lanes(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ta, tb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for j in 0..LANES {
            let d = x[j] - y[j];
            acc[j] += d * d;
        }
    }
    finish(&mut acc, ta, tb)
}

/// Adds the partial sums in `acc` pairwise (lane `j` += lane `j + width/2`, halving the width),
/// then the plain sum of the leftover elements `ta`, `tb`.
#[inline(always)]
fn finish(acc: &mut [f32], ta: &[f32], tb: &[f32]) -> f32 {
    let mut width = acc.len();
    while width > 1 {
        width /= 2;
        for j in 0..width {
            acc[j] += acc[j + width];
        }
    }
    let mut tail = 0.0f32;
    for (x, y) in ta.iter().zip(tb) {
        tail += (x - y) * (x - y);
    }
    acc[0] + tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{s, Array1, Array2};

    fn naive(a: &[f32], b: &[f32]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(&x, &y)| (x as f64 - y as f64).powi(2))
            .sum()
    }

    #[test]
    fn matches_the_plain_sum_at_every_length() {
        // Lengths around the lane width exercise the tail and the empty case.
        for len in [0, 1, 7, 15, 16, 17, 31, 32, 100, 101, 300] {
            let a: Vec<f32> = (0..len)
                .map(|i| ((i * 37 % 11) as f32 - 5.0) / 3.0)
                .collect();
            let b: Vec<f32> = (0..len)
                .map(|i| ((i * 17 % 13) as f32 - 6.0) / 7.0)
                .collect();
            let got = squared_l2(&a, &b) as f64;
            let want = naive(&a, &b);
            assert!(
                (got - want).abs() <= 1e-5 * want.max(1.0),
                "len {len}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn is_the_euclidean_metric_for_linfa() {
        let a = Array1::from(vec![3.0f32, 0.0, 0.0, 1.0]);
        let b = Array1::from(vec![0.0f32, 4.0, 0.0, 1.0]);
        assert_eq!(LaneL2.rdistance(a.view(), b.view()), 25.0);
        assert_eq!(LaneL2.distance(a.view(), b.view()), 5.0);
        assert_eq!(LaneL2.rdist_to_dist(25.0), 5.0);
        assert_eq!(LaneL2.dist_to_rdist(5.0), 25.0);
        assert_eq!(LaneL2.rdistance(a.view(), a.view()), 0.0);
        // A strided (non-contiguous) view takes the plain path and agrees.
        let m = Array2::from_shape_fn((4, 2), |(i, j)| (i * 2 + j) as f32);
        let col = m.slice(s![.., 1]);
        let want = naive(&[1.0, 3.0, 5.0, 7.0], b.as_slice().unwrap()) as f32;
        assert_eq!(LaneL2.rdistance(col, b.view()), want);
    }

    #[test]
    fn the_avx_path_is_bit_identical_to_the_portable_one() {
        for len in [1, 15, 16, 17, 64, 100, 129] {
            for seed in 0..20u32 {
                let v = |salt: u32| -> Vec<f32> {
                    (0..len as u32)
                        .map(|i| {
                            ((i.wrapping_mul(2654435761) ^ (seed + salt)) % 1000) as f32 / 997.0
                                - 0.5
                        })
                        .collect()
                };
                let (a, b) = (v(1), v(7));
                assert_eq!(
                    squared_l2(&a, &b).to_bits(),
                    lanes(&a, &b).to_bits(),
                    "len {len}"
                );
            }
        }
    }

    #[test]
    #[should_panic(expected = "different")]
    fn different_lengths_panic() {
        squared_l2(&[1.0, 2.0], &[1.0]);
    }
}
