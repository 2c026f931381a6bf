//! The output side of the scanner: whitespace folded as it is written.
//!
//! The cleaner promises single ASCII spaces, none at either end. Rather than a second pass
//! over the output, the writer holds a space back until a visible char follows it, so every
//! handler just says "a space here" and the folding happens once, in one place. Each input
//! char that is copied goes through [`emit_char`]: kept, turned into a space or removed, by
//! [`classify`].

use super::chars::{classify, Class};

/// Output sink that folds whitespace: a space is only remembered, and written
/// before the next visible char, never at the start, never twice.
pub(super) struct Writer<'o> {
    pub(super) out: &'o mut String,
    pub(super) pending: bool,
}

impl Writer<'_> {
    #[inline]
    pub(super) fn space(&mut self) {
        self.pending = true;
    }

    #[inline]
    fn flush(&mut self) {
        if self.pending {
            self.pending = false;
            if !self.out.is_empty() {
                self.out.push(' ');
            }
        }
    }

    #[inline]
    pub(super) fn push_str(&mut self, s: &str) {
        if !s.is_empty() {
            self.flush();
            self.out.push_str(s);
        }
    }

    #[inline]
    pub(super) fn push(&mut self, c: char) {
        self.flush();
        self.out.push(c);
    }

    /// The char the next emitted one will follow (a pending space counts).
    fn last(&self) -> Option<char> {
        if self.pending {
            Some(' ')
        } else {
            self.out.chars().next_back()
        }
    }

    pub(super) fn last_is_alnum(&self) -> bool {
        self.last().is_some_and(char::is_alphanumeric)
    }

    /// Forgets a pending space when the next input char is closing
    /// punctuation, so a dropped `~\cite{x}.` leaves `word.` not `word .`.
    pub(super) fn tuck_before_punct(&mut self, next: Option<u8>) {
        if matches!(next, Some(b'.' | b',' | b';' | b':' | b')' | b'?' | b'!')) {
            self.pending = false;
        }
    }
}

/// Writes one input char as [`classify`] says: kept, a space, or nothing.
pub(super) fn emit_char(ch: char, w: &mut Writer<'_>) {
    match classify(ch) {
        Class::Keep => w.push(ch),
        Class::Space => w.space(),
        Class::Remove => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::c;

    #[test]
    fn invisible_and_control_chars() {
        assert_eq!(
            c("soft\u{AD}ware zero\u{200B}width jo\u{200D}in \u{FEFF}bom"),
            "software zerowidth join bom"
        );
        assert_eq!(c("a\u{0}b\u{7}c\u{7F}d\u{85}e"), "a b c d e");
    }

    #[test]
    fn whitespace_is_folded_and_trimmed() {
        assert_eq!(
            c("  \n\t a \r\n\n  b\u{A0}\u{A0}c\u{3000}d\u{2003} \n"),
            "a b c d"
        );
        assert_eq!(c(""), "");
        assert_eq!(c(" \n\t\u{A0} "), "");
    }

    #[test]
    fn non_ascii_passes_through() {
        assert_eq!(c("NeurIPS 2026 论文列表"), "NeurIPS 2026 论文列表");
        let s =
            "Schrödinger équation — αβγ ελληνικά, 日本語のテキスト「引用」, naïve café’s “quotes”…";
        assert_eq!(c(s), s);
    }
}
