//! Tokenize: cleaned text -> words -> terms (Snowball stems), as a chain of small filters.
//!
//! The chain is built like tantivy's `TextAnalyzer`: a word segmenter (Unicode UAX #29) followed
//! by filters, each a small value in its own file:
//!
//! ```text
//! WordSegmenter -> LowerCaser -> RemoveNumbers -> LengthFilter -> StopWordFilter::mark -> Stemmer
//! ```
//!
//! Chinese (`language = "chinese"`) starts with the [`HanSegmenter`] (jieba for runs of Han
//! characters, the word rules for the rest) and marks single Han characters as stop words
//! ([`han::LoneCharacters`]) before the stemmer, which stems the Latin words in English; each
//! language's stop words come from [`languages`]. A Chinese word can also bring sub-words, its
//! characters and bigrams ([`sub_words`], `tokenize.chinese`): TF-IDF features
//! ([`TokenizedCorpus::doc_features`]) that never label a topic, which is counted from whole
//! words ([`TokenizedCorpus::doc_terms`]).
//!
//! Order matters: the stop-word list and the stemmer expect lowercase input, and stop words are
//! *marked*, not removed, so that phrase detection later sees "chain of thought" whole.
//!
//! Every filter works on one token at a time, so a corpus is analysed per distinct word, not per
//! occurrence: [`TokenizedCorpus::build_texts`] interns the words of each chunk of documents in
//! parallel, merges the chunk vocabularies in chunk order (so ids never depend on the thread
//! count), runs the chain once per distinct word, and keeps each document as a sequence of word
//! ids. The hot loop does one lookup per word in an [`interner::Interner`] (short words packed
//! into integers) and allocates nothing. For each stem the most
//! frequent surface form is kept, so people read "clustering", never "cluster" or "languag".
//!
//! This file holds what the stage gives, [`TokenizedCorpus`], and the [`Analyzer`] that
//! builds it; [`chain`] builds one language's chain, [`build`] the corpus's phases, [`mixed`]
//! a chain per language for a mixed corpus.

mod ascii_words;
mod build;
mod chain;
pub mod han;
mod interner;
pub mod join;
pub mod languages;
mod length;
mod lower_caser;
mod mixed;
mod numbers;
mod params;
mod segmenter;
mod stemmer;
pub mod stop_words;
pub mod sub_words;
mod token;
pub mod user_dictionary;

pub use chain::AnalyzerBuilder;
pub use han::{ChineseTerms, HanSegmenter};
pub use join::join_words;
pub use length::LengthFilter;
pub use lower_caser::LowerCaser;
pub use numbers::RemoveNumbers;
pub use params::{StopWordList, TokenizerParams, TokenizerParamsError, TokenizerValidParams};
pub use segmenter::{Segmenter, WordSegmenter};
pub use stemmer::{Language, Stemmer};
pub use stop_words::StopWordFilter;
pub use sub_words::SubWords;
pub use token::{Token, TokenFilter};
pub use user_dictionary::{UserDictionary, UserDictionaryError};

use crate::ingest::Document;
use build::{intern_chunk, ChunkIds, ChunkVocab};
use rayon::prelude::*;

/// Documents per chunk in parallel passes. Fixed, so results never depend on the thread count.
pub const CHUNK: usize = 2048;

/// A segmenter followed by a chain of filters.
#[derive(Debug)]
pub struct Analyzer {
    segmenter: Segmenter,
    filters: Vec<Box<dyn TokenFilter>>,
    /// Chinese: the sub-words each word brings as features (see [`sub_words`]).
    sub_words: Option<SubWords>,
    /// A mixed corpus: one chain per language, picked per document (see [`mixed`]).
    mixed: Option<Box<mixed::Mixed>>,
}

impl Analyzer {
    /// The chain `s` describes. Chinese text is segmented by jieba ([`HanSegmenter`]) and its
    /// Latin words go down the English chain (English stemmer). `auto` before detection is
    /// taken as English.
    pub fn new(s: &TokenizerValidParams) -> Analyzer {
        let mut a = Self::for_language(s, s.language());
        a.mixed = mixed::Mixed::new(s).map(Box::new);
        a
    }

    /// Runs the chain on a text: every word, in order, with stop words marked.
    pub fn analyze(&self, text: &str) -> Vec<Token> {
        if let Some(m) = &self.mixed {
            return m.analyzer_for(text).analyze(text);
        }
        let mut tokens: Vec<Token> = Vec::new();
        self.segmenter
            .each_word(text, &mut |w| tokens.push(Token::new(w)));
        for f in &self.filters {
            f.apply(&mut tokens);
        }
        tokens
    }

    /// Runs the chain on one word; `None` when a filter removed it.
    pub fn analyze_word(&self, word: &str) -> Option<Token> {
        let mut tokens = vec![Token::new(word)];
        for f in &self.filters {
            f.apply(&mut tokens);
        }
        tokens.pop()
    }

    /// The analysed sub-words `word` brings as features (none outside Chinese, see
    /// [`sub_words`]).
    pub fn sub_words(&self, word: &str) -> Vec<Token> {
        self.sub_words
            .as_ref()
            .map_or_else(Vec::new, |s| s.of(word))
    }
}

/// What the chain made of a distinct word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordKind {
    /// Removed by a filter (a number, too short or too long).
    Dropped,
    /// A stop word: never a feature, but may sit inside a phrase.
    Stop,
    /// A content word, counted as this term.
    Term(u32),
}

/// A distinct word of the corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// Lowercased surface form.
    pub surface: String,
    pub kind: WordKind,
}

/// A term: a stem, shown by its most frequent surface form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub stem: String,
    /// The most frequent lowercased surface of the stem (ties: alphabetically first).
    pub surface: String,
    /// Occurrences in the corpus as a word: 0 for a term found only inside words, as a
    /// sub-word (see [`sub_words`]), which is a feature but never a label.
    pub count: u64,
}

impl Term {
    /// Whether the term occurs as a word (not only as a sub-word): only such terms are listed
    /// and label topics.
    pub fn is_word(&self) -> bool {
        self.count > 0
    }
}

/// The term id of a word that is not a term (a stop word or a dropped word).
const NOT_A_TERM: u32 = u32::MAX;

/// Every document as a sequence of word ids, plus the word and term vocabularies.
///
/// Word ids are stored in the blocks the tokenizer produced (one per chunk of documents), so they
/// are never copied into one array: that copy held the corpus's tokens twice at the peak.
#[derive(Debug, Clone)]
pub struct TokenizedCorpus {
    pub words: Vec<Word>,
    pub terms: Vec<Term>,
    /// Each word's term id, or [`NOT_A_TERM`]: `words[w].kind` in a small array, for the loops
    /// that run once per token.
    term_of: Vec<u32>,
    /// Each word's sub-word terms (Chinese, see [`sub_words`]):
    /// `sub_terms[sub_start[w]..sub_start[w + 1]]`; both empty when no word has any.
    sub_start: Vec<u32>,
    sub_terms: Vec<u32>,
    blocks: Vec<Vec<u32>>,
    /// Per document: its block, start and length in that block.
    spans: Vec<Span>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    block: u32,
    start: u32,
    len: u32,
}

impl TokenizedCorpus {
    /// Analyses every text (already cleaned).
    ///
    /// Three phases: each chunk of [`CHUNK`] documents interns its words locally (in parallel);
    /// the chunk vocabularies are merged in chunk order into global word ids, which replace the
    /// local ones; then the chain runs once per distinct word (in parallel) and the terms are
    /// interned in word order, each shown by its most frequent surface.
    pub fn build_texts(texts: &[&str], analyzer: &Analyzer) -> TokenizedCorpus {
        if let Some(m) = &analyzer.mixed {
            return m.build(texts);
        }
        // Phase 1, parallel: intern each chunk's words locally.
        let chunks: Vec<(ChunkVocab, ChunkIds)> = texts
            .par_chunks(CHUNK)
            .map(|docs| intern_chunk(docs, &analyzer.segmenter))
            .collect();
        Self::from_chunks(chunks, texts.len(), analyzer)
    }

    /// The documents of `docs` in the chunks [`Self::build_releasing`] hands over: each
    /// chunk's first row and length.
    pub fn chunk_bounds(n_docs: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
        (0..n_docs)
            .step_by(CHUNK)
            .map(move |first| first..(first + CHUNK).min(n_docs))
    }

    /// As [`Self::build_texts`] on the documents' texts, handing each chunk of documents (see [`Self::chunk_bounds`]) to
    /// `release`, with its item of `states`, as soon as its words are interned: the tokens no
    /// longer need a chunk's texts then, so `release` can cut them while the other chunks are
    /// still being interned, and the stage never holds every full text and every token at
    /// once. Mixed-script corpora are tokenized whole, then released chunk by chunk.
    pub fn build_releasing<S: Send>(
        docs: &mut [Document],
        analyzer: &Analyzer,
        states: Vec<S>,
        release: impl Fn(&mut [Document], S) + Sync,
    ) -> TokenizedCorpus {
        assert_eq!(
            states.len(),
            docs.len().div_ceil(CHUNK),
            "one state per chunk"
        );
        if let Some(m) = &analyzer.mixed {
            let texts: Vec<&str> = docs.iter().map(|d| d.text.as_str()).collect();
            let tokens = m.build(&texts);
            docs.chunks_mut(CHUNK)
                .zip(states)
                .for_each(|(chunk, state)| release(chunk, state));
            return tokens;
        }
        let n_docs = docs.len();
        let chunks = docs
            .par_chunks_mut(CHUNK)
            .zip(states)
            .map(|(chunk, state)| {
                let texts: Vec<&str> = chunk.iter().map(|d| d.text.as_str()).collect();
                let words = intern_chunk(&texts, &analyzer.segmenter);
                drop(texts);
                release(chunk, state);
                words
            })
            .collect();
        Self::from_chunks(chunks, n_docs, analyzer)
    }

    pub fn n_docs(&self) -> usize {
        self.spans.len()
    }

    /// All word ids of document `i`, in order (stop words and dropped words included).
    pub fn doc_words(&self, i: usize) -> &[u32] {
        let s = self.spans[i];
        &self.blocks[s.block as usize][s.start as usize..(s.start + s.len) as usize]
    }

    /// The term ids of document `i`, in order (stop words and dropped words left out).
    pub fn doc_terms(&self, i: usize) -> impl Iterator<Item = u32> + '_ {
        self.doc_words(i)
            .iter()
            .map(|&w| self.term_of[w as usize])
            .filter(|&t| t != NOT_A_TERM)
    }

    /// Whether any word brings sub-words (see [`sub_words`]).
    pub fn has_sub_words(&self) -> bool {
        !self.sub_terms.is_empty()
    }

    /// The sub-word terms word `w` brings (none outside Chinese).
    pub fn sub_terms_of(&self, w: u32) -> &[u32] {
        match self.sub_start.get(w as usize..w as usize + 2) {
            Some(&[a, b]) => &self.sub_terms[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The feature ids of document `i`, what TF-IDF weighs: each word's term (as
    /// [`Self::doc_terms`]) followed by its sub-word terms.
    pub fn doc_features(&self, i: usize) -> impl Iterator<Item = u32> + '_ {
        self.doc_words(i).iter().flat_map(move |&w| {
            let t = self.term_of[w as usize];
            (t != NOT_A_TERM)
                .then_some(t)
                .into_iter()
                .chain(self.sub_terms_of(w).iter().copied())
        })
    }

    /// Keeps the documents whose `keep` flag is set (term counts are unchanged when the removed
    /// documents have no terms, which is what this is used for).
    pub fn retain_docs(&mut self, keep: &[bool]) {
        let mut it = keep.iter();
        self.spans.retain(|_| *it.next().unwrap_or(&true));
    }

    /// Documents with no term and no sub-word at all (e.g. only stop words).
    pub fn empty_docs(&self) -> Vec<usize> {
        (0..self.n_docs())
            .filter(|&i| self.doc_features(i).next().is_none())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn settings() -> TokenizerValidParams {
        TokenizerParams::new()
            .extra_stop_words(vec!["foo".into()])
            .check()
            .unwrap()
    }

    /// A Chinese chain cutting Han text as `terms` says.
    pub(super) fn chinese(terms: ChineseTerms) -> Analyzer {
        Analyzer::new(
            &TokenizerParams::new()
                .language("chinese")
                .chinese(terms)
                .check()
                .unwrap(),
        )
    }

    #[test]
    fn issue_39_sub_words_are_features_of_the_documents_but_no_words_of_them() {
        let texts = ["卷积神经网络", "神经网络", "网络"];
        let tc = TokenizedCorpus::build_texts(&texts, &chinese(ChineseTerms::WordsBigrams));
        let id = |s: &str| tc.terms.iter().position(|t| t.surface == s).unwrap() as u32;
        let shown = |ids: Vec<u32>| -> Vec<String> {
            ids.iter()
                .map(|&t| tc.terms[t as usize].surface.clone())
                .collect()
        };
        assert!(tc.has_sub_words());
        assert_eq!(shown(tc.doc_terms(1).collect()), ["神经网络"]);
        assert_eq!(
            shown(tc.doc_features(1).collect()),
            ["神经网络", "神经", "经网", "网络"],
            "the word, then its bigrams"
        );
        // "网络" is a word of the third document, so its sub-word is that same term; "经网" is
        // only ever a sub-word: a feature with no occurrence as a word.
        assert_eq!(tc.doc_terms(2).collect::<Vec<_>>(), [id("网络")]);
        assert!(tc.terms[id("网络") as usize].is_word());
        assert!(!tc.terms[id("经网") as usize].is_word());
        assert_eq!(tc.terms[id("经网") as usize].count, 0);
        assert!(tc.doc_terms(0).all(|t| tc.terms[t as usize].is_word()));
        // Words alone: no sub-words, the features are the terms.
        let words = TokenizedCorpus::build_texts(&texts, &chinese(ChineseTerms::Words));
        assert!(!words.has_sub_words());
        for d in 0..3 {
            assert!(words.doc_features(d).eq(words.doc_terms(d)));
        }
    }

    #[test]
    fn issue_39_a_document_of_single_characters_is_kept_by_their_features() {
        // "股" is a single character: a stop word as a word, a feature as a character.
        let texts = ["股", "的"];
        let chars = TokenizedCorpus::build_texts(&texts, &chinese(ChineseTerms::WordsCharacters));
        assert_eq!(chars.doc_terms(0).count(), 0);
        assert_eq!(chars.doc_features(0).count(), 1);
        assert_eq!(chars.empty_docs(), [1], "a stop word brings no sub-word");
        let words = TokenizedCorpus::build_texts(&texts, &chinese(ChineseTerms::Words));
        assert_eq!(words.empty_docs(), [0, 1]);
        // Cut into characters, a single character is a term.
        let alone = TokenizedCorpus::build_texts(&texts, &chinese(ChineseTerms::Characters));
        assert_eq!(alone.doc_terms(0).count(), 1);
        assert!(!alone.has_sub_words());
    }
}
