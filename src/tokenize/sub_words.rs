//! Chinese terms: what Han text is cut into, and the sub-words that count toward clustering but
//! never name a topic (`tokenize.chinese`).
//!
//! Whole words read well in labels ("神经网络", not "络"), but a corpus cut into words alone
//! loses what two documents share below the word: "卷积神经网络" and "神经网络" are two terms
//! with nothing in common, and a compound jieba's dictionary does not know is one rare term
//! instead of its familiar parts. Cut into single characters, those documents meet again, and the
//! V-measure on Chinese abstracts was higher, but the labels were characters ("股", "络").
//!
//! So a word can bring *sub-words* along: smaller terms taken from inside it (its characters, its
//! character bigrams, or the dictionary words inside it, as jieba's search mode finds them). They
//! are TF-IDF features, so they weigh in the clustering, but they stay out of the word stream:
//! the labels, top terms and phrases are counted from whole words only
//! ([`super::TokenizedCorpus::doc_terms`]), while the TF-IDF matrix reads
//! [`super::TokenizedCorpus::doc_features`], the whole words' terms and their sub-words. A
//! sub-word that is also a word elsewhere ("网络" inside "神经网络") is the same feature as that
//! word, and still labels only where it stands alone.
//!
//! Sub-words are a function of the word, so they are found once per distinct word, like every
//! other step of the chain. Stop words bring none, and a sub-word that is a stop word is left
//! out; single characters count here (they are features, never labels), which is what
//! [`super::han::LoneCharacters`] forbids for whole words.

use super::han::{is_han, HanSegmenter};
use super::{Token, TokenFilter};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// What Chinese text is cut into, and which sub-words each word brings (`tokenize.chinese`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChineseTerms {
    /// jieba's words alone; single characters are stop words.
    Words,
    /// Single Han characters, each a term (what the Unicode word rules give, before jieba).
    Characters,
    /// jieba's words, and each word's characters as sub-words.
    #[serde(rename = "words+characters")]
    WordsCharacters,
    /// jieba's words, and the character bigrams of each word of three or more characters.
    #[serde(rename = "words+bigrams")]
    WordsBigrams,
    /// jieba's words, and the character bigrams of each word of three or more characters that
    /// jieba's dictionary does not know (found by its HMM).
    #[serde(rename = "words+unknown-bigrams")]
    WordsUnknownBigrams,
    /// jieba's words, and the dictionary words of two and three characters inside each longer
    /// word (what jieba's search mode adds).
    #[serde(rename = "words+search")]
    WordsSearch,
}

impl ChineseTerms {
    /// The default: see docs/benchmarks.md, "Chinese: THUCNews against scikit-learn + jieba".
    pub const DEFAULT: ChineseTerms = ChineseTerms::Words;

    /// Every setting, in the order the messages list them.
    pub const ALL: [ChineseTerms; 6] = [
        Self::Words,
        Self::Characters,
        Self::WordsCharacters,
        Self::WordsBigrams,
        Self::WordsUnknownBigrams,
        Self::WordsSearch,
    ];

    /// The setting's name in a pipeline file.
    pub fn name(self) -> &'static str {
        match self {
            Self::Words => "words",
            Self::Characters => "characters",
            Self::WordsCharacters => "words+characters",
            Self::WordsBigrams => "words+bigrams",
            Self::WordsUnknownBigrams => "words+unknown-bigrams",
            Self::WordsSearch => "words+search",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Every accepted name, quoted, for messages.
    pub const NAMES: &'static str = "\"words\", \"characters\", \"words+characters\", \
        \"words+bigrams\", \"words+unknown-bigrams\" or \"words+search\"";

    /// Whether Han text is cut into words (by jieba) rather than characters.
    pub fn words(self) -> bool {
        self != Self::Characters
    }

    /// Whether words bring sub-words.
    pub fn has_sub_words(self) -> bool {
        !matches!(self, Self::Words | Self::Characters)
    }
}

impl fmt::Display for ChineseTerms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Finds and analyses the sub-words of a word (see the module docs).
#[derive(Debug)]
pub struct SubWords {
    han: Arc<HanSegmenter>,
    terms: ChineseTerms,
    /// The chain a sub-word goes down: the word chain without the rule that single characters
    /// are stop words.
    chain: Vec<Box<dyn TokenFilter>>,
}

impl SubWords {
    /// The sub-words `terms` asks for (`None` when it asks for none), found with `han`'s
    /// dictionary and analysed by `chain`.
    pub fn new(
        han: Arc<HanSegmenter>,
        terms: ChineseTerms,
        chain: Vec<Box<dyn TokenFilter>>,
    ) -> Option<SubWords> {
        terms
            .has_sub_words()
            .then_some(SubWords { han, terms, chain })
    }

    /// The analysed sub-words of `word`, stop words left out; none when `word` itself is a stop
    /// word or dropped.
    pub fn of(&self, word: &str) -> Vec<Token> {
        let mut host = vec![Token::new(word)];
        self.run(&mut host);
        if host.first().is_none_or(|t| t.stop) {
            return Vec::new();
        }
        let mut subs = Vec::new();
        sub_words(&self.han, word, self.terms, &mut |w| {
            subs.push(Token::new(w))
        });
        self.run(&mut subs);
        subs.retain(|t| !t.stop);
        subs
    }

    fn run(&self, tokens: &mut Vec<Token>) {
        for f in &self.chain {
            f.apply(tokens);
        }
    }
}

/// Hands each sub-word of `word` that `terms` asks for to `f`, in order, as slices of it. Only
/// words made of Han characters have any; a word in traditional characters is looked up in the
/// dictionary in its simplified form.
pub fn sub_words<'a>(
    han: &HanSegmenter,
    word: &'a str,
    terms: ChineseTerms,
    f: &mut impl FnMut(&'a str),
) {
    if word.is_ascii() || !word.chars().all(is_han) {
        return;
    }
    let at: Vec<usize> = word
        .char_indices()
        .map(|(i, _)| i)
        .chain([word.len()])
        .collect();
    let n = at.len() - 1;
    let simple = super::han::simplified(word);
    let simple_at: Option<Vec<usize>> = simple.as_ref().map(|s| {
        let mut v: Vec<usize> = s.char_indices().map(|(i, _)| i).collect();
        v.push(s.len());
        v
    });
    // Whether the characters `i..j` are a word of the dictionary (in simplified form).
    let known = |i: usize, j: usize| match (&simple, &simple_at) {
        (Some(s), Some(sa)) if sa.len() == at.len() => han.knows(&s[sa[i]..sa[j]]),
        _ => han.knows(&word[at[i]..at[j]]),
    };
    let mut grams = |len: usize, only_known: bool| {
        for i in 0..=n.saturating_sub(len) {
            if !only_known || known(i, i + len) {
                f(&word[at[i]..at[i + len]]);
            }
        }
    };
    match terms {
        ChineseTerms::Words | ChineseTerms::Characters => {}
        ChineseTerms::WordsCharacters => grams(1, false),
        ChineseTerms::WordsBigrams if n >= 3 => grams(2, false),
        ChineseTerms::WordsUnknownBigrams if n >= 3 && !known(0, n) => grams(2, false),
        ChineseTerms::WordsSearch => {
            if n > 2 {
                grams(2, true);
            }
            if n > 3 {
                grams(3, true);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subs(terms: ChineseTerms, word: &str) -> Vec<String> {
        let han = HanSegmenter::new(None, ChineseTerms::Words);
        let mut out = Vec::new();
        sub_words(&han, word, terms, &mut |w| out.push(w.to_string()));
        out
    }

    #[test]
    fn each_setting_finds_its_sub_words() {
        use ChineseTerms::*;
        assert_eq!(subs(WordsCharacters, "网络"), ["网", "络"]);
        assert_eq!(subs(WordsCharacters, "股"), ["股"]);
        assert!(
            subs(WordsBigrams, "网络").is_empty(),
            "a bigram word is whole"
        );
        assert_eq!(subs(WordsBigrams, "神经网络"), ["神经", "经网", "网络"]);
        // 神经网络 is in jieba's dictionary; 网红店 is not.
        assert!(subs(WordsUnknownBigrams, "神经网络").is_empty());
        assert_eq!(subs(WordsUnknownBigrams, "网红店"), ["网红", "红店"]);
        // Search mode: only the dictionary's words inside ("经网" is none).
        assert_eq!(
            subs(WordsSearch, "中华人民共和国"),
            ["中华", "华人", "人民", "共和", "共和国"]
        );
        assert_eq!(subs(WordsSearch, "神经网络"), ["神经", "网络", "神经网"]);
        for t in ChineseTerms::ALL {
            assert!(subs(t, "network").is_empty(), "{t}: Latin words have none");
            assert!(subs(t, "bp神经网络").is_empty(), "{t}: nor mixed ones");
        }
        assert!(subs(Words, "神经网络").is_empty() && subs(Characters, "神经网络").is_empty());
    }

    #[test]
    fn traditional_words_are_looked_up_simplified_and_cut_as_written() {
        assert_eq!(
            subs(ChineseTerms::WordsSearch, "神經網絡"),
            ["神經", "網絡", "神經網"]
        );
        assert_eq!(subs(ChineseTerms::WordsCharacters, "網絡"), ["網", "絡"]);
    }

    #[test]
    fn names_round_trip_and_serialize_as_written_in_a_pipeline() {
        for t in ChineseTerms::ALL {
            assert_eq!(ChineseTerms::from_name(t.name()), Some(t));
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, format!("\"{}\"", t.name()));
            assert_eq!(serde_json::from_str::<ChineseTerms>(&json).unwrap(), t);
        }
        assert_eq!(ChineseTerms::from_name("bigrams"), None);
        let listed: Vec<String> = ChineseTerms::ALL
            .iter()
            .map(|t| format!("\"{}\"", t.name()))
            .collect();
        let (head, last) = listed.split_at(listed.len() - 1);
        assert_eq!(
            ChineseTerms::NAMES,
            format!("{} or {}", head.join(", "), last[0])
        );
    }
}
