//! The TF-IDF parameters, linfa style: [`TfIdfParams`] is the builder (defaults in
//! [`TfIdfParams::new`]), [`TfIdfParams::check`] applies the rules that do not depend on the
//! corpus and yields [`TfIdfValidParams`]; the document-frequency bounds, which do, are
//! resolved here for a corpus's size when the fit starts. One [`TfIdfError`] variant per rule,
//! each naming the pipeline key to change.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A document-frequency bound: an integer count or a fraction in [0, 1] (scikit-learn's meaning).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum DocFreq {
    Count(u64),
    Fraction(f64),
}

impl fmt::Display for DocFreq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocFreq::Count(c) => write!(f, "{c}"),
            DocFreq::Fraction(x) => write!(f, "{x}"),
        }
    }
}

/// Row normalisation of TF-IDF vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Norm {
    L2,
    L1,
    None,
}

impl Norm {
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "l2" => Some(Self::L2),
            "l1" => Some(Self::L1),
            "none" => Some(Self::None),
            _ => None,
        }
    }
}

impl fmt::Display for Norm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::L2 => "l2",
            Self::L1 => "l1",
            Self::None => "none",
        })
    }
}

/// TF-IDF parameters, linfa style: a builder ([`TfIdfParams::new`] holds the defaults) whose
/// [`TfIdfParams::check`] yields the [`TfIdfValidParams`] that [`TfIdfValidParams::fit`] runs.
#[derive(Debug, Clone, PartialEq)]
pub struct TfIdfParams(TfIdfValidParams);

/// Checked TF-IDF parameters (serialized into `run.json` as the pipeline's `tfidf` settings).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TfIdfValidParams {
    min_df: Option<DocFreq>,
    max_df: DocFreq,
    pub(super) max_features: Option<usize>,
    pub(super) ngram_range: [usize; 2],
    pub(super) sublinear_tf: bool,
    pub(super) smooth_idf: bool,
    pub(super) norm: Norm,
}

/// Rule violations, one variant per rule.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TfIdfError {
    #[error("min-df = {min} is larger than the corpus ({docs} documents): lower tokenize.min-df")]
    MinDfTooLarge { min: u64, docs: usize },
    #[error("on {docs} document(s), tokenize.max-df keeps terms found in at most {max} and tokenize.min-df asks for at least {min}: raise max-df (1.0 keeps every term), lower min-df, or add documents")]
    MaxBelowMin { max: usize, min: usize, docs: usize },
    #[error("no terms are left after tokenize.min-df = {min_df} and tokenize.max-df = {max_df} on {docs} documents: lower min-df or raise max-df")]
    NoTerms {
        min_df: usize,
        max_df: usize,
        docs: usize,
    },
    #[error("tokenize.ngram-range must be [min, max] with 1 <= min <= max <= 3")]
    BadNgramRange,
    #[error("tokenize.min-df = {0}: a fraction must be within 0.0 ..= 1.0 (or give a whole document count)")]
    MinDfFraction(f64),
    #[error("tokenize.max-df = {0}: a fraction must be within 0.0 ..= 1.0 (or give a whole document count)")]
    MaxDfFraction(f64),
    #[error("tokenize.max-features cannot be 0")]
    ZeroMaxFeatures,
    #[error("the corpus has no documents")]
    NoDocuments,
}

impl Default for TfIdfParams {
    fn default() -> Self {
        Self::new()
    }
}

impl TfIdfParams {
    /// Defaults: automatic `min_df` (see [`TfIdfValidParams::effective_min_df`]), `max_df` 0.5,
    /// no `max_features`, unigrams, sublinear TF on, smooth IDF on, L2 norm.
    pub fn new() -> Self {
        TfIdfParams(TfIdfValidParams {
            min_df: None,
            max_df: DocFreq::Fraction(0.5),
            max_features: None,
            ngram_range: [1, 1],
            sublinear_tf: true,
            smooth_idf: true,
            norm: Norm::L2,
        })
    }
    pub fn min_df(mut self, v: Option<DocFreq>) -> Self {
        self.0.min_df = v;
        self
    }
    pub fn max_df(mut self, v: DocFreq) -> Self {
        self.0.max_df = v;
        self
    }
    pub fn max_features(mut self, v: Option<usize>) -> Self {
        self.0.max_features = v;
        self
    }
    pub fn ngram_range(mut self, v: [usize; 2]) -> Self {
        self.0.ngram_range = v;
        self
    }
    pub fn sublinear_tf(mut self, v: bool) -> Self {
        self.0.sublinear_tf = v;
        self
    }
    pub fn smooth_idf(mut self, v: bool) -> Self {
        self.0.smooth_idf = v;
        self
    }
    pub fn norm(mut self, v: Norm) -> Self {
        self.0.norm = v;
        self
    }

    /// Checks the rules that do not depend on the corpus (those that do are checked by
    /// [`TfIdfValidParams::fit`]).
    pub fn check(self) -> Result<TfIdfValidParams, TfIdfError> {
        let p = self.0;
        let [lo, hi] = p.ngram_range;
        if lo == 0 || lo > hi || hi > 3 {
            return Err(TfIdfError::BadNgramRange);
        }
        if let Some(DocFreq::Fraction(f)) = p.min_df {
            if !(0.0..=1.0).contains(&f) {
                return Err(TfIdfError::MinDfFraction(f));
            }
        }
        if let DocFreq::Fraction(f) = p.max_df {
            if !(0.0..=1.0).contains(&f) {
                return Err(TfIdfError::MaxDfFraction(f));
            }
        }
        if p.max_features == Some(0) {
            return Err(TfIdfError::ZeroMaxFeatures);
        }
        Ok(p)
    }
}

impl TfIdfValidParams {
    /// The n-gram range, sublinear flag, smooth flag and norm (what a saved model must keep).
    pub fn weighting(&self) -> ([usize; 2], bool, bool, Norm) {
        (
            self.ngram_range,
            self.sublinear_tf,
            self.smooth_idf,
            self.norm,
        )
    }

    /// The automatic minimum document frequency: 1 below 20 documents, 2 below 500, else 5
    /// (scikit-learn's text-clustering example uses 5).
    pub fn effective_min_df(&self, n_docs: usize) -> usize {
        match self.min_df {
            Some(DocFreq::Count(c)) => c as usize,
            Some(DocFreq::Fraction(f)) => (f * n_docs as f64).ceil() as usize,
            None if n_docs < 20 => 1,
            None if n_docs < 500 => 2,
            None => 5,
        }
    }

    fn effective_max_df(&self, n_docs: usize) -> usize {
        match self.max_df {
            DocFreq::Count(c) => c as usize,
            DocFreq::Fraction(f) => (f * n_docs as f64).floor() as usize,
        }
    }

    /// The document-frequency bounds, as counts, for a corpus of `n` documents.
    ///
    /// # Errors
    /// An empty corpus, a `min_df` count above `n`, and bounds that keep no document frequency.
    pub(super) fn df_bounds_for(&self, n: usize) -> Result<(usize, usize), TfIdfError> {
        if n == 0 {
            return Err(TfIdfError::NoDocuments);
        }
        if let Some(DocFreq::Count(c)) = self.min_df {
            if c as usize > n {
                return Err(TfIdfError::MinDfTooLarge { min: c, docs: n });
            }
        }
        let min_df = self.effective_min_df(n).max(1);
        let max_df = self.effective_max_df(n);
        if max_df < min_df {
            return Err(TfIdfError::MaxBelowMin {
                max: max_df,
                min: min_df,
                docs: n,
            });
        }
        Ok((min_df, max_df))
    }
}
