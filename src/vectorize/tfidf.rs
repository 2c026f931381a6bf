//! TF-IDF fitting and transformation. See the module above for the formulas.

use super::CsrMatrix;
use crate::tokenize::{TokenizedCorpus, CHUNK};
use ndarray::Array1;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
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
    max_features: Option<usize>,
    ngram_range: [usize; 2],
    sublinear_tf: bool,
    smooth_idf: bool,
    norm: Norm,
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

    /// Learns the vocabulary and IDF and returns the TF-IDF matrix of the corpus: the
    /// document-frequency bounds are resolved for the corpus's size, every candidate feature
    /// (term, or n-gram when asked) is counted, the features within the bounds (at most
    /// `max_features` of them, the most frequent) are kept in candidate order, and each
    /// document's row is weighed with their IDF.
    pub fn fit(&self, tc: &TokenizedCorpus) -> Result<TfIdf, TfIdfError> {
        let n = tc.n_docs();
        let (min_df, max_df) = self.df_bounds_for(n)?;
        let streams = FeatureStreams::build(tc, self.ngram_range);
        let (df, tf) = frequencies(&streams);
        let keep = kept_features(&df, &tf, (min_df, max_df), self.max_features);
        if keep.is_empty() {
            return Err(TfIdfError::NoTerms {
                min_df,
                max_df,
                docs: n,
            });
        }
        let column = columns_of(&keep, df.len());
        let idf = idf_of(&keep, &df, n, self.smooth_idf);
        let features = features_of(&keep, &streams.keys, &df, tc);
        let matrix = self.weigh(&streams, &column, &idf, features.len());
        Ok(TfIdf {
            params: self.clone(),
            matrix,
            features,
            idf,
            min_df,
            max_df,
        })
    }

    /// The document-frequency bounds, as counts, for a corpus of `n` documents.
    ///
    /// # Errors
    /// An empty corpus, a `min_df` count above `n`, and bounds that keep no document frequency.
    fn df_bounds_for(&self, n: usize) -> Result<(usize, usize), TfIdfError> {
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

    /// Builds the weighted, normalised CSR matrix from feature streams. A first pass counts each
    /// row's entries, so the matrix is written once into arrays of its final size (building
    /// per-chunk pieces and joining them held the matrix twice at the memory peak).
    fn weigh(
        &self,
        streams: &FeatureStreams,
        column: &[u32],
        idf: &Array1<f32>,
        n_cols: usize,
    ) -> CsrMatrix {
        self.weigh_counting(streams, column, idf, n_cols, None).0
    }

    /// [`TfIdfParams::weigh`], and with `single` (a flag per column) each document's raw counts
    /// of the flagged columns, in column order.
    fn weigh_counting(
        &self,
        streams: &FeatureStreams,
        column: &[u32],
        idf: &Array1<f32>,
        n_cols: usize,
        single: Option<&[bool]>,
    ) -> (CsrMatrix, Vec<Vec<(u32, u32)>>) {
        // Pass 1: each row's length, so the arrays are allocated once at their final size.
        let lens = row_lengths(streams, column);
        let indptr = row_offsets(&lens);
        let nnz = indptr.last().copied().unwrap_or(0);
        let mut indices = vec![0u32; nnz];
        let mut data = vec![0f32; nnz];
        // Pass 2: each chunk fills its own slice of the final arrays.
        let rows = RowWeights {
            column,
            idf,
            sublinear_tf: self.sublinear_tf,
            norm: self.norm,
            single,
        };
        let counted: Vec<Vec<Vec<(u32, u32)>>> = chunk_slices(&mut indices, &mut data, &lens)
            .into_par_iter()
            .zip(streams.chunks.par_iter())
            .map_init(
                || vec![u32::MAX; column.len()],
                |seen, ((idx, val), chunk)| rows.fill_chunk(chunk, seen, idx, val),
            )
            .collect();
        let matrix = CsrMatrix::new(n_cols, indptr, indices, data)
            .expect("rows are built sorted and in range");
        (matrix, counted.into_iter().flatten().collect())
    }
}

/// Document frequency and corpus frequency of every candidate feature of `streams`.
fn frequencies(streams: &FeatureStreams) -> (Vec<u32>, Vec<u64>) {
    let n_cand = streams.keys.len();
    streams
        .chunks
        .par_iter()
        .fold(
            || {
                (
                    vec![0u32; n_cand],
                    vec![0u64; n_cand],
                    vec![u32::MAX; n_cand],
                )
            },
            // Integer sums, so no order is needed: each id is stamped with the last
            // document (its index in the chunk) that counted it.
            |(mut df, mut tf, mut seen), chunk| {
                for (d, doc) in chunk.docs().enumerate() {
                    for &f in doc {
                        let f = f as usize;
                        tf[f] += 1;
                        if seen[f] != d as u32 {
                            seen[f] = d as u32;
                            df[f] += 1;
                        }
                    }
                }
                seen.fill(u32::MAX);
                (df, tf, seen)
            },
        )
        .map(|(df, tf, _)| (df, tf))
        .reduce(
            || (vec![0u32; n_cand], vec![0u64; n_cand]),
            |(mut a, mut b), (c, d)| {
                a.iter_mut().zip(c).for_each(|(x, y)| *x += y);
                b.iter_mut().zip(d).for_each(|(x, y)| *x += y);
                (a, b)
            },
        )
}

/// The candidates kept as features, in candidate order: those whose document frequency `df` is
/// within `min_df..=max_df`, and of those at most `max_features`, the most frequent in the
/// corpus (`tf`; ties to the earlier candidate).
fn kept_features(
    df: &[u32],
    tf: &[u64],
    (min_df, max_df): (usize, usize),
    max_features: Option<usize>,
) -> Vec<u32> {
    let mut keep: Vec<u32> = (0..df.len() as u32)
        .filter(|&f| {
            let d = df[f as usize] as usize;
            d >= min_df && d <= max_df
        })
        .collect();
    if let Some(limit) = max_features {
        if keep.len() > limit {
            let mut by_freq = keep.clone();
            by_freq.sort_by(|&a, &b| tf[b as usize].cmp(&tf[a as usize]).then(a.cmp(&b)));
            by_freq.truncate(limit);
            by_freq.sort_unstable();
            keep = by_freq;
        }
    }
    keep
}

/// Each of the `n_cand` candidates' matrix column: its place in `keep`, or `u32::MAX`.
fn columns_of(keep: &[u32], n_cand: usize) -> Vec<u32> {
    let mut column = vec![u32::MAX; n_cand];
    for (new, &old) in keep.iter().enumerate() {
        column[old as usize] = new as u32;
    }
    column
}

/// The kept features' IDF on `n` documents: `ln((1 + n) / (1 + df)) + 1` smoothed, else
/// `ln(n / df) + 1`.
fn idf_of(keep: &[u32], df: &[u32], n: usize, smooth_idf: bool) -> Array1<f32> {
    let nf = n as f64;
    keep.iter()
        .map(|&f| {
            let d = df[f as usize] as f64;
            let v = if smooth_idf {
                ((1.0 + nf) / (1.0 + d)).ln() + 1.0
            } else {
                (nf / d).ln() + 1.0
            };
            v as f32
        })
        .collect()
}

/// The kept features, with their terms' stems and surfaces joined by spaces.
fn features_of(keep: &[u32], keys: &[Vec<u32>], df: &[u32], tc: &TokenizedCorpus) -> Vec<Feature> {
    keep.iter()
        .map(|&f| {
            let key = &keys[f as usize];
            Feature {
                terms: key.clone(),
                stem: key
                    .iter()
                    .map(|&t| tc.terms[t as usize].stem.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                // Chinese words join without spaces (see `tokenize::join`).
                surface: crate::tokenize::join_words(
                    key.iter().map(|&t| tc.terms[t as usize].surface.as_str()),
                ),
                df: df[f as usize],
            }
        })
        .collect()
}

/// Distinct kept features (those with a `column`) of each document, chunk by chunk, by
/// stamping (no sorting).
fn row_lengths(streams: &FeatureStreams, column: &[u32]) -> Vec<Vec<usize>> {
    streams
        .chunks
        .par_iter()
        .map(|chunk| {
            let mut seen = vec![u32::MAX; column.len()];
            chunk
                .docs()
                .enumerate()
                .map(|(d, doc)| {
                    let mut n = 0;
                    for &f in doc {
                        if column[f as usize] != u32::MAX && seen[f as usize] != d as u32 {
                            seen[f as usize] = d as u32;
                            n += 1;
                        }
                    }
                    n
                })
                .collect()
        })
        .collect()
}

/// The CSR row offsets of rows of lengths `lens` (chunk by chunk): `0`, then each row's end.
fn row_offsets(lens: &[Vec<usize>]) -> Vec<usize> {
    let rows: usize = lens.iter().map(Vec::len).sum();
    let mut indptr = Vec::with_capacity(rows + 1);
    indptr.push(0usize);
    for &l in lens.iter().flatten() {
        indptr.push(indptr.last().copied().unwrap_or(0) + l);
    }
    indptr
}

/// The matrix's index and value arrays cut into one slice pair per chunk of rows.
fn chunk_slices<'a>(
    indices: &'a mut [u32],
    data: &'a mut [f32],
    lens: &[Vec<usize>],
) -> Vec<(&'a mut [u32], &'a mut [f32])> {
    let mut pieces = Vec::with_capacity(lens.len());
    let (mut idx_rest, mut val_rest) = (indices, data);
    for l in lens {
        let len: usize = l.iter().sum();
        let (ih, it) = idx_rest.split_at_mut(len);
        let (vh, vt) = val_rest.split_at_mut(len);
        pieces.push((ih, vh));
        idx_rest = it;
        val_rest = vt;
    }
    pieces
}

/// How a document's feature counts become its matrix row.
struct RowWeights<'a> {
    /// Each candidate's column, or `u32::MAX` (not a feature).
    column: &'a [u32],
    idf: &'a Array1<f32>,
    sublinear_tf: bool,
    norm: Norm,
    /// With a flag per column: keep each document's raw counts of the flagged columns.
    single: Option<&'a [bool]>,
}

impl RowWeights<'_> {
    /// Writes the rows of `chunk` into `idx` and `val` (the chunk's slices of the matrix), and
    /// returns each document's counts of the `single` columns (none without `single`). `seen`
    /// is [`count`]'s table, all `u32::MAX`.
    fn fill_chunk(
        &self,
        chunk: &StreamChunk,
        seen: &mut [u32],
        idx: &mut [u32],
        val: &mut [f32],
    ) -> Vec<Vec<(u32, u32)>> {
        let mut buf = Vec::new();
        // (column, weight, count)
        let mut row: Vec<(u32, f32, u32)> = Vec::new();
        let mut counts = Vec::new();
        let mut at = 0usize;
        for doc in chunk.docs() {
            count(doc, seen, &mut buf);
            self.weigh_row(&buf, &mut row);
            if let Some(single) = self.single {
                counts.push(
                    row.iter()
                        .filter(|&&(col, _, _)| single[col as usize])
                        .map(|&(col, _, c)| (col, c))
                        .collect::<Vec<_>>(),
                );
            }
            let end = at + row.len();
            for (k, &(col, v, _)) in row.iter().enumerate() {
                idx[at + k] = col;
                val[at + k] = v;
            }
            normalize(&mut val[at..end], self.norm);
            at = end;
        }
        counts
    }

    /// A document's row from its feature counts `counted` (id, count): (column, TF x IDF,
    /// count) for each feature with a column, in column order.
    #[inline]
    fn weigh_row(&self, counted: &[(u32, u32)], row: &mut Vec<(u32, f32, u32)>) {
        row.clear();
        for &(f, c) in counted {
            let col = self.column[f as usize];
            if col == u32::MAX {
                continue;
            }
            let tf = if self.sublinear_tf {
                sublinear(c)
            } else {
                c as f32
            };
            row.push((col, tf * self.idf[col as usize], c));
        }
        // Columns in order, so the norm is summed in the same order for the fit and any new
        // corpus: identical values.
        if !row.is_sorted_by_key(|&(col, _, _)| col) {
            row.sort_unstable_by_key(|&(col, _, _)| col);
        }
    }
}

/// `1 + ln(c)`, the sublinear term frequency, from a table for the small counts nearly every
/// entry has (one logarithm per matrix entry was a third of the weighing time).
#[inline]
fn sublinear(c: u32) -> f32 {
    const SMALL: usize = 64;
    static TABLE: std::sync::LazyLock<[f32; SMALL]> =
        std::sync::LazyLock::new(|| std::array::from_fn(|c| 1.0 + (c as f32).ln()));
    match TABLE.get(c as usize) {
        Some(&v) => v,
        None => 1.0 + (c as f32).ln(),
    }
}

fn normalize(v: &mut [f32], norm: Norm) {
    let s: f32 = match norm {
        Norm::L2 => v.iter().map(|x| x * x).sum::<f32>().sqrt(),
        Norm::L1 => v.iter().map(|x| x.abs()).sum(),
        Norm::None => return,
    };
    if s > 0.0 {
        v.iter_mut().for_each(|x| *x /= s);
    }
}

/// Counts a document's feature ids into `out` as (id, count), in order of first occurrence.
/// `seen` maps an id to its place in `out`; it must hold `u32::MAX` for every id on entry, and
/// does again on return, so one array serves a whole chunk of documents. (The caller sorts the
/// row it builds from these once, by column.)
fn count(doc: &[u32], seen: &mut [u32], out: &mut Vec<(u32, u32)>) {
    out.clear();
    for &f in doc {
        let slot = &mut seen[f as usize];
        if *slot == u32::MAX {
            *slot = out.len() as u32;
            out.push((f, 1));
        } else {
            out[*slot as usize].1 += 1;
        }
    }
    for &(f, _) in out.iter() {
        seen[f as usize] = u32::MAX;
    }
}

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
    params: TfIdfValidParams,
    matrix: CsrMatrix,
    features: Vec<Feature>,
    idf: Array1<f32>,
    min_df: usize,
    max_df: usize,
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

    /// Keeps the rows whose `keep` flag is set (documents left out after fitting).
    /// Frees the fitted matrix once it has been reduced; the vocabulary and IDF (all that a saved
    /// model and [`TfIdf::transform`] need) stay. `matrix()` is empty afterwards.
    pub fn release_matrix(&mut self) {
        let cols = self.matrix.n_cols();
        self.matrix = CsrMatrix::new(cols, vec![0], Vec::new(), Vec::new())
            .expect("an empty matrix is valid");
    }

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

/// Each document as a stream of candidate feature ids (terms, plus n-grams when asked).
struct FeatureStreams {
    /// Candidate features: their term-id sequences.
    keys: Vec<Vec<u32>>,
    chunks: Vec<StreamChunk>,
}

struct StreamChunk {
    lens: Vec<u32>,
    ids: Vec<u32>,
}

impl StreamChunk {
    fn docs(&self) -> impl Iterator<Item = &[u32]> {
        let mut start = 0usize;
        self.lens.iter().map(move |&l| {
            let s = &self.ids[start..start + l as usize];
            start += l as usize;
            s
        })
    }
}

impl FeatureStreams {
    /// Each document's features: its terms, and its sub-words where the corpus has any.
    fn unigrams(tc: &TokenizedCorpus) -> FeatureStreams {
        let docs: Vec<usize> = (0..tc.n_docs()).collect();
        let chunks = docs
            .par_chunks(CHUNK)
            .map(|ds| {
                let mut c = StreamChunk {
                    lens: Vec::with_capacity(ds.len()),
                    ids: Vec::new(),
                };
                for &d in ds {
                    let before = c.ids.len();
                    if tc.has_sub_words() {
                        c.ids.extend(tc.doc_features(d));
                    } else {
                        c.ids.extend(tc.doc_terms(d));
                    }
                    c.lens.push((c.ids.len() - before) as u32);
                }
                c
            })
            .collect();
        let keys = (0..tc.terms.len() as u32).map(|t| vec![t]).collect();
        FeatureStreams { keys, chunks }
    }

    /// Each document's terms, plus their n-grams when `lo..=hi` asks for them, plus its
    /// sub-words (single features, never inside an n-gram) when `lo` is 1.
    fn build(tc: &TokenizedCorpus, [lo, hi]: [usize; 2]) -> FeatureStreams {
        if lo == 1 && hi == 1 {
            return Self::unigrams(tc);
        }
        let docs: Vec<usize> = (0..tc.n_docs()).collect();
        // n-grams: intern per chunk, then merge in chunk order (ids independent of threads).
        let local: Vec<(Vec<[u32; 3]>, StreamChunk)> = docs
            .par_chunks(CHUNK)
            .map(|ds| {
                let mut map: FxHashMap<[u32; 3], u32> = FxHashMap::default();
                let mut vocab = Vec::new();
                let mut c = StreamChunk {
                    lens: Vec::with_capacity(ds.len()),
                    ids: Vec::new(),
                };
                let mut terms = Vec::new();
                for &d in ds {
                    terms.clear();
                    terms.extend(tc.doc_terms(d));
                    let before = c.ids.len();
                    let mut push = |key: [u32; 3]| {
                        let id = *map.entry(key).or_insert_with(|| {
                            vocab.push(key);
                            (vocab.len() - 1) as u32
                        });
                        c.ids.push(id);
                    };
                    for n in lo..=hi {
                        for w in terms.windows(n) {
                            let mut key = [u32::MAX; 3];
                            key[..n].copy_from_slice(w);
                            push(key);
                        }
                    }
                    // Sub-words are single features: never part of an n-gram.
                    if lo == 1 && tc.has_sub_words() {
                        for &w in tc.doc_words(d) {
                            for &t in tc.sub_terms_of(w) {
                                push([t, u32::MAX, u32::MAX]);
                            }
                        }
                    }
                    c.lens.push((c.ids.len() - before) as u32);
                }
                (vocab, c)
            })
            .collect();
        let mut global: FxHashMap<[u32; 3], u32> = FxHashMap::default();
        let mut keys: Vec<Vec<u32>> = Vec::new();
        let mut chunks = Vec::with_capacity(local.len());
        for (vocab, mut c) in local {
            let map: Vec<u32> = vocab
                .iter()
                .map(|k| {
                    *global.entry(*k).or_insert_with(|| {
                        keys.push(k.iter().copied().filter(|&t| t != u32::MAX).collect());
                        (keys.len() - 1) as u32
                    })
                })
                .collect();
            c.ids.iter_mut().for_each(|id| *id = map[*id as usize]);
            chunks.push(c);
        }
        FeatureStreams { keys, chunks }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize::{Analyzer, StopWordList, TokenizerParams};
    use approx::assert_abs_diff_eq;

    fn tokenize(texts: &[&str]) -> TokenizedCorpus {
        let s = TokenizerParams::new()
            .stem(false)
            .stop_words(StopWordList::None)
            .min_length(1)
            .check()
            .unwrap();
        TokenizedCorpus::build_texts(texts, &Analyzer::new(&s))
    }

    #[test]
    fn counting_transform_counts_single_word_features_and_weighs_the_same() {
        let train = tokenize(&["a b c a", "b c d", "a d d e", "c e a b"]);
        let params = TfIdfParams::new()
            .min_df(Some(DocFreq::Count(1)))
            .max_df(DocFreq::Fraction(1.0))
            .ngram_range([1, 2])
            .check()
            .unwrap();
        let m = params.fit(&train).unwrap();
        assert!(
            m.features().iter().any(|f| f.stem.contains(' ')),
            "bigrams too"
        );
        let new = tokenize(&["a a b x", "x y", "d e e a b", "c"]);
        let (matrix, counts) = m.transform_counting(&new);
        let plain = m.transform(&new);
        for r in 0..plain.n_rows() {
            assert_eq!(matrix.row(r), plain.row(r), "row {r}");
        }
        let of_term = m.term_features(&new);
        for (d, got) in counts.iter().enumerate() {
            let mut want = std::collections::BTreeMap::<u32, u32>::new();
            for t in new.doc_terms(d) {
                if of_term[t as usize] != u32::MAX {
                    *want.entry(of_term[t as usize]).or_default() += 1;
                }
            }
            assert_eq!(got, &want.into_iter().collect::<Vec<_>>(), "doc {d}");
        }
        assert_eq!(counts[1], Vec::new(), "no known word");
        assert_eq!(counts[0].iter().map(|c| c.1).sum::<u32>(), 3);
    }

    #[test]
    fn issue_39_sub_words_are_weighed_but_not_counted_as_words() {
        use crate::tokenize::ChineseTerms;
        let p = TokenizerParams::new()
            .language("chinese")
            .chinese(ChineseTerms::WordsBigrams)
            .check()
            .unwrap();
        let tc =
            TokenizedCorpus::build_texts(&["神经网络", "网络", "神经网络"], &Analyzer::new(&p));
        let params = TfIdfParams::new()
            .min_df(Some(DocFreq::Count(1)))
            .max_df(DocFreq::Fraction(1.0))
            .check()
            .unwrap();
        let m = params.fit(&tc).unwrap();
        let col = |s: &str| m.features().iter().position(|f| f.surface == s).unwrap() as u32;
        // "经网" is only ever inside a word: a feature all the same, in documents 0 and 2.
        assert_eq!(m.features()[col("经网") as usize].df, 2);
        assert!(m.matrix().row(0).0.contains(&col("经网")));
        // The counts that labels are made of hold the words alone: "网络" in document 0 is a
        // sub-word, in document 1 a word.
        let (matrix, counts) = m.transform_counting(&tc);
        assert_eq!(matrix.row(0), m.matrix().row(0));
        assert_eq!(counts[0], [(col("神经网络"), 1)]);
        assert_eq!(counts[1], [(col("网络"), 1)]);
        // With bigrams of terms too, a sub-word is a single feature, never inside an n-gram.
        let two =
            TokenizedCorpus::build_texts(&["卷积神经网络", "卷积神经网络"], &Analyzer::new(&p));
        let ngrams = TfIdfParams::new()
            .min_df(Some(DocFreq::Count(1)))
            .max_df(DocFreq::Fraction(1.0))
            .ngram_range([1, 2])
            .check()
            .unwrap()
            .fit(&two)
            .unwrap();
        let word = |t: &u32| two.terms[*t as usize].is_word();
        assert!(ngrams.features().iter().any(|f| f.surface == "经网"));
        assert!(ngrams.features().iter().any(|f| f.terms.len() == 2));
        for f in ngrams.features().iter().filter(|f| f.terms.len() > 1) {
            assert!(f.terms.iter().all(word), "{f:?}");
        }
    }

    /// Hand-computed: docs "a a b", "b c", "c"; n = 3; df a=1, b=2, c=2.
    /// smooth idf: a = ln(4/2)+1 = 1.693147, b = c = ln(4/3)+1 = 1.287682.
    /// Raw tf, doc 0: a = 2*1.693147 = 3.386294, b = 1.287682; L2 norm = 3.622844
    /// -> a = 0.934708, b = 0.355434.
    #[test]
    fn matches_hand_computed_values() {
        let tc = tokenize(&["a a b", "b c", "c"]);
        let params = TfIdfParams::new()
            .min_df(Some(DocFreq::Count(1)))
            .max_df(DocFreq::Fraction(1.0))
            .sublinear_tf(false)
            .check()
            .unwrap();
        let m = params.fit(&tc).unwrap();
        let surfaces: Vec<&str> = m.features().iter().map(|f| f.surface.as_str()).collect();
        assert_eq!(surfaces, ["a", "b", "c"]);
        assert_abs_diff_eq!(m.idf()[0], 1.693147, epsilon = 1e-5);
        assert_abs_diff_eq!(m.idf()[1], 1.287682, epsilon = 1e-5);
        let (idx, val) = m.matrix().row(0);
        assert_eq!(idx, &[0, 1]);
        assert_abs_diff_eq!(val[0], 0.934708, epsilon = 1e-5);
        assert_abs_diff_eq!(val[1], 0.355434, epsilon = 1e-5);
        let (idx, val) = m.matrix().row(2);
        assert_eq!(idx, &[2]);
        assert_abs_diff_eq!(val[0], 1.0, epsilon = 1e-6);
    }

    /// Sublinear tf and non-smooth idf: doc 0 a: (1+ln 2)*(ln(3/1)+1) = 1.693147*2.098612 = 3.553227,
    /// b: 1*(ln(3/2)+1) = 1.405465; norm 3.821101 -> 0.929896, 0.367817.
    #[test]
    fn sublinear_tf_and_plain_idf() {
        let tc = tokenize(&["a a b", "b c", "c"]);
        let m = TfIdfParams::new()
            .min_df(Some(DocFreq::Count(1)))
            .max_df(DocFreq::Fraction(1.0))
            .smooth_idf(false)
            .check()
            .unwrap()
            .fit(&tc)
            .unwrap();
        let (_, val) = m.matrix().row(0);
        assert_abs_diff_eq!(val[0], 0.929896, epsilon = 1e-5);
        assert_abs_diff_eq!(val[1], 0.367817, epsilon = 1e-5);
    }

    #[test]
    fn df_bounds_follow_sklearn() {
        let tc = tokenize(&["a b", "a c", "a d", "b e"]);
        // max_df 0.5 -> df <= 2: drops a (df 3). min_df 2 keeps only b.
        let m = TfIdfParams::new()
            .min_df(Some(DocFreq::Count(2)))
            .max_df(DocFreq::Fraction(0.5))
            .check()
            .unwrap()
            .fit(&tc)
            .unwrap();
        let s: Vec<&str> = m.features().iter().map(|f| f.surface.as_str()).collect();
        assert_eq!(s, ["b"]);
        assert_eq!(
            TfIdfParams::new()
                .min_df(Some(DocFreq::Count(9)))
                .check()
                .unwrap()
                .fit(&tc)
                .unwrap_err(),
            TfIdfError::MinDfTooLarge { min: 9, docs: 4 }
        );
        assert!(matches!(
            TfIdfParams::new()
                .min_df(Some(DocFreq::Count(4)))
                .max_df(DocFreq::Fraction(1.0))
                .check()
                .unwrap()
                .fit(&tc),
            Err(TfIdfError::NoTerms { .. })
        ));
    }

    #[test]
    fn ngrams_and_transform_reuse_the_vocabulary() {
        let tc = tokenize(&["language model", "language model rocks", "model"]);
        let m = TfIdfParams::new()
            .min_df(Some(DocFreq::Count(2)))
            .max_df(DocFreq::Fraction(1.0))
            .ngram_range([1, 2])
            .check()
            .unwrap()
            .fit(&tc)
            .unwrap();
        let s: Vec<&str> = m.features().iter().map(|f| f.surface.as_str()).collect();
        assert_eq!(s, ["language", "model", "language model"]);
        let again = m.transform(&tc);
        assert_eq!(
            &again,
            m.matrix(),
            "transform of the training corpus equals the fit"
        );
        let other = tokenize(&["unknown words model"]);
        let t = m.transform(&other);
        assert_eq!(t.row(0).0, &[1]);
    }
}
