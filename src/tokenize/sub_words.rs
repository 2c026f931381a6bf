//! Chinese sub-words: the terms inside a word that count toward clustering but never name a
//! topic (`tokenize.chinese`, a [`ChineseTerms`] that asks for them).
//!
//! Whole words read well in labels ("神经网络", not "络"), but a corpus cut into words alone
//! loses what two documents share below the word: "卷积神经网络" and "神经网络" are two terms
//! with nothing in common, and a compound jieba's dictionary does not know is one rare term
//! instead of its familiar parts. Cut into single characters, those documents meet again, and the
//! V-measure on Chinese abstracts was higher, but the labels were characters ("股", "络").
//!
//! So a word can bring *sub-words* along: smaller terms taken from inside it, its characters
//! or its character bigrams. They are TF-IDF features, so they weigh in the clustering, but they
//! stay out of the word stream: the labels, top terms and phrases are counted from whole words
//! only ([`super::TokenizedCorpus::doc_terms`]), while the TF-IDF matrix reads
//! [`super::TokenizedCorpus::doc_features`], the whole words' terms and their sub-words. A
//! sub-word that is also a word elsewhere ("网络" inside "神经网络") is the same feature as that
//! word, and still labels only where it stands alone.
//!
//! The default, words with their characters and bigrams, gave the highest V-measure of the
//! settings on Chinese abstracts (CSL) and kept most of the words' V-measure on headlines
//! (THUCNews), where characters alone fell well below words: docs/benchmarks.md, "Chinese:
//! THUCNews against scikit-learn + jieba".
//!
//! Sub-words are a function of the word, so they are found once per distinct word, like every
//! other step of the chain. Stop words bring none, and a sub-word that is a stop word is left
//! out; single characters count here (they are features, never labels), which is what
//! [`super::han::LoneCharacters`] forbids for whole words.

use super::han::{is_han, ChineseTerms};
use super::{Token, TokenFilter};

/// Finds and analyses the sub-words of a word (see the module docs).
#[derive(Debug)]
pub struct SubWords {
    terms: ChineseTerms,
    /// The chain a sub-word goes down: the word chain without the rule that single characters
    /// are stop words.
    chain: Vec<Box<dyn TokenFilter>>,
}

impl SubWords {
    /// The sub-words `terms` asks for (`None` when it asks for none), analysed by `chain`.
    pub fn new(terms: ChineseTerms, chain: Vec<Box<dyn TokenFilter>>) -> Option<SubWords> {
        terms.has_sub_words().then_some(SubWords { terms, chain })
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
        sub_words(word, self.terms, &mut |w| subs.push(Token::new(w)));
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

/// Hands each sub-word of `word` that `terms` asks for to `f`, in order (characters, then
/// bigrams), as slices of it. Only words made of Han characters have any.
pub fn sub_words<'a>(word: &'a str, terms: ChineseTerms, f: &mut impl FnMut(&'a str)) {
    if word.is_ascii() || !word.chars().all(is_han) {
        return;
    }
    let at: Vec<usize> = word
        .char_indices()
        .map(|(i, _)| i)
        .chain([word.len()])
        .collect();
    let n = at.len() - 1;
    let mut grams = |len: usize| {
        for i in 0..=n.saturating_sub(len) {
            f(&word[at[i]..at[i + len]]);
        }
    };
    let (characters, bigrams) = match terms {
        ChineseTerms::Words | ChineseTerms::Characters => (false, false),
        ChineseTerms::WordsCharacters => (true, false),
        ChineseTerms::WordsBigrams => (false, true),
        ChineseTerms::WordsCharactersBigrams => (true, true),
    };
    if characters {
        grams(1);
    }
    // A word of two characters is its own only bigram.
    if bigrams && n >= 3 {
        grams(2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subs(terms: ChineseTerms, word: &str) -> Vec<String> {
        let mut out = Vec::new();
        sub_words(word, terms, &mut |w| out.push(w.to_string()));
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
        assert_eq!(
            subs(WordsCharactersBigrams, "神经网络"),
            ["神", "经", "网", "络", "神经", "经网", "网络"]
        );
        assert_eq!(subs(WordsCharactersBigrams, "网络"), ["网", "络"]);
        for t in ChineseTerms::ALL {
            assert!(subs(t, "network").is_empty(), "{t}: Latin words have none");
            assert!(subs(t, "bp神经网络").is_empty(), "{t}: nor mixed ones");
        }
        assert!(subs(Words, "神经网络").is_empty() && subs(Characters, "神经网络").is_empty());
        // Traditional characters are cut as written.
        assert_eq!(subs(WordsBigrams, "神經網絡"), ["神經", "經網", "網絡"]);
    }
}
