//! Reading the input at byte offsets, and what becomes of one char.
//!
//! Every handler of the scanner walks bytes and looks at the char starting at an offset.
//! These helpers never panic: an offset that is not a char boundary (which the scanner never
//! produces) reads as nothing rather than aborting a million-document run. [`classify`] is the
//! one rule for the chars the output never holds (invisible marks, Unicode spaces and
//! controls), shared by the writer and the stability check so they agree on it.

/// `s[a..b]`, or `""` if the bounds are not char boundaries (never happens
/// by construction; this keeps a bug from becoming a panic).
#[inline]
pub(super) fn slice(s: &str, a: usize, b: usize) -> &str {
    s.get(a..b).unwrap_or("")
}

/// The char starting at byte `i`, if any.
#[inline]
pub(super) fn char_at(s: &str, i: usize) -> Option<char> {
    s.get(i..).and_then(|t| t.chars().next())
}

/// Whether the char starting at byte `i` is a letter or digit (any script).
pub(super) fn is_alnum_at(s: &str, i: usize) -> bool {
    char_at(s, i).is_some_and(char::is_alphanumeric)
}

/// What a char becomes in the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    Keep,
    Space,
    Remove,
}

/// Soft hyphen, zero-width and direction marks are removed; whitespace and control characters
/// become a space; everything else is kept.
pub(super) fn classify(ch: char) -> Class {
    match ch {
        '\u{AD}'
        | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}'
        | '\u{FEFF}' => Class::Remove,
        c if c.is_whitespace() || c.is_control() => Class::Space,
        _ => Class::Keep,
    }
}
