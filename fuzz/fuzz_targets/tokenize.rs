//! Fuzzes the analyzer chain (`topicmap::tokenize::Analyzer`, built from the pipeline's default
//! `[tokenize]` settings) on arbitrary UTF-8 and on the cleaner's output for it.
//!
//! Besides "no panic", it checks what the filter chain guarantees:
//! - analysing a text equals analysing each of its UAX #29 words alone (`analyze_word`), which
//!   is what `TokenizedCorpus` relies on when it runs the chain once per distinct word;
//! - every token's text (stem) and surface are non-empty; the surface is lowercase (lowercasing
//!   it again changes nothing) and has no typographic apostrophe U+2019;
//! - the surface is `min_length..=max_length` chars long (shorter only when all CJK/kana/hangul,
//!   the length filter's exemption) and is never a pure number;
//! - `stop` is set exactly when the surface is on the stop list, and stop words are not stemmed;
//! - `TokenizedCorpus::build_texts` on the text gives one document with one word id per word
//!   and, in order, the same terms (stems) as the non-stop tokens.

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;
use std::sync::OnceLock;
use topicmap::clean::Cleaner;
use topicmap::config::options::InputOptions;
use topicmap::config::{Options, Settings};
use topicmap::tokenize::{
    stop_words, Analyzer, RemoveNumbers, StopWordFilter, StopWordList, TokenizedCorpus,
    TokenizerParams, WordSegmenter,
};

struct Fixture {
    settings: TokenizerParams,
    analyzer: Analyzer,
    stop: StopWordFilter,
}

/// The tokenize settings a pipeline file with no `[tokenize]` table gets, resolved by
/// `Settings::resolve` like the pipeline does, and the analyzer built from them.
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        // `TokenizedCorpus` runs on rayon: keep the fuzzer on one core.
        std::env::set_var("RAYON_NUM_THREADS", "1");
        let options = Options {
            input: vec![InputOptions {
                path: Some("x.txt".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        let settings = Settings::resolve(options, Path::new("fuzz.toml"))
            .expect("default settings resolve")
            .tokenize;
        // The same list `Analyzer::new` marks with.
        let mut words: Vec<&str> = match settings.stop_words {
            StopWordList::English => stop_words::ENGLISH
                .iter()
                .chain(stop_words::ABSTRACT_BOILERPLATE)
                .chain(stop_words::CONTRACTIONS)
                .copied()
                .collect(),
            StopWordList::None => Vec::new(),
        };
        words.extend(settings.extra_stop_words.iter().map(String::as_str));
        Fixture {
            analyzer: Analyzer::new(&settings),
            stop: StopWordFilter::mark(words),
            settings,
        }
    })
}

/// The length filter's exemption from the minimum (copied from `tokenize/length.rs`).
fn is_ideograph(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

fn check(text: &str, f: &Fixture) {
    let s = &f.settings;
    let tokens = f.analyzer.analyze(text);
    let words: Vec<&str> = WordSegmenter.words(text).collect();
    assert!(tokens.len() <= words.len());
    let one_by_one: Vec<_> = words
        .iter()
        .filter_map(|w| f.analyzer.analyze_word(w))
        .collect();
    assert_eq!(
        tokens, one_by_one,
        "analyze differs from analyze_word per word"
    );

    for t in &tokens {
        assert!(
            !t.text.is_empty() && !t.surface.is_empty(),
            "empty token {t:?}"
        );
        assert_eq!(t.surface.to_lowercase(), t.surface, "not lowercase: {t:?}");
        assert!(!t.surface.contains('\u{2019}'), "U+2019 kept: {t:?}");
        let n = t.surface.chars().count();
        assert!(n <= s.max_length, "too long: {t:?}");
        assert!(
            n >= s.min_length || t.surface.chars().all(is_ideograph),
            "too short: {t:?}"
        );
        assert!(!RemoveNumbers::is_number(&t.surface), "number kept: {t:?}");
        assert_eq!(
            t.stop,
            f.stop.contains(&t.surface),
            "stop flag wrong: {t:?}"
        );
        if t.stop || !s.stem {
            assert_eq!(t.text, t.surface, "stop word stemmed: {t:?}");
        }
    }

    let tc = TokenizedCorpus::build_texts(&[text], &f.analyzer);
    assert_eq!(tc.n_docs(), 1);
    assert_eq!(tc.doc_words(0).len(), words.len());
    let corpus_terms: Vec<&str> = tc
        .doc_terms(0)
        .map(|id| tc.terms[id as usize].stem.as_str())
        .collect();
    let token_terms: Vec<&str> = tokens
        .iter()
        .filter(|t| !t.stop)
        .map(|t| t.text.as_str())
        .collect();
    assert_eq!(
        corpus_terms, token_terms,
        "corpus terms differ from analyze"
    );
    let total: u64 = tc.terms.iter().map(|t| t.count).sum();
    assert_eq!(total as usize, token_terms.len());
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let f = fixture();
    check(text, f);
    check(&Cleaner::new().clean(text), f);
});
