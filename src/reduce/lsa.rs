//! Latent semantic analysis: truncated SVD of the (uncentred) TF-IDF matrix by the randomized
//! algorithm of Halko, Martinsson & Tropp (2011), following scikit-learn's `randomized_svd`
//! (what `TruncatedSVD(algorithm="randomized")` runs).
//!
//! Why this formulation: with `X` (`n x m`, sparse) and `l = dims + n_oversamples`,
//!
//! 1. `Z = Omega` (`m x l`, seeded Gaussian);
//! 2. `n_iter` times: `Z <- orth(X^T (X Z))`: power iterations. Only the small `m x l` side is
//!    re-orthonormalised (scikit-learn also normalises the `n x l` side with an LU step, which
//!    at a million rows costs as much as a sparse product; TF-IDF matrices are well enough
//!    conditioned that one normalisation per round trip suffices in `f32`);
//! 3. `Y = X Z` (`n x l`), `G = Y^T Y`, `T = G^-1/2` (so `Q = Y T` is orthonormal, never formed);
//! 4. `W = X^T Y`, so `B^T = X^T Q = W T`; `B B^T = T^T (W^T W) T` (`l x l`) is
//!    eigendecomposed: `B B^T = U_b S^2 U_b^T`, and the right singular vectors are
//!    `V = B^T U_b S^-1 = W (T U_b S^-1)`.
//!
//! This is scikit-learn's algorithm up to rounding (same subspaces, same number of sparse
//! products: `2 n_iter + 2`), but every orthonormalisation is an `l x l` eigendecomposition of
//! a Gram matrix computed in `f64`, instead of a Householder QR of an `n x l` matrix.
//! Components are sign-fixed as `svd_flip(u_based_decision=False)` does (largest-magnitude
//! entry positive), and directions whose singular value is below `1e-5` of the largest
//! (numerically absent: the matrix has lower rank) are returned as zero components with
//! singular value 0.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use serde::{Deserialize, Serialize};

use super::linalg::{
    all_finite, column_variances, eigh_desc, flip_columns, gaussian_matrix, gram, mul_small,
    whitening, GramSum,
};
use super::ReduceError;
use crate::vectorize::csr::CsrMatrix;

/// Singular values below this fraction of the largest are treated as zero (rank deficiency);
/// see [`super::linalg::RANK_TOL`], of which this is the square root.
const SIGMA_TOL: f64 = 1e-5;

/// A fitted LSA projection (truncated SVD of the TF-IDF matrix).
///
/// Transforming a matrix computes `X V` (`V = components()^T`), then, if `normalize()`,
/// L2-normalises the rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "LsaRepr", into = "LsaRepr")]
pub struct Lsa {
    /// `V`: `n_features x dims`, row-major, so that projecting is a CSR x dense product.
    projection: Array2<f32>,
    singular_values: Array1<f64>,
    explained_variance_ratio: Array1<f64>,
    n_iter: usize,
    n_fit_rows: usize,
    normalize: bool,
}

impl Lsa {
    /// Number of output dimensions (components).
    pub fn dims(&self) -> usize {
        self.projection.ncols()
    }

    /// Number of input features (terms) the projection was fitted on.
    pub fn n_features(&self) -> usize {
        self.projection.nrows()
    }

    /// The components (right singular vectors) as rows: `dims x n_features`, in decreasing
    /// order of singular value, each with its largest-magnitude entry positive.
    pub fn components(&self) -> ArrayView2<'_, f32> {
        self.projection.t()
    }

    /// Singular values of the fitted matrix (the sample, if the fit used one), in decreasing
    /// order (`dims` of them).
    pub fn singular_values(&self) -> ArrayView1<'_, f64> {
        self.singular_values.view()
    }

    /// Share of the training matrix's total (column-centred) variance carried by each
    /// component, as scikit-learn's `TruncatedSVD.explained_variance_ratio_`: variance of
    /// each column of `X V` over the sum of the column variances of `X`, over all training
    /// documents (also when the fit used a sample).
    pub fn explained_variance_ratio(&self) -> ArrayView1<'_, f64> {
        self.explained_variance_ratio.view()
    }

    /// Number of power iterations that were run.
    pub fn n_iter(&self) -> usize {
        self.n_iter
    }

    /// Number of documents the decomposition was fitted on (all of them, or a sample).
    pub fn n_fit_rows(&self) -> usize {
        self.n_fit_rows
    }

    /// Whether output rows are L2-normalised.
    pub fn normalize(&self) -> bool {
        self.normalize
    }

    /// `X V`, not normalised. The caller has checked the number of features.
    pub(crate) fn project(&self, x: &CsrMatrix) -> Array2<f32> {
        x.dot_dense(self.projection.view())
    }

    /// Records the explained variance ratio from the un-normalised training embedding.
    pub(crate) fn set_explained_variance(&mut self, x: &CsrMatrix, embedding: ArrayView2<f32>) {
        let (_, col_var) = x.column_mean_var();
        let total: f64 = col_var.iter().sum();
        let ratios = column_variances(embedding).into_iter().map(|var| {
            if total > 0.0 {
                var / total
            } else {
                0.0
            }
        });
        self.explained_variance_ratio = ratios.collect();
    }
}

/// Runs the randomized truncated SVD described in the module docs. Requires
/// `1 <= dims < min(n_rows, n_cols)` and `nnz > 0` (checked by the caller).
pub(crate) fn fit_lsa(
    x: &CsrMatrix,
    dims: usize,
    n_iter: usize,
    n_oversamples: usize,
    seed: u64,
    normalize: bool,
) -> Result<Lsa, ReduceError> {
    let (n, m) = (x.n_rows(), x.n_cols());
    let l = dims.saturating_add(n_oversamples).min(n).min(m);

    // 1-2. Range finder on the feature side. `X Z` is never held whole: each product
    // `X^T (X Z)` is made block by block of rows (bit-identical to making `X Z` first).
    let mut z = gaussian_matrix(m, l, seed);
    let block = GramSum::BLOCK_ROWS;
    for _ in 0..n_iter {
        let w = x.t_dot_dot_dense(z.view(), block, |_| {});
        if !all_finite(w.view()) {
            return Err(ReduceError::NonFinite);
        }
        let t = whitening(&gram(w.view()))?;
        z = mul_small(w.view(), &t);
    }

    // 3-4. Y = X Z, its Gram matrix summed block by block, and W = X^T Y; then Y's whitening
    // T (Q = Y T orthonormal), and B B^T = T^T (W^T W) T.
    let mut gram_y = GramSum::new(z.ncols());
    let mut y_finite = true;
    let w = x.t_dot_dot_dense(z.view(), block, |y| {
        y_finite &= all_finite(y);
        gram_y.add(y);
    });
    drop(z);
    if !y_finite {
        return Err(ReduceError::NonFinite);
    }
    let t = whitening(&gram_y.finish())?;
    if !all_finite(w.view()) {
        return Err(ReduceError::NonFinite);
    }
    let wtw = gram(w.view());
    let bbt = t.t().dot(&wtw).dot(&t);
    let (eig, u_b) = eigh_desc(&bbt)?;

    let sigma: Vec<f64> = eig.iter().map(|&v| v.max(0.0).sqrt()).collect();
    let sigma_max = sigma.first().copied().unwrap_or(0.0);
    // R = T U_b S^-1 restricted to the kept directions; zero columns elsewhere.
    // (The working width can be below `l` if power iterations dropped null directions.)
    let mut r = Array2::<f64>::zeros((w.ncols(), dims));
    let mut singular_values = Array1::<f64>::zeros(dims);
    let tu = t.dot(&u_b);
    for k in 0..dims.min(sigma.len()) {
        if sigma[k] > SIGMA_TOL * sigma_max && sigma[k] > 0.0 {
            r.column_mut(k).assign(&(&tu.column(k) / sigma[k]));
            singular_values[k] = sigma[k];
        }
    }
    let mut projection = mul_small(w.view(), &r);
    flip_columns(&mut projection);
    Ok(Lsa {
        projection,
        singular_values,
        explained_variance_ratio: Array1::zeros(dims),
        n_iter,
        n_fit_rows: n,
        normalize,
    })
}

/// Serialised form of [`Lsa`]: plain vectors plus shape, validated on load.
#[derive(Serialize, Deserialize)]
struct LsaRepr {
    n_features: usize,
    dims: usize,
    /// Components as rows (`dims x n_features`), row-major.
    components: Vec<f32>,
    singular_values: Vec<f64>,
    explained_variance_ratio: Vec<f64>,
    n_iter: usize,
    n_fit_rows: usize,
    normalize: bool,
}

impl From<Lsa> for LsaRepr {
    fn from(lsa: Lsa) -> Self {
        LsaRepr {
            n_features: lsa.n_features(),
            dims: lsa.dims(),
            components: lsa.components().iter().copied().collect(),
            singular_values: lsa.singular_values.to_vec(),
            explained_variance_ratio: lsa.explained_variance_ratio.to_vec(),
            n_iter: lsa.n_iter,
            n_fit_rows: lsa.n_fit_rows,
            normalize: lsa.normalize,
        }
    }
}

impl TryFrom<LsaRepr> for Lsa {
    type Error = String;

    fn try_from(r: LsaRepr) -> Result<Self, String> {
        let expected = r
            .dims
            .checked_mul(r.n_features)
            .ok_or("LSA components: dims * n_features overflows")?;
        if r.components.len() != expected {
            return Err(format!(
                "LSA components: expected {} x {} = {expected} values, found {}",
                r.dims,
                r.n_features,
                r.components.len()
            ));
        }
        if r.singular_values.len() != r.dims || r.explained_variance_ratio.len() != r.dims {
            return Err(format!(
                "LSA: expected {} singular values and variance ratios, found {} and {}",
                r.dims,
                r.singular_values.len(),
                r.explained_variance_ratio.len()
            ));
        }
        if !r.components.iter().all(|v| v.is_finite()) {
            return Err("LSA components contain non-finite values".to_string());
        }
        let components = Array2::from_shape_vec((r.dims, r.n_features), r.components)
            .map_err(|e| e.to_string())?;
        Ok(Lsa {
            projection: components.t().as_standard_layout().into_owned(),
            singular_values: Array1::from(r.singular_values),
            explained_variance_ratio: Array1::from(r.explained_variance_ratio),
            n_iter: r.n_iter,
            n_fit_rows: r.n_fit_rows,
            normalize: r.normalize,
        })
    }
}
