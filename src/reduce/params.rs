//! The reduction stage's parameters, linfa style: [`ReduceParams`] is the builder (every
//! default in [`ReduceParams::new`]), [`ReduceParams::check`] applies the rules that do not
//! depend on the data and yields [`ReduceValidParams`], whose `fit` (in `reducer.rs`) checks
//! the rest against the matrix. Also the method's name ([`ReduceMethod`]) and the defaults
//! that depend on the corpus: the power iterations ([`auto_n_iter`]) and the dimensions for
//! `k` topics ([`dims_for_topics`]).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::ReduceError;

/// Up to this many fitted rows, [`auto_n_iter`] runs scikit-learn's `TruncatedSVD` default
/// of 5 power iterations. The same size as the default mini-batch threshold of k-means: the
/// point from which a corpus is treated as large.
pub const AUTO_N_ITER_SMALL_ROWS: usize = 50_000;

/// Default cap on the number of documents LSA is fitted on (see the `reduce` module docs).
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

    /// The dimensions to fit: `dims`, or with `cap_dims` at most `limit - 1`.
    pub(super) fn capped(
        &self,
        limit: usize,
        n_rows: usize,
        n_cols: usize,
    ) -> Result<usize, ReduceError> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
