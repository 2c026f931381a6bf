//! Small dense linear-algebra helpers for the randomized SVD.
//!
//! Why these exist: the big products involve the sparse TF-IDF matrix and live in
//! [`crate::vectorize::csr`]; everything else is either a tall-skinny dense matrix (`N x l`
//! with `l` ~ 110) or a tiny `l x l` one. For tall-skinny matrices we never run a Householder
//! QR (slow in pure Rust for a million rows); instead we form the `l x l` Gram matrix and
//! eigendecompose it (linfa-linalg's `eigh`). To keep that numerically sound with `f32`
//! storage, Gram matrices and small products are computed in `f64`, chunk by chunk. Chunk sizes
//! are fixed constants and partial sums are added in chunk order, so results are bit-identical
//! whatever the number of rayon threads.

use linfa_linalg::eigh::Eigh;
use ndarray::{s, Array2, ArrayView2, Axis, Zip};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256Plus;
use rayon::prelude::*;

use super::ReduceError;

/// Rows per chunk in [`gram`] and [`mul_small`]; fixed so results never depend on threads.
const CHUNK_ROWS: usize = 2048;
/// Chunks summed into one partial in [`GramSum`] before the partials are summed.
const CHUNKS_PER_GROUP: usize = 16;

/// Relative eigenvalue threshold below which a Gram direction counts as numerically absent
/// (rank deficiency). Gram matrices here come from `f32` data, whose rounding puts a noise
/// floor near `(6e-8)^2 ~ 4e-15` of the largest eigenvalue; `1e-10` (a singular-value ratio of
/// `1e-5`) stays well above it.
pub(crate) const RANK_TOL: f64 = 1e-10;

/// A `rows x cols` matrix of standard normal `f32` draws (Box-Muller on a seeded
/// `Xoshiro256Plus`), filled row after row.
pub(crate) fn gaussian_matrix(rows: usize, cols: usize, seed: u64) -> Array2<f32> {
    let len = rows * cols;
    // The uniform pairs are drawn in order (cheap); the logarithms and cosines, most of the
    // cost, run in parallel. Each pair gives two values, so the result never depends on the
    // thread count.
    let mut rng = Xoshiro256Plus::seed_from_u64(seed);
    let pairs: Vec<(f64, f64)> = (0..len.div_ceil(2))
        .map(|_| {
            // u1 in (0, 1] so that ln(u1) is finite.
            let u1: f64 = 1.0 - rng.gen::<f64>();
            let u2: f64 = rng.gen::<f64>();
            (u1, u2)
        })
        .collect();
    let mut data = vec![0f32; len];
    data.par_chunks_mut(2)
        .zip(pairs.par_iter())
        .with_min_len(4096)
        .for_each(|(out, &(u1, u2))| {
            let r = (-2.0 * u1.ln()).sqrt();
            let t = std::f64::consts::TAU * u2;
            out[0] = (r * t.cos()) as f32;
            if let Some(second) = out.get_mut(1) {
                *second = (r * t.sin()) as f32;
            }
        });
    Array2::from_shape_vec((rows, cols), data).expect("length matches rows * cols")
}

/// `a^T a` in `f64` for a tall `N x l` matrix, exactly symmetric (see [`GramSum`]).
pub(crate) fn gram(a: ArrayView2<f32>) -> Array2<f64> {
    let mut sum = GramSum::new(a.ncols());
    sum.add(a);
    sum.finish()
}

/// `a^T a` in `f64` of a tall matrix `a` given as consecutive blocks of rows, exactly
/// symmetric: the randomized SVD sums the Gram matrix of `X Z` one block at a time, as the
/// product is made, instead of holding it whole.
///
/// The rows are cut into chunks of [`CHUNK_ROWS`]; the chunks' products are computed in
/// parallel (one task per chunk, so a few chunks still keep every core busy), then summed in a
/// fixed order: chunk by chunk within each group of [`CHUNKS_PER_GROUP`], then group by group.
/// The order, not the threads, fixes every rounding, so the result is bit-identical whatever
/// the number of threads, and whatever the blocks, as long as every block but the last is a
/// whole number of chunks ([`GramSum::BLOCK_ROWS`] is). At most a group's products are held at
/// once.
pub(crate) struct GramSum {
    total: Array2<f64>,
    group: Array2<f64>,
    /// Chunks summed into `group` so far.
    in_group: usize,
}

impl GramSum {
    /// Rows per block that keep [`GramSum`]'s sums the same as over the whole matrix.
    pub(crate) const BLOCK_ROWS: usize = 4 * CHUNK_ROWS;

    pub(crate) fn new(l: usize) -> GramSum {
        GramSum {
            total: Array2::zeros((l, l)),
            group: Array2::zeros((l, l)),
            in_group: 0,
        }
    }

    /// Adds the rows of `a`, the next block of the matrix.
    pub(crate) fn add(&mut self, a: ArrayView2<f32>) {
        let n = a.nrows();
        let chunks: Vec<usize> = (0..n.div_ceil(CHUNK_ROWS)).collect();
        for batch in chunks.chunks(CHUNKS_PER_GROUP) {
            let products: Vec<Array2<f64>> = batch
                .par_iter()
                .map(|&c| {
                    let stop = ((c + 1) * CHUNK_ROWS).min(n);
                    let chunk = a.slice(s![c * CHUNK_ROWS..stop, ..]).mapv(f64::from);
                    chunk.t().dot(&chunk)
                })
                .collect();
            for p in &products {
                self.group += p;
                self.in_group += 1;
                if self.in_group == CHUNKS_PER_GROUP {
                    self.close_group();
                }
            }
        }
    }

    fn close_group(&mut self) {
        self.total += &self.group;
        self.group.fill(0.0);
        self.in_group = 0;
    }

    /// The Gram matrix of all the rows added.
    pub(crate) fn finish(mut self) -> Array2<f64> {
        if self.in_group > 0 {
            self.close_group();
        }
        symmetrize(&mut self.total);
        self.total
    }
}

/// `a^T b` in `f64` for two tall matrices with the same number of rows.
#[cfg(test)]
pub(crate) fn cross(a: ArrayView2<f32>, b: ArrayView2<f32>) -> Array2<f64> {
    a.mapv(f64::from).t().dot(&b.mapv(f64::from))
}

/// Replaces `g` by `(g + g^T) / 2`.
fn symmetrize(g: &mut Array2<f64>) {
    let l = g.nrows();
    for i in 0..l {
        for j in 0..i {
            let v = 0.5 * (g[[i, j]] + g[[j, i]]);
            g[[i, j]] = v;
            g[[j, i]] = v;
        }
    }
}

/// `a (N x l, f32) * b (l x r, f64) -> N x r` in `f32`, computed in `f64` chunk by chunk in
/// parallel (each output row depends only on its own input row and `b`).
pub(crate) fn mul_small(a: ArrayView2<f32>, b: &Array2<f64>) -> Array2<f32> {
    let (n, r) = (a.nrows(), b.ncols());
    let mut out = Array2::<f32>::zeros((n, r));
    out.axis_chunks_iter_mut(Axis(0), CHUNK_ROWS)
        .into_par_iter()
        .zip(a.axis_chunks_iter(Axis(0), CHUNK_ROWS).into_par_iter())
        .for_each(|(mut o, a_chunk)| {
            let prod = a_chunk.mapv(f64::from).dot(b);
            Zip::from(&mut o).and(&prod).for_each(|o, &p| *o = p as f32);
        });
    out
}

/// Eigendecomposition of a symmetric matrix, eigenvalues in descending order (eigenvectors in
/// the matching columns). Errors instead of looping on non-finite input.
pub(crate) fn eigh_desc(g: &Array2<f64>) -> Result<(Vec<f64>, Array2<f64>), ReduceError> {
    if !g.iter().all(|v| v.is_finite()) {
        return Err(ReduceError::NonFinite);
    }
    let (vals, vecs) = g.eigh().map_err(ReduceError::from)?;
    let mut order: Vec<usize> = (0..vals.len()).collect();
    // Stable sort on a total order: ties keep eigh's (deterministic) order.
    order.sort_by(|&i, &j| vals[j].total_cmp(&vals[i]));
    let sorted_vals = order.iter().map(|&i| vals[i]).collect();
    let mut sorted_vecs = Array2::zeros(vecs.raw_dim());
    for (dst, &src) in order.iter().enumerate() {
        sorted_vecs.column_mut(dst).assign(&vecs.column(src));
    }
    Ok((sorted_vals, sorted_vecs))
}

/// For a Gram matrix `G = A^T A` (`l x l`), returns `T` (`l x r`) with `A T` orthonormal and
/// spanning the numerically non-null part of `range(A)`: `T = V_r diag(lambda_r^-1/2)`, where
/// `lambda_r` are the eigenvalues above `RANK_TOL * lambda_max`. `r` may be 0 (when `A = 0`).
pub(crate) fn whitening(g: &Array2<f64>) -> Result<Array2<f64>, ReduceError> {
    let (vals, vecs) = eigh_desc(g)?;
    let lmax = vals.first().copied().unwrap_or(0.0);
    let r = if lmax > 0.0 {
        vals.iter().take_while(|&&v| v > RANK_TOL * lmax).count()
    } else {
        0
    };
    let mut t = vecs.slice(s![.., ..r]).to_owned();
    for (mut col, &v) in t.axis_iter_mut(Axis(1)).zip(&vals) {
        col /= v.sqrt();
    }
    Ok(t)
}

/// Population variance of each column of `a`, in `f64`: two passes (means, then squared
/// deviations), each over fixed row chunks in parallel whose partial sums are added in chunk
/// order, so the result does not depend on the number of threads.
pub(crate) fn column_variances(a: ArrayView2<f32>) -> Vec<f64> {
    let (n, k) = a.dim();
    if n == 0 {
        return vec![0.0; k];
    }
    let chunk_sums = |mean: Option<&[f64]>| -> Vec<f64> {
        let partials: Vec<Vec<f64>> = a
            .axis_chunks_iter(Axis(0), CHUNK_ROWS)
            .into_par_iter()
            .map(|chunk| {
                let mut acc = vec![0f64; k];
                for row in chunk.outer_iter() {
                    for ((s, &v), j) in acc.iter_mut().zip(row.iter()).zip(0..) {
                        let v = f64::from(v);
                        *s += match mean {
                            Some(mu) => (v - mu[j]) * (v - mu[j]),
                            None => v,
                        };
                    }
                }
                acc
            })
            .collect();
        let mut total = vec![0f64; k];
        for p in &partials {
            total.iter_mut().zip(p).for_each(|(t, v)| *t += v);
        }
        total
    };
    let nf = n as f64;
    let mean: Vec<f64> = chunk_sums(None).into_iter().map(|s| s / nf).collect();
    chunk_sums(Some(&mean))
        .into_iter()
        .map(|s| s / nf)
        .collect()
}

/// True when every value is finite.
pub(crate) fn all_finite(a: ArrayView2<f32>) -> bool {
    a.iter().all(|v| v.is_finite())
}

/// Flips the sign of each column of `v` so that its largest-magnitude entry (the first one on
/// ties) is positive: scikit-learn's `svd_flip(u_based_decision=False)` convention applied to
/// the components.
pub(crate) fn flip_columns(v: &mut Array2<f32>) {
    for mut col in v.axis_iter_mut(Axis(1)) {
        let mut best = 0f32;
        for &x in col.iter() {
            if x.abs() > best.abs() {
                best = x;
            }
        }
        if best < 0.0 {
            col.mapv_inplace(|x| -x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_abs_diff_eq;
    use ndarray::array;

    #[test]
    fn a_gram_matrix_summed_by_blocks_is_the_whole_ones_bit_for_bit() {
        // 40 chunks: more than one group of chunks, and a short last chunk.
        let n = 40 * CHUNK_ROWS - 100;
        let a = Array2::from_shape_fn((n, 6), |(i, j)| ((i * 7 + j * 13) % 31) as f32 / 7.0 - 2.0);
        let whole = gram(a.view());
        let mut by_blocks = GramSum::new(6);
        for start in (0..n).step_by(GramSum::BLOCK_ROWS) {
            let stop = (start + GramSum::BLOCK_ROWS).min(n);
            by_blocks.add(a.slice(s![start..stop, ..]));
        }
        assert_eq!(by_blocks.finish(), whole);
        let direct = a.mapv(f64::from).t().dot(&a.mapv(f64::from));
        for (g, d) in whole.iter().zip(direct.iter()) {
            assert!((g - d).abs() <= 1e-9 * d.abs().max(1.0), "{g} against {d}");
        }
    }

    #[test]
    fn gaussian_moments_are_standard() {
        let g = gaussian_matrix(200, 100, 7);
        let n = g.len() as f64;
        let mean = g.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
        let var = g
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / n;
        // 20,000 draws: standard error of the mean ~0.007, of the variance ~0.01.
        assert_abs_diff_eq!(mean, 0.0, epsilon = 0.03);
        assert_abs_diff_eq!(var, 1.0, epsilon = 0.05);
        assert_eq!(g, gaussian_matrix(200, 100, 7));
        assert_ne!(g, gaussian_matrix(200, 100, 8));
    }

    #[test]
    fn gram_matches_direct_product_over_many_chunks() {
        // 70,000 rows: more than one group of chunks, last chunk partial.
        let n = 70_000;
        let a = Array2::from_shape_fn((n, 3), |(i, j)| ((i * (j + 3)) % 17) as f32 - 8.0);
        let g = gram(a.view());
        let direct = cross(a.view(), a.view());
        for (x, y) in g.iter().zip(direct.iter()) {
            assert_abs_diff_eq!(*x, *y, epsilon = 1e-6 * y.abs().max(1.0));
        }
    }

    #[test]
    fn whitening_orthonormalises_and_drops_null_directions() {
        // Third column = first + second: rank 2.
        let a = array![
            [1.0f32, 0.0, 1.0],
            [2.0, 1.0, 3.0],
            [0.0, 1.0, 1.0],
            [1.0, -1.0, 0.0]
        ];
        let t = whitening(&gram(a.view())).unwrap();
        assert_eq!(t.dim(), (3, 2));
        let q = mul_small(a.view(), &t);
        let qtq = cross(q.view(), q.view());
        for i in 0..2 {
            for j in 0..2 {
                let want = if i == j { 1.0 } else { 0.0 };
                assert_abs_diff_eq!(qtq[[i, j]], want, epsilon = 1e-6);
            }
        }
    }

    #[test]
    fn column_variances_match_hand_computation() {
        // Columns [1, 2, 3, 4] (variance 1.25) and [2, 2, 2, 2] (variance 0), over more rows
        // than one chunk.
        let a = Array2::from_shape_fn((4 * CHUNK_ROWS + 4, 2), |(i, j)| {
            if j == 0 {
                (i % 4) as f32 + 1.0
            } else {
                2.0
            }
        });
        let v = column_variances(a.view());
        assert_abs_diff_eq!(v[0], 1.25, epsilon = 1e-12);
        assert_abs_diff_eq!(v[1], 0.0, epsilon = 1e-12);
    }

    #[test]
    fn flip_makes_largest_entry_positive() {
        let mut v = array![[1.0f32, -0.5], [-3.0, 0.4], [2.0, 0.1]];
        flip_columns(&mut v);
        assert_eq!(v, array![[-1.0f32, 0.5], [3.0, -0.4], [-2.0, -0.1]]);
    }
}
