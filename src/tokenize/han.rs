//! Chinese word segmentation: runs of Han characters -> words, with jieba (jieba-rs).
//!
//! Chinese is written without spaces, and the Unicode word rules (UAX #29) cut it into single
//! characters ("神经网络" -> 神, 经, 网, 络), which name nothing. [`HanSegmenter`] splits a text
//! into runs of Han characters and everything else: each Han run is cut into words by jieba
//! (its bundled dictionary, which holds simplified and traditional words, plus the pipeline's
//! user dictionary; jieba's HMM guesses the words neither knows), and the rest goes to the
//! [`WordSegmenter`] like any other text, so "BP神经网络" gives "BP" and "神经网络", and the
//! Latin word then goes down the English chain. jieba is deterministic, so runs repeat exactly.
//! With `tokenize.chinese = "characters"` each Han run is cut into its characters instead.
//! That setting, [`ChineseTerms`], is defined here, where the segmenter reads it first;
//! [`super::sub_words`] reads it for the settings that keep words and add what is inside them.

use super::user_dictionary::UserDictionary;
use super::WordSegmenter;
use jieba_rs::Jieba;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::OnceLock;

/// Whether `c` is a Han character (CJK unified ideographs, their extensions and the
/// compatibility ideographs).
pub fn is_han(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// Whether `text` holds a Han character.
pub fn has_han(text: &str) -> bool {
    !text.is_ascii() && text.chars().any(is_han)
}

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
    /// jieba's words, each word's characters, and the character bigrams of each word of three
    /// or more characters: the default.
    #[serde(rename = "words+characters+bigrams")]
    WordsCharactersBigrams,
}

impl ChineseTerms {
    /// The default: see docs/benchmarks.md, "Chinese: THUCNews against scikit-learn + jieba".
    pub const DEFAULT: ChineseTerms = ChineseTerms::WordsCharactersBigrams;

    /// Every setting, in the order the messages list them.
    pub const ALL: [ChineseTerms; 5] = [
        Self::Words,
        Self::Characters,
        Self::WordsCharacters,
        Self::WordsBigrams,
        Self::WordsCharactersBigrams,
    ];

    /// The setting's name in a pipeline file.
    pub fn name(self) -> &'static str {
        match self {
            Self::Words => "words",
            Self::Characters => "characters",
            Self::WordsCharacters => "words+characters",
            Self::WordsBigrams => "words+bigrams",
            Self::WordsCharactersBigrams => "words+characters+bigrams",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Every accepted name, quoted, for messages.
    pub const NAMES: &'static str = "\"words\", \"characters\", \"words+characters\", \
        \"words+bigrams\" or \"words+characters+bigrams\"";

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

/// Cuts Han runs with jieba (or into characters) and the rest with the Unicode word rules.
pub struct HanSegmenter {
    jieba: Jieba,
    /// Cut Han runs into single characters, not words.
    characters: bool,
}

impl std::fmt::Debug for HanSegmenter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HanSegmenter(jieba)")
    }
}

impl HanSegmenter {
    /// jieba with its bundled dictionary, and the words of `user` when given; Han runs are cut
    /// into words, or into characters when `terms` says so.
    pub fn new(user: Option<&UserDictionary>, terms: ChineseTerms) -> Self {
        let mut jieba = Jieba::new();
        if let Some(dict) = user {
            for (word, freq) in dict.words() {
                jieba.add_word(word, *freq, None);
            }
        }
        HanSegmenter {
            jieba,
            characters: !terms.words(),
        }
    }

    /// Hands every word of `text` to `f`, in order.
    pub fn each_word<'a>(&self, text: &'a str, f: &mut impl FnMut(&'a str)) {
        if !has_han(text) {
            WordSegmenter.words(text).for_each(f);
            return;
        }
        for (run, han) in runs(text) {
            if han && self.characters {
                run.char_indices()
                    .for_each(|(i, c)| f(&run[i..i + c.len_utf8()]));
            } else if han {
                self.cut(run, f);
            } else {
                WordSegmenter.words(run).for_each(&mut *f);
            }
        }
    }
}

impl HanSegmenter {
    /// Cuts one Han run into words. jieba's dictionary is of simplified characters, so a run
    /// in traditional characters is cut as its simplified form (fast2s, character for
    /// character) and its words are handed over as the run's own slices: "卷積神經網絡" is cut
    /// as "卷积神经网络" would be, and shows as written.
    fn cut<'a>(&self, run: &'a str, f: &mut impl FnMut(&'a str)) {
        let simple = fast2s::convert(run);
        if simple == run || simple.chars().count() != run.chars().count() {
            for t in self.jieba.cut(run, true) {
                f(t.word);
            }
            return;
        }
        let starts: Vec<usize> = run
            .char_indices()
            .map(|(i, _)| i)
            .chain([run.len()])
            .collect();
        let mut at = 0;
        for t in self.jieba.cut(&simple, true) {
            let n = t.word.chars().count();
            f(&run[starts[at]..starts[at + n]]);
            at += n;
        }
    }
}

/// The simplified form of a word in traditional characters (`None` when it has none, as for
/// every word outside Chinese), for the stop-word lists, which are simplified.
pub fn simplified(word: &str) -> Option<String> {
    if word.is_ascii() || !has_han(word) {
        return None;
    }
    let s = fast2s::convert(word);
    (s != word).then_some(s)
}

/// The runs of `text`: maximal slices of Han characters (`true`) or of anything else.
fn runs(text: &str) -> impl Iterator<Item = (&str, bool)> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let han = is_han(first);
        let end = rest
            .char_indices()
            .find(|&(_, c)| is_han(c) != han)
            .map_or(rest.len(), |(i, _)| i);
        let (run, tail) = rest.split_at(end);
        rest = tail;
        Some((run, han))
    })
}

/// Marks single Han characters as stop words: they stay in the word stream (a phrase may hold
/// one) but are never terms. What jieba leaves as a single character is mostly a piece it could
/// not place (络 of an unknown 网络 compound) or a function word; counted as terms, they led the
/// labels ("股, 市, 期") and lowered the V-measure on THUCNews (docs/benchmarks.md).
#[derive(Debug, Clone, Copy)]
pub struct LoneCharacters;

impl super::TokenFilter for LoneCharacters {
    fn apply(&self, tokens: &mut Vec<super::Token>) {
        for t in tokens.iter_mut().filter(|t| is_lone_han(&t.text)) {
            t.stop = true;
        }
    }
}

/// jieba's bundled dictionary, loaded once, for questions about words ([`is_dictionary_word`]).
fn bundled() -> &'static Jieba {
    static JIEBA: OnceLock<Jieba> = OnceLock::new();
    JIEBA.get_or_init(Jieba::new)
}

/// A single character is a word on its own when jieba's dictionary counts it alone at least this
/// often.
pub const STANDALONE_FREQUENCY: usize = 2500;

/// Whether `word` is a word on its own in jieba's bundled dictionary. Nearly every character is
/// an entry of it, with the frequency it was seen alone in jieba's corpus, so for one character
/// the entry is not enough: it must be seen alone at least [`STANDALONE_FREQUENCY`] times (股
/// 8,493, 图 12,112, 赛 2,783 are words; 络 469, 隧 71, 拟 1,919 are pieces of 网络, 隧道,
/// 模拟).
pub fn is_dictionary_word(word: &str) -> bool {
    let jieba = bundled();
    if !jieba.has_word(word) {
        return false;
    }
    // For a word of the dictionary, jieba suggests its own frequency plus one.
    !is_lone_han(word) || jieba.suggest_freq(word) > STANDALONE_FREQUENCY
}

/// Whether `text` is one Han character, alone.
pub fn is_lone_han(text: &str) -> bool {
    let mut chars = text.chars();
    matches!((chars.next(), chars.next()), (Some(c), None) if is_han(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(seg: &HanSegmenter, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        seg.each_word(text, &mut |w| out.push(w.to_string()));
        out
    }

    #[test]
    fn han_runs_become_words_and_latin_runs_stay_whole() {
        let seg = HanSegmenter::new(None, ChineseTerms::Words);
        assert_eq!(words(&seg, "BP神经网络"), ["BP", "神经网络"]);
        assert_eq!(
            words(&seg, "基于MATLAB的SAR图像, 3.5 km"),
            ["基于", "MATLAB", "的", "SAR", "图像", "3.5", "km"]
        );
        assert_eq!(
            words(&seg, "Plain English text."),
            ["Plain", "English", "text"]
        );
        assert!(words(&seg, "").is_empty());
    }

    #[test]
    fn the_characters_setting_cuts_han_runs_into_characters() {
        let seg = HanSegmenter::new(None, ChineseTerms::Characters);
        assert_eq!(
            words(&seg, "BP神经网络, 網絡 net"),
            ["BP", "神", "经", "网", "络", "網", "絡", "net"]
        );
    }

    #[test]
    fn traditional_characters_are_segmented_too() {
        let seg = HanSegmenter::new(None, ChineseTerms::Words);
        let w = words(&seg, "資料庫管理系統");
        assert!(w.len() < 7, "not cut into characters: {w:?}");
        assert_eq!(w.concat(), "資料庫管理系統");
    }

    #[test]
    fn traditional_text_is_cut_as_its_simplified_form_and_shown_as_written() {
        let seg = HanSegmenter::new(None, ChineseTerms::Words);
        let simple = words(&seg, "我们提出一种基于卷积神经网络的图像分类方法");
        let traditional = words(&seg, "我們提出一種基於卷積神經網絡的圖像分類方法");
        assert_eq!(
            traditional.len(),
            simple.len(),
            "{traditional:?} / {simple:?}"
        );
        assert!(
            traditional.contains(&"卷積神經網絡".to_string())
                || traditional.contains(&"神經網絡".to_string()),
            "{traditional:?}"
        );
        for (t, s) in traditional.iter().zip(&simple) {
            assert_eq!(fast2s::convert(t), *s);
        }
        assert_eq!(simplified("基於").as_deref(), Some("基于"));
        assert_eq!(simplified("基于"), None);
        assert_eq!(simplified("graph"), None);
    }

    #[test]
    fn the_user_dictionary_keeps_domain_words_whole() {
        let plain = HanSegmenter::new(None, ChineseTerms::Words);
        assert_ne!(words(&plain, "扩散模型生成图像")[0], "扩散模型");
        let dict = UserDictionary::parse("扩散模型 100\n", "dict.txt").unwrap();
        let seg = HanSegmenter::new(Some(&dict), ChineseTerms::Words);
        assert_eq!(words(&seg, "扩散模型生成图像")[0], "扩散模型");
    }

    #[test]
    fn runs_split_on_the_script() {
        let r: Vec<(&str, bool)> = runs("ab中文 cd字").collect();
        assert_eq!(
            r,
            [("ab", false), ("中文", true), (" cd", false), ("字", true)]
        );
        assert!(is_dictionary_word("股") && is_dictionary_word("赛"));
        assert!(!is_dictionary_word("络") && !is_dictionary_word("拟"));
        assert!(is_dictionary_word("神经网络") && !is_dictionary_word("经网"));
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
