//! Each document as a stream of candidate feature ids: its terms, plus their n-grams when the
//! n-gram range asks for them, plus its sub-words (`tokenize.chinese`) as single features. The
//! fit counts these streams and the weighing turns them into rows.
//!
//! Why streams of ids: n-grams are interned per chunk of documents in parallel, then merged in
//! chunk order, so every candidate's id (and so the vocabulary's order) is the same whatever
//! the number of threads; a chunk keeps its documents' ids in one array.

use crate::tokenize::{TokenizedCorpus, CHUNK};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Each document as a stream of candidate feature ids (terms, plus n-grams when asked).
pub(super) struct FeatureStreams {
    /// Candidate features: their term-id sequences.
    pub(super) keys: Vec<Vec<u32>>,
    pub(super) chunks: Vec<StreamChunk>,
}

pub(super) struct StreamChunk {
    lens: Vec<u32>,
    ids: Vec<u32>,
}

impl StreamChunk {
    pub(super) fn docs(&self) -> impl Iterator<Item = &[u32]> {
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
    pub(super) fn build(tc: &TokenizedCorpus, [lo, hi]: [usize; 2]) -> FeatureStreams {
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
