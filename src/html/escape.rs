//! Escaping of document-derived text for HTML and Markdown, plus the small
//! text helpers (colour check, truncation, number formatting) both
//! renderers share.
//!
//! Why wrappers that implement `Display` instead of functions returning
//! `String`: the renderers build their output with `write!`, and a wrapper
//! writes the escaped text straight into the output without an intermediate
//! allocation per value.
//!
//! * [`Html`] escapes the five characters that matter in element content and
//!   in quoted attribute values (`& < > " '`), so the same escaped text is
//!   safe in both places. C0 control characters (other than tab, newline and
//!   carriage return) and DEL become spaces: HTML forbids them and they only
//!   ever come from broken input.
//! * [`Md`] escapes minimally, only what would break a Markdown table row or
//!   let a chat client render raw HTML: `|`, `<` and the backslash get a
//!   backslash; line breaks and control characters become spaces. Other
//!   Markdown punctuation (`*`, `_`, ...) is left alone because the summary
//!   is also read as plain text in e-mails, where `\_` would be noise.

use std::fmt;

/// Displays its text HTML-escaped (`&amp; &lt; &gt; &quot; &#39;`), with
/// control characters replaced by spaces.
pub(crate) struct Html<'a>(pub &'a str);

impl fmt::Display for Html<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        let mut start = 0;
        for (i, c) in s.char_indices() {
            let rep = match c {
                '&' => "&amp;",
                '<' => "&lt;",
                '>' => "&gt;",
                '"' => "&quot;",
                '\'' => "&#39;",
                '\t' | '\n' | '\r' => continue,
                c if c.is_ascii_control() => " ",
                _ => continue,
            };
            f.write_str(&s[start..i])?;
            f.write_str(rep)?;
            start = i + c.len_utf8();
        }
        f.write_str(&s[start..])
    }
}

/// Displays its text escaped for one Markdown table cell or list line: `\`,
/// `|` and `<` are backslash-escaped, line breaks and other control
/// characters become spaces.
pub(crate) struct Md<'a>(pub &'a str);

impl fmt::Display for Md<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        let mut start = 0;
        for (i, c) in s.char_indices() {
            let rep = match c {
                '\\' => "\\\\",
                '|' => "\\|",
                '<' => "\\<",
                '\u{2028}' | '\u{2029}' | '\u{85}' => " ",
                c if c.is_control() => " ",
                _ => continue,
            };
            f.write_str(&s[start..i])?;
            f.write_str(rep)?;
            start = i + c.len_utf8();
        }
        f.write_str(&s[start..])
    }
}

/// Colour used when a topic's colour is not a plain hex colour.
pub(crate) const FALLBACK_COLOUR: &str = "#888888";

/// Returns `colour` if it is a CSS hex colour (`#rgb`, `#rgba`, `#rrggbb` or
/// `#rrggbbaa`), otherwise [`FALLBACK_COLOUR`]. The colour goes into `style`
/// and `fill` attributes, so nothing else (no `url(...)`, no `;`) may pass.
pub(crate) fn safe_colour(colour: &str) -> &str {
    let c = colour.trim();
    match c.strip_prefix('#') {
        Some(hex)
            if matches!(hex.len(), 3 | 4 | 6 | 8) && hex.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            c
        }
        _ => FALLBACK_COLOUR,
    }
}

/// `text` cut to at most `max_chars` characters (on a character boundary),
/// ending in "…" when cut. Surrounding whitespace is trimmed first.
pub(crate) fn truncate(text: &str, max_chars: usize) -> std::borrow::Cow<'_, str> {
    let t = text.trim();
    match t.char_indices().nth(max_chars) {
        None => std::borrow::Cow::Borrowed(t),
        Some(_) => {
            let keep = max_chars.saturating_sub(1);
            let end = t.char_indices().nth(keep).map_or(t.len(), |(i, _)| i);
            let mut s = String::with_capacity(end + 3);
            s.push_str(t[..end].trim_end());
            s.push('…');
            std::borrow::Cow::Owned(s)
        }
    }
}

/// Displays a share (fraction of documents) as a percentage with one
/// decimal (`0.1234` -> `12.3%`); non-finite values show as `n/a`.
pub(crate) struct Pct(pub f64);

impl fmt::Display for Pct {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_finite() {
            write!(f, "{:.1}%", self.0 * 100.0)
        } else {
            f.write_str("n/a")
        }
    }
}

/// Displays a change in share (a fraction) as signed percentage points with
/// two decimals (`0.0123` -> `+1.23 pp`, `-0.004` -> `−0.40 pp` with a real
/// minus sign); non-finite values show as `n/a`.
pub(crate) struct Points(pub f64);

impl fmt::Display for Points {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.0.is_finite() {
            return f.write_str("n/a");
        }
        let pp = self.0 * 100.0;
        // Rounds like the `{:.2}` below, so a value that prints as 0.00 gets no sign.
        let shown = (pp.abs() * 100.0).round() / 100.0;
        let sign = if shown == 0.0 {
            ""
        } else if pp > 0.0 {
            "+"
        } else {
            "\u{2212}"
        };
        write!(f, "{sign}{:.2} pp", pp.abs())
    }
}

/// Displays a count with thousands separators (`1234567` -> `1,234,567`).
pub(crate) struct Count(pub usize);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.0.to_string();
        let n = digits.len();
        for (i, d) in digits.chars().enumerate() {
            if i > 0 && (n - i).is_multiple_of(3) {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

/// Displays a metric or weight with up to 4 significant decimals
/// (`0.123456` -> `0.1235`); non-finite values show as `n/a`.
pub(crate) struct Num(pub f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.0.is_finite() {
            f.write_str("n/a")
        } else if self.0 != 0.0 && self.0.abs() < 0.001 {
            write!(f, "{:.2e}", self.0)
        } else {
            write!(f, "{:.4}", self.0)
        }
    }
}
