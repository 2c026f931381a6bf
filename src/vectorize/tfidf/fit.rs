//! Fitting the vocabulary and IDF: every candidate feature of the corpus is counted (document
//! and corpus frequency, in parallel over chunks of documents; integer sums, so the counts do
//! not depend on the threads), the candidates within the document-frequency bounds are kept
//! (at most `max_features` of them, the most frequent) in candidate order, and each kept
//! feature gets its IDF; the training rows are then weighed as any corpus's are (`weigh.rs`).

use super::streams::FeatureStreams;
use super::{Feature, TfIdf, TfIdfError, TfIdfValidParams};
use crate::tokenize::TokenizedCorpus;
use ndarray::Array1;
use rayon::prelude::*;

impl TfIdfValidParams {
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
