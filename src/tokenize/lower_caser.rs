//! Lowercases tokens (Unicode-aware). Runs first: the stop-word list and the stemmer expect
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
                .any(|c| !c.is_lowercase() && c.is_alphabetic())
            {
                t.text = t.text.to_lowercase();
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
        ];
        LowerCaser.apply(&mut v);
        let got: Vec<_> = v.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(got, ["über", "ελληνικά", "中文", "llms"]);
        assert_eq!(v[0].surface, "über");
    }
}
