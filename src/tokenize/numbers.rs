//! Drops pure numbers ("2018", "3.5", "1,000", "٣"): they name no topic. Words that mix
//! letters and digits ("a3bench", "gpt4", "h100") are kept.

use super::{Token, TokenFilter};

/// Removes tokens made only of digits and numeric punctuation.
#[derive(Debug, Clone, Copy, Default)]
pub struct RemoveNumbers;

impl RemoveNumbers {
    pub fn is_number(s: &str) -> bool {
        s.chars().any(|c| c.is_numeric())
            && s.chars()
                .all(|c| c.is_numeric() || matches!(c, '.' | ',' | '_' | '\'' | '%' | '-' | '+'))
    }
}

impl TokenFilter for RemoveNumbers {
    fn apply(&self, tokens: &mut Vec<Token>) {
        tokens.retain(|t| !Self::is_number(&t.text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_numbers_keeps_mixed_words() {
        let mut v: Vec<Token> = ["2018", "3.5", "1,000", "٣٤", "a3bench", "gpt4", "model"]
            .iter()
            .map(|s| Token::new(s))
            .collect();
        RemoveNumbers.apply(&mut v);
        let got: Vec<_> = v.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(got, ["a3bench", "gpt4", "model"]);
    }
}
