//! The reduction stage's errors: one enum, [`ReduceError`], with a variant per rule, whether
//! the rule is checked on the parameters alone ([`super::ReduceParams::check`]) or on the
//! matrix ([`super::ReduceValidParams::fit`]), so the pipeline converts a single type.
//!
//! Why one enum for both: the caller (`config`, the pipeline) handles the stage's failures
//! alike, and the messages name the pipeline key to change either way. The eigendecomposition's
//! own error is wrapped in [`LinalgFailure`] so that [`ReduceError`] stays `Clone` and
//! comparable in tests.

use std::fmt;

use super::{ReduceMethod, MAX_DENSE_VALUES};

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
