//! Injected markup: HTML tags and spreadsheet formulas that arrive in table cells are removed
//! from the text that features are built from, as links are.
//!
//! Why: a title cell `=HYPERLINK("http://…","click")`, `<img src=x onerror=alert(1)>` or
//! `@SUM(A1:A9)` is not the paper's words. Tokenized, it gives `hyperlink`, `click`, `img`,
//! `src`, `onerror`, `sum`; when such cells recur they pull documents together by their junk and
//! split real topics, and they reach labels. Exports from publishers carry the benign kind too
//! (`<jats:p>`, `<i>`, `<sub>`). Titles, snippets and exports keep the cells as written
//! (escaped in the report, guarded in CSVs).
//!
//! What counts:
//! - a tag `<name …>` or `</name>` whose name (after an optional `prefix:`, as `jats:p`) is one
//!   of [`TAGS`], followed by whitespace, `/` or `>`, closed within [`TAG_MAX`] bytes and with no
//!   `<` or line break inside; `<script>` and `<style>` go with their content. So `a <b and c>`
//!   goes but `x <y and y> z` and `#include <math.h>` stay;
//! - a formula: `=` or `@` at the start of the text or after whitespace, then a function name
//!   and its parenthesised arguments (`=HYPERLINK("a","b")`, `@SUM(A1:A9)`; quotes and nested
//!   parentheses respected, at most [`FORMULA_MAX`] bytes), or a DDE call
//!   `=cmd|' /C calc'!A0`.

/// Tag names removed (lowercase; HTML, JATS and MathML).
pub const TAGS: &[&str] = &[
    "a",
    "abbr",
    "abstract",
    "b",
    "bold",
    "big",
    "blockquote",
    "body",
    "br",
    "caption",
    "center",
    "code",
    "disp-formula",
    "div",
    "em",
    "embed",
    "ext-link",
    "fig",
    "font",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "hr",
    "html",
    "i",
    "iframe",
    "img",
    "inline-formula",
    "input",
    "italic",
    "label",
    "li",
    "link",
    "list",
    "list-item",
    "math",
    "meta",
    "mfrac",
    "mi",
    "mn",
    "mo",
    "monospace",
    "mrow",
    "msqrt",
    "msub",
    "msup",
    "mtext",
    "object",
    "ol",
    "p",
    "pre",
    "s",
    "sc",
    "scp",
    "script",
    "sec",
    "small",
    "span",
    "strike",
    "strong",
    "style",
    "sub",
    "sup",
    "svg",
    "table",
    "tbody",
    "td",
    "tex-math",
    "th",
    "thead",
    "title",
    "tr",
    "tt",
    "u",
    "underline",
    "ul",
    "uri",
    "xref",
];

/// Longest tag, in bytes.
const TAG_MAX: usize = 512;
/// Longest content of a `<script>` or `<style>` element that goes with it, in bytes (bounded,
/// so that many unclosed elements cost at most this much each).
const ELEMENT_MAX: usize = 256;
/// Longest formula, in bytes.
const FORMULA_MAX: usize = 512;
/// Longest tag name (with its prefix) or function name, in bytes.
const NAME_MAX: usize = 64;

/// True when `text` may hold something [`strip`] removes.
pub fn may_hold(text: &str) -> bool {
    memchr::memchr3(b'<', b'=', b'@', text.as_bytes()).is_some()
}

/// Appends `text` to `out` without its tags and formulas (each replaced by one space) and adds
/// how many were removed to `count`. Returns whether any was; only then does `out` hold the text.
pub fn strip(text: &str, out: &mut String, count: &mut u64) -> bool {
    let b = text.as_bytes();
    let (mut copied, mut at, mut removed) = (0, 0, false);
    while let Some(i) = memchr::memchr3(b'<', b'=', b'@', &b[at..]).map(|i| at + i) {
        let end = match b[i] {
            b'<' => tag_end(b, i),
            _ if i == 0 || b[i - 1].is_ascii_whitespace() => formula_end(b, i),
            _ => None,
        };
        match end {
            Some(end) => {
                out.push_str(&text[copied..i]);
                out.push(' ');
                copied = end;
                at = end;
                *count += 1;
                removed = true;
            }
            None => at = i + 1,
        }
    }
    if removed {
        out.push_str(&text[copied..]);
    }
    removed
}

/// The end of the tag (or script/style element) that starts at `b[i] == b'<'`, if it is one.
fn tag_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    let closing = b.get(j) == Some(&b'/');
    j += usize::from(closing);
    let name_start = j;
    while j < b.len().min(name_start + NAME_MAX)
        && (b[j].is_ascii_alphanumeric() || b[j] == b'-' || b[j] == b':')
    {
        j += 1;
    }
    let name = std::str::from_utf8(&b[name_start..j]).ok()?;
    let local = name.rsplit(':').next().unwrap_or(name).to_ascii_lowercase();
    if !TAGS.contains(&local.as_str())
        || !matches!(b.get(j), Some(c) if c.is_ascii_whitespace() || *c == b'>' || *c == b'/')
    {
        return None;
    }
    let rest = &b[j..b.len().min(i + TAG_MAX)];
    let close = rest
        .iter()
        .position(|&c| matches!(c, b'>' | b'<' | b'\n'))?;
    if rest[close] != b'>' {
        return None;
    }
    let end = j + close + 1;
    if closing || !matches!(local.as_str(), "script" | "style") {
        return Some(end);
    }
    // The element's content goes too, up to its closing tag (or the tag alone if none is near).
    let body = &b[end..b.len().min(end + ELEMENT_MAX + name.len() + 2)];
    let close_tag = format!("</{name}");
    let at = body
        .windows(close_tag.len())
        .position(|w| w.eq_ignore_ascii_case(close_tag.as_bytes()));
    Some(at.and_then(|p| tag_end(b, end + p)).unwrap_or(end))
}

/// The end of the formula that starts at `b[i]` (`=` or `@`), if it is one.
fn formula_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    if !b
        .get(j)
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
    {
        return None;
    }
    while j < b.len().min(i + 1 + NAME_MAX)
        && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b'.')
    {
        j += 1;
    }
    // `j` is at most NAME_MAX + 1 bytes in, well inside the limit.
    let limit = b.len().min(i + FORMULA_MAX);
    match b.get(j) {
        Some(b'(') => call_end(b, j, limit),
        Some(b'|') => {
            // DDE: `=cmd|'...'!A0`: up to the `!` and the cell reference after it.
            let bang = j + b[j..limit].iter().position(|&c| c == b'!')?;
            let tail = b[bang + 1..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric())
                .count();
            Some(bang + 1 + tail)
        }
        _ => None,
    }
}

/// The end of the parenthesised arguments opening at `b[open] == b'('`, quotes respected.
fn call_end(b: &[u8], open: usize, limit: usize) -> Option<usize> {
    let (mut depth, mut quoted) = (0usize, false);
    for (k, &c) in b[open..limit].iter().enumerate() {
        match c {
            b'"' => quoted = !quoted,
            b'(' if !quoted => depth += 1,
            b')' if !quoted => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + k + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip_all(s: &str) -> (String, u64) {
        let (mut out, mut n) = (String::new(), 0);
        if !strip(s, &mut out, &mut n) {
            out = s.to_string();
        }
        (out, n)
    }

    #[test]
    fn hostile_cells_go() {
        for (cell, left) in [
            (
                "=HYPERLINK(\"http://x.invalid/a\",\"click (here)\") graph nets",
                "  graph nets",
            ),
            ("<img src=x onerror=alert(1)> graph nets", "  graph nets"),
            ("@SUM(A1:A9) graph nets", "  graph nets"),
            ("+1 -1 =cmd|' /C calc'!A0 graph", "+1 -1   graph"),
            ("<script>alert('x')</script>graph", " graph"),
            ("<jats:p>Graph <i>nets</i>.</jats:p>", " Graph  nets . "),
        ] {
            assert_eq!(strip_all(cell).0, left, "{cell}");
        }
        assert_eq!(strip_all("<b>a</b> =SUM(1) @MAX(2)").1, 4);
    }

    #[test]
    fn hostile_input_cannot_panic_or_be_slow() {
        let long = "a".repeat(1000);
        for text in [
            format!("<{long}:p x>"),
            format!("={long}(x)"),
            format!("@{long}|'x'!A1"),
            "<script>".repeat(20_000),
            "=SUM(".repeat(20_000),
            "<p".repeat(20_000),
            format!("<{long}"),
            "<".into(),
            "=".into(),
            "=a(".into(),
        ] {
            let (out, _) = strip_all(&text);
            assert!(
                out.len() <= text.len() + text.len() / 2 + 1,
                "{}",
                &text[..20.min(text.len())]
            );
        }
        // A long prefix is not a tag name; unclosed scripts go one tag at a time.
        assert_eq!(strip_all(&format!("<{long}:p x>")).1, 0);
        assert_eq!(strip_all(&"<script>".repeat(3)).1, 3);
    }

    #[test]
    fn prose_code_and_math_stay() {
        for text in [
            "for x <y and y> z we have a < b",
            "#include <math.h> and <stdio.h>",
            "we set y=f(x) and a = g(b) with k@home",
            "contact me @ noon; =) and <p without end",
            "运行 <i>模型</i>",
        ] {
            let (out, n) = strip_all(text);
            if text.starts_with('运') {
                assert_eq!((out.as_str(), n), ("运行  模型 ", 2));
            } else {
                assert_eq!((out.as_str(), n), (text, 0), "{text}");
            }
        }
    }
}
