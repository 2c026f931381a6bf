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

mod ascii_words;
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
use interner::Interner;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

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

/// Builds an [`Analyzer`] one filter at a time (the Unicode word segmenter unless told).
#[derive(Debug, Default)]
pub struct AnalyzerBuilder {
    segmenter: Segmenter,
    filters: Vec<Box<dyn TokenFilter>>,
}

impl AnalyzerBuilder {
    pub fn segmenter(mut self, segmenter: Segmenter) -> Self {
        self.segmenter = segmenter;
        self
    }
    pub fn filter(mut self, f: impl TokenFilter + 'static) -> Self {
        self.filters.push(Box::new(f));
        self
    }
    pub fn build(self) -> Analyzer {
        Analyzer {
            segmenter: self.segmenter,
            filters: self.filters,
            sub_words: None,
            mixed: None,
        }
    }
}

/// The stop words of `list` for `language`, then the pipeline's extra ones.
fn stop_list(
    list: StopWordList,
    language: &languages::LanguageInfo,
    extra: &[String],
) -> Vec<String> {
    let english = || {
        stop_words::ENGLISH
            .iter()
            .chain(stop_words::ABSTRACT_BOILERPLATE)
            .chain(stop_words::CONTRACTIONS)
    };
    let mut stop: Vec<String> = match list {
        StopWordList::English => english().map(|w| w.to_string()).collect(),
        StopWordList::StopwordsIso => {
            let mut words: Vec<&str> = languages::iso_stop_words(language).to_vec();
            words.extend(english());
            words.into_iter().map(|w| w.to_lowercase()).collect()
        }
        StopWordList::None => Vec::new(),
    };
    stop.extend(extra.iter().cloned());
    stop
}

impl Analyzer {
    pub fn builder() -> AnalyzerBuilder {
        AnalyzerBuilder::default()
    }

    /// The chain `s` describes. Chinese text is segmented by jieba ([`HanSegmenter`]) and its
    /// Latin words go down the English chain (English stemmer). `auto` before detection is
    /// taken as English.
    pub fn new(s: &TokenizerValidParams) -> Analyzer {
        let mut a = Self::for_language(s, s.language());
        a.mixed = mixed::Mixed::new(s).map(Box::new);
        a
    }

    /// The chain `s` describes, for `language` (one of a mixed corpus's languages).
    pub fn for_language(s: &TokenizerValidParams, language: &str) -> Analyzer {
        let english = languages::by_name("english").expect("English is known");
        let lang = languages::by_name(language).unwrap_or(english);
        // In a mixed corpus each language has its own list (unless stop words are off).
        let list = match s.stop_words() {
            StopWordList::None => StopWordList::None,
            _ if !s.per_document().is_empty() => StopWordList::default_for(lang.name),
            list => list,
        };
        let stop = stop_list(list, lang, s.extra_stop_words());
        if lang.name == "chinese" {
            return Self::chinese(s, stop);
        }
        let mut b = Analyzer::builder()
            .filter(LowerCaser)
            .filter(RemoveNumbers)
            .filter(LengthFilter::between(s.min_length(), s.max_length()))
            .filter(StopWordFilter::mark(stop));
        if s.stem() {
            let algorithm = lang
                .stemmer
                .or(english.stemmer)
                .expect("English has a stemmer");
            b = b.filter(Stemmer::new(Language(algorithm)));
        }
        b.build()
    }

    /// The Chinese chain: Han text cut as `s.chinese()` says ([`HanSegmenter`]), single
    /// characters marked as stop words where words are kept, each word's sub-words found by a
    /// chain of their own ([`SubWords`]), and the Latin words stemmed in English.
    fn chinese(s: &TokenizerValidParams, stop: Vec<String>) -> Analyzer {
        let terms = s.chinese();
        let han = std::sync::Arc::new(HanSegmenter::new(s.user_dictionary(), terms));
        let base = |stop: Vec<String>| -> Vec<Box<dyn TokenFilter>> {
            vec![
                Box::new(LowerCaser),
                Box::new(RemoveNumbers),
                Box::new(LengthFilter::between(s.min_length(), s.max_length())),
                Box::new(StopWordFilter::mark(stop)),
            ]
        };
        let sub_words = terms
            .has_sub_words()
            .then(|| SubWords::new(terms, base(stop.clone())))
            .flatten();
        let mut filters = base(stop);
        if terms.words() {
            filters.push(Box::new(han::LoneCharacters));
        }
        if s.stem() {
            let english = languages::by_name("english").and_then(|l| l.stemmer);
            filters.push(Box::new(Stemmer::new(Language(
                english.expect("English has a stemmer"),
            ))));
        }
        Analyzer {
            segmenter: Segmenter::Han(han),
            filters,
            sub_words,
            mixed: None,
        }
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

    /// Phases 2 and 3 of [`Self::build_texts`], from the interned chunks.
    fn from_chunks(
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

/// One chunk's distinct words, copied out of its texts (which can then go), with their
/// packed keys (see [`Interner`]) and occurrences, by local id (phase 1 of
/// [`TokenizedCorpus::build_texts`]).
struct ChunkVocab {
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
struct ChunkIds {
    /// Words per document.
    lens: Vec<u32>,
    /// Every document's local word ids, one after another.
    ids: Vec<u32>,
}

/// Segments and interns the words of one chunk of documents.
fn intern_chunk(docs: &[&str], seg: &Segmenter) -> (ChunkVocab, ChunkIds) {
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
    use super::*;

    fn settings() -> TokenizerValidParams {
        TokenizerParams::new()
            .extra_stop_words(vec!["foo".into()])
            .check()
            .unwrap()
    }

    /// Each token's (text, surface, stop).
    fn chain(toks: &[Token]) -> Vec<(&str, &str, bool)> {
        toks.iter()
            .map(|t| (t.text.as_str(), t.surface.as_str(), t.stop))
            .collect()
    }

    #[test]
    fn chain_on_mixed_text() {
        let a = Analyzer::new(&settings());
        let toks = a.analyze("The Clustering of 2018 naïve LLMs — über-models, 中文 foo!");
        let kept = chain(&toks);
        assert_eq!(
            kept,
            [
                ("the", "the", true),
                ("cluster", "clustering", false),
                ("of", "of", true),
                ("naïv", "naïve", false),
                ("llms", "llms", false),
                ("über", "über", false),
                ("model", "models", false),
                // UAX #29 yields CJK ideographs one by one; the length filter keeps them.
                ("中", "中", false),
                ("文", "文", false),
                ("foo", "foo", true),
            ]
        );
    }

    #[test]
    fn issue_20_chinese_chain_segments_words_and_marks_stop_words() {
        let p = TokenizerParams::new().language("chinese").check().unwrap();
        let a = Analyzer::new(&p);
        let toks = a.analyze("基于BP神经网络的图像识别方法, Networks");
        let kept = chain(&toks);
        assert_eq!(
            kept,
            [
                ("基于", "基于", true),
                ("bp", "bp", false),
                ("神经网络", "神经网络", false),
                ("的", "的", true),
                ("图像识别", "图像识别", false),
                ("方法", "方法", false),
                ("network", "networks", false),
            ]
        );
        let de = Analyzer::new(&TokenizerParams::new().language("german").check().unwrap());
        let stop: Vec<bool> = de
            .analyze("Ich und die Häuser")
            .iter()
            .map(|t| t.stop)
            .collect();
        assert_eq!(stop, [true, true, true, false]);
        let off = TokenizerParams::new()
            .language("german")
            .stop_words(StopWordList::None)
            .check()
            .unwrap();
        assert!(Analyzer::new(&off)
            .analyze("Ich und")
            .iter()
            .all(|t| !t.stop));
    }

    /// A Chinese chain cutting Han text as `terms` says.
    fn chinese(terms: ChineseTerms) -> Analyzer {
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Whatever the text: tokens are lowercase, within the length limits, never pure numbers,
        /// and a content token's stem comes from its surface.
        #[test]
        fn analyzer_invariants(text in "\\PC{0,200}") {
            let a = Analyzer::new(&settings());
            for t in a.analyze(&text) {
                proptest::prop_assert_eq!(t.surface.to_lowercase(), t.surface.clone());
                proptest::prop_assert!(t.surface.chars().count() <= 40);
                proptest::prop_assert!(!RemoveNumbers::is_number(&t.surface));
                proptest::prop_assert!(!t.text.is_empty());
            }
            let tc = TokenizedCorpus::build_texts(&[text.as_str()], &a);
            proptest::prop_assert_eq!(tc.n_docs(), 1);
            for t in tc.doc_terms(0) {
                proptest::prop_assert!((t as usize) < tc.terms.len());
            }
        }
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
