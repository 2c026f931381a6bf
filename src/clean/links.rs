//! Links and identifiers: URLs, e-mail addresses, DOIs and arXiv identifiers are removed from the
//! text that features are built from.
//!
//! Why: an export's code links (`https://github.com/…`), landing pages, corresponding-author
//! e-mails and DOIs are not the paper's words, and the tokenizer cuts them into fragments
//! (`https`, `github`, `com`, `journals.permissions`) that become top terms and labels. A
//! record whose whole "abstract" is a URL is left with no words and is left out as empty.
//!
//! What counts, in the order the scanner tries them at each word start:
//! - a URL: `http://`, `https://`, `ftp://` or `www.` up to the next whitespace, `<`, `>`, `"`
//!   or closing bracket that is not part of it, with trailing `.,;:!?'` left as text;
//! - a bare host with a path or a known top-level domain: `github.com/org/repo`,
//!   `papers.example.org` (two or more dot-separated labels, the last one from [`TLDS`]);
//! - an e-mail address: `name@host.tld` (the host as above, any top-level domain of letters);
//! - a DOI: `10.NNNN/…` (with or without a `doi:` prefix);
//! - an arXiv identifier: `arXiv:2101.00001v2`, `arXiv:cs/0112017`.
//!
//! One forward pass, no regex: bytes that cannot start a match are copied in runs, and the
//! candidates (`:`/`/` after a scheme, `@`, `.`, a `10.` prefix) are checked with bounded
//! lookaround. What was removed is counted per kind, for `run.json` and the report.

use serde::{Deserialize, Serialize};

/// Top-level domains a bare host (no scheme, no path) must end in to be taken for a host, so
/// that `e.g.` or `Fig.3` are never hosts. Hosts with a path (`x.io/y`) or a scheme need none.
pub const TLDS: &[&str] = &[
    "com", "org", "net", "edu", "gov", "io", "ai", "info", "uk", "de", "cn", "fr", "jp", "ch",
    "nl", "it", "es", "ca", "au", "ru", "kr", "in", "br", "eu", "us", "me", "dev", "app",
];

/// How many of each kind were removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkCounts {
    pub urls: u64,
    pub emails: u64,
    pub dois: u64,
    pub arxiv_ids: u64,
}

impl LinkCounts {
    pub fn add(&mut self, o: &LinkCounts) {
        self.urls += o.urls;
        self.emails += o.emails;
        self.dois += o.dois;
        self.arxiv_ids += o.arxiv_ids;
    }
    pub fn total(&self) -> u64 {
        self.urls + self.emails + self.dois + self.arxiv_ids
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Url,
    Email,
    Doi,
    Arxiv,
}

/// True when `text` may hold something [`strip_links`] removes (a cheap pre-check: most
/// abstracts hold none of `:` after a scheme, `@`, `www.`, `10.` or a dotted host).
pub fn may_hold_links(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr3(b'@', b'/', b'.', b).is_some()
}

/// Appends `text` to `out` without its links and identifiers (each replaced by one space, so
/// the words on either side stay apart), and counts what was removed. Returns whether anything
/// was; only then does `out` hold the text (a text without links is not copied).
pub fn strip_links(text: &str, out: &mut String, counts: &mut LinkCounts) -> bool {
    let (mut copied, mut removed) = (0, false);
    for_each_link(text, |start, end, kind| {
        out.push_str(&text[copied..start]);
        out.push(' ');
        count(counts, kind);
        copied = end;
        removed = true;
    });
    if !removed {
        return false;
    }
    out.push_str(&text[copied..]);
    true
}

/// True when `text` holds a letter or digit outside its links and identifiers: a segment that
/// is only a URL or an e-mail address is not a text of its own. Allocates nothing.
pub fn has_words_besides_links(text: &str) -> bool {
    // Links start and end at ASCII bytes, so every stretch between them is whole characters.
    let words = |r: &str| r.chars().any(char::is_alphanumeric);
    let (mut from, mut found) = (0, false);
    for_each_link(text, |start, end, _| {
        found |= words(&text[from..start]);
        from = end;
    });
    found || words(&text[from..])
}

/// Calls `f(start, end, kind)` for each link of `text`, in order and without overlaps.
///
/// Only words holding a candidate byte are tried: `@`, `/`, or a `.` or `:` with a letter or
/// digit on each side (a sentence's full stop is not one), so ordinary words cost one scan.
fn for_each_link(text: &str, mut f: impl FnMut(usize, usize, Kind)) {
    let b = text.as_bytes();
    let (mut done, mut at) = (0, 0);
    while let Some(hit) = next_candidate(b, at) {
        let start = word_start(b, hit).max(done);
        match find_link(b, start) {
            Some((end, kind)) => {
                f(start, end, kind);
                done = end;
                at = end;
            }
            None => at = start + word_len(&b[start..]).max(1),
        }
    }
}

/// The next byte at or after `from` that may sit inside a link.
fn next_candidate(b: &[u8], mut from: usize) -> Option<usize> {
    while from < b.len() {
        let i = from
            + memchr::memchr3(b'@', b'/', b'.', &b[from..])
                .map_or_else(|| memchr::memchr(b':', &b[from..]), Some)?;
        let i = match memchr::memchr(b':', &b[from..i]) {
            Some(c) => from + c,
            None => i,
        };
        let alnum = |k: usize| b.get(k).is_some_and(u8::is_ascii_alphanumeric);
        let ok = match b[i] {
            b'@' | b'/' => true,
            _ => i > 0 && alnum(i - 1) && (alnum(i + 1) || b.get(i + 1) == Some(&b'/')),
        };
        if ok {
            return Some(i);
        }
        from = i + 1;
    }
    None
}

/// The start of the token-byte run holding `i`.
fn word_start(b: &[u8], i: usize) -> usize {
    b[..i]
        .iter()
        .rposition(|&c| !is_token_byte(c))
        .map_or(0, |p| p + 1)
}

fn count(c: &mut LinkCounts, kind: Kind) {
    match kind {
        Kind::Url => c.urls += 1,
        Kind::Email => c.emails += 1,
        Kind::Doi => c.dois += 1,
        Kind::Arxiv => c.arxiv_ids += 1,
    }
}

/// Bytes that may belong to a URL, host, e-mail or identifier token (any non-ASCII byte is
/// allowed inside a URL's path, but never starts one).
fn is_token_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_' | b'%' | b'+' | b'@' | b':' | b'/')
}

/// The link that starts at `i`, if any: its end and kind.
fn find_link(b: &[u8], i: usize) -> Option<(usize, Kind)> {
    let rest = &b[i..];
    if let Some(n) = scheme_len(rest) {
        return Some((i + url_end(rest, n), Kind::Url));
    }
    if let Some(end) = arxiv_end(rest) {
        return Some((i + end, Kind::Arxiv));
    }
    if let Some(end) = doi_end(rest) {
        return Some((i + end, Kind::Doi));
    }
    let word = word_len(rest);
    if let Some(p) = memchr::memmem::find(&rest[..word], b"://") {
        // A scheme glued to a word before it (`URL:https://…`): the URL starts at the scheme.
        let start = rest[..p]
            .iter()
            .rposition(|c| !c.is_ascii_alphabetic())
            .map_or(0, |q| q + 1);
        if let Some(n) = scheme_len(&rest[start..]) {
            return Some((i + start + url_end(&rest[start..], n), Kind::Url)).filter(|_| start > 0);
        }
    }
    if let Some(at) = rest[..word].iter().position(|&c| c == b'@') {
        if let Some(end) = email_end(rest, at, word) {
            return Some((i + end, Kind::Email));
        }
        return None;
    }
    host_end(rest, word).map(|end| (i + end, Kind::Url))
}

/// Length of the token bytes from the start.
fn word_len(b: &[u8]) -> usize {
    b.iter().position(|&c| !is_token_byte(c)).unwrap_or(b.len())
}

fn starts_with_ci(b: &[u8], prefix: &[u8]) -> bool {
    b.len() >= prefix.len() && b[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// `http://`, `https://`, `ftp://` or `www.`: the prefix length.
fn scheme_len(b: &[u8]) -> Option<usize> {
    for p in [&b"https://"[..], b"http://", b"ftp://", b"www."] {
        if starts_with_ci(b, p) && b.len() > p.len() && !b[p.len()].is_ascii_whitespace() {
            return Some(p.len());
        }
    }
    None
}

/// The end of a URL whose scheme is `n` bytes: up to whitespace or a delimiter, balanced
/// brackets kept (`wiki/Foo_(bar)`), trailing punctuation left as text.
fn url_end(b: &[u8], n: usize) -> usize {
    let mut depth = 0i32;
    let mut end = n;
    while end < b.len() {
        let c = b[end];
        // Non-ASCII ends it too: CJK text runs on with no space after a link.
        if !c.is_ascii()
            || c.is_ascii_whitespace()
            || matches!(c, b'<' | b'>' | b'"' | b'{' | b'}' | b'|' | b'\\')
        {
            break;
        }
        if c == b'(' || c == b'[' {
            depth += 1;
        } else if c == b')' || c == b']' {
            if depth == 0 {
                break;
            }
            depth -= 1;
        }
        end += 1;
    }
    trim_trailing(b, n, end)
}

/// Drops trailing `.,;:!?'` (sentence punctuation after a link) from `b[start..end]`.
fn trim_trailing(b: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && matches!(b[end - 1], b'.' | b',' | b';' | b':' | b'!' | b'?' | b'\'') {
        end -= 1;
    }
    end
}

/// `arXiv:2101.00001v2` or `arXiv:cs/0112017` (case-insensitive `arxiv:`).
fn arxiv_end(b: &[u8]) -> Option<usize> {
    if !starts_with_ci(b, b"arxiv:") {
        return None;
    }
    let rest = &b[6..];
    let n = word_len(rest);
    let id = &rest[..trim_trailing(rest, 0, n)];
    let new_style = id.len() >= 9
        && id[..4].iter().all(u8::is_ascii_digit)
        && id[4] == b'.'
        && id[5..9].iter().all(u8::is_ascii_digit);
    let old_style = id.contains(&b'/') && id.iter().rev().take(7).all(u8::is_ascii_digit);
    (new_style || old_style).then_some(6 + id.len())
}

/// `10.NNNN/suffix` or `doi:10.NNNN/suffix`.
fn doi_end(b: &[u8]) -> Option<usize> {
    let skip = if starts_with_ci(b, b"doi:") { 4 } else { 0 };
    let rest = &b[skip..];
    if !rest.starts_with(b"10.") {
        return None;
    }
    let digits = rest[3..].iter().take_while(|c| c.is_ascii_digit()).count();
    if !(4..=9).contains(&digits) || rest.get(3 + digits) != Some(&b'/') {
        return None;
    }
    let n = word_len(rest);
    let end = trim_trailing(rest, 0, n);
    (end > 4 + digits).then_some(skip + end)
}

/// An e-mail address `local@host` within the word of `word` bytes, with `@` at `at`.
fn email_end(b: &[u8], at: usize, word: usize) -> Option<usize> {
    let local = &b[..at];
    if local.is_empty()
        || !local
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || b"._%+-".contains(&c))
    {
        return None;
    }
    let host_start = at + 1;
    let end = trim_trailing(b, host_start, word);
    let host = &b[host_start..end];
    is_host(host, |tld| {
        tld.len() >= 2 && tld.iter().all(u8::is_ascii_alphabetic)
    })
    .then_some(end)
}

/// A bare host (`github.com/org/repo`, `papers.example.org`): dot-separated labels, a path or a
/// top-level domain from [`TLDS`].
fn host_end(b: &[u8], word: usize) -> Option<usize> {
    let end = trim_trailing(b, 0, word);
    let token = &b[..end];
    let (host, has_path) = match token.iter().position(|&c| c == b'/') {
        Some(p) => (&token[..p], p + 1 < token.len()),
        None => (token, false),
    };
    let known = |tld: &[u8]| TLDS.iter().any(|t| tld.eq_ignore_ascii_case(t.as_bytes()));
    let ok = if has_path {
        is_host(host, |tld| {
            tld.len() >= 2 && tld.iter().all(u8::is_ascii_alphabetic)
        }) && (known(host.rsplit(|&c| c == b'.').next().unwrap_or(b""))
            || host.iter().filter(|&&c| c == b'.').count() >= 2)
    } else {
        is_host(host, known)
    };
    ok.then_some(end)
}

/// Two or more non-empty labels of letters, digits and `-`, the last one accepted by `tld`.
fn is_host(host: &[u8], tld: impl Fn(&[u8]) -> bool) -> bool {
    let mut labels = 0;
    let mut last: &[u8] = b"";
    for label in host.split(|&c| c == b'.') {
        if label.is_empty()
            || !label
                .iter()
                .all(|&c| c.is_ascii_alphanumeric() || c == b'-')
        {
            return false;
        }
        labels += 1;
        last = label;
    }
    labels >= 2 && tld(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(s: &str) -> (String, LinkCounts) {
        let mut out = String::new();
        let mut c = LinkCounts::default();
        if !strip_links(s, &mut out, &mut c) {
            out = s.to_string();
        }
        (out, c)
    }

    #[test]
    fn urls_go_and_the_sentence_stays() {
        let (t, c) = strip("Code is at https://github.com/a/b. See www.example.org/x, too.");
        assert_eq!(t, "Code is at  . See  , too.");
        assert_eq!(c.urls, 2);
    }

    #[test]
    fn bare_hosts_need_a_known_tld_or_a_path() {
        let (t, c) = strip("papers.example.org and github.io/x, not e.g. or Fig.3 or 3.5 or U.S.");
        assert_eq!(t, "  and  , not e.g. or Fig.3 or 3.5 or U.S.");
        assert_eq!(c.urls, 2);
    }

    #[test]
    fn emails_dois_and_arxiv_ids() {
        let (t, c) = strip(
            "Mail journals.permissions@oup.com or geb@cadre.dsl.pitt.edu; doi:10.1016/j.x.2019.01.002 \
             and 10.1109/5.771073, arXiv:2101.00001v2 and arXiv:cs/0112017.",
        );
        assert_eq!(t, "Mail   or  ;   and  ,   and  .");
        assert_eq!((c.emails, c.dois, c.arxiv_ids), (2, 2, 2));
    }

    #[test]
    fn non_ascii_text_and_plain_words_pass_through() {
        let s = "Zurich (ETH) – 10.5 points, a@b is no address, 卷积神经网络 模型.";
        let (t, c) = strip(s);
        assert_eq!(t, s);
        assert_eq!(c.total(), 0);
    }

    #[test]
    fn a_bare_url_record_is_left_with_no_words() {
        let (t, _) = strip("https://openreview.net/forum?id=abc123");
        assert!(t.trim().is_empty());
    }

    #[test]
    fn url_in_brackets_keeps_the_bracket() {
        let (t, c) = strip("(see https://en.wikipedia.org/wiki/Foo_(bar))");
        assert_eq!(t, "(see  )");
        assert_eq!(c.urls, 1);
    }

    #[test]
    fn words_besides_links() {
        for only in [
            "https://x.org/1",
            " www.example.org/a ,",
            "joe@y.com.",
            "doi:10.1016/j.x.2019.01.002",
            "https://x.org/1 — ¶",
        ] {
            assert!(!has_words_besides_links(only), "{only}");
        }
        for text in [
            "Code at https://x.org/1",
            "https://x.org/1 see",
            "卷积 https://x.org",
            "a",
        ] {
            assert!(has_words_besides_links(text), "{text}");
        }
    }
}
