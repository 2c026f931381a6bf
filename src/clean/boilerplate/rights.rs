//! Rights statements and message furniture: the segments removed even when they occur once.
//!
//! A rights statement is a copyright or licence line: its normalised form (see
//! [`super::scan`]) starts with one of [`RIGHTS_STARTS`] or holds one of [`RIGHTS_ANYWHERE`] as
//! whole words. The lists are of publishers' and licences' own wording, so a sentence *about*
//! copyright ("We detect copyright infringement …") is not one. Message furniture is a quoted
//! header ("In article <…> … writes:") and a signature: the lines after a `--` delimiter line,
//! when few and short enough to be one.

/// Normalised segment starts that make it a rights statement (`©` also stands for `(c)` before
/// a year; digit runs read `0`).
pub const RIGHTS_STARTS: &[&str] = &[
    "©",
    "copyright ©",
    "copyright 0",
    "copyright by",
    "copyright the author",
    "copyright notice",
    "copyright holder",
    "all rights reserved",
    "published by",
    "for permissions",
    "this article is protected by copyright",
    "personal use of this material is permitted",
    "permission from ieee must be obtained",
    "the final publication is available",
    "this is an open access article",
    "this article is an open access article",
    "this work is licensed under",
    "licensee",
];
/// Normalised phrases that make a segment a rights statement wherever they occur (as whole
/// words; CJK phrases anywhere).
pub const RIGHTS_ANYWHERE: &[&str] = &[
    "©",
    "all rights reserved",
    "protected by copyright",
    "distributed under the terms of the",
    "is licensed under a creative commons",
    "licensed under the creative commons",
    "版权所有",
];

/// Raw-text words of which every rights statement, quoted header and signature holds one, or
/// one of the [marks](has_mark): each phrase of [`RIGHTS_STARTS`] and [`RIGHTS_ANYWHERE`] has
/// one of these among its words (`©` may be written `(c)`), a quoted header ends in `writes:` or
/// `wrote:`, a signature starts at a line that starts with `--`. Matched in lower, Capitalised
/// and UPPER case (the forms publishers write). A text holding none can lose nothing but
/// repeated segments, so it is not scanned when there are none.
const FURNITURE_WORDS: &[&str] = &[
    "copyright",
    "reserved",
    "published",
    "permission",
    "protected",
    "permitted",
    "publication",
    "access",
    "licens",
    "distributed",
    "creative",
    "writes:",
    "wrote:",
];

/// Whether `text` may hold a rights statement, a quoted header or a signature (see
/// [`FURNITURE_WORDS`]): a SIMD search (Teddy, for these few patterns of four bytes or more)
/// and a byte search for the marks, together a tenth of the segment scan's cost.
pub fn may_hold_furniture(text: &str) -> bool {
    static WORDS: std::sync::LazyLock<Words> = std::sync::LazyLock::new(Words::new);
    has_mark(text.as_bytes()) || WORDS.find(text)
}

/// The furniture words' search: the packed SIMD searcher where the CPU has it, else an
/// automaton (the same answers).
enum Words {
    Packed(aho_corasick::packed::Searcher),
    Automaton(aho_corasick::AhoCorasick),
}

impl Words {
    fn new() -> Words {
        let mut patterns = Vec::new();
        for w in FURNITURE_WORDS {
            let mut cap = w.to_string();
            cap[..1].make_ascii_uppercase();
            patterns.extend([w.to_string(), cap, w.to_ascii_uppercase()]);
        }
        match aho_corasick::packed::Searcher::new(patterns.iter()) {
            Some(s) => Words::Packed(s),
            None => Words::Automaton(
                aho_corasick::AhoCorasick::new(&patterns).expect("fixed patterns build"),
            ),
        }
    }

    fn find(&self, text: &str) -> bool {
        match self {
            Words::Packed(s) => s.find(text).is_some(),
            Words::Automaton(a) => a.is_match(text),
        }
    }
}

/// The marks: `©`, `(c)` or `(C)`, `版权`, and `--` at a line start.
fn has_mark(b: &[u8]) -> bool {
    static BANQUAN: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("版权"));
    if b.starts_with(b"--") {
        return true;
    }
    let mut from = 0;
    while let Some(at) = memchr::memchr3(b'(', b'\n', 0xA9, &b[from..]) {
        let i = from + at;
        let hit = match b[i] {
            b'(' => b
                .get(i + 1..i + 3)
                .is_some_and(|s| s.eq_ignore_ascii_case(b"c)")),
            b'\n' => b[i + 1..].starts_with(b"--"),
            _ => i > 0 && b[i - 1] == 0xC2,
        };
        if hit {
            return true;
        }
        from = i + 1;
    }
    BANQUAN.find(b).is_some()
}

/// Most lines after a `--` delimiter that still make a signature (RFC 3676 asks for four).
const SIGNATURE_LINES: usize = 6;
/// Most bytes after a `--` delimiter that still make a signature.
const SIGNATURE_BYTES: usize = 600;

/// A copyright or licence statement, given its normalised form and whether the scanner saw an
/// anchoring word (only then is the phrase list searched).
pub fn is_rights_statement(norm: &[u8], anchored: bool) -> bool {
    static ANYWHERE: std::sync::LazyLock<Vec<memchr::memmem::Finder<'static>>> =
        std::sync::LazyLock::new(|| {
            RIGHTS_ANYWHERE
                .iter()
                .map(memchr::memmem::Finder::new)
                .collect()
        });
    let whole_word_at = |pos: usize, len: usize| {
        (pos == 0 || norm[pos - 1] == b' ') && norm.get(pos + len).is_none_or(|&c| c == b' ')
    };
    if RIGHTS_STARTS
        .iter()
        .any(|p| norm.starts_with(p.as_bytes()) && whole_word_at(0, p.len()))
    {
        return true;
    }
    anchored
        && ANYWHERE.iter().any(|f| {
            let needle = f.needle();
            let mut from = 0;
            while let Some(pos) = f.find(&norm[from..]) {
                let pos = from + pos;
                if !needle.is_ascii() || whole_word_at(pos, needle.len()) {
                    return true;
                }
                from = pos + 1;
            }
            false
        })
}

/// A quoted-message header line: "In article <…>, … writes:" or "… wrote:".
pub fn is_quote_header(seg: &str) -> bool {
    let t = seg.trim_end();
    t.ends_with(':')
        && (t.ends_with("writes:") || t.ends_with("wrote:"))
        && (t.starts_with("In article") || t.contains('@') || t.chars().count() <= 100)
}

/// Where a signature starts: the last delimiter line (`--` alone, RFC 3676's `-- `) when what
/// follows it is short enough to be a signature (at most [`SIGNATURE_LINES`] lines and
/// [`SIGNATURE_BYTES`] bytes). A `--` with more after it is a separator inside the text and
/// stays.
pub fn signature_start(text: &str) -> Option<usize> {
    let tail_from = text.len().saturating_sub(SIGNATURE_BYTES + 4);
    let tail_from = (tail_from..=text.len()).find(|&i| text.is_char_boundary(i))?;
    let mut line_start = None;
    for (i, _) in text[tail_from..].match_indices("--") {
        let at = tail_from + i;
        let starts_line = at == 0 || text.as_bytes()[at - 1] == b'\n';
        let rest = &text[at + 2..];
        let line_rest = rest.split('\n').next().unwrap_or("");
        if starts_line && line_rest.trim().is_empty() {
            line_start = Some(at);
        }
    }
    let at = line_start?;
    let rest = &text[at + 2..];
    (rest.trim().lines().filter(|l| !l.trim().is_empty()).count() <= SIGNATURE_LINES).then_some(at)
}
