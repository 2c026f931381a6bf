//! The token and the filter trait that every step of the analyzer chain implements.

/// A word on its way through the analyzer chain.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Token {
    /// The current form: the word as segmented, then lowercased, then stemmed.
    pub text: String,
    /// The lowercased word before stemming: what a person reads.
    pub surface: String,
    /// Set by [`super::StopWordFilter`] in `mark` mode: the word is a stop word. Phrase detection
    /// needs to know where stop words were ("chain of thought").
    pub stop: bool,
}

impl Token {
    pub fn new(text: &str) -> Self {
        Token {
            text: text.to_string(),
            surface: text.to_string(),
            stop: false,
        }
    }
}

/// One step of the chain. Filters may change tokens in place or remove them.
pub trait TokenFilter: Send + Sync + std::fmt::Debug {
    fn apply(&self, tokens: &mut Vec<Token>);
}
