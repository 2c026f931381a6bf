//! Dimension reduction of the TF-IDF matrix before k-means.
//!
//! Why: k-means on 60,000 sparse TF-IDF dimensions is slow and its Euclidean distances are
//! dominated by noise; projecting onto ~100 dense dimensions first (latent semantic analysis,
//! as in scikit-learn's "clustering text documents" example) is faster and clusters better.
//! Three methods, named in the pipeline file:
//!
//! * `lsa` (default): truncated SVD by the randomized algorithm (see [`lsa`]);
//! * `random-projection`: a very sparse random projection (see [`random_projection`]);
//! * `none`: the TF-IDF rows densified (small corpora only).
//!
//! Rows are then L2-normalised (by default), so that Euclidean k-means on the output behaves
//! like spherical k-means on cosine similarity. The fitted [`Reducer`] is kept in the model: the
//! training embedding returned by [`ReduceValidParams::fit`] is computed by the very same code
//! as [`Reducer::transform`], so re-assigning the training documents reproduces the fit bit for
//! bit, whatever the number of threads.
//!
//! Large inputs: every pass of a sparse product over a million abstracts is slow (it gathers
//! ~100 random rows of the dense operand per document, which is memory-bound), and the
//! randomized SVD needs `2 n_iter + 2` of them. So by default LSA is *fitted* on a seeded
//! random sample of at most [`DEFAULT_MAX_FIT_ROWS`] = 100,000 documents
//! ([`ReduceParams::max_fit_rows`]), and then *all* documents are projected with
//! [`Reducer::transform`] (one pass): the topic subspace of a sample that large matches the
//! full one (measured in the README's scaling section). Up to that size, the fit uses every
//! row, exactly like scikit-learn's `TruncatedSVD`. The number of power iterations defaults to 5 (scikit-learn's default) and
//! drops to 3 when more than [`AUTO_N_ITER_SMALL_ROWS`] = 50,000 rows are fitted, see
//! [`auto_n_iter`].

mod linalg;
pub mod lsa;
pub mod random_projection;

use std::fmt;
use std::str::FromStr;

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use crate::vectorize::csr::CsrMatrix;
pub use lsa::Lsa;
pub use random_projection::RandomProjection;

/// Largest number of values (`n_rows * n_cols`) that method `none` will densify.
pub const MAX_DENSE_VALUES: usize = 2_000_000_000;

/// Up to this many fitted rows, [`auto_n_iter`] runs scikit-learn's `TruncatedSVD` default
/// of 5 power iterations. The same size as the default mini-batch threshold of k-means: the
/// point from which a corpus is treated as large.
pub const AUTO_N_ITER_SMALL_ROWS: usize = 50_000;

/// Default cap on the number of documents LSA is fitted on (see the module docs).
pub const DEFAULT_MAX_FIT_ROWS: usize = 100_000;

/// The reduction method named in the pipeline file: `"none"`, `"lsa"` or
/// `"random-projection"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReduceMethod {
    /// Keep the TF-IDF features, densified.
    None,
    /// Latent semantic analysis (randomized truncated SVD).
    Lsa,
    /// Very sparse random projection.
    RandomProjection,
}

impl fmt::Display for ReduceMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReduceMethod::None => "none",
            ReduceMethod::Lsa => "lsa",
            ReduceMethod::RandomProjection => "random-projection",
        })
    }
}

impl FromStr for ReduceMethod {
    type Err = ReduceError;

    fn from_str(s: &str) -> Result<Self, ReduceError> {
        match s {
            "none" => Ok(ReduceMethod::None),
            "lsa" => Ok(ReduceMethod::Lsa),
            "random-projection" => Ok(ReduceMethod::RandomProjection),
            other => Err(ReduceError::UnknownMethod(other.to_string())),
        }
    }
}

/// Errors of the reduction stage, one variant per rule.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReduceError {
    /// `dims` must be at least 1 (methods `lsa` and `random-projection`).
    #[error("reduce.dims cannot be 0")]
    ZeroDims,
    /// `max_fit_rows`, when set, must be at least 1.
    #[error("max_fit_rows cannot be 0")]
    ZeroMaxFitRows,
    /// The method name is not one of the three known ones.
    #[error("unknown reduction method {0:?}: expected \"none\", \"lsa\" or \"random-projection\"")]
    UnknownMethod(String),
    /// The matrix has no rows, no columns or no stored entries.
    #[error(
        "cannot reduce an empty matrix ({n_rows} rows x {n_cols} columns, {nnz} stored entries)"
    )]
    EmptyMatrix {
        /// Rows of the matrix.
        n_rows: usize,
        /// Columns of the matrix.
        n_cols: usize,
        /// Stored entries of the matrix.
        nnz: usize,
    },
    /// LSA needs `dims < min(fitted rows, n_cols)`.
    #[error(
        "lsa: dims ({dims}) must be smaller than min(documents, terms) = min({n_rows}, {n_cols}); \
         use dims <= {}", n_rows.min(n_cols).saturating_sub(1)
    )]
    DimsTooLarge {
        /// Requested dimensions.
        dims: usize,
        /// Rows (documents) the fit would use (at most `max_fit_rows`).
        n_rows: usize,
        /// Columns (terms) of the matrix.
        n_cols: usize,
    },
    /// With `cap_dims`, a matrix too small to keep even one dimension.
    #[error(
        "{method}: the corpus is too small to reduce ({} and {}; at least 2 of each are needed): \
         add documents, lower tokenize.min-df, or set reduce.method = \"none\"",
        count(*n_rows, "document"), count(*n_cols, "term")
    )]
    TooSmall {
        /// The method.
        method: ReduceMethod,
        /// Rows (documents) the fit would use.
        n_rows: usize,
        /// Columns (terms) of the matrix.
        n_cols: usize,
    },
    /// Random projection needs `dims < n_cols` (otherwise it cannot reduce anything).
    #[error(
        "random-projection: dims ({dims}) must be smaller than the number of terms ({n_cols}); \
         use dims <= {}", n_cols.saturating_sub(1)
    )]
    DimsNotBelowFeatures {
        /// Requested dimensions.
        dims: usize,
        /// Columns (terms) of the matrix.
        n_cols: usize,
    },
    /// Method `none` densifies; refuse beyond [`MAX_DENSE_VALUES`] values.
    #[error(
        "method none would densify {n_rows} x {n_cols} values, more than {MAX_DENSE_VALUES}; \
         use method lsa"
    )]
    TooLargeToDensify {
        /// Rows of the matrix.
        n_rows: usize,
        /// Columns of the matrix.
        n_cols: usize,
    },
    /// A matrix to transform must have the number of features the reducer was fitted on.
    #[error("the reducer was fitted on {expected} terms but the matrix has {found}")]
    FeatureMismatch {
        /// Features at fit time.
        expected: usize,
        /// Features of the matrix given to transform.
        found: usize,
    },
    /// The computation overflowed `f32` (values far too large).
    #[error("reduction produced non-finite values: the matrix values are too large")]
    NonFinite,
    /// The small dense eigendecomposition failed.
    #[error("eigendecomposition failed")]
    Linalg(#[source] LinalgFailure),
}

/// A linfa-linalg error, shared so that [`ReduceError`] stays `Clone` and comparable (two
/// failures are equal when they say the same).
#[derive(Debug, Clone)]
pub struct LinalgFailure(pub std::sync::Arc<linfa_linalg::LinalgError>);

impl fmt::Display for LinalgFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for LinalgFailure {}

impl PartialEq for LinalgFailure {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

impl From<linfa_linalg::LinalgError> for ReduceError {
    fn from(e: linfa_linalg::LinalgError) -> Self {
        ReduceError::Linalg(LinalgFailure(std::sync::Arc::new(e)))
    }
}

/// "1 document", "2 documents".
fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Number of LSA power iterations used when [`ReduceParams::n_iter`] is not set, given the
/// number of fitted rows: 5 (as scikit-learn's `TruncatedSVD`) up to
/// [`AUTO_N_ITER_SMALL_ROWS`] rows, else 3. Each iteration is two memory-bound passes over the
/// sparse matrix; the top singular values converge within a couple of iterations, only the
/// weakest of the `dims` components keep moving, and clustering does not notice them (the
/// measurement is in the README's speed section).
pub fn auto_n_iter(n_rows: usize) -> usize {
    if n_rows <= AUTO_N_ITER_SMALL_ROWS {
        5
    } else {
        3
    }
}

/// The default dimensions for `k` topics: five per topic, within 20..=100. Few topics are
/// separated by few directions, and every extra direction adds noise to k-means; scikit-learn's
/// example uses 100 whatever k is.
pub fn dims_for_topics(k: usize) -> usize {
    (5 * k).clamp(20, 100)
}

/// Parameters of the reduction stage (builder; see [`ReduceParams::new`] for defaults).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReduceParams {
    method: ReduceMethod,
    dims: usize,
    n_iter: Option<usize>,
    n_oversamples: usize,
    seed: u64,
    normalize: bool,
    max_fit_rows: Option<usize>,
    cap_dims: bool,
}

impl Default for ReduceParams {
    fn default() -> Self {
        Self::new()
    }
}

impl ReduceParams {
    /// Defaults: method `lsa`, `dims` 100, `n_iter` unset (= [`auto_n_iter`]: 5 power
    /// iterations up to 50,000 fitted documents, 3 above), `n_oversamples` 10 (as
    /// scikit-learn), `seed` 42, `normalize` true (L2-normalise output rows), `max_fit_rows`
    /// `Some(100_000)` ([`DEFAULT_MAX_FIT_ROWS`]), `cap_dims` false.
    pub fn new() -> Self {
        ReduceParams {
            method: ReduceMethod::Lsa,
            dims: 100,
            n_iter: None,
            n_oversamples: 10,
            seed: 42,
            normalize: true,
            max_fit_rows: Some(DEFAULT_MAX_FIT_ROWS),
            cap_dims: false,
        }
    }

    /// Lower `dims` to what the matrix can give (below `min(fitted rows, terms)` for LSA, below
    /// the terms for random projection) instead of failing: a 26-abstract list still gets a
    /// reduction when 100 dimensions were asked for. Default false (the rule is an error).
    pub fn cap_dims(mut self, cap: bool) -> Self {
        self.cap_dims = cap;
        self
    }

    /// Reduction method (default `lsa`).
    pub fn method(mut self, method: ReduceMethod) -> Self {
        self.method = method;
        self
    }

    /// Output dimensions for `lsa` and `random-projection` (default 100; ignored by `none`).
    pub fn dims(mut self, dims: usize) -> Self {
        self.dims = dims;
        self
    }

    /// LSA power iterations; `None` (default) picks [`auto_n_iter`] from the number of rows.
    pub fn n_iter(mut self, n_iter: Option<usize>) -> Self {
        self.n_iter = n_iter;
        self
    }

    /// Extra random directions of the LSA range finder (default 10).
    pub fn n_oversamples(mut self, n_oversamples: usize) -> Self {
        self.n_oversamples = n_oversamples;
        self
    }

    /// Seed of the random test matrix (LSA) or projection (default 42).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// L2-normalise output rows (default true); all-zero rows stay zero.
    pub fn normalize(mut self, normalize: bool) -> Self {
        self.normalize = normalize;
        self
    }

    /// LSA only: fit on a seeded random sample of at most this many documents (default
    /// `Some(100_000)`); `None` fits on every document. The returned embedding always covers
    /// all documents.
    pub fn max_fit_rows(mut self, max_fit_rows: Option<usize>) -> Self {
        self.max_fit_rows = max_fit_rows;
        self
    }

    /// Validates the parameters that do not depend on the data: `dims >= 1` unless the method
    /// is `none`; `max_fit_rows`, if set, `>= 1`. Rules that depend on the matrix are checked
    /// by [`ReduceValidParams::fit`].
    pub fn check(self) -> Result<ReduceValidParams, ReduceError> {
        if self.dims == 0 && self.method != ReduceMethod::None {
            return Err(ReduceError::ZeroDims);
        }
        if self.max_fit_rows == Some(0) {
            return Err(ReduceError::ZeroMaxFitRows);
        }
        Ok(ReduceValidParams(self))
    }
}

/// Checked reduction parameters, ready to [`fit`](ReduceValidParams::fit). Serialized into
/// `run.json` as the pipeline's `reduce` settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ReduceValidParams(ReduceParams);

impl ReduceValidParams {
    /// Reduction method.
    pub fn method(&self) -> ReduceMethod {
        self.0.method
    }

    /// Requested output dimensions.
    pub fn dims(&self) -> usize {
        self.0.dims
    }

    /// Requested power iterations (`None` = [`auto_n_iter`]).
    pub fn n_iter(&self) -> Option<usize> {
        self.0.n_iter
    }

    /// Oversampling of the range finder.
    pub fn n_oversamples(&self) -> usize {
        self.0.n_oversamples
    }

    /// Random seed.
    pub fn seed(&self) -> u64 {
        self.0.seed
    }

    /// Whether output rows are L2-normalised.
    pub fn normalize(&self) -> bool {
        self.0.normalize
    }

    /// Cap on the documents LSA is fitted on (`None`: all).
    pub fn max_fit_rows(&self) -> Option<usize> {
        self.0.max_fit_rows
    }

    /// Fits the reduction on `x` (documents x terms) and returns it with the embedding of the
    /// rows of `x` (`n_rows x dims`), which is bit-identical to `reducer.transform(x)`.
    ///
    /// LSA is fitted on all rows, or on a seeded random sample of `max_fit_rows` of them when
    /// there are more (the singular values then are the sample's; the explained variance
    /// ratio always describes all rows).
    ///
    /// Errors, never clamps: an empty matrix; `lsa` with `dims >= min(fitted rows, n_cols)`;
    /// `random-projection` with `dims >= n_cols`; `none` beyond [`MAX_DENSE_VALUES`] values.
    /// The caller decides whether to retry with a smaller `dims`.
    pub fn fit(&self, x: &CsrMatrix) -> Result<(Reducer, Array2<f32>), ReduceError> {
        let p = &self.0;
        let (n, m) = (x.n_rows(), x.n_cols());
        if n == 0 || m == 0 || x.nnz() == 0 {
            return Err(ReduceError::EmptyMatrix {
                n_rows: n,
                n_cols: m,
                nnz: x.nnz(),
            });
        }
        let mut reducer = match p.method {
            ReduceMethod::None => {
                check_densify(n, m)?;
                Reducer::Identity {
                    n_features: m,
                    normalize: p.normalize,
                }
            }
            ReduceMethod::Lsa => {
                let fit_rows = p.max_fit_rows.map_or(n, |cap| cap.min(n));
                let dims = self.capped(fit_rows.min(m), fit_rows, m)?;
                if dims >= fit_rows.min(m) {
                    return Err(ReduceError::DimsTooLarge {
                        dims,
                        n_rows: fit_rows,
                        n_cols: m,
                    });
                }
                let sample;
                let fit_x = if fit_rows < n {
                    sample = x.select_rows(&sample_rows(n, fit_rows, p.seed));
                    if sample.nnz() == 0 {
                        return Err(ReduceError::EmptyMatrix {
                            n_rows: fit_rows,
                            n_cols: m,
                            nnz: 0,
                        });
                    }
                    &sample
                } else {
                    x
                };
                let n_iter = p.n_iter.unwrap_or_else(|| auto_n_iter(fit_rows));
                Reducer::Lsa(lsa::fit_lsa(
                    fit_x,
                    dims,
                    n_iter,
                    p.n_oversamples,
                    p.seed,
                    p.normalize,
                )?)
            }
            ReduceMethod::RandomProjection => {
                let dims = self.capped(m, n, m)?;
                // dims < n_cols also keeps output dimensions within u32.
                if dims >= m || dims > u32::MAX as usize {
                    return Err(ReduceError::DimsNotBelowFeatures { dims, n_cols: m });
                }
                Reducer::RandomProjection(RandomProjection::generate(m, dims, p.seed, p.normalize))
            }
        };
        let mut embedding = reducer.project(x)?;
        if let Reducer::Lsa(lsa) = &mut reducer {
            // Over all documents, also when the fit used a sample.
            lsa.set_explained_variance(x, embedding.view());
        }
        reducer.finish(&mut embedding);
        Ok((reducer, embedding))
    }
}

impl ReduceValidParams {
    /// The dimensions to fit: `dims`, or with `cap_dims` at most `limit - 1`.
    fn capped(&self, limit: usize, n_rows: usize, n_cols: usize) -> Result<usize, ReduceError> {
        let p = &self.0;
        if !p.cap_dims {
            return Ok(p.dims);
        }
        match p.dims.min(limit.saturating_sub(1)) {
            0 => Err(ReduceError::TooSmall {
                method: p.method,
                n_rows,
                n_cols,
            }),
            dims => Ok(dims),
        }
    }
}

/// `k` distinct row indices out of `0..n`, drawn with a seeded `Xoshiro256Plus`, ascending.
fn sample_rows(n: usize, k: usize, seed: u64) -> Vec<usize> {
    use rand::SeedableRng;
    // A stream distinct from the one that draws the Gaussian test matrix.
    let mut rng = rand_xoshiro::Xoshiro256Plus::seed_from_u64(seed ^ 0x5A4D_504C_4520_524F);
    let mut rows = rand::seq::index::sample(&mut rng, n, k).into_vec();
    rows.sort_unstable();
    rows
}

/// Errors if densifying `n x m` values would exceed [`MAX_DENSE_VALUES`].
fn check_densify(n: usize, m: usize) -> Result<(), ReduceError> {
    match n.checked_mul(m) {
        Some(v) if v <= MAX_DENSE_VALUES => Ok(()),
        _ => Err(ReduceError::TooLargeToDensify {
            n_rows: n,
            n_cols: m,
        }),
    }
}

/// A fitted reduction, kept as part of the fitted model so that new documents are projected
/// exactly as the training documents were.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reducer {
    /// Method `none`: the TF-IDF rows, densified.
    Identity {
        /// Number of features (= output dimensions).
        n_features: usize,
        /// Whether output rows are L2-normalised.
        normalize: bool,
    },
    /// Method `lsa`.
    Lsa(Lsa),
    /// Method `random-projection`.
    RandomProjection(RandomProjection),
}

impl Reducer {
    /// Projects the rows of `x` (same terms as at fit time) to `n_rows x dims()`, then
    /// L2-normalises them if the reducer was fitted with `normalize` (all-zero rows stay zero).
    /// Row by row, so a document's embedding does not depend on the other rows of `x`.
    pub fn transform(&self, x: &CsrMatrix) -> Result<Array2<f32>, ReduceError> {
        let mut out = self.project(x)?;
        self.finish(&mut out);
        Ok(out)
    }

    /// Each input feature's vector in the reduced space, weighted by the singular values
    /// (`V Σ`, `n_features x dims`): LSA's term vectors, whose cosines say which terms occur
    /// together. `None` for the other methods, whose directions carry no such meaning.
    pub fn term_vectors(&self) -> Option<Array2<f32>> {
        match self {
            Reducer::Lsa(l) => {
                let mut v = l.components().t().to_owned();
                for (mut col, &s) in v.columns_mut().into_iter().zip(l.singular_values()) {
                    col *= s as f32;
                }
                Some(v)
            }
            _ => None,
        }
    }

    /// Number of output dimensions.
    pub fn dims(&self) -> usize {
        match self {
            Reducer::Identity { n_features, .. } => *n_features,
            Reducer::Lsa(l) => l.dims(),
            Reducer::RandomProjection(p) => p.dims(),
        }
    }

    /// Number of input features (terms) the reducer was fitted on.
    pub fn n_features(&self) -> usize {
        match self {
            Reducer::Identity { n_features, .. } => *n_features,
            Reducer::Lsa(l) => l.n_features(),
            Reducer::RandomProjection(p) => p.n_features(),
        }
    }

    /// The method this reducer implements.
    pub fn method(&self) -> ReduceMethod {
        match self {
            Reducer::Identity { .. } => ReduceMethod::None,
            Reducer::Lsa(_) => ReduceMethod::Lsa,
            Reducer::RandomProjection(_) => ReduceMethod::RandomProjection,
        }
    }

    /// Whether output rows are L2-normalised.
    pub fn normalize(&self) -> bool {
        match self {
            Reducer::Identity { normalize, .. } => *normalize,
            Reducer::Lsa(l) => l.normalize(),
            Reducer::RandomProjection(p) => p.normalize(),
        }
    }

    /// The projection without normalisation (shared by fit and transform).
    fn project(&self, x: &CsrMatrix) -> Result<Array2<f32>, ReduceError> {
        if x.n_cols() != self.n_features() {
            return Err(ReduceError::FeatureMismatch {
                expected: self.n_features(),
                found: x.n_cols(),
            });
        }
        let out = match self {
            Reducer::Identity { .. } => {
                check_densify(x.n_rows(), x.n_cols())?;
                x.to_dense()
            }
            Reducer::Lsa(l) => l.project(x),
            Reducer::RandomProjection(p) => p.project(x),
        };
        if !linalg::all_finite(out.view()) {
            return Err(ReduceError::NonFinite);
        }
        Ok(out)
    }

    /// Post-processing shared by fit and transform.
    fn finish(&self, out: &mut Array2<f32>) {
        if self.normalize() {
            crate::norm::unit_rows_f64(out.view_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::{assert_abs_diff_eq, assert_relative_eq};
    use linfa_linalg::eigh::Eigh;
    use ndarray::{Array1, ArrayView2, Axis};
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256Plus;

    fn csr_from_dense(a: &Array2<f32>) -> CsrMatrix {
        let (mut indptr, mut indices, mut data) = (vec![0], vec![], vec![]);
        for row in a.outer_iter() {
            for (j, &v) in row.iter().enumerate() {
                if v != 0.0 {
                    indices.push(j as u32);
                    data.push(v);
                }
            }
            indptr.push(indices.len());
        }
        CsrMatrix::new(a.ncols(), indptr, indices, data).unwrap()
    }

    /// The 40 x 30 test matrix of the scikit-learn comparison; in Python:
    /// `A[i, j] = 0.2 + ((i*13 + j*29) % 19) / 19 if (i*31 + j*17 + i*j*7) % 23 < 8 else 0`,
    /// computed in float64 then cast to float32 (405 entries, 2 empty rows, 1 empty column).
    fn sklearn_matrix() -> Array2<f32> {
        Array2::from_shape_fn((40, 30), |(i, j)| {
            if (i * 31 + j * 17 + i * j * 7) % 23 < 8 {
                (0.2 + ((i * 13 + j * 29) % 19) as f64 / 19.0) as f32
            } else {
                0.0
            }
        })
    }

    /// A sparse `n x m` matrix with a decaying spectrum: a few "topics" plus noise.
    fn topic_matrix(n: usize, m: usize, seed: u64) -> CsrMatrix {
        let mut rng = Xoshiro256Plus::seed_from_u64(seed);
        let a = Array2::from_shape_fn((n, m), |(i, j)| {
            let topic = i % 6;
            let p = if j % 6 == topic { 0.5 } else { 0.05 };
            if rng.gen::<f64>() < p {
                rng.gen_range(0.1f32..1.0) * (1.0 + (topic as f32) * 0.3)
            } else {
                0.0
            }
        });
        csr_from_dense(&a)
    }

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

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    #[test]
    fn defaults_and_builder() {
        let p = ReduceParams::new().check().unwrap();
        assert_eq!(p.method(), ReduceMethod::Lsa);
        assert_eq!(p.dims(), 100);
        assert_eq!(p.n_iter(), None);
        assert_eq!(p.n_oversamples(), 10);
        assert_eq!(p.seed(), 42);
        assert!(p.normalize());
        assert_eq!(p.max_fit_rows(), Some(100_000));
        let p = ReduceParams::default()
            .method(ReduceMethod::RandomProjection)
            .dims(7)
            .n_iter(Some(2))
            .n_oversamples(3)
            .seed(9)
            .normalize(false)
            .max_fit_rows(None)
            .check()
            .unwrap();
        assert_eq!(p.max_fit_rows(), None);
        assert_eq!(
            (
                p.method(),
                p.dims(),
                p.n_iter(),
                p.n_oversamples(),
                p.seed()
            ),
            (ReduceMethod::RandomProjection, 7, Some(2), 3, 9)
        );
        assert!(!p.normalize());
        assert_eq!(auto_n_iter(1_000), 5);
        assert_eq!(auto_n_iter(AUTO_N_ITER_SMALL_ROWS + 1), 3);
    }

    #[test]
    fn method_names_parse_and_serialize() {
        for (name, m) in [
            ("none", ReduceMethod::None),
            ("lsa", ReduceMethod::Lsa),
            ("random-projection", ReduceMethod::RandomProjection),
        ] {
            assert_eq!(name.parse::<ReduceMethod>().unwrap(), m);
            assert_eq!(m.to_string(), name);
            assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{name}\""));
            assert_eq!(
                serde_json::from_str::<ReduceMethod>(&format!("\"{name}\"")).unwrap(),
                m
            );
        }
        assert_eq!(
            "lsä".parse::<ReduceMethod>(),
            Err(ReduceError::UnknownMethod("lsä".to_string()))
        );
        assert!(serde_json::from_str::<ReduceMethod>("\"Lsa\"").is_err());
    }

    #[test]
    fn capped_dims_fit_a_small_corpus_and_a_tiny_one_says_what_to_change() {
        // 3 documents x 4 terms: LSA can keep at most 2 dimensions.
        let x = csr_from_dense(&ndarray::array![
            [1.0f32, 0.0, 0.5, 0.0],
            [0.0, 1.0, 0.0, 0.5],
            [0.5, 0.5, 1.0, 1.0]
        ]);
        let p = ReduceParams::new()
            .dims(100)
            .cap_dims(true)
            .check()
            .unwrap();
        let (r, emb) = p.fit(&x).unwrap();
        assert_eq!((r.dims(), emb.ncols()), (2, 2));
        assert!(matches!(
            ReduceParams::new().dims(100).check().unwrap().fit(&x),
            Err(ReduceError::DimsTooLarge { .. })
        ));
        let one = csr_from_dense(&ndarray::array![[1.0f32, 0.5, 0.0]]);
        let e = p.fit(&one).unwrap_err();
        assert!(
            matches!(
                e,
                ReduceError::TooSmall {
                    n_rows: 1,
                    n_cols: 3,
                    ..
                }
            ),
            "{e}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("reduce.method") && !msg.contains("<= 0"),
            "{msg}"
        );
    }

    #[test]
    fn parameter_and_data_errors() {
        assert_eq!(
            ReduceParams::new().dims(0).check(),
            Err(ReduceError::ZeroDims)
        );
        assert_eq!(ReduceError::ZeroDims.to_string(), "reduce.dims cannot be 0");
        assert_eq!(
            ReduceParams::new().max_fit_rows(Some(0)).check(),
            Err(ReduceError::ZeroMaxFitRows)
        );
        // dims is irrelevant for `none`.
        assert!(ReduceParams::new()
            .method(ReduceMethod::None)
            .dims(0)
            .check()
            .is_ok());

        let x = csr_from_dense(&sklearn_matrix());
        let err = ReduceParams::new()
            .dims(30)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap_err();
        assert_eq!(
            err,
            ReduceError::DimsTooLarge {
                dims: 30,
                n_rows: 40,
                n_cols: 30
            }
        );
        assert!(err.to_string().contains("use dims <= 29"), "{err}");
        // With a sample, the rule applies to the sampled rows.
        assert_eq!(
            ReduceParams::new()
                .dims(6)
                .max_fit_rows(Some(6))
                .check()
                .unwrap()
                .fit(&x)
                .unwrap_err(),
            ReduceError::DimsTooLarge {
                dims: 6,
                n_rows: 6,
                n_cols: 30
            }
        );
        let err = ReduceParams::new()
            .method(ReduceMethod::RandomProjection)
            .dims(30)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap_err();
        assert_eq!(
            err,
            ReduceError::DimsNotBelowFeatures {
                dims: 30,
                n_cols: 30
            }
        );

        let p = ReduceParams::new().dims(2).check().unwrap();
        let no_entries = CsrMatrix::new(5, vec![0, 0, 0], vec![], vec![]).unwrap();
        assert_eq!(
            p.fit(&no_entries).unwrap_err(),
            ReduceError::EmptyMatrix {
                n_rows: 2,
                n_cols: 5,
                nnz: 0
            }
        );
        let no_rows = CsrMatrix::new(5, vec![0], vec![], vec![]).unwrap();
        assert!(matches!(
            p.fit(&no_rows),
            Err(ReduceError::EmptyMatrix { n_rows: 0, .. })
        ));

        // 2 rows x 1.5e9 columns would be 3e9 dense values: refused before allocating.
        let wide = CsrMatrix::new(1_500_000_000, vec![0, 1, 1], vec![7], vec![1.0]).unwrap();
        let err = ReduceParams::new()
            .method(ReduceMethod::None)
            .check()
            .unwrap()
            .fit(&wide)
            .unwrap_err();
        assert_eq!(
            err,
            ReduceError::TooLargeToDensify {
                n_rows: 2,
                n_cols: 1_500_000_000
            }
        );
        assert!(err.to_string().contains("use method lsa"));

        // Transform with a different vocabulary size.
        let (reducer, _) = p.fit(&x).unwrap();
        let other = CsrMatrix::new(31, vec![0, 1], vec![3], vec![1.0]).unwrap();
        assert_eq!(
            reducer.transform(&other).unwrap_err(),
            ReduceError::FeatureMismatch {
                expected: 30,
                found: 31
            }
        );
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
    fn fit_embedding_equals_transform_and_is_normalised() {
        let x = csr_from_dense(&sklearn_matrix());
        for method in [
            ReduceMethod::Lsa,
            ReduceMethod::RandomProjection,
            ReduceMethod::None,
        ] {
            let (reducer, emb) = ReduceParams::new()
                .method(method)
                .dims(6)
                .check()
                .unwrap()
                .fit(&x)
                .unwrap();
            assert_eq!(reducer.method(), method);
            assert_eq!(emb.dim(), (40, reducer.dims()));
            assert_eq!(reducer.transform(&x).unwrap(), emb, "{method}");
            // Subsets are projected row by row: same values as in the full matrix.
            let sub = x.select_rows(&[5, 0, 39]);
            let sub_emb = reducer.transform(&sub).unwrap();
            for (k, &r) in [5usize, 0, 39].iter().enumerate() {
                assert_eq!(sub_emb.row(k), emb.row(r));
            }
            for (i, row) in emb.axis_iter(Axis(0)).enumerate() {
                let norm: f64 = row.iter().map(|&v| f64::from(v).powi(2)).sum();
                if x.row(i).0.is_empty() {
                    assert!(row.iter().all(|&v| v == 0.0), "{method} row {i}");
                } else {
                    assert_abs_diff_eq!(norm, 1.0, epsilon = 1e-5);
                }
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
    fn identity_densifies() {
        let a = sklearn_matrix();
        let x = csr_from_dense(&a);
        let (reducer, emb) = ReduceParams::new()
            .method(ReduceMethod::None)
            .normalize(false)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        assert_eq!(reducer.dims(), 30);
        assert_eq!(emb, a);
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
    fn deterministic_for_seed_and_thread_count() {
        let x = topic_matrix(3000, 200, 5);
        for method in [ReduceMethod::Lsa, ReduceMethod::RandomProjection] {
            let p = ReduceParams::new().method(method).dims(10).check().unwrap();
            let runs: Vec<(Reducer, Array2<f32>)> = [1, 2, 3]
                .iter()
                .map(|&t| pool(t).install(|| p.fit(&x).unwrap()))
                .collect();
            for r in &runs[1..] {
                assert_eq!(r.0, runs[0].0, "{method}");
                assert_eq!(r.1, runs[0].1, "{method}");
            }
            let other = ReduceParams::new()
                .method(method)
                .dims(10)
                .seed(43)
                .check()
                .unwrap()
                .fit(&x)
                .unwrap();
            assert_ne!(other.1, runs[0].1, "{method}: the seed must matter");
        }
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

    #[test]
    fn serde_round_trip_transforms_identically() {
        let x = topic_matrix(200, 80, 9);
        for method in [
            ReduceMethod::Lsa,
            ReduceMethod::RandomProjection,
            ReduceMethod::None,
        ] {
            let (reducer, emb) = ReduceParams::new()
                .method(method)
                .dims(6)
                .check()
                .unwrap()
                .fit(&x)
                .unwrap();
            let json = serde_json::to_string(&reducer).unwrap();
            let back: Reducer = serde_json::from_str(&json).unwrap();
            assert_eq!(back, reducer);
            assert_eq!(back.transform(&x).unwrap(), emb);
        }
        // Corrupted files are errors, not panics.
        let (reducer, _) = ReduceParams::new()
            .dims(3)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        let mut v: serde_json::Value = serde_json::to_value(&reducer).unwrap();
        v["lsa"]["components"].as_array_mut().unwrap().pop();
        assert!(serde_json::from_value::<Reducer>(v).is_err());
        let (rp, _) = ReduceParams::new()
            .method(ReduceMethod::RandomProjection)
            .dims(3)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        let mut v: serde_json::Value = serde_json::to_value(&rp).unwrap();
        v["random-projection"]["targets"][0] = serde_json::json!(3);
        assert!(serde_json::from_value::<Reducer>(v).is_err());
    }

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
