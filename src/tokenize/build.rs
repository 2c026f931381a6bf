//! Building a [`TokenizedCorpus`] with one chain, in parallel and the same for any thread count.
//!
//! Phase 1 ([`intern_chunk`], run by [`TokenizedCorpus::build_texts`] on each chunk of
//! [`CHUNK`](super::CHUNK) documents in parallel) segments the texts and interns their words
//! locally; phase 2 merges the chunk vocabularies in chunk order into global word ids, so ids
//! never depend on the thread count, and rewrites each chunk's ids in place into a block;
//! phase 3 runs the chain once per distinct word, in parallel, and interns the terms in word
//! order, each shown by its most frequent surface. The hot loop does one lookup per word in an
//! [`Interner`] (short words packed into integers) and allocates nothing.

use super::interner::Interner;
use super::{Analyzer, Segmenter, Span, Term, Token, TokenizedCorpus, Word, WordKind, NOT_A_TERM};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

impl TokenizedCorpus {
    /// Phases 2 and 3 of [`Self::build_texts`], from the interned chunks.
    pub(super) fn from_chunks(
        chunks: Vec<(ChunkVocab, ChunkIds)>,
        n_docs: usize,
        analyzer: &Analyzer,
    ) -> TokenizedCorpus {
        let (vocabs, ids): (Vec<ChunkVocab>, Vec<ChunkIds>) = chunks.into_iter().unzip();
        // Phase 2, in chunk order: global word ids.
        let (raw_words, maps) = merge_vocabularies(&vocabs);
        let spans = document_spans(&ids, n_docs);
        let counts = word_counts(&vocabs, &maps, raw_words.len());
        let blocks = globalize(ids, &maps);
        // Phase 3: the chain, once per distinct word, in parallel; terms interned in word order.
        let analysed: Vec<Option<Token>> = raw_words
            .par_iter()
            .map(|w| analyzer.analyze_word(w))
            .collect();
        let (mut terms, term_of) = intern_terms(&analysed, &counts);
        let (sub_start, sub_terms) = match analyzer.sub_words {
            None => (Vec::new(), Vec::new()),
            Some(_) => {
                let subs: Vec<Vec<Token>> = raw_words
                    .par_iter()
                    .map(|w| analyzer.sub_words(w))
                    .collect();
                intern_sub_terms(&mut terms, &subs)
            }
        };
        let words = word_kinds(&raw_words, analysed, &term_of);
        TokenizedCorpus {
            words,
            terms,
            term_of,
            sub_start,
            sub_terms,
            blocks,
            spans,
        }
    }
}

/// One chunk's distinct words, copied out of its texts (which can then go), with their
/// packed keys (see [`Interner`]) and occurrences, by local id (phase 1 of
/// [`TokenizedCorpus::build_texts`]).
pub(super) struct ChunkVocab {
    /// The words one after another; word `i` ends at byte `ends[i]`.
    text: String,
    ends: Vec<u32>,
    keys: Vec<u128>,
    counts: Vec<u32>,
}

impl ChunkVocab {
    /// The words in local id order.
    fn words(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.text[start as usize..end as usize])
    }
}

/// One chunk's documents as local word ids.
pub(super) struct ChunkIds {
    /// Words per document.
    lens: Vec<u32>,
    /// Every document's local word ids, one after another.
    ids: Vec<u32>,
}

/// Segments and interns the words of one chunk of documents.
pub(super) fn intern_chunk(docs: &[&str], seg: &Segmenter) -> (ChunkVocab, ChunkIds) {
    let mut words = Interner::default();
    // English text averages a word per 6-7 bytes; reserving that avoids the doubling
    // that would leave up to half of the largest array unused.
    let bytes: usize = docs.iter().map(|t| t.len()).sum();
    let mut lens = Vec::with_capacity(docs.len());
    let mut ids = Vec::with_capacity(bytes / 6 + 16);
    for text in docs {
        let before = ids.len();
        match seg {
            // The common case stays one tight loop.
            Segmenter::Words(w) => ids.extend(w.words(text).map(|w| words.intern_in(text, w))),
            Segmenter::Han(_) => seg.each_word(text, &mut |w| ids.push(words.intern(w))),
        }
        lens.push((ids.len() - before) as u32);
    }
    let (vocab, keys) = words.into_parts();
    let mut counts = vec![0u32; vocab.len()];
    for &id in &ids {
        counts[id as usize] += 1;
    }
    let mut text = String::with_capacity(vocab.iter().map(|w| w.len()).sum());
    let ends = vocab
        .iter()
        .map(|w| {
            text.push_str(w);
            u32::try_from(text.len()).expect("a chunk's distinct words fit in 4 GiB")
        })
        .collect();
    let vocab = ChunkVocab {
        text,
        ends,
        keys,
        counts,
    };
    (vocab, ChunkIds { lens, ids })
}

/// The corpus's distinct words (global ids in order of first sight, chunk by chunk) and, per
/// chunk, the global id of each local word.
fn merge_vocabularies(chunks: &[ChunkVocab]) -> (Vec<&str>, Vec<Vec<u32>>) {
    let mut global = Interner::default();
    let maps: Vec<Vec<u32>> = chunks
        .iter()
        .map(|c| {
            c.words()
                .zip(&c.keys)
                .map(|(w, &k)| global.intern_packed(k, w))
                .collect()
        })
        .collect();
    (global.into_words(), maps)
}

/// Each document's span: its chunk's block, and its start and length in it.
fn document_spans(chunks: &[ChunkIds], n_docs: usize) -> Vec<Span> {
    let mut spans = Vec::with_capacity(n_docs);
    for (b, c) in chunks.iter().enumerate() {
        let mut start = 0u32;
        for &len in &c.lens {
            spans.push(Span {
                block: b as u32,
                start,
                len,
            });
            start += len;
        }
    }
    spans
}

/// Occurrences of each of the `n_words` global words, summed over the chunks.
fn word_counts(chunks: &[ChunkVocab], maps: &[Vec<u32>], n_words: usize) -> Vec<u64> {
    let mut counts = vec![0u64; n_words];
    for (c, map) in chunks.iter().zip(maps) {
        for (&global, &n) in map.iter().zip(&c.counts) {
            counts[global as usize] += u64::from(n);
        }
    }
    counts
}

/// Each chunk's word ids made global in place: the chunk's array becomes a block.
fn globalize(chunks: Vec<ChunkIds>, maps: &[Vec<u32>]) -> Vec<Vec<u32>> {
    chunks
        .into_par_iter()
        .zip(maps.par_iter())
        .map(|(c, map)| {
            let mut ids = c.ids;
            ids.iter_mut().for_each(|id| *id = map[*id as usize]);
            ids.shrink_to_fit();
            ids
        })
        .collect()
}

/// The terms of the analysed words (`None`: dropped) and each word's term id (or
/// [`NOT_A_TERM`]). Stems are interned in word order, borrowed from the analysed words (nothing
/// is copied per word). A term's surface is its most frequent one, summed over the words that
/// show it ("Model" and "model" both show "model"); ties go to the alphabetically first.
fn intern_terms(analysed: &[Option<Token>], counts: &[u64]) -> (Vec<Term>, Vec<u32>) {
    let mut stem_ids: FxHashMap<&str, u32> = FxHashMap::default();
    let mut stems: Vec<&str> = Vec::new();
    let mut term_of: Vec<u32> = vec![NOT_A_TERM; analysed.len()];
    let mut shown: Vec<(u32, &str, u64)> = Vec::new();
    for (i, tok) in analysed.iter().enumerate() {
        let Some(t) = tok.as_ref().filter(|t| !t.stop) else {
            continue;
        };
        let id = *stem_ids.entry(t.text.as_str()).or_insert_with(|| {
            stems.push(t.text.as_str());
            (stems.len() - 1) as u32
        });
        term_of[i] = id;
        shown.push((id, t.surface.as_str(), counts[i]));
    }
    let terms = stems
        .iter()
        .map(|&stem| Term {
            stem: stem.to_string(),
            surface: String::new(),
            count: 0,
        })
        .collect();
    (count_surfaces(terms, shown), term_of)
}

/// Fills each term's count and surface from `shown`, (term, surface, occurrences) for every
/// word of a term: the count is the sum, the surface the one with most occurrences (ties: the
/// alphabetically first).
fn count_surfaces(mut terms: Vec<Term>, mut shown: Vec<(u32, &str, u64)>) -> Vec<Term> {
    shown.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    let mut best: Vec<(u64, &str)> = vec![(0, ""); terms.len()];
    for run in shown.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)) {
        let (id, surface) = (run[0].0 as usize, run[0].1);
        let n: u64 = run.iter().map(|r| r.2).sum();
        terms[id].count += n;
        // Runs come in alphabetical order, so only a strictly larger count wins.
        if n > best[id].0 || best[id].1.is_empty() {
            best[id] = (n, surface);
        }
    }
    for (term, (_, surface)) in terms.iter_mut().zip(&best) {
        term.surface = surface.to_string();
    }
    terms
}

/// Each word's sub-word terms, from `subs` (the analysed sub-words of every word), as
/// `(start, terms)` (see [`TokenizedCorpus::sub_terms_of`]). A sub-word whose stem is a term
/// already is that term; the others are added to `terms` in word order, with a count of 0 (no
/// word shows them).
fn intern_sub_terms(terms: &mut Vec<Term>, subs: &[Vec<Token>]) -> (Vec<u32>, Vec<u32>) {
    let mut ids: FxHashMap<String, u32> = terms
        .iter()
        .enumerate()
        .map(|(i, t)| (t.stem.clone(), i as u32))
        .collect();
    let mut start = Vec::with_capacity(subs.len() + 1);
    let mut ids_of_words = Vec::new();
    start.push(0u32);
    for word in subs {
        for t in word {
            let id = *ids.entry(t.text.clone()).or_insert_with(|| {
                terms.push(Term {
                    stem: t.text.clone(),
                    surface: t.surface.clone(),
                    count: 0,
                });
                (terms.len() - 1) as u32
            });
            ids_of_words.push(id);
        }
        start.push(ids_of_words.len() as u32);
    }
    if ids_of_words.is_empty() {
        start.clear();
    }
    (start, ids_of_words)
}

/// Every distinct word with its lowercased surface and what the chain made of it.
fn word_kinds(raw_words: &[&str], analysed: Vec<Option<Token>>, term_of: &[u32]) -> Vec<Word> {
    raw_words
        .iter()
        .zip(analysed)
        .zip(term_of)
        .map(|((raw, tok), term)| match tok {
            None => Word {
                surface: raw.to_lowercase(),
                kind: WordKind::Dropped,
            },
            Some(t) => Word {
                surface: t.surface,
                kind: if *term == NOT_A_TERM {
                    WordKind::Stop
                } else {
                    WordKind::Term(*term)
                },
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::{chinese, settings};
    use super::super::{ChineseTerms, CHUNK};
    use super::*;
    use crate::ingest::Document;

    #[test]
    fn documents_released_chunk_by_chunk_tokenize_as_their_texts() {
        // Three chunks and a short fourth, in English and in Chinese (words and bigrams).
        let n = 3 * CHUNK + 17;
        let english: Vec<String> = (0..n)
            .map(|i| format!("Graph clustering of {} networks, item{}", i % 13, i % 101))
            .collect();
        let chinese_texts: Vec<String> = (0..n)
            .map(|i| ["卷积神经网络", "神经网络与图", "网络"][i % 3].repeat(1 + i % 4))
            .collect();
        for (texts, a) in [
            (&english, Analyzer::new(&settings())),
            (&chinese_texts, chinese(ChineseTerms::WordsBigrams)),
        ] {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let want = TokenizedCorpus::build_texts(&refs, &a);
            let mut docs: Vec<Document> = texts
                .iter()
                .enumerate()
                .map(|(row, t)| Document {
                    id: row.to_string(),
                    source: 0,
                    row,
                    title: None,
                    text: t.clone(),
                    time: None,
                    label: None,
                    class: None,
                    batch: "b".into(),
                })
                .collect();
            let bounds: Vec<_> = TokenizedCorpus::chunk_bounds(n).collect();
            let released = std::sync::Mutex::new(Vec::new());
            let got =
                TokenizedCorpus::build_releasing(&mut docs, &a, bounds.clone(), |chunk, rows| {
                    assert_eq!(chunk.len(), rows.len());
                    assert!(chunk.iter().zip(rows.clone()).all(|(d, r)| d.row == r));
                    chunk.iter_mut().for_each(|d| d.text.clear());
                    released.lock().unwrap().push(rows);
                });
            assert_eq!(got.terms, want.terms);
            assert_eq!(got.blocks, want.blocks);
            assert_eq!(got.spans, want.spans);
            assert_eq!(got.words, want.words);
            let mut released = released.into_inner().unwrap();
            released.sort_by_key(|r| r.start);
            assert_eq!(released, bounds, "each chunk once, with its own state");
            assert!(docs.iter().all(|d| d.text.is_empty()));
        }
    }

    #[test]
    fn corpus_keeps_most_frequent_surface_and_order() {
        let a = Analyzer::new(&settings());
        let texts = [
            "Clustering clusters.",
            "clustering of languages",
            "Clustering language models",
        ];
        let tc = TokenizedCorpus::build_texts(&texts, &a);
        assert_eq!(tc.n_docs(), 3);
        let surfaces: Vec<&str> = tc.terms.iter().map(|t| t.surface.as_str()).collect();
        assert_eq!(
            surfaces,
            ["clustering", "language", "models"],
            "ties go to the alphabetically first surface"
        );
        let t0: Vec<u32> = tc.doc_terms(0).collect();
        assert_eq!(t0, [0, 0], "clustering and clusters share a stem");
        assert_eq!(tc.terms[0].count, 4);
        assert_eq!(
            tc.doc_words(1).len(),
            3,
            "stop words stay in the word stream"
        );
        assert_eq!(tc.doc_terms(1).count(), 2);
    }

    #[test]
    fn ids_do_not_depend_on_chunking_or_threads() {
        let a = Analyzer::new(&settings());
        let texts: Vec<String> = (0..5000)
            .map(|i| format!("word{} topic{} shared text", i % 97, i % 13))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let a1 = one.install(|| TokenizedCorpus::build_texts(&refs, &a));
        let a2 = two.install(|| TokenizedCorpus::build_texts(&refs, &a));
        assert_eq!(a1.terms, a2.terms);
        assert_eq!(a1.blocks, a2.blocks);
        assert_eq!(a1.spans, a2.spans);
        assert_eq!(a1.words, a2.words);
    }
}
