//! Makes a chart's SVG document safe and responsive for inlining in the
//! report.
//!
//! The charts come from our own plotters renderer, which escapes its text,
//! so this is defence in depth: if a chart file was tampered with, or a
//! future renderer forgets to escape, the report must still run no script
//! and make no network request. The approach is a small re-serialising
//! tokenizer with an **allowlist**, not a search-and-replace:
//!
//! * Only the outermost `<svg>` element is kept; the XML declaration,
//!   doctype, comments, processing instructions and anything after the root
//!   closes are dropped. The output is always balanced (every kept element
//!   is closed), so the chart cannot close the surrounding HTML.
//! * Only plain drawing elements are kept ([`ALLOWED_ELEMENTS`]). Everything
//!   else is dropped with its content: `<script>`, `<foreignObject>` (which
//!   could carry HTML), `<style>` (inline SVG styles apply to the whole
//!   page), `<a>`, animation elements (which can set `href` to
//!   `javascript:`), and any HTML element that would break out of SVG.
//! * Attributes: `on*` event handlers are dropped; `href`/`xlink:href` are
//!   kept only as a same-document `#fragment` or a base64 raster
//!   `data:image/...`; any value containing `javascript:`, `vbscript:` or a
//!   `url(...)` that is not `url(#...)`, or a backslash (a CSS escape could
//!   hide a URL), is dropped; `style` attributes are dropped (plotters never
//!   writes them, and CSS could pull in images or cover the page); `xmlns`
//!   declarations are dropped (the HTML parser sets SVG namespaces itself).
//! * The root gets `width="100%"` and no height, keeping or adding a
//!   `viewBox` (from `width`/`height` when missing), so the chart scales to
//!   the page and keeps its aspect ratio on screen and in print.
//!
//! Text between tags is passed through: it cannot contain `<` (that starts
//! a tag here), and XML entities mean the same in HTML. CDATA content is
//! re-escaped as text.

use std::fmt::Write as _;

/// SVG elements kept when inlining a chart (matched case-insensitively).
pub const ALLOWED_ELEMENTS: [&str; 25] = [
    "svg",
    "g",
    "defs",
    "title",
    "desc",
    "path",
    "rect",
    "circle",
    "ellipse",
    "line",
    "polyline",
    "polygon",
    "text",
    "tspan",
    "textPath",
    "clipPath",
    "mask",
    "pattern",
    "marker",
    "symbol",
    "use",
    "image",
    "linearGradient",
    "radialGradient",
    "stop",
];

/// Why a chart could not be inlined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SvgError {
    /// The text has no `<svg ...>` start tag.
    #[error("the chart text must contain an <svg> element")]
    NoRoot,
}

/// A sanitised, responsive SVG element ready to be placed in HTML.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SafeSvg {
    markup: String,
    removed: usize,
}

impl SafeSvg {
    /// The `<svg ...>...</svg>` markup.
    pub fn markup(&self) -> &str {
        &self.markup
    }

    /// How many unsafe elements and attributes were removed (0 for a chart
    /// straight from plotters).
    pub fn removed(&self) -> usize {
        self.removed
    }
}

/// Sanitises `svg` (a full SVG document) for inlining and makes it
/// responsive (see the module docs for the rules). `aria_label`, when not
/// empty, becomes the root's accessible name (`role="img"`).
pub fn sanitize_svg(svg: &str, aria_label: &str) -> Result<SafeSvg, SvgError> {
    // ASCII lower-casing keeps byte offsets, so positions found in `lower`
    // are valid in `svg`.
    let lower = svg.to_ascii_lowercase();
    let mut s = Sanitizer {
        src: svg,
        lower: &lower,
        out: String::with_capacity(svg.len() + 128),
        stack: Vec::new(),
        removed: 0,
        root_seen: false,
    };
    s.run(aria_label);
    if !s.root_seen {
        return Err(SvgError::NoRoot);
    }
    Ok(SafeSvg {
        markup: s.out,
        removed: s.removed,
    })
}

struct Sanitizer<'a> {
    src: &'a str,
    /// `src` with ASCII letters lower-cased (same byte offsets).
    lower: &'a str,
    out: String,
    /// Names of the kept elements that are open, outermost first.
    stack: Vec<&'a str>,
    removed: usize,
    root_seen: bool,
}

/// One parsed start tag.
struct Tag<'a> {
    name: &'a str,
    attrs: Vec<(&'a str, &'a str)>,
    self_closing: bool,
}

impl<'a> Sanitizer<'a> {
    fn run(&mut self, aria_label: &str) {
        let src = self.src;
        let mut pos = 0;
        while pos < src.len() {
            let Some(lt) = src[pos..].find('<').map(|i| pos + i) else {
                self.text(&src[pos..]);
                break;
            };
            self.text(&src[pos..lt]);
            let rest = &src[lt..];
            pos = if rest.starts_with("<!--") {
                skip_past(src, lt + 4, "-->")
            } else if let Some(body) = rest.strip_prefix("<![CDATA[") {
                let end = body.find("]]>").map_or(src.len(), |i| lt + 9 + i);
                if self.inside() {
                    let _ = write!(self.out, "{}", super::escape::Html(&src[lt + 9..end]));
                }
                skip_past(src, end, "]]>")
            } else if rest.starts_with("<?") {
                skip_past(src, lt + 2, "?>")
            } else if rest.starts_with("<!") {
                skip_declaration(src, lt + 2)
            } else if let Some(after) = rest.strip_prefix("</") {
                let end = after.find('>').map_or(src.len(), |i| lt + 2 + i);
                let name = src[lt + 2..end].trim();
                self.end_tag(name);
                (end + 1).min(src.len())
            } else if rest[1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
                match parse_tag(src, lt + 1) {
                    Some((tag, next)) => self.start_tag(tag, aria_label, next),
                    // An unterminated tag ends the document.
                    None => src.len(),
                }
            } else {
                if self.inside() {
                    self.out.push_str("&lt;");
                }
                lt + 1
            };
            if self.root_seen && self.stack.is_empty() {
                break;
            }
        }
        // Close whatever the input left open.
        while let Some(name) = self.stack.pop() {
            let _ = write!(self.out, "</{name}>");
        }
    }

    fn inside(&self) -> bool {
        !self.stack.is_empty()
    }

    fn text(&mut self, t: &str) {
        if self.inside() {
            self.out.push_str(t);
        }
    }

    /// Handles a start tag whose `>` ends just before `next`; returns where
    /// to continue.
    fn start_tag(&mut self, tag: Tag<'a>, aria_label: &str, next: usize) -> usize {
        let local = tag.name.rsplit(':').next().unwrap_or(tag.name);
        if !self.root_seen {
            if local.eq_ignore_ascii_case("svg") {
                self.root_seen = true;
                self.write_tag(&tag, true, aria_label);
                if tag.self_closing {
                    self.out.push_str("</svg>");
                } else {
                    self.stack.push("svg");
                }
            }
            // Anything before the root is prolog and is dropped.
            return next;
        }
        if tag.name == local
            && ALLOWED_ELEMENTS
                .iter()
                .any(|a| a.eq_ignore_ascii_case(local))
        {
            self.write_tag(&tag, false, "");
            if !tag.self_closing {
                self.stack.push(tag.name);
            }
            return next;
        }
        self.removed += 1;
        if tag.self_closing {
            next
        } else {
            skip_element(self.src, self.lower, next, tag.name)
        }
    }

    fn end_tag(&mut self, name: &str) {
        let name = name.rsplit(':').next().unwrap_or(name);
        if let Some(at) = self
            .stack
            .iter()
            .rposition(|open| open.eq_ignore_ascii_case(name))
        {
            while self.stack.len() > at {
                if let Some(open) = self.stack.pop() {
                    let _ = write!(self.out, "</{open}>");
                }
            }
        }
        // An end tag matching nothing open is dropped.
    }

    fn write_tag(&mut self, tag: &Tag<'a>, root: bool, aria_label: &str) {
        let name = if root { "svg" } else { tag.name };
        let _ = write!(self.out, "<{name}");
        let mut size = (None, None);
        let mut has_viewbox = false;
        for &(key, value) in &tag.attrs {
            let lower = key.to_ascii_lowercase();
            if lower == "xmlns" || lower.starts_with("xmlns:") {
                continue;
            }
            if root {
                match lower.as_str() {
                    "width" => {
                        size.0 = parse_length(value);
                        continue;
                    }
                    "height" => {
                        size.1 = parse_length(value);
                        continue;
                    }
                    "viewbox" => has_viewbox = true,
                    "role" | "aria-label" | "class" | "preserveaspectratio" => continue,
                    _ => {}
                }
            }
            if !attribute_is_safe(&lower, value) {
                self.removed += 1;
                continue;
            }
            self.out.push(' ');
            self.out.push_str(key);
            self.out.push_str("=\"");
            for c in value.chars() {
                match c {
                    '"' => self.out.push_str("&quot;"),
                    '<' => self.out.push_str("&lt;"),
                    c if c.is_ascii_control() => self.out.push(' '),
                    c => self.out.push(c),
                }
            }
            self.out.push('"');
        }
        if root {
            match (has_viewbox, size) {
                (true, _) => {}
                (false, (Some(w), Some(h))) => {
                    let _ = write!(self.out, " viewBox=\"0 0 {w} {h}\"");
                    has_viewbox = true;
                }
                (false, (w, h)) => {
                    // Without a viewBox the drawing cannot scale: keep its size.
                    if let Some(w) = w {
                        let _ = write!(self.out, " width=\"{w}\"");
                    }
                    if let Some(h) = h {
                        let _ = write!(self.out, " height=\"{h}\"");
                    }
                }
            }
            if has_viewbox {
                self.out
                    .push_str(" width=\"100%\" preserveAspectRatio=\"xMidYMid meet\"");
            }
            self.out.push_str(" class=\"chart-svg\"");
            if !aria_label.trim().is_empty() {
                let _ = write!(
                    self.out,
                    " role=\"img\" aria-label=\"{}\"",
                    super::escape::Html(aria_label.trim())
                );
            }
        }
        self.out
            .push_str(if tag.self_closing && !root { "/>" } else { ">" });
    }
}

/// Whether attribute `lower` (lower-cased name) with raw `value` may stay.
fn attribute_is_safe(lower: &str, value: &str) -> bool {
    let valid_name = lower.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && lower
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'));
    if !valid_name || lower.starts_with("on") || lower == "src" || lower == "style" {
        return false;
    }
    // Compare without whitespace and controls, which browsers skip in URLs.
    let squeezed: String = value
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_control())
        .flat_map(char::to_lowercase)
        .collect();
    if squeezed.contains("javascript:") || squeezed.contains("vbscript:") {
        return false;
    }
    if lower == "href" || lower.ends_with(":href") {
        return is_safe_href(value.trim());
    }
    // CSS escapes (`\75rl(`) could hide a URL from the check below.
    if squeezed.contains('\\') {
        return false;
    }
    let mut rest = squeezed.as_str();
    while let Some(i) = rest.find("url(") {
        rest = &rest[i + 4..];
        if !rest.trim_start_matches(['"', '\'']).starts_with('#') {
            return false;
        }
    }
    true
}

/// A same-document fragment (`#id`) or a base64 raster data URI.
fn is_safe_href(v: &str) -> bool {
    if let Some(frag) = v.strip_prefix('#') {
        return !frag.is_empty()
            && frag
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    }
    let lower = v.get(..32).unwrap_or(v).to_ascii_lowercase();
    ["png", "jpeg", "jpg", "gif", "webp"]
        .iter()
        .any(|kind| lower.starts_with(&format!("data:image/{kind};base64,")))
        && v.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b':' | b';' | b',' | b'-')
        })
}

/// Parses `width`/`height` values such as `1920`, `1920.5` or `1920px`;
/// anything else (percentages, ems) is `None`.
fn parse_length(v: &str) -> Option<f64> {
    let v = v.trim();
    let v = v.strip_suffix("px").unwrap_or(v).trim();
    v.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0)
}

/// Parses the start tag whose name begins at `at` (just after `<`); returns
/// the tag and the position after its `>`, or `None` when it never ends.
fn parse_tag(src: &str, at: usize) -> Option<(Tag<'_>, usize)> {
    let bytes = src.as_bytes();
    let name_end = at + src[at..].find(|c: char| c.is_whitespace() || c == '/' || c == '>')?;
    let mut tag = Tag {
        name: &src[at..name_end],
        attrs: Vec::new(),
        self_closing: false,
    };
    let mut i = name_end;
    loop {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        match bytes.get(i)? {
            b'>' => return Some((tag, i + 1)),
            b'/' => {
                if bytes.get(i + 1) == Some(&b'>') {
                    tag.self_closing = true;
                    return Some((tag, i + 2));
                }
                i += 1;
                continue;
            }
            _ => {}
        }
        let key_start = i;
        while i < bytes.len()
            && !bytes[i].is_ascii_whitespace()
            && !matches!(bytes[i], b'=' | b'>' | b'/')
        {
            i += 1;
        }
        if i == key_start {
            // A stray '=' (or similar): step over it.
            i += 1;
            continue;
        }
        let key = &src[key_start..i];
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if bytes.get(i) != Some(&b'=') {
            tag.attrs.push((key, ""));
            continue;
        }
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let value = match bytes.get(i)? {
            q @ (b'"' | b'\'') => {
                let close = i + 1 + src[i + 1..].find(*q as char)?;
                let v = &src[i + 1..close];
                i = close + 1;
                v
            }
            _ => {
                let start = i;
                while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b'>' {
                    i += 1;
                }
                &src[start..i]
            }
        };
        tag.attrs.push((key, value));
    }
}

/// Position just after the next `end` at or after `from` (end of input if
/// there is none).
fn skip_past(src: &str, from: usize, end: &str) -> usize {
    src.get(from..)
        .and_then(|r| r.find(end))
        .map_or(src.len(), |i| from + i + end.len())
}

/// Skips a `<!...>` declaration (doctype), including an internal subset in
/// `[...]`.
fn skip_declaration(src: &str, from: usize) -> usize {
    let rest = &src[from..];
    match (rest.find('['), rest.find('>')) {
        (Some(b), Some(g)) if b < g => skip_past(src, from + b, "]>"),
        _ => skip_past(src, from, ">"),
    }
}

/// Skips the content and end tag of a dropped element whose start tag ended
/// at `from`. `script` and `style` are skipped as raw text up to their end
/// tag (their content may contain `<`); other elements by counting nested
/// start and end tags of the same name. Fails closed: with no end tag, the
/// rest of the input is skipped.
fn skip_element(src: &str, lower_src: &str, from: usize, name: &str) -> usize {
    let lower_name = name.to_ascii_lowercase();
    let open = format!("<{lower_name}");
    let close = format!("</{lower_name}");
    if matches!(lower_name.as_str(), "script" | "style") {
        return lower_src[from..]
            .find(&close)
            .map_or(src.len(), |i| skip_past(src, from + i, ">"));
    }
    let mut depth = 1usize;
    let mut pos = from;
    while depth > 0 {
        let next_open = find_tag(lower_src, pos, &open);
        let Some(c) = find_tag(lower_src, pos, &close) else {
            return src.len();
        };
        match next_open {
            Some(o) if o < c => {
                let end = skip_past(src, o, ">");
                if !src[..end].ends_with("/>") {
                    depth += 1;
                }
                pos = end;
            }
            _ => {
                depth -= 1;
                pos = skip_past(src, c, ">");
            }
        }
    }
    pos
}

/// Position of the next `pattern` (`<name` or `</name`) at or after `from`
/// that is followed by whitespace, `/` or `>` (so `<g` does not match `<glyph`).
fn find_tag(lower_src: &str, from: usize, pattern: &str) -> Option<usize> {
    let mut pos = from;
    while let Some(i) = lower_src.get(pos..)?.find(pattern) {
        let at = pos + i;
        let after = lower_src[at + pattern.len()..].chars().next();
        if after.is_none_or(|c| c.is_whitespace() || c == '/' || c == '>') {
            return Some(at);
        }
        pos = at + pattern.len();
    }
    None
}
