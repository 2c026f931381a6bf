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
//! row, exactly like scikit-learn's `TruncatedSVD`. The number of power iterations defaults to
//! 5 (scikit-learn's default) and drops to 3 when more than [`AUTO_N_ITER_SMALL_ROWS`] = 50,000
//! rows are fitted, see [`auto_n_iter`].
//!
//! The stage's files: `params.rs` ([`ReduceMethod`], [`ReduceParams`] -> [`ReduceValidParams`]
//! and the rules on the parameters alone), `error.rs` ([`ReduceError`]: one variant per rule,
//! on the parameters or on the matrix), `reducer.rs` (the fit, which checks the rules on the
//! matrix and runs a method, and the fitted [`Reducer`]), then one file per method (`lsa.rs`,
//! `random_projection.rs`) and `linalg.rs`, the small dense algebra of the randomized SVD.

mod error;
mod linalg;
pub mod lsa;
mod params;
pub mod random_projection;
mod reducer;
#[cfg(test)]
mod testing;

pub use error::{LinalgFailure, ReduceError};
pub use lsa::Lsa;
pub use params::{
    auto_n_iter, dims_for_topics, ReduceMethod, ReduceParams, ReduceValidParams,
    AUTO_N_ITER_SMALL_ROWS, DEFAULT_MAX_FIT_ROWS,
};
pub use random_projection::RandomProjection;
pub use reducer::{Reducer, MAX_DENSE_VALUES};
