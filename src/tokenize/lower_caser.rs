//! Lowercases tokens (Unicode-aware) and writes the typographic apostrophe (U+2019) as `'`, so
//! "don’t" and "don't" are one word. Runs first: the stop-word list and the stemmer expect
//! lowercase input.

use super::{Token, TokenFilter};

/// Lowercases `text` and `surface`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LowerCaser;

impl TokenFilter for LowerCaser {
    fn apply(&self, tokens: &mut Vec<Token>) {
        for t in tokens.iter_mut() {
            if t.text
                .chars()
                .any(|c| c == '\u{2019}' || (!c.is_lowercase() && c.is_alphabetic()))
            {
                t.text = t.text.to_lowercase().replace('\u{2019}', "'");
            }
            t.surface.clone_from(&t.text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercases_unicode() {
        let mut v = vec![
            Token::new("ÜBER"),
            Token::new("Ελληνικά"),
            Token::new("中文"),
            Token::new("LLMs"),
            Token::new("Don\u{2019}t"),
        ];
        LowerCaser.apply(&mut v);
        let got: Vec<_> = v.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(got, ["über", "ελληνικά", "中文", "llms", "don't"]);
        assert_eq!(v[0].surface, "über");
    }
}
