//! Vectorize: term sequences -> a sparse TF-IDF matrix (CSR held in ndarray arrays).
//!
//! scikit-learn's `TfidfVectorizer` formulas and names: `min-df`/`max-df` as a count or a
//! fraction, `max-features` by corpus frequency, smooth IDF `ln((1+n)/(1+df)) + 1`, optional
//! sublinear TF `1 + ln(tf)`, then L2 row normalisation. The matrix stays sparse: a million
//! abstracts times a hundred thousand terms would not fit densely, and only the reduced vectors
//! (see `reduce`) are ever dense. The vocabulary and the IDF vector are kept in [`TfIdf`] so new
//! documents can be vectorized exactly as the training ones were.

pub mod csr;
pub mod tfidf;

pub use csr::CsrMatrix;
pub use tfidf::{DocFreq, Feature, Norm, TfIdf, TfIdfError, TfIdfParams, TfIdfValidParams};
