//! The fitted TF-IDF model: the vocabulary ([`Feature`]s, matched by stem), the IDF, the
//! document-frequency bounds applied and the training matrix. New documents are vectorized
//! with the same features and IDF ([`TfIdf::transform`]), and can be counted in the same pass
//! ([`TfIdf::transform_counting`]: the raw word counts that topic labels are made of).

use super::streams::FeatureStreams;
use super::TfIdfValidParams;
use crate::tokenize::TokenizedCorpus;
use crate::vectorize::CsrMatrix;
use ndarray::Array1;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// A feature: a term, or an n-gram of terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feature {
    /// Term ids of the tokenized corpus this was fitted on.
    pub terms: Vec<u32>,
    /// The stems, space-separated: the key used to map new documents onto this feature.
    pub stem: String,
    /// The surface forms, space-separated: what people read.
    pub surface: String,
    /// Document frequency in the training corpus.
    pub df: u32,
}

/// A fitted TF-IDF model and the matrix of its training corpus.
#[derive(Debug, Clone)]
pub struct TfIdf {
    pub(super) params: TfIdfValidParams,
    pub(super) matrix: CsrMatrix,
    pub(super) features: Vec<Feature>,
    pub(super) idf: Array1<f32>,
    pub(super) min_df: usize,
    pub(super) max_df: usize,
}

impl TfIdf {
    /// A model rebuilt from saved parts (see `crate::model`): the vocabulary by stem and surface,
    /// and the IDF. It has no training matrix; use [`TfIdf::transform`].
    pub fn from_saved(
        params: TfIdfValidParams,
        stems: Vec<String>,
        surfaces: Vec<String>,
        idf: Vec<f32>,
        (min_df, max_df): (usize, usize),
    ) -> TfIdf {
        let features = stems
            .into_iter()
            .zip(surfaces)
            .map(|(stem, surface)| Feature {
                terms: Vec::new(),
                stem,
                surface,
                df: 0,
            })
            .collect::<Vec<_>>();
        let n = features.len();
        TfIdf {
            params,
            matrix: CsrMatrix::new(n, vec![0], vec![], vec![]).expect("an empty matrix is valid"),
            features,
            idf: Array1::from(idf),
            min_df,
            max_df,
        }
    }

    pub fn matrix(&self) -> &CsrMatrix {
        &self.matrix
    }
    pub fn features(&self) -> &[Feature] {
        &self.features
    }
    pub fn idf(&self) -> &Array1<f32> {
        &self.idf
    }
    pub fn params(&self) -> &TfIdfValidParams {
        &self.params
    }
    /// The document-frequency bounds actually applied, as counts.
    pub fn df_bounds(&self) -> (usize, usize) {
        (self.min_df, self.max_df)
    }

    /// Frees the fitted matrix once it has been reduced; the vocabulary and IDF (all that a saved
    /// model and [`TfIdf::transform`] need) stay. `matrix()` is empty afterwards.
    pub fn release_matrix(&mut self) {
        let cols = self.matrix.n_cols();
        self.matrix = CsrMatrix::new(cols, vec![0], Vec::new(), Vec::new())
            .expect("an empty matrix is valid");
    }

    /// Keeps the rows whose `keep` flag is set (documents left out after fitting).
    pub fn retain_rows(&mut self, keep: &[bool]) {
        let rows: Vec<usize> = (0..self.matrix.n_rows()).filter(|&i| keep[i]).collect();
        self.matrix = self.matrix.select_rows(&rows);
    }

    /// The feature of each term of `tc` that is a single-word feature of this model (matched by
    /// stem), or `u32::MAX`.
    pub fn term_features(&self, tc: &TokenizedCorpus) -> Vec<u32> {
        let by_stem: FxHashMap<&str, u32> = self
            .features
            .iter()
            .enumerate()
            .filter(|(_, f)| !f.stem.contains(' '))
            .map(|(i, f)| (f.stem.as_str(), i as u32))
            .collect();
        tc.terms
            .iter()
            .map(|t| by_stem.get(t.stem.as_str()).copied().unwrap_or(u32::MAX))
            .collect()
    }

    /// Vectorizes another tokenized corpus with this vocabulary and IDF (unknown terms ignored).
    pub fn transform(&self, tc: &TokenizedCorpus) -> CsrMatrix {
        self.transform_inner(tc, false).0
    }

    /// [`TfIdf::transform`], and each document's raw counts of the model's single-word features
    /// as (feature, count) in feature order: what c-TF-IDF sums are made of, counted in the same
    /// pass as the weights.
    pub fn transform_counting(&self, tc: &TokenizedCorpus) -> (CsrMatrix, Vec<Vec<(u32, u32)>>) {
        self.transform_inner(tc, true)
    }

    fn transform_inner(
        &self,
        tc: &TokenizedCorpus,
        counting: bool,
    ) -> (CsrMatrix, Vec<Vec<(u32, u32)>>) {
        let by_stem: FxHashMap<&str, u32> = self
            .features
            .iter()
            .enumerate()
            .map(|(i, f)| (f.stem.as_str(), i as u32))
            .collect();
        let streams = FeatureStreams::build(tc, self.params.ngram_range);
        let column: Vec<u32> = streams
            .keys
            .iter()
            .map(|key| {
                let stem = key
                    .iter()
                    .map(|&t| tc.terms[t as usize].stem.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                by_stem.get(stem.as_str()).copied().unwrap_or(u32::MAX)
            })
            .collect();
        let single: Option<Vec<bool>> = counting.then(|| {
            self.features
                .iter()
                .map(|f| !f.stem.contains(' '))
                .collect()
        });
        if counting && tc.has_sub_words() {
            // The counts are what labels are made of: whole words only, not sub-words.
            let matrix = self
                .params
                .weigh(&streams, &column, &self.idf, self.features.len());
            return (matrix, self.word_counts(tc));
        }
        self.params.weigh_counting(
            &streams,
            &column,
            &self.idf,
            self.features.len(),
            single.as_deref(),
        )
    }

    /// Each document's raw counts of the single-word features its words show (sub-words left
    /// out), as (feature, count) in feature order.
    fn word_counts(&self, tc: &TokenizedCorpus) -> Vec<Vec<(u32, u32)>> {
        let feature = self.term_features(tc);
        (0..tc.n_docs())
            .into_par_iter()
            .map(|d| {
                let mut counts: Vec<(u32, u32)> = Vec::new();
                let mut fs: Vec<u32> = tc
                    .doc_terms(d)
                    .map(|t| feature[t as usize])
                    .filter(|&f| f != u32::MAX)
                    .collect();
                fs.sort_unstable();
                for run in fs.chunk_by(|a, b| a == b) {
                    counts.push((run[0], run.len() as u32));
                }
                counts
            })
            .collect()
    }
}
