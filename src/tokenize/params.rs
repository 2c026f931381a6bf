//! The tokenizer's parameters (linfa style): [`TokenizerParams::new`] holds every default,
//! [`TokenizerParams::check`] states every rule and yields [`TokenizerValidParams`], and
//! [`Analyzer::new`](super::Analyzer::new) builds the filter chain from those. The checked
//! parameters are saved in `model.json` (and checked again when it is read), so `topicmap
//! assign` tokenizes new documents exactly as the fit did.

use super::han::ChineseTerms;
use super::languages::{self, Detection};
use super::user_dictionary::UserDictionary;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Built-in stop-word lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopWordList {
    /// scikit-learn's English list, abstract boilerplate ("propose", "paper", ...) and
    /// contractions.
    English,
    /// The language's stopwords-iso list with scikit-learn's English list, for the English
    /// words in the text (see [`super::languages`]).
    StopwordsIso,
    None,
}

impl StopWordList {
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "english" => Some(Self::English),
            "stopwords-iso" => Some(Self::StopwordsIso),
            "none" => Some(Self::None),
            _ => None,
        }
    }
    /// The list a language gets by default: scikit-learn's for English, stopwords-iso for every
    /// other language.
    pub fn default_for(language: &str) -> Self {
        if language == "english" {
            Self::English
        } else {
            Self::StopwordsIso
        }
    }
}

impl fmt::Display for StopWordList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::English => "english",
            Self::StopwordsIso => "stopwords-iso",
            Self::None => "none",
        })
    }
}

/// Tokenizer parameters, a builder (defaults in [`TokenizerParams::new`]). Serialized field
/// names are those of `model.json` (older models carry extra TF-IDF fields in this object; they
/// are ignored on load).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenizerParams {
    language: String,
    stem: bool,
    stop_words: StopWordList,
    extra_stop_words: Vec<String>,
    min_length: usize,
    max_length: usize,
    /// Chinese only: the pipeline's words for the segmenter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    user_dictionary: Option<UserDictionary>,
    /// `language = "auto"`: what detection found (`language` is then the language chosen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    detected: Option<Detection>,
    /// Chinese only: what Han text is cut into ([`ChineseTerms`]). Saved once Chinese is among
    /// the languages; a model saved without it cut words ([`TokenizerParams::check`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    chinese: Option<ChineseTerms>,
    /// The word segmenter: `jieba` when Chinese is among the languages (set by
    /// [`TokenizerParams::check`]; a saved model naming another is refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    segmenter: Option<String>,
}

/// Checked tokenizer parameters, what [`Analyzer::new`](super::Analyzer::new) takes. Serialized
/// as the parameters themselves; deserializing checks them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "TokenizerParams")]
pub struct TokenizerValidParams(TokenizerParams);

impl Serialize for TokenizerValidParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// A broken rule, one variant per rule. The messages name the pipeline key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TokenizerParamsError {
    #[error("tokenize.language {0:?} is not a language the tokenizer knows: the accepted names are {names}", names = languages::accepted_names())]
    UnknownLanguage(String),
    #[error(
        "tokenize.user-dictionary is for Chinese: set tokenize.language to \"chinese\" or \"auto\""
    )]
    DictionaryWithoutChinese,
    #[error("tokenize.chinese is for Chinese: set tokenize.language to \"chinese\" or \"auto\"")]
    ChineseWithoutChinese,
    #[error("this model's tokenizer uses the segmenter {found:?}; this build uses {expected:?} for these languages: refit")]
    Segmenter { found: String, expected: String },
    #[error(
        "tokenize.min-length ({min}) must be at least 1 and at most tokenize.max-length ({max})"
    )]
    BadLengths { min: usize, max: usize },
}

impl Default for TokenizerParams {
    fn default() -> Self {
        Self::new()
    }
}

impl TokenizerParams {
    /// Defaults: language `english`, stemming on, the English stop-word list, no extra stop
    /// words, tokens of 2 to 40 characters (longer ones are junk: URLs, hashes; CJK ideographs
    /// are exempt from the minimum).
    pub fn new() -> Self {
        TokenizerParams {
            language: "english".into(),
            stem: true,
            stop_words: StopWordList::English,
            extra_stop_words: Vec::new(),
            min_length: 2,
            max_length: 40,
            user_dictionary: None,
            detected: None,
            chinese: None,
            segmenter: None,
        }
    }
    /// The language (a name of [`languages::LANGUAGES`], or `auto`), lowercased. Also picks the
    /// default stop words: scikit-learn's list for English, stopwords-iso for the others (set
    /// [`TokenizerParams::stop_words`] after this).
    pub fn language(mut self, language: &str) -> Self {
        self.language = language.to_lowercase();
        self.stop_words = StopWordList::default_for(&self.language);
        self
    }
    /// What Chinese text is cut into (default [`ChineseTerms::DEFAULT`]).
    pub fn chinese(mut self, terms: ChineseTerms) -> Self {
        self.chinese = Some(terms);
        self
    }
    /// Chinese segmentation's own words (default none).
    pub fn user_dictionary(mut self, dict: Option<UserDictionary>) -> Self {
        self.user_dictionary = dict;
        self
    }
    pub fn stem(mut self, stem: bool) -> Self {
        self.stem = stem;
        self
    }
    pub fn stop_words(mut self, list: StopWordList) -> Self {
        self.stop_words = list;
        self
    }
    pub fn extra_stop_words(mut self, words: Vec<String>) -> Self {
        self.extra_stop_words = words;
        self
    }
    pub fn min_length(mut self, chars: usize) -> Self {
        self.min_length = chars;
        self
    }
    pub fn max_length(mut self, chars: usize) -> Self {
        self.max_length = chars;
        self
    }

    /// Checks every rule: a known language (or `auto`), a user dictionary and `chinese` only
    /// where Chinese may be, a saved segmenter this build has, and `1 <= min_length <=
    /// max_length`. Once Chinese is among the languages, `chinese` is set (to its default when
    /// unset), so that `model.json` records it; a saved model without it (one saved before the
    /// setting was added: it names the segmenter) cut words.
    pub fn check(mut self) -> Result<TokenizerValidParams, TokenizerParamsError> {
        let known = |l: &str| languages::by_name(l).is_some();
        let per_document = self.detected.iter().flat_map(|d| &d.per_document);
        if !(known(&self.language) || self.language == languages::AUTO)
            || per_document.clone().any(|l| !known(l))
        {
            return Err(TokenizerParamsError::UnknownLanguage(self.language));
        }
        let chinese = matches!(self.language.as_str(), "chinese" | languages::AUTO)
            || per_document.clone().any(|l| l == "chinese");
        if self.user_dictionary.is_some() && !chinese {
            return Err(TokenizerParamsError::DictionaryWithoutChinese);
        }
        if self.chinese.is_some() && !chinese {
            return Err(TokenizerParamsError::ChineseWithoutChinese);
        }
        let saved_before_the_setting = self.segmenter.is_some() && self.chinese.is_none();
        let segmenter = chinese.then(|| "jieba".to_string());
        if let Some(found) = self
            .segmenter
            .take()
            .filter(|s| Some(s) != segmenter.as_ref())
        {
            return Err(TokenizerParamsError::Segmenter {
                found,
                expected: segmenter.unwrap_or_else(|| "unicode".into()),
            });
        }
        // Before detection, `auto` may still turn out not to be Chinese: no segmenter yet.
        self.segmenter = segmenter.filter(|_| self.language != languages::AUTO);
        if self.segmenter.is_some() {
            let unset = if saved_before_the_setting {
                ChineseTerms::Words
            } else {
                ChineseTerms::DEFAULT
            };
            self.chinese = Some(self.chinese.unwrap_or(unset));
        }
        if self.min_length == 0 || self.max_length < self.min_length {
            return Err(TokenizerParamsError::BadLengths {
                min: self.min_length,
                max: self.max_length,
            });
        }
        Ok(TokenizerValidParams(self))
    }
}

impl TryFrom<TokenizerParams> for TokenizerValidParams {
    type Error = TokenizerParamsError;
    fn try_from(params: TokenizerParams) -> Result<Self, Self::Error> {
        params.check()
    }
}

impl TokenizerValidParams {
    /// The language, lowercased: a name of [`languages::LANGUAGES`], or `auto` before detection.
    pub fn language(&self) -> &str {
        &self.0.language
    }
    /// The pipeline's words for the Chinese segmenter.
    pub fn user_dictionary(&self) -> Option<&UserDictionary> {
        self.0.user_dictionary.as_ref()
    }
    /// What `language = "auto"` found, once it ran.
    pub fn detected(&self) -> Option<&Detection> {
        self.0.detected.as_ref()
    }
    /// The languages documents are tokenized in one by one (a mixed corpus), else empty.
    pub fn per_document(&self) -> &[String] {
        self.0.detected.as_ref().map_or(&[], |d| &d.per_document)
    }
    /// These parameters with `language = "auto"` resolved by `detection` (`None`: nothing could
    /// be told, so English). Other languages are returned as they are.
    pub fn resolved(&self, detection: Option<Detection>) -> TokenizerValidParams {
        if self.0.language != languages::AUTO {
            return self.clone();
        }
        let mut p = self.0.clone();
        let auto_list = p.stop_words == StopWordList::default_for(languages::AUTO);
        p.language = detection
            .as_ref()
            .map_or("english".into(), |d| d.language.clone());
        if auto_list {
            p.stop_words = StopWordList::default_for(&p.language);
        }
        p.detected = detection;
        // A user dictionary only serves Chinese: unused when none was found.
        let per_document = p.detected.iter().flat_map(|d| &d.per_document);
        if p.language != "chinese" && !per_document.clone().any(|l| l == "chinese") {
            p.user_dictionary = None;
            p.chinese = None;
        }
        p.check().expect("detected languages are known ones")
    }
    /// What Chinese text is cut into (the default where Chinese is not among the languages).
    pub fn chinese(&self) -> ChineseTerms {
        self.0.chinese.unwrap_or(ChineseTerms::DEFAULT)
    }
    /// Whether words are stemmed.
    pub fn stem(&self) -> bool {
        self.0.stem
    }
    /// The built-in stop-word list.
    pub fn stop_words(&self) -> StopWordList {
        self.0.stop_words
    }
    /// Stop words beyond the list.
    pub fn extra_stop_words(&self) -> &[String] {
        &self.0.extra_stop_words
    }
    /// The shortest token kept, in characters (CJK ideographs are exempt).
    pub fn min_length(&self) -> usize {
        self.0.min_length
    }
    /// The longest token kept, in characters.
    pub fn max_length(&self) -> usize {
        self.0.max_length
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_rules() {
        let p = TokenizerParams::new().check().unwrap();
        assert_eq!((p.min_length(), p.max_length()), (2, 40));
        assert_eq!(p.stop_words(), StopWordList::English);
        assert_eq!(
            TokenizerParams::new()
                .language("French")
                .check()
                .unwrap()
                .stop_words(),
            StopWordList::StopwordsIso
        );
        let e = TokenizerParams::new()
            .language("klingon")
            .check()
            .unwrap_err();
        assert!(
            e.to_string().contains("tokenize.language") && e.to_string().contains("chinese, auto"),
            "{e}"
        );
        let dict = UserDictionary::parse("扩散模型\n", "d.txt").unwrap();
        assert_eq!(
            TokenizerParams::new()
                .user_dictionary(Some(dict.clone()))
                .check(),
            Err(TokenizerParamsError::DictionaryWithoutChinese)
        );
        let zh = TokenizerParams::new()
            .language("chinese")
            .user_dictionary(Some(dict));
        assert_eq!(
            zh.check().unwrap().user_dictionary().unwrap().file(),
            "d.txt"
        );
        assert!(matches!(
            TokenizerParams::new().language("klingon").check(),
            Err(TokenizerParamsError::UnknownLanguage(_))
        ));
        assert!(TokenizerParams::new().min_length(0).check().is_err());
        assert!(TokenizerParams::new()
            .min_length(5)
            .max_length(4)
            .check()
            .is_err());
    }

    #[test]
    fn auto_is_resolved_by_detection_and_saved_with_it() {
        let auto = TokenizerParams::new().language("auto").check().unwrap();
        let found = Detection {
            language: "chinese".into(),
            confidence: 0.9,
            share: 1.0,
            sample: 10,
            per_document: Vec::new(),
        };
        let zh = auto.resolved(Some(found));
        assert_eq!(
            (zh.language(), zh.stop_words()),
            ("chinese", StopWordList::StopwordsIso)
        );
        let json = serde_json::to_string(&zh).unwrap();
        assert!(json.contains(r#""segmenter":"jieba""#), "{json}");
        let back: TokenizerValidParams = serde_json::from_str(&json).unwrap();
        assert_eq!(back, zh);
        let other = json.replace(r#""segmenter":"jieba""#, r#""segmenter":"mecab""#);
        assert!(serde_json::from_str::<TokenizerValidParams>(&other).is_err());
        let dict = UserDictionary::parse("扩散模型\n", "d.txt").unwrap();
        let with_dict = TokenizerParams::new()
            .language("auto")
            .user_dictionary(Some(dict));
        let en = with_dict.check().unwrap().resolved(None);
        assert!(
            en.user_dictionary().is_none(),
            "no Chinese, so no dictionary"
        );
        let en = auto.resolved(None);
        assert_eq!(
            (en.language(), en.stop_words()),
            ("english", StopWordList::English)
        );
        assert_eq!(
            serde_json::to_string(&TokenizerParams::new().check().unwrap()).unwrap(),
            serde_json::to_string(&TokenizerParams::new()).unwrap(),
            "English parameters serialize as before"
        );
    }

    #[test]
    fn issue_39_chinese_is_saved_for_chinese_only_and_older_models_cut_words() {
        let zh = TokenizerParams::new().language("chinese").check().unwrap();
        assert_eq!(zh.chinese(), ChineseTerms::DEFAULT);
        let json = serde_json::to_string(&zh).unwrap();
        assert!(
            json.contains(r#""chinese":"words+characters+bigrams""#),
            "{json}"
        );
        let back: TokenizerValidParams = serde_json::from_str(&json).unwrap();
        assert_eq!(back, zh);
        // A model saved before the setting: jieba, and no `chinese`.
        let before = json.replace(r#","chinese":"words+characters+bigrams""#, "");
        assert_ne!(before, json);
        let old: TokenizerValidParams = serde_json::from_str(&before).unwrap();
        assert_eq!(old.chinese(), ChineseTerms::Words);
        let english = serde_json::to_string(&TokenizerParams::new().check().unwrap()).unwrap();
        assert!(!english.contains("chinese"), "{english}");
        assert_eq!(
            TokenizerParams::new()
                .chinese(ChineseTerms::Characters)
                .check(),
            Err(TokenizerParamsError::ChineseWithoutChinese)
        );
        // `auto` may take it, and drops it when no Chinese is found.
        let auto = TokenizerParams::new()
            .language("auto")
            .chinese(ChineseTerms::Characters)
            .check()
            .unwrap();
        assert!(!serde_json::to_string(&auto.resolved(None))
            .unwrap()
            .contains("chinese"));
    }

    #[test]
    fn older_models_with_tfidf_fields_still_load() {
        let json = r#"{"language":"english","stem":true,"stop_words":"english","extra_stop_words":[],
            "min_length":2,"max_length":40,"ngram_range":[1,1],"min_df":null,"max_df":0.5,"max_features":null}"#;
        let p: TokenizerValidParams = serde_json::from_str(json).unwrap();
        assert_eq!(p, TokenizerParams::new().check().unwrap());
    }

    #[test]
    fn checked_parameters_serialize_as_the_parameters_and_are_checked_when_read() {
        let p = TokenizerParams::new().check().unwrap();
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            serde_json::to_string(&TokenizerParams::new()).unwrap()
        );
        let json = r#"{"language":"klingon","stem":true,"stop_words":"english","extra_stop_words":[],
            "min_length":2,"max_length":40}"#;
        let e = serde_json::from_str::<TokenizerValidParams>(json).unwrap_err();
        assert!(
            e.to_string().contains("not a language the tokenizer knows"),
            "{e}"
        );
    }
}
