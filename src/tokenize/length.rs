//! Drops tokens shorter or longer than limits, counted in chars (not bytes, so "ü" is one).
//!
//! CJK ideographs are exempt from the minimum: a single Han character is a word, and word
//! segmentation (UAX #29) yields them one by one.

use super::{Token, TokenFilter};

/// Keeps tokens whose length in chars is within `min..=max`.
#[derive(Debug, Clone, Copy)]
pub struct LengthFilter {
    min: usize,
    max: usize,
}

impl LengthFilter {
    /// Keeps tokens of `min..=max` chars. The pipeline default is 2..=40.
    pub fn between(min: usize, max: usize) -> Self {
        LengthFilter { min, max }
    }
}

fn is_ideograph(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

impl TokenFilter for LengthFilter {
    fn apply(&self, tokens: &mut Vec<Token>) {
        tokens.retain(|t| {
            let n = t.text.chars().count();
            n <= self.max && (n >= self.min || t.text.chars().all(is_ideograph))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_chars_and_keeps_ideographs() {
        let mut v: Vec<Token> = ["a", "ü", "üb", "中", "x".repeat(41).as_str(), "ok"]
            .iter()
            .map(|s| Token::new(s))
            .collect();
        LengthFilter::between(2, 40).apply(&mut v);
        let got: Vec<_> = v.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(got, ["üb", "中", "ok"]);
    }
}
