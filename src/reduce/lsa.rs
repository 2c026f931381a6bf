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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::testing::{csr_from_dense, pool, sklearn_matrix, topic_matrix};
    use crate::reduce::{ReduceParams, Reducer};
    use approx::{assert_abs_diff_eq, assert_relative_eq};
    use linfa_linalg::eigh::Eigh;

    /// Exact singular values and right singular vectors (rows) of `x`, from the eigenvalue
    /// decomposition of `X^T X` in f64 (linfa-linalg), descending.
    fn exact_svd(x: &CsrMatrix) -> (Vec<f64>, Array2<f64>) {
        let d = x.to_dense().mapv(f64::from);
        let (vals, vecs) = d.t().dot(&d).eigh().unwrap();
        let mut order: Vec<usize> = (0..vals.len()).collect();
        order.sort_by(|&i, &j| vals[j].total_cmp(&vals[i]));
        let sv = order.iter().map(|&i| vals[i].max(0.0).sqrt()).collect();
        let mut v = Array2::zeros((order.len(), vecs.nrows()));
        for (k, &i) in order.iter().enumerate() {
            v.row_mut(k).assign(&vecs.column(i));
        }
        (sv, v)
    }

    fn lsa_of(r: &Reducer) -> &Lsa {
        match r {
            Reducer::Lsa(l) => l,
            other => panic!("expected LSA, got {:?}", other.method()),
        }
    }

    #[test]
    fn lsa_matches_scikit_learn() {
        // Reference: scikit-learn 1.9.1,
        // TruncatedSVD(n_components=5, algorithm="randomized", n_iter=5, random_state=0)
        // .fit(scipy.sparse.csr_matrix(A)) with A = sklearn_matrix() in float64.
        let sk_sv = [
            8.309073737,
            4.5176037941,
            4.0058272448,
            3.7713358362,
            3.5001512333,
        ];
        let sk_evr = [
            0.0390749291,
            0.1369158193,
            0.1057946973,
            0.0955316084,
            0.0823021141,
        ];
        // svd.components_[0] and [1] (svd_flip(u_based_decision=False) signs).
        let sk_c0 = [
            0.158293425,
            0.176325636,
            0.257116091,
            0.203425030,
            0.193277617,
            0.204226031,
            0.180648219,
            0.168497544,
            0.173326323,
            0.185609359,
            0.160841143,
            0.233682338,
            0.0,
            0.126588244,
            0.178529670,
            0.180601003,
            0.184802043,
            0.166927486,
            0.152892128,
            0.167671469,
            0.169130943,
            0.169499941,
            0.113577016,
            0.145763775,
            0.168649252,
            0.233306255,
            0.237067783,
            0.223712526,
            0.211271133,
            0.179000258,
        ];
        let sk_c1 = [
            -0.277962864,
            0.246844085,
            0.154743337,
            -0.270933371,
            0.265066222,
            -0.075339066,
            0.236662249,
            -0.138259244,
            0.009052042,
            0.110345180,
            0.061231557,
            -0.092397741,
            0.0,
            -0.027590658,
            -0.099520478,
            -0.125230368,
            0.014129474,
            0.023960153,
            -0.212337975,
            0.003372509,
            -0.297666920,
            0.155469803,
            -0.117081347,
            -0.289261846,
            0.191039583,
            0.183136980,
            -0.301368936,
            0.302283042,
            -0.059673912,
            0.225114903,
        ];
        let x = csr_from_dense(&sklearn_matrix());
        let (reducer, _) = ReduceParams::new()
            .dims(5)
            .n_iter(Some(5))
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        let lsa = lsa_of(&reducer);
        assert_eq!(lsa.n_iter(), 5);
        assert_eq!(lsa.components().dim(), (5, 30));
        for (a, b) in lsa.singular_values().iter().zip(sk_sv) {
            assert_relative_eq!(*a, b, max_relative = 1e-3);
        }
        for (a, b) in lsa.explained_variance_ratio().iter().zip(sk_evr) {
            assert_relative_eq!(*a, b, max_relative = 1e-3);
        }
        for (row, sk) in [(0, &sk_c0), (1, &sk_c1)] {
            for (a, b) in lsa.components().row(row).iter().zip(sk.iter()) {
                assert_abs_diff_eq!(f64::from(*a), *b, epsilon = 1e-3);
            }
        }
    }

    #[test]
    fn lsa_matches_exact_svd() {
        let x = topic_matrix(300, 120, 11);
        let (sv, v) = exact_svd(&x);
        let (reducer, _) = ReduceParams::new()
            .dims(8)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        let lsa = lsa_of(&reducer);
        // Randomized SVD converges fast where the spectrum has gaps (the top 5 here) and
        // slowly inside the noise bulk; scikit-learn's TruncatedSVD(8, n_iter=5) on this
        // matrix is off by 1e-5..5e-3 from the exact values for components 5..8 too.
        for (k, (&got, &want)) in lsa.singular_values().iter().zip(&sv).enumerate() {
            let tol = if k < 5 { 1e-4 } else { 1e-2 };
            assert_relative_eq!(got, want, max_relative = tol);
            // Ritz values never exceed the true singular values (up to rounding).
            assert!(got <= want * (1.0 + 1e-6), "k = {k}");
        }
        // The top components span the same directions (up to sign): |<v_k, v_k'>| ~ 1.
        for k in 0..4 {
            let dot: f64 = lsa
                .components()
                .row(k)
                .iter()
                .zip(v.row(k))
                .map(|(&a, &b)| f64::from(a) * b)
                .sum();
            assert_abs_diff_eq!(dot.abs(), 1.0, epsilon = 1e-3);
        }
        // Components are orthonormal.
        let c = lsa.components().mapv(f64::from);
        let cct = c.dot(&c.t());
        for i in 0..8 {
            for j in 0..8 {
                let want = if i == j { 1.0 } else { 0.0 };
                assert_abs_diff_eq!(cct[[i, j]], want, epsilon = 1e-5);
            }
        }
    }

    #[test]
    fn normalize_false_keeps_raw_projection() {
        let a = sklearn_matrix();
        let x = csr_from_dense(&a);
        let (reducer, emb) = ReduceParams::new()
            .dims(4)
            .normalize(false)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        let lsa = lsa_of(&reducer);
        let want = a.dot(&lsa.components().t());
        for (g, w) in emb.iter().zip(want.iter()) {
            assert_abs_diff_eq!(*g, *w, epsilon = 1e-4);
        }
        // X V has column norms equal to the singular values.
        for k in 0..4 {
            let norm = emb
                .column(k)
                .iter()
                .map(|&v| f64::from(v).powi(2))
                .sum::<f64>();
            assert_relative_eq!(norm.sqrt(), lsa.singular_values()[k], max_relative = 1e-4);
        }
    }

    #[test]
    fn rank_deficient_matrix_gives_zero_components() {
        // Rank 2: every row is a combination of two patterns.
        let p = [
            [1.0f32, 0.0, 2.0, 0.0, 1.0, 0.0],
            [0.0, 3.0, 0.0, 1.0, 0.0, 1.0],
        ];
        let a = Array2::from_shape_fn((12, 6), |(i, j)| {
            (i % 3) as f32 * p[0][j] + (i % 4) as f32 * p[1][j]
        });
        let x = csr_from_dense(&a);
        let (reducer, emb) = ReduceParams::new()
            .dims(4)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        let lsa = lsa_of(&reducer);
        let (sv, _) = exact_svd(&x);
        assert_relative_eq!(lsa.singular_values()[0], sv[0], max_relative = 1e-4);
        assert_relative_eq!(lsa.singular_values()[1], sv[1], max_relative = 1e-4);
        assert_eq!(lsa.singular_values()[2], 0.0);
        assert_eq!(lsa.singular_values()[3], 0.0);
        assert!(lsa.components().row(2).iter().all(|&v| v == 0.0));
        assert!(lsa.components().row(3).iter().all(|&v| v == 0.0));
        assert!(emb.iter().all(|v| v.is_finite()));
        assert!(emb.column(3).iter().all(|&v| v == 0.0));
    }

    #[test]
    fn lsa_seed_changes_little() {
        // Different random test matrices converge to the same top singular values.
        let x = topic_matrix(400, 150, 3);
        let fit = |seed| {
            let (r, _) = ReduceParams::new()
                .dims(5)
                .seed(seed)
                .check()
                .unwrap()
                .fit(&x)
                .unwrap();
            lsa_of(&r).singular_values().to_owned()
        };
        let (a, b): (Array1<f64>, Array1<f64>) = (fit(1), fit(2));
        for (x, y) in a.iter().zip(b.iter()) {
            assert_relative_eq!(*x, *y, max_relative = 1e-4);
        }
    }

    /// Mean squared cosine of the principal angles between the spans of the first `k` rows
    /// of `a` and `b` (orthonormal rows): 1 when the spans coincide.
    fn subspace_similarity(a: ArrayView2<f32>, b: ArrayView2<f32>, k: usize) -> f64 {
        let a = a.slice(ndarray::s![..k, ..]).mapv(f64::from);
        let b = b.slice(ndarray::s![..k, ..]).mapv(f64::from);
        a.dot(&b.t()).iter().map(|v| v * v).sum::<f64>() / k as f64
    }

    #[test]
    fn sampled_fit_projects_all_rows_and_tracks_full_fit() {
        let x = topic_matrix(4000, 150, 21);
        let full = ReduceParams::new()
            .dims(6)
            .max_fit_rows(None)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        let sampled_params = ReduceParams::new()
            .dims(6)
            .max_fit_rows(Some(1000))
            .check()
            .unwrap();
        let runs: Vec<(Reducer, Array2<f32>)> = [1, 2]
            .iter()
            .map(|&t| pool(t).install(|| sampled_params.fit(&x).unwrap()))
            .collect();
        assert_eq!(runs[0], runs[1], "sampling must not depend on threads");
        let (reducer, emb) = &runs[0];
        let (lf, ls) = (lsa_of(&full.0), lsa_of(reducer));
        assert_eq!(lf.n_fit_rows(), 4000);
        assert_eq!(ls.n_fit_rows(), 1000);
        assert_eq!(emb.nrows(), 4000);
        assert_eq!(&reducer.transform(&x).unwrap(), emb);
        // Singular values scale with sqrt(rows): the sample's, scaled by sqrt(4000 / 1000),
        // estimate the full matrix's.
        for (s, f) in ls.singular_values().iter().zip(lf.singular_values().iter()) {
            assert_relative_eq!(s * 2.0, *f, max_relative = 0.05);
        }
        // The 6 topic directions are recovered from the sample (measured 0.98; two random
        // 6-dimensional subspaces of R^150 would score about 6 / 150 = 0.04).
        let sim = subspace_similarity(ls.components(), lf.components(), 6);
        assert!(sim > 0.95, "subspace similarity {sim}");
        // The explained variance ratio describes all rows in both cases: the 6 components
        // together explain about the same share.
        let (es, ef) = (
            ls.explained_variance_ratio().sum(),
            lf.explained_variance_ratio().sum(),
        );
        assert_relative_eq!(es, ef, max_relative = 0.03);
    }
}
