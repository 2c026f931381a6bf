//! TF-IDF fitting and transformation; the formulas are scikit-learn's (see the `vectorize`
//! module docs).
//!
//! The parts, in the order a fit runs them: `params.rs` ([`TfIdfParams`] ->
//! [`TfIdfValidParams`], the document-frequency bounds resolved for a corpus, [`TfIdfError`]);
//! `streams.rs` (each document as a stream of candidate feature ids: its terms, n-grams and
//! sub-words); `fit.rs` (counting the candidates, keeping the features within the bounds, their
//! IDF); `weigh.rs` (the rows of the CSR matrix, weighed and normalised, written once into
//! arrays of their final size; shared by the fit and by transform); `fitted.rs` (the fitted
//! [`TfIdf`], its [`Feature`]s, and transforming new documents with them).

mod fit;
mod fitted;
mod params;
mod streams;
#[cfg(test)]
mod tests;
mod weigh;

pub use fitted::{Feature, TfIdf};
pub use params::{DocFreq, Norm, TfIdfError, TfIdfParams, TfIdfValidParams};
