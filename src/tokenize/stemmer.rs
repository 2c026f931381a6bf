//! Snowball stemming with rust-stemmers. Expects lowercase input (the Snowball algorithms are
//! defined on lowercase text), so it runs after [`super::LowerCaser`]. The surface form is left
//! untouched: people read surfaces, the model counts stems.

use super::{Token, TokenFilter};
use rust_stemmers::{Algorithm, Stemmer as Snowball};

/// A Snowball language, by its pipeline-file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Language(pub Algorithm);

impl Language {
    /// The Snowball language called `name` ([`super::languages::LANGUAGES`]; Chinese has none).
    pub fn from_name(name: &str) -> Option<Language> {
        super::languages::by_name(name)?.stemmer.map(Language)
    }
}

/// Replaces each token's text by its Snowball stem.
pub struct Stemmer {
    language: Language,
    inner: Snowball,
}

impl std::fmt::Debug for Stemmer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stemmer({:?})", self.language.0)
    }
}

impl Stemmer {
    pub fn new(language: Language) -> Self {
        Stemmer {
            language,
            inner: Snowball::create(language.0),
        }
    }
}

impl TokenFilter for Stemmer {
    fn apply(&self, tokens: &mut Vec<Token>) {
        for t in tokens.iter_mut() {
            // Han words have no stems (Snowball would leave them as they are anyway).
            if t.stop || super::han::has_han(&t.text) {
                continue;
            }
            let stem = self.inner.stem(&t.text);
            if stem != t.text.as_str() {
                t.text = stem.into_owned();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stem(lang: &str, words: &[&str]) -> Vec<String> {
        let s = Stemmer::new(Language::from_name(lang).unwrap());
        let mut v: Vec<Token> = words.iter().map(|w| Token::new(w)).collect();
        s.apply(&mut v);
        v.into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn english_and_other_languages() {
        assert_eq!(
            stem("english", &["clustering", "clusters", "languages"]),
            ["cluster", "cluster", "languag"]
        );
        assert_eq!(stem("german", &["häuser"]), ["haus"]);
        assert_eq!(stem("french", &["continuellement"]), ["continuel"]);
        assert!(Language::from_name("klingon").is_none());
        assert!(Language::from_name("chinese").is_none());
        assert_eq!(stem("english", &["神经网络", "bp"]), ["神经网络", "bp"]);
    }

    #[test]
    fn surface_is_kept() {
        let s = Stemmer::new(Language::from_name("english").unwrap());
        let mut v = vec![Token::new("networks")];
        s.apply(&mut v);
        assert_eq!(
            (v[0].text.as_str(), v[0].surface.as_str()),
            ("network", "networks")
        );
    }
}
