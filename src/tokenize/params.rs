//! The tokenizer's parameters (linfa style): [`TokenizerParams::new`] holds every default,
//! [`TokenizerParams::check`] states every rule and yields [`TokenizerValidParams`], and
//! [`Analyzer::new`](super::Analyzer::new) builds the filter chain from those. The checked
//! parameters are saved in `model.json` (and checked again when it is read), so `topicmap
//! assign` tokenizes new documents exactly as the fit did.

use super::Language;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Built-in stop-word lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopWordList {
    /// scikit-learn's English list, abstract boilerplate ("propose", "paper", ...) and
    /// contractions.
    English,
    None,
}

impl StopWordList {
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "english" => Some(Self::English),
            "none" => Some(Self::None),
            _ => None,
        }
    }
}

impl fmt::Display for StopWordList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::English => "english",
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
    #[error("tokenize.language {0:?} is not a Snowball language (try english, french, german, spanish, ...)")]
    UnknownLanguage(String),
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
        }
    }
    /// The Snowball language, lowercased. Also picks the default stop words: the English list
    /// for English, none for other languages (set [`TokenizerParams::stop_words`] after this).
    pub fn language(mut self, language: &str) -> Self {
        self.language = language.to_lowercase();
        self.stop_words = if self.language == "english" {
            StopWordList::English
        } else {
            StopWordList::None
        };
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

    /// Checks every rule: a Snowball language, and `1 <= min_length <= max_length`.
    pub fn check(self) -> Result<TokenizerValidParams, TokenizerParamsError> {
        if Language::from_name(&self.language).is_none() {
            return Err(TokenizerParamsError::UnknownLanguage(self.language));
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
    /// The Snowball language, lowercased.
    pub fn language(&self) -> &str {
        &self.0.language
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
            StopWordList::None
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
        assert!(e.to_string().contains("not a Snowball language"), "{e}");
    }
}
