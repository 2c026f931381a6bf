//! Stop words: scikit-learn's English list, an optional list of abstract boilerplate, and the
//! pipeline's own words.
//!
//! Matching is on the lowercased surface form, before stemming, so "using" is matched as written.
//! In `remove` mode stop words leave the stream; in `mark` mode they stay, flagged, so that phrase
//! detection can see "chain *of* thought" while features never count "of".

use super::{Token, TokenFilter};
use rustc_hash::FxHashSet;

/// scikit-learn's `ENGLISH_STOP_WORDS` (318 words, from the Glasgow Information Retrieval Group).
pub const ENGLISH: &[&str] = &[
    "a",
    "about",
    "above",
    "across",
    "after",
    "afterwards",
    "again",
    "against",
    "all",
    "almost",
    "alone",
    "along",
    "already",
    "also",
    "although",
    "always",
    "am",
    "among",
    "amongst",
    "amoungst",
    "amount",
    "an",
    "and",
    "another",
    "any",
    "anyhow",
    "anyone",
    "anything",
    "anyway",
    "anywhere",
    "are",
    "around",
    "as",
    "at",
    "back",
    "be",
    "became",
    "because",
    "become",
    "becomes",
    "becoming",
    "been",
    "before",
    "beforehand",
    "behind",
    "being",
    "below",
    "beside",
    "besides",
    "between",
    "beyond",
    "bill",
    "both",
    "bottom",
    "but",
    "by",
    "call",
    "can",
    "cannot",
    "cant",
    "co",
    "con",
    "could",
    "couldnt",
    "cry",
    "de",
    "describe",
    "detail",
    "do",
    "done",
    "down",
    "due",
    "during",
    "each",
    "eg",
    "eight",
    "either",
    "eleven",
    "else",
    "elsewhere",
    "empty",
    "enough",
    "etc",
    "even",
    "ever",
    "every",
    "everyone",
    "everything",
    "everywhere",
    "except",
    "few",
    "fifteen",
    "fifty",
    "fill",
    "find",
    "fire",
    "first",
    "five",
    "for",
    "former",
    "formerly",
    "forty",
    "found",
    "four",
    "from",
    "front",
    "full",
    "further",
    "get",
    "give",
    "go",
    "had",
    "has",
    "hasnt",
    "have",
    "he",
    "hence",
    "her",
    "here",
    "hereafter",
    "hereby",
    "herein",
    "hereupon",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "however",
    "hundred",
    "i",
    "ie",
    "if",
    "in",
    "inc",
    "indeed",
    "interest",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "keep",
    "last",
    "latter",
    "latterly",
    "least",
    "less",
    "ltd",
    "made",
    "many",
    "may",
    "me",
    "meanwhile",
    "might",
    "mill",
    "mine",
    "more",
    "moreover",
    "most",
    "mostly",
    "move",
    "much",
    "must",
    "my",
    "myself",
    "name",
    "namely",
    "neither",
    "never",
    "nevertheless",
    "next",
    "nine",
    "no",
    "nobody",
    "none",
    "noone",
    "nor",
    "not",
    "nothing",
    "now",
    "nowhere",
    "of",
    "off",
    "often",
    "on",
    "once",
    "one",
    "only",
    "onto",
    "or",
    "other",
    "others",
    "otherwise",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "part",
    "per",
    "perhaps",
    "please",
    "put",
    "rather",
    "re",
    "same",
    "see",
    "seem",
    "seemed",
    "seeming",
    "seems",
    "serious",
    "several",
    "she",
    "should",
    "show",
    "side",
    "since",
    "sincere",
    "six",
    "sixty",
    "so",
    "some",
    "somehow",
    "someone",
    "something",
    "sometime",
    "sometimes",
    "somewhere",
    "still",
    "such",
    "system",
    "take",
    "ten",
    "than",
    "that",
    "the",
    "their",
    "them",
    "themselves",
    "then",
    "thence",
    "there",
    "thereafter",
    "thereby",
    "therefore",
    "therein",
    "thereupon",
    "these",
    "they",
    "thick",
    "thin",
    "third",
    "this",
    "those",
    "though",
    "three",
    "through",
    "throughout",
    "thru",
    "thus",
    "to",
    "together",
    "too",
    "top",
    "toward",
    "towards",
    "twelve",
    "twenty",
    "two",
    "un",
    "under",
    "until",
    "up",
    "upon",
    "us",
    "very",
    "via",
    "was",
    "we",
    "well",
    "were",
    "what",
    "whatever",
    "when",
    "whence",
    "whenever",
    "where",
    "whereafter",
    "whereas",
    "whereby",
    "wherein",
    "whereupon",
    "wherever",
    "whether",
    "which",
    "while",
    "whither",
    "who",
    "whoever",
    "whole",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "within",
    "without",
    "would",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Words every abstract uses whatever its topic ("propose", "results", "novel"). They would
/// otherwise crowd topic labels. Part of the built-in `english` list.
pub const ABSTRACT_BOILERPLATE: &[&str] = &[
    "abstract",
    "achieve",
    "achieves",
    "achieving",
    "approach",
    "approaches",
    "based",
    "demonstrate",
    "demonstrates",
    "existing",
    "experiment",
    "experimental",
    "experiments",
    "extensive",
    "extensively",
    "furthermore",
    "however",
    "moreover",
    "novel",
    "paper",
    "papers",
    "particular",
    "present",
    "presents",
    "propose",
    "proposed",
    "proposes",
    "provide",
    "provides",
    "result",
    "results",
    "show",
    "shown",
    "shows",
    "significantly",
    "specifically",
    "studies",
    "study",
    "use",
    "used",
    "uses",
    "using",
    "various",
    "work",
    "works",
];

/// English contractions. Unicode word segmentation keeps "don't" whole (scikit-learn's
/// tokenizer splits it into "don" and "t"), so the contracted forms are listed too. Part of the
/// built-in `english` list.
pub const CONTRACTIONS: &[&str] = &[
    "ain't",
    "aren't",
    "can't",
    "couldn't",
    "didn't",
    "doesn't",
    "don't",
    "hadn't",
    "hasn't",
    "haven't",
    "he's",
    "here's",
    "how's",
    "i'd",
    "i'll",
    "i'm",
    "i've",
    "isn't",
    "it'd",
    "it'll",
    "it's",
    "let's",
    "she's",
    "shouldn't",
    "that'll",
    "that's",
    "there's",
    "they'd",
    "they'll",
    "they're",
    "they've",
    "wasn't",
    "we'd",
    "we'll",
    "we're",
    "we've",
    "weren't",
    "what's",
    "where's",
    "who's",
    "won't",
    "wouldn't",
    "you'd",
    "you'll",
    "you're",
    "you've",
];

/// Removes (or marks) stop words.
#[derive(Debug, Clone, Default)]
pub struct StopWordFilter {
    words: FxHashSet<String>,
    mark_only: bool,
}

impl StopWordFilter {
    /// Removes `words` (compared with the lowercased surface).
    pub fn remove<I, S>(words: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        StopWordFilter {
            words: words
                .into_iter()
                .map(|w| w.as_ref().to_lowercase())
                .collect(),
            mark_only: false,
        }
    }

    /// Keeps stop words in the stream but sets [`Token::stop`].
    pub fn mark<I, S>(words: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        StopWordFilter {
            mark_only: true,
            ..Self::remove(words)
        }
    }

    pub fn contains(&self, word: &str) -> bool {
        self.words.contains(word)
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
}

impl TokenFilter for StopWordFilter {
    fn apply(&self, tokens: &mut Vec<Token>) {
        // A word in traditional characters is looked up in its simplified form too.
        let stop = |w: &str| {
            self.words.contains(w)
                || super::han::simplified(w).is_some_and(|s| self.words.contains(s.as_str()))
        };
        if self.mark_only {
            for t in tokens.iter_mut() {
                t.stop |= stop(t.surface.as_str());
            }
        } else {
            tokens.retain(|t| !stop(t.surface.as_str()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_list_is_sklearns() {
        assert_eq!(ENGLISH.len(), 318);
        assert!(ENGLISH.contains(&"the") && ENGLISH.contains(&"whereafter"));
    }

    #[test]
    fn removes_and_marks_by_surface() {
        let f = StopWordFilter::remove(ENGLISH.iter().chain(["für"].iter()));
        let mut v: Vec<Token> = ["the", "model", "für", "modèle"]
            .iter()
            .map(|s| Token::new(s))
            .collect();
        f.apply(&mut v);
        let got: Vec<_> = v.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(got, ["model", "modèle"]);

        let m = StopWordFilter::mark(ENGLISH);
        let mut v: Vec<Token> = ["chain", "of", "thought"]
            .iter()
            .map(|s| Token::new(s))
            .collect();
        m.apply(&mut v);
        assert_eq!(
            v.iter().map(|t| t.stop).collect::<Vec<_>>(),
            [false, true, false]
        );
    }
}
