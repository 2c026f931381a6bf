//! Very sparse random projection (Achlioptas 2003; Li, Hastie & Church 2006), as
//! scikit-learn's `SparseRandomProjection(density="auto")`.
//!
//! Why: it is the cheap alternative to LSA (no pass over the data to fit, a single sparse pass
//! to transform) and approximately preserves distances (Johnson-Lindenstrauss). The projection
//! matrix `R` (`n_features x dims`) has entries `+s`, `-s` with probability `density / 2` each
//! and `0` otherwise, with `density = 1 / sqrt(n_features)` and `s = sqrt(1 / (density * dims))`.
//! With ~`dims * sqrt(n_features)` non-zeros in all (about 25,000 for 60,000 terms and 100
//! dims) it is stored as a tiny per-feature list of `(output dimension, sign)` pairs, and
//! `X R` is computed row by row directly from the CSR matrix.

use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256Plus;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::vectorize::csr::CsrMatrix;

/// Rows per parallel task in [`RandomProjection::project`]; does not influence the result.
const ROWS_PER_TASK: usize = 1024;

/// A fitted sparse random projection from `n_features` to `dims` dimensions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RandomProjectionRepr", into = "RandomProjectionRepr")]
pub struct RandomProjection {
    n_features: usize,
    dims: usize,
    /// Feature `j`'s non-zeros are `targets[indptr[j]..indptr[j + 1]]` (increasing).
    indptr: Vec<usize>,
    targets: Vec<u32>,
    negative: Vec<bool>,
    scale: f32,
    normalize: bool,
}

impl RandomProjection {
    /// Draws the projection for `n_features` inputs and `dims` outputs from a seeded
    /// `Xoshiro256Plus`. Requires `n_features >= 1` and `1 <= dims <= u32::MAX` (checked by
    /// the caller).
    pub(crate) fn generate(n_features: usize, dims: usize, seed: u64, normalize: bool) -> Self {
        let density = 1.0 / (n_features as f64).sqrt();
        let scale = (1.0 / (density * dims as f64)).sqrt() as f32;
        let mut rng = Xoshiro256Plus::seed_from_u64(seed);
        // Non-zeros per output dimension: skip a geometric number of features between hits
        // (exactly Bernoulli(density) per entry, in O(non-zeros) draws).
        let log_q = (1.0 - density).ln();
        let mut by_dim: Vec<(u32, usize, bool)> = Vec::new();
        for d in 0..dims {
            let mut j = 0usize;
            loop {
                let skip = if density >= 1.0 {
                    0.0
                } else {
                    let u: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]
                    (u.ln() / log_q).floor()
                };
                if skip >= (n_features - j) as f64 {
                    break;
                }
                j += skip as usize;
                by_dim.push((d as u32, j, rng.gen::<bool>()));
                j += 1;
                if j >= n_features {
                    break;
                }
            }
        }
        // Regroup per feature; a stable sort keeps the output dimensions increasing.
        by_dim.sort_by_key(|&(_, j, _)| j);
        let mut indptr = vec![0usize; n_features + 1];
        for &(_, j, _) in &by_dim {
            indptr[j + 1] += 1;
        }
        for j in 0..n_features {
            indptr[j + 1] += indptr[j];
        }
        RandomProjection {
            n_features,
            dims,
            indptr,
            targets: by_dim.iter().map(|&(d, _, _)| d).collect(),
            negative: by_dim.iter().map(|&(_, _, neg)| neg).collect(),
            scale,
            normalize,
        }
    }

    /// Number of input features.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// Number of output dimensions.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Density of the projection matrix, `1 / sqrt(n_features)`.
    pub fn density(&self) -> f64 {
        1.0 / (self.n_features as f64).sqrt()
    }

    /// Number of non-zeros in the projection matrix.
    pub fn nnz(&self) -> usize {
        self.targets.len()
    }

    /// Whether output rows are L2-normalised.
    pub fn normalize(&self) -> bool {
        self.normalize
    }

    /// The projection matrix as a dense `dims x n_features` array (scikit-learn's
    /// `components_` orientation). For inspection and tests: allocates the full matrix.
    pub fn components_dense(&self) -> Array2<f32> {
        let mut out = Array2::zeros((self.dims, self.n_features));
        for j in 0..self.n_features {
            for k in self.indptr[j]..self.indptr[j + 1] {
                let v = if self.negative[k] {
                    -self.scale
                } else {
                    self.scale
                };
                out[[self.targets[k] as usize, j]] = v;
            }
        }
        out
    }

    /// `X R`, not normalised. The caller has checked the number of features.
    pub(crate) fn project(&self, x: &CsrMatrix) -> Array2<f32> {
        let d = self.dims;
        let mut out = Array2::<f32>::zeros((x.n_rows(), d));
        if d == 0 || x.n_rows() == 0 {
            return out;
        }
        let out_slice = out.as_slice_mut().expect("a fresh Array2 is contiguous");
        out_slice
            .par_chunks_mut(ROWS_PER_TASK * d)
            .enumerate()
            .for_each(|(chunk, block)| {
                let first = chunk * ROWS_PER_TASK;
                for (k, out_row) in block.chunks_exact_mut(d).enumerate() {
                    let (cols, vals) = x.row(first + k);
                    for (&c, &v) in cols.iter().zip(vals) {
                        let c = c as usize;
                        for e in self.indptr[c]..self.indptr[c + 1] {
                            let t = self.targets[e] as usize;
                            if self.negative[e] {
                                out_row[t] -= v;
                            } else {
                                out_row[t] += v;
                            }
                        }
                    }
                    out_row.iter_mut().for_each(|o| *o *= self.scale);
                }
            });
        out
    }
}

/// Serialised form of [`RandomProjection`], validated on load.
#[derive(Serialize, Deserialize)]
struct RandomProjectionRepr {
    n_features: usize,
    dims: usize,
    indptr: Vec<usize>,
    targets: Vec<u32>,
    negative: Vec<bool>,
    scale: f32,
    normalize: bool,
}

impl From<RandomProjection> for RandomProjectionRepr {
    fn from(p: RandomProjection) -> Self {
        RandomProjectionRepr {
            n_features: p.n_features,
            dims: p.dims,
            indptr: p.indptr,
            targets: p.targets,
            negative: p.negative,
            scale: p.scale,
            normalize: p.normalize,
        }
    }
}

impl TryFrom<RandomProjectionRepr> for RandomProjection {
    type Error = String;

    fn try_from(r: RandomProjectionRepr) -> Result<Self, String> {
        let ok = r.indptr.len() == r.n_features.saturating_add(1)
            && r.indptr.first() == Some(&0)
            && r.indptr.windows(2).all(|w| w[0] <= w[1])
            && r.indptr.last() == Some(&r.targets.len())
            && r.targets.len() == r.negative.len()
            && r.targets.iter().all(|&t| (t as usize) < r.dims)
            && r.scale.is_finite();
        if !ok {
            return Err("random projection: inconsistent stored structure".to_string());
        }
        Ok(RandomProjection {
            n_features: r.n_features,
            dims: r.dims,
            indptr: r.indptr,
            targets: r.targets,
            negative: r.negative,
            scale: r.scale,
            normalize: r.normalize,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::reduce::testing::topic_matrix;
    use crate::reduce::{ReduceMethod, ReduceParams, Reducer};
    use approx::{assert_abs_diff_eq, assert_relative_eq};

    #[test]
    fn random_projection_structure_and_product() {
        let m = 2500;
        let dims = 40;
        let x = topic_matrix(30, m, 4);
        let (reducer, emb) = ReduceParams::new()
            .method(ReduceMethod::RandomProjection)
            .dims(dims)
            .normalize(false)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        let rp = match &reducer {
            Reducer::RandomProjection(p) => p,
            _ => panic!("expected a random projection"),
        };
        // density = 1/sqrt(2500) = 0.02, scale = sqrt(1 / (0.02 * 40)) = sqrt(1.25).
        assert_relative_eq!(rp.density(), 0.02, max_relative = 1e-12);
        let r = rp.components_dense();
        assert_eq!(r.dim(), (dims, m));
        let s = 1.25f32.sqrt();
        assert!(r.iter().all(|&v| v == 0.0 || (v.abs() - s).abs() < 1e-6));
        // 100,000 Bernoulli(0.02) draws: 2,000 expected, standard deviation ~44.
        let nnz = r.iter().filter(|&&v| v != 0.0).count();
        assert_eq!(nnz, rp.nnz());
        assert!((1800..2200).contains(&nnz), "nnz {nnz}");
        let neg = r.iter().filter(|&&v| v < 0.0).count();
        assert!((nnz as f64 * 0.4..nnz as f64 * 0.6).contains(&(neg as f64)));
        // The embedding is X R^T.
        let want = x.to_dense().dot(&r.t());
        for (g, w) in emb.iter().zip(want.iter()) {
            assert_abs_diff_eq!(*g, *w, epsilon = 1e-4);
        }
    }
}
