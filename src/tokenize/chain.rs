//! The chain of one language: which segmenter and which filters, in which order.
//!
//! [`Analyzer::for_language`] reads like the chain it builds (lowercase, numbers out, length,
//! stop words marked, then the stemmer, which expects lowercase input); Chinese gets its own
//! ([`Analyzer::chinese`]: jieba, single characters marked, sub-words, Latin words stemmed in
//! English). A mixed corpus is one such chain per language, picked per document by
//! [`super::mixed`]; [`Analyzer::new`] adds that layer on top of the chain built here.

use super::{
    han, languages, stop_words, Analyzer, HanSegmenter, Language, LengthFilter, LowerCaser,
    RemoveNumbers, Segmenter, Stemmer, StopWordFilter, StopWordList, SubWords, TokenFilter,
    TokenizerValidParams,
};

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
}

#[cfg(test)]
mod tests {
    use super::super::tests::settings;
    use super::super::{Token, TokenizedCorpus, TokenizerParams};
    use super::*;

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
}
