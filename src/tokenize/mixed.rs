//! Mixed corpora: each document tokenized in its own language.
//!
//! When `language = "auto"` finds a second language in at least a tenth of its sample
//! ([`languages::detect_sample`]), the corpus counts as mixed: every document is detected on its
//! own, among the languages the sample showed (a document too short to tell goes to the most
//! common one), and tokenized by that language's chain (its segmenter, its own default stop
//! words unless they are off, and its stemmer).
//! The documents of each language are tokenized together as usual, and the parts are merged into
//! one [`TokenizedCorpus`]: words stay apart by language (a German "die" is a stop word, an
//! English "die" is not), terms are merged by stem, and documents keep their order. The
//! detection is deterministic, so `assign` puts a document in the same language as the fit did.

use super::{languages, Analyzer, Span, Term, TokenizedCorpus, TokenizerValidParams, Word};
use super::{WordKind, NOT_A_TERM};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// The chains of a mixed corpus's languages and the detector that picks one per document.
#[derive(Debug)]
pub(super) struct Mixed {
    detector: whatlang::Detector,
    languages: Vec<String>,
    analyzers: Vec<Analyzer>,
}

impl Mixed {
    /// The chains of `s`'s per-document languages (`None`: one language for every document).
    pub(super) fn new(s: &TokenizerValidParams) -> Option<Mixed> {
        let languages = s.per_document().to_vec();
        if languages.is_empty() {
            return None;
        }
        Some(Mixed {
            detector: languages::detector_for(&languages),
            analyzers: languages
                .iter()
                .map(|l| Analyzer::for_language(s, l))
                .collect(),
            languages,
        })
    }

    /// The chain for `text`'s language.
    pub(super) fn analyzer_for(&self, text: &str) -> &Analyzer {
        &self.analyzers[self.language_of(text)]
    }

    fn language_of(&self, text: &str) -> usize {
        let name = languages::detect_among(&self.detector, &self.languages, text);
        self.languages.iter().position(|l| l == name).unwrap_or(0)
    }

    /// Every text tokenized in its own language, merged in document order.
    pub(super) fn build(&self, texts: &[&str]) -> TokenizedCorpus {
        let of: Vec<usize> = texts.par_iter().map(|t| self.language_of(t)).collect();
        let parts: Vec<(TokenizedCorpus, Vec<usize>)> = self
            .analyzers
            .iter()
            .enumerate()
            .map(|(l, analyzer)| {
                let docs: Vec<usize> = (0..texts.len()).filter(|&i| of[i] == l).collect();
                let own: Vec<&str> = docs.iter().map(|&i| texts[i]).collect();
                (TokenizedCorpus::build_texts(&own, analyzer), docs)
            })
            .collect();
        merge(parts, texts.len())
    }
}

/// One corpus of the parts, each with the documents (of `n_docs`) it holds: words and blocks
/// appended, terms merged by stem (counts summed, the surface of the larger count kept), each
/// document's span put back at its place.
fn merge(parts: Vec<(TokenizedCorpus, Vec<usize>)>, n_docs: usize) -> TokenizedCorpus {
    let mut out = TokenizedCorpus {
        words: Vec::new(),
        terms: Vec::new(),
        term_of: Vec::new(),
        sub_start: vec![0],
        sub_terms: Vec::new(),
        blocks: Vec::new(),
        spans: vec![
            Span {
                block: 0,
                start: 0,
                len: 0
            };
            n_docs
        ],
    };
    let mut by_stem: FxHashMap<String, u32> = FxHashMap::default();
    for (mut part, docs) in parts {
        let remap: Vec<u32> = std::mem::take(&mut part.terms)
            .into_iter()
            .map(|t| merge_term(&mut out.terms, &mut by_stem, t))
            .collect();
        let (word_base, block_base) = (out.words.len() as u32, out.blocks.len() as u32);
        // Each word's sub-word terms, renumbered (none for a language without them).
        for w in 0..part.words.len() as u32 {
            let subs = part.sub_terms_of(w).iter().map(|&t| remap[t as usize]);
            out.sub_terms.extend(subs);
            out.sub_start.push(out.sub_terms.len() as u32);
        }
        out.words.extend(part.words.into_iter().map(|w| Word {
            kind: match w.kind {
                WordKind::Term(t) => WordKind::Term(remap[t as usize]),
                other => other,
            },
            ..w
        }));
        let term_of = part.term_of.iter();
        out.term_of.extend(term_of.map(|&t| {
            if t == NOT_A_TERM {
                t
            } else {
                remap[t as usize]
            }
        }));
        out.blocks.extend(part.blocks.into_iter().map(|mut b| {
            b.iter_mut().for_each(|w| *w += word_base);
            b
        }));
        for (span, doc) in part.spans.into_iter().zip(docs) {
            out.spans[doc] = Span {
                block: span.block + block_base,
                ..span
            };
        }
    }
    if out.sub_terms.is_empty() {
        out.sub_start.clear();
    }
    out
}

/// The id of `t`'s stem in `terms`, adding it or adding its count to the term already there.
fn merge_term(terms: &mut Vec<Term>, by_stem: &mut FxHashMap<String, u32>, t: Term) -> u32 {
    match by_stem.get(&t.stem) {
        Some(&id) => {
            let kept = &mut terms[id as usize];
            if t.count > kept.count {
                kept.surface = t.surface;
            }
            kept.count += t.count;
            id
        }
        None => {
            let id = terms.len() as u32;
            by_stem.insert(t.stem.clone(), id);
            terms.push(t);
            id
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::TokenizerParams;
    use super::*;

    #[test]
    fn each_document_in_its_own_language() {
        let en = "The proposed method improves the accuracy of image classification on benchmarks";
        let de =
            "Die vorgeschlagene Methode verbessert die Genauigkeit der Bildklassifikation deutlich";
        let zh = "本文提出一种基于卷积神经网络的图像识别方法，提高了图像分类的准确率";
        let texts: Vec<&str> = (0..30).map(|i| [en, en, de, zh, en][i % 5]).collect();
        let found = languages::detect_sample(&texts, 1).unwrap();
        assert_eq!(found.per_document, ["english", "german", "chinese"]);
        let p = TokenizerParams::new()
            .language("auto")
            .check()
            .unwrap()
            .resolved(Some(found));
        let a = Analyzer::new(&p);
        let tc = TokenizedCorpus::build_texts(&texts, &a);
        assert_eq!(tc.n_docs(), 30);
        let shown = |i: usize| -> Vec<&str> {
            tc.doc_terms(i)
                .map(|t| tc.terms[t as usize].surface.as_str())
                .collect()
        };
        // German stop words ("die", "der") are stop words in the German document only.
        assert_eq!(
            shown(2),
            [
                "vorgeschlagene",
                "method",
                "verbessert",
                "genauigkeit",
                "bildklassifikation",
                "deutlich"
            ]
        );
        assert!(shown(3).contains(&"神经网络"), "{:?}", shown(3));
        // Only the Chinese document brings sub-words (its characters and bigrams, the default).
        assert!(tc.doc_features(3).count() > tc.doc_terms(3).count());
        assert!(tc.doc_features(0).eq(tc.doc_terms(0)));
        assert!(tc.doc_features(3).any(|t| !tc.terms[t as usize].is_word()));
        assert!(shown(0).contains(&"classification"), "{:?}", shown(0));
        // Documents keep their order and their words.
        assert_eq!(shown(0), shown(1));
        assert_eq!(shown(7), shown(2));
        assert_eq!(tc.doc_words(4), tc.doc_words(0));
    }
}
