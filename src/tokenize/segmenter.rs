//! The first link of the chain: text -> words, by the Unicode word-boundary rules (UAX #29),
//! keeping the segments that hold a letter or digit (what `unicode-segmentation`'s
//! `unicode_words` yields).
//!
//! Most abstracts are pure ASCII after cleaning, and for ASCII text the
//! rules come down to: a word is a run of letters, digits and `_`, in which one `.`, `'` or `:`
//! between two letters, or one `.`, `'`, `,` or `;` between two digits, does not break the run
//! ("e.g", "don't", "3.14", "1,000"). [`AsciiWords`] finds exactly those runs, 64 bytes at a
//! time, and skips the spaces and punctuation between them, where the general iterator yields
//! every space and punctuation mark as a segment of its own and then filters it out. Text with
//! any non-ASCII byte goes to `unicode_words`. A property test holds the two to the same output.

use super::ascii_words::AsciiWords;
use super::HanSegmenter;
use std::sync::Arc;
use unicode_segmentation::UnicodeSegmentation;

/// The first link of a chain: the Unicode word rules, or jieba for Chinese (shared by the
/// threads that tokenize in parallel).
#[derive(Debug, Clone)]
pub enum Segmenter {
    Words(WordSegmenter),
    Han(Arc<HanSegmenter>),
}

impl Default for Segmenter {
    fn default() -> Self {
        Segmenter::Words(WordSegmenter)
    }
}

impl Segmenter {
    /// Hands every word of `text` to `f`, in order, as slices of it.
    #[inline]
    pub fn each_word<'a>(&self, text: &'a str, f: &mut impl FnMut(&'a str)) {
        match self {
            Segmenter::Words(w) => w.words(text).for_each(f),
            Segmenter::Han(h) => h.each_word(text, f),
        }
    }
}

/// Splits text into words (Unicode word boundaries, UAX #29).
#[derive(Debug, Clone, Copy, Default)]
pub struct WordSegmenter;

impl WordSegmenter {
    /// The words of `text`, as slices of it.
    #[inline]
    pub fn words<'a>(&self, text: &'a str) -> Words<'a> {
        if text.is_ascii() {
            Words::Ascii(AsciiWords::new(text))
        } else {
            Words::Unicode(text.unicode_words())
        }
    }
}

/// The words of one text: the ASCII scan or the general iterator.
pub enum Words<'a> {
    Ascii(AsciiWords<'a>),
    Unicode(unicode_segmentation::UnicodeWords<'a>),
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        match self {
            Words::Ascii(w) => w.next(),
            Words::Unicode(w) => w.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(text: &str) -> Vec<&str> {
        WordSegmenter.words(text).collect()
    }

    #[test]
    fn ascii_words_follow_the_infix_rules() {
        assert_eq!(
            ours("Don't split 3.14, 1,000 or e.g. a:b; but split a.1, 1.a, x..y and __ alone_"),
            vec![
                "Don't", "split", "3.14", "1,000", "or", "e.g", "a:b", "but", "split", "a", "1",
                "1", "a", "x", "y", "and", "alone_"
            ]
        );
        assert_eq!(ours(""), Vec::<&str>::new());
        assert_eq!(ours(" ,; __ "), Vec::<&str>::new());
    }

    #[test]
    fn non_ascii_text_takes_the_general_path() {
        let text = "Schrödinger's naïve café, 3.5 km";
        assert_eq!(ours(text), text.unicode_words().collect::<Vec<_>>());
        assert_eq!(ours(text)[0], "Schrödinger's");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]
        /// On any ASCII text made of the bytes the rules treat differently, the scan yields what
        /// `unicode_words` yields.
        #[test]
        fn agrees_with_unicode_words(text in "[aZ09_.',:; \"\r\n\t\x0b/-]{0,40}") {
            let general: Vec<&str> = text.unicode_words().collect();
            proptest::prop_assert_eq!(ours(&text), general);
        }
    }
}
