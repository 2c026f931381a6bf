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
//! - a tag `<name>`, `</name>`, `<name/>` or `<name a=1 b="x">` whose name is one of
//!   [`HTML_TAGS`], or of [`XML_TAGS`] with a prefix (`jats:p`, `mml:mi`), and whose
//!   attributes are all `name=value`, closed within [`TAG_MAX`] bytes; `<script>` and `<style>`
//!   go with their content. So `<img src=x onerror=alert(1)>` goes, but `<I wrote>`, `<big
//!   foot>`, `x <y and y> z`, `<list>` and `#include <math.h>` stay;
//! - a formula: `=` or `@` at the start of the text or after whitespace, then a function name
//!   and its parenthesised arguments (`=HYPERLINK("a","b")`, `@SUM(A1:A9)`; quotes and nested
//!   parentheses respected, at most [`FORMULA_MAX`] bytes), or a DDE call
//!   `=cmd|' /C calc'!A0`, ending at whitespace or the end of the text (a whole cell).

/// HTML tag names removed as they are (lowercase).
pub const HTML_TAGS: &[&str] = &[
    "a",
    "abbr",
    "b",
    "big",
    "blockquote",
    "body",
    "br",
    "caption",
    "center",
    "code",
    "div",
    "em",
    "embed",
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
    "input",
    "li",
    "link",
    "math",
    "meta",
    "object",
    "ol",
    "p",
    "pre",
    "s",
    "script",
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
    "th",
    "thead",
    "title",
    "tr",
    "tt",
    "u",
    "ul",
];

/// JATS and MathML tag names, removed only with a prefix (`<jats:list>`, `<mml:mi>`): bare,
/// `<list>` is more likely a placeholder in prose.
pub const XML_TAGS: &[&str] = &[
    "abstract",
    "bold",
    "disp-formula",
    "ext-link",
    "fig",
    "inline-formula",
    "italic",
    "label",
    "list",
    "list-item",
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
    "p",
    "sc",
    "scp",
    "sec",
    "sub",
    "sup",
    "tex-math",
    "title",
    "underline",
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

/// The end of the tag (or script/style element) that starts at `b[i] == b'<'`, if it is one:
/// a known name, then `>` or `/>`, or attributes that are all `name=value` (quoted or not).
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
    let (prefixed, local) = match name.rsplit_once(':') {
        Some((p, l)) => (!p.is_empty(), l),
        None => (false, name),
    };
    let among = |names: &[&str]| names.iter().any(|t| t.eq_ignore_ascii_case(local));
    if !(among(HTML_TAGS) || (prefixed && among(XML_TAGS))) {
        return None;
    }
    let end = attributes_end(b, j, b.len().min(i + TAG_MAX))?;
    if closing || !(local.eq_ignore_ascii_case("script") || local.eq_ignore_ascii_case("style")) {
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

/// From just after a tag's name at `j`: the end of its `>` (or `/>`) when every attribute
/// before it is `name=value`, `name="…"` or `name='…'`, all before `limit`, with no `<` or line
/// break in a value.
fn attributes_end(b: &[u8], mut j: usize, limit: usize) -> Option<usize> {
    let b = &b[..limit.max(j).min(b.len())];
    loop {
        let spaces = b[j..]
            .iter()
            .take_while(|c| matches!(c, b' ' | b'\t'))
            .count();
        j += spaces;
        match *b.get(j)? {
            b'>' => return Some(j + 1),
            b'/' if b.get(j + 1) == Some(&b'>') => return Some(j + 2),
            _ if spaces == 0 => return None,
            _ => {}
        }
        let name = b[j..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b':'))
            .count();
        if name == 0 || b.get(j + name) != Some(&b'=') {
            return None;
        }
        j += name + 1;
        let value = match *b.get(j)? {
            q @ (b'"' | b'\'') => &b[j..j + 2 + b[j + 1..].iter().position(|&c| c == q)?],
            _ => {
                let n = b[j..]
                    .iter()
                    .take_while(|c| !c.is_ascii_whitespace() && !matches!(c, b'>' | b'<'))
                    .count();
                &b[j..j + n]
            }
        };
        if value.is_empty() || value.iter().any(|&c| c == b'\n' || c == b'<') {
            return None;
        }
        j += value.len();
    }
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
    let end = match b.get(j) {
        Some(b'(') => call_end(b, j, limit)?,
        Some(b'|') => {
            // DDE: `=cmd|'...'!A0`: up to the `!` and the cell reference after it.
            let bang = j + b[j..limit].iter().position(|&c| c == b'!')?;
            let tail = b[bang + 1..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric())
                .count();
            bang + 1 + tail
        }
        _ => return None,
    };
    // A formula is a whole cell: text glued to its end (`=T(x)WD0`, line noise) is not one.
    b.get(end)
        .is_none_or(|c| c.is_ascii_whitespace())
        .then_some(end)
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
        assert_eq!(
            strip_all("<mml:mi>x</mml:mi> <br/> <a href=\"u v\" id=x>").1,
            4
        );
    }

    #[test]
    fn hostile_input_cannot_panic() {
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
            "<I wrote> and <big foot> and <list> and <mi>",
            "=T(.IW?#TP<8>)WD0 line noise",
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
