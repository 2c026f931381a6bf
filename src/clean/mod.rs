//! Text cleaning: turns abstracts full of LaTeX, Markdown, HTML entities and
//! PDF-extraction artefacts into plain, whitespace-folded text before
//! tokenizing.
//!
//! What it does (see [`Cleaner`] for the full rule list): keeps the words of
//! formatting commands (`\textbf{GAP}` -> `GAP`), drops citations and
//! references, drops inline math unless it is glued to a word
//! (`A$^3$Bench` -> `A3Bench`), strips Markdown emphasis, links and code
//! ticks, joins words split by the PDF soft hyphen `(cid:173)`, decodes LaTeX
//! escapes and HTML entities, removes invisible characters and folds all
//! whitespace to single spaces.
//!
//! Why it is built this way:
//! - It runs on every document of million-document corpora, so it is one
//!   forward pass over the bytes. Ordinary bytes are found 32 at a time
//!   ([`byteset`]) and copied as whole runs; only special bytes (`\ $ { } ~ * _ [ & (`
//!   and a few UTF-8 lead bytes of invisible/space characters) dispatch to a
//!   handler. No regex, no per-document allocation beyond the output buffer.
//! - Hostile input cannot make it slow or crash it. Every lookahead is bounded
//!   (math spans, command arguments, link parts) or served by a cache that
//!   only moves forward (the next `$`, the next blank line), so the time is
//!   linear. Braces are never matched with a stack in text mode: `{` and `}`
//!   just vanish, so `{{{{…` a million deep costs nothing and cannot overflow
//!   anything. The only nesting is fixed and shallow: text -> link text ->
//!   math -> text argument inside math.
//! - The result is idempotent (`clean(clean(x)) == clean(x)`) for every input.
//!   The scanner is written so its output contains nothing it would change
//!   again; for the rare constructs that are assembled from pieces (say
//!   `&\textbf{amp};`, which becomes `&amp;`), a cheap byte scan of the
//!   output detects anything still cleanable and cleans again, up to a fixed
//!   number of passes; adversarially nested input that outlasts them has its
//!   leftovers blanked to spaces, which is a fixed point by construction.

pub mod boilerplate;
mod byteset;
pub mod injected;
pub mod links;
mod stage;
mod tables;
#[cfg(test)]
mod tests;

pub use boilerplate::{BackOff, BoilerplateParams, BoilerplateParamsError};
use byteset::ByteSet;
pub use stage::{
    CleanBuffers, CleanParams, CleanReport, CleanTally, CleanValidParams, Cleaned, ShownSegment,
    TextCleaner,
};
use tables::{Entity, TextCmd};

/// Longest inline `$...$` body, in bytes, still treated as math; a `$` whose
/// partner is further away (or across a blank line) is a stray dollar.
const INLINE_MATH_MAX: usize = 256;
/// Longest `$$...$$`, `\(...\)` or `\[...\]` body, in bytes.
const DISPLAY_MATH_MAX: usize = 2048;
/// Longest flat argument of a dropped command (`\cite{...}`, `\url{...}`).
const FLAT_ARG_MAX: usize = 1024;
/// Longest optional argument (`\cite[p.~3]{x}`).
const OPT_ARG_MAX: usize = 256;
/// Longest Markdown link text and URL.
const LINK_TEXT_MAX: usize = 512;
const LINK_URL_MAX: usize = 2048;
/// Bound on extra passes when the output still holds something cleanable;
/// past it, what is left is blanked out (see `blank_unstable`).
const MAX_REPASSES: usize = 8;

/// Turns raw abstract text into plain, single-spaced text.
///
/// Stateless and cheap to construct (it holds no options today; every rule is
/// fixed); `Send + Sync`, so one instance can be shared by all threads.
///
/// Rules, in the order a reader meets them:
/// - Formatting commands keep their words: `\textbf{GAP}` -> `GAP` (also
///   `\emph`, `\textsc`, `\textit`, `\texttt`, `\underline`, `\mathrm`,
///   `\text`, ...). Unknown commands (`\alpha`, `\sim`, `\algname`) are
///   dropped; a `{...}` group after them is ordinary text.
/// - Citations and references vanish with their arguments, optional ones
///   included: `\cite[p.~3]{x}`, `\citep`, `\citet`, `\ref`, `\eqref`,
///   `\label`, `\url`, `\begin{env}`... (at most 1024 bytes, no nested braces).
/// - Math: `$...$` (body at most 256 bytes, no blank line; Pandoc's rule that
///   the opening `$` is not followed and the closing `$` not preceded by a
///   space, unless the body holds TeX syntax `\ ^ _ { } =`; and no `$5-$10`:
///   a body starting with a digit may not close right before another digit),
///   `$$...$$`, `\(...\)` and `\[...\]` (at most 2048 bytes) are dropped.
///   Text commands inside keep
///   their words (`$\textbf{SPIN}$` -> `SPIN`). Math glued to a letter or digit
///   on either side (or to a hyphenated word: `$k$-means`, `size-$K$`) keeps
///   its plain alphanumeric content with no spaces (`A$^3$Bench` ->
///   `A3Bench`), Greek letter commands spelled out (`$\epsilon$-greedy` ->
///   `epsilon-greedy`); glued math with no such content becomes a space
///   (`4$\times$ faster` -> `4 faster`). A `$` that does not open valid math
///   is dropped and the text after it kept (`costs $5 and $10` ->
///   `costs 5 and 10`).
/// - Markdown: `*`/`**`/`***` emphasis markers are removed (a single `*`
///   between digits becomes a space); `_`/`__` are removed unless between two
///   alphanumerics (`snake_case` stays); `[text](url)` -> `text`; backticks
///   are removed, their content kept.
/// - PDF artefacts: `(cid:173)` (soft hyphen) and the whitespace after it are
///   removed, joining the word (`conjunc(cid:173) tion` -> `conjunction`);
///   ligature codes glued to lowercase letters are restored
///   (`classi(cid:12)cation` -> `classification`); any other `(cid:N)` is
///   dropped.
/// - Escapes: `\%` `\&` `\#` -> the char, `\_` follows the `_` rule, `\$`
///   `\{` `\}` are dropped, `~` and `\\` are spaces, accents compose
///   (`Lov\'asz` -> `Lovász`); a run of two or more `-` becomes ` - `.
/// - HTML entities (`&amp;` `&lt;` `&gt;` `&quot;` `&#39;`, numeric, and a few
///   more) are decoded, double-encoded ones fully.
/// - Soft hyphen U+00AD, zero-width and direction marks (U+200B..U+200F,
///   U+202A..U+202E, U+2060..U+206F, U+FEFF) are removed; control characters
///   become spaces.
/// - Whitespace: every run (newlines, tabs, NBSP and other Unicode spaces
///   included) becomes one ASCII space; both ends are trimmed.
///
/// Everything else passes through unchanged, non-ASCII text included
/// (accented letters, Greek, CJK, typographic quotes and dashes).
///
/// The output never starts or ends with whitespace, never holds two spaces in
/// a row or any whitespace but ASCII space, and cleaning it again returns it
/// unchanged.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cleaner {
    _private: (),
}

impl Cleaner {
    /// A cleaner with the fixed rules described on [`Cleaner`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Cleans `text` into a fresh `String`.
    pub fn clean(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        self.clean_into(text, &mut out);
        out
    }

    /// Cleans `text`, appending to `out` after clearing it, so a caller can
    /// reuse one buffer across documents in a hot loop.
    pub fn clean_into(&self, text: &str, out: &mut String) {
        out.clear();
        out.reserve(text.len());
        run(text, out);
        if is_stable(out) {
            return;
        }
        // Rare: the output still holds something cleanable, assembled from
        // pieces of the input. Clean again until nothing changes.
        let mut prev = String::with_capacity(out.len());
        for _ in 0..MAX_REPASSES {
            std::mem::swap(out, &mut prev);
            out.clear();
            run(&prev, out);
            if is_stable(out) {
                return;
            }
        }
        // Only adversarial nesting gets here, e.g. `(ci(cid:173)d:173)`
        // repeated, which needs one pass per level.
        std::mem::swap(out, &mut prev);
        blank_unstable(&prev, out);
    }
}

/// Bytes that need a decision: ASCII whitespace and controls, the LaTeX and
/// Markdown syntax characters, and the UTF-8 lead bytes of every Unicode
/// space, control, soft hyphen and zero-width char (C2, E1, E2, E3, EF).
/// Everything else (letters, digits, ordinary punctuation, most non-ASCII) is
/// copied through in runs.
static SPECIAL: ByteSet = ByteSet::new(special_table(false));
/// [`SPECIAL`] plus `]`, for the stability check (`](` may form a link).
static CHECK: ByteSet = ByteSet::new(special_table(true));
/// The special bytes a run of ordinary text absorbs when an ordinary byte follows (see
/// [`run_end`]).
static JOINERS: ByteSet = ByteSet::new({
    let mut t = [false; 256];
    t[b' ' as usize] = true;
    t[b'-' as usize] = true;
    t
});

const fn special_table(with_close_bracket: bool) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[0x7F] = true;
    let s = b"\\${}~`*_[&(-";
    let mut k = 0;
    while k < s.len() {
        t[s[k] as usize] = true;
        k += 1;
    }
    t[0xC2] = true;
    t[0xE1] = true;
    t[0xE2] = true;
    t[0xE3] = true;
    t[0xEF] = true;
    if with_close_bracket {
        // The stability check: `](` may form a link. Spaces need no check,
        // as `Writer` never doubles them nor writes them at either end.
        t[b']' as usize] = true;
    } else {
        t[b' ' as usize] = true;
    }
    t
}

/// Output sink that folds whitespace: a space is only remembered, and written
/// before the next visible char, never at the start, never twice.
struct Writer<'o> {
    out: &'o mut String,
    pending: bool,
}

impl Writer<'_> {
    #[inline]
    fn space(&mut self) {
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
    fn push_str(&mut self, s: &str) {
        if !s.is_empty() {
            self.flush();
            self.out.push_str(s);
        }
    }

    #[inline]
    fn push(&mut self, c: char) {
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

    fn last_is_alnum(&self) -> bool {
        self.last().is_some_and(char::is_alphanumeric)
    }

    /// Forgets a pending space when the next input char is closing
    /// punctuation, so a dropped `~\cite{x}.` leaves `word.` not `word .`.
    fn tuck_before_punct(&mut self, next: Option<u8>) {
        if matches!(next, Some(b'.' | b',' | b';' | b':' | b')' | b'?' | b'!')) {
            self.pending = false;
        }
    }
}

/// What a segment may contain (limits the nesting to a fixed depth).
#[derive(Debug, Clone, Copy)]
struct Ctx {
    math: bool,
    links: bool,
}

/// One cleaning pass over `text`, appended to `out`.
fn run(text: &str, out: &mut String) {
    let mut w = Writer {
        out,
        pending: false,
    };
    process(
        text,
        &mut w,
        Ctx {
            math: true,
            links: true,
        },
    );
}

/// `s[a..b]`, or `""` if the bounds are not char boundaries (never happens
/// by construction; this keeps a bug from becoming a panic).
#[inline]
fn slice(s: &str, a: usize, b: usize) -> &str {
    s.get(a..b).unwrap_or("")
}

#[inline]
fn char_at(s: &str, i: usize) -> Option<char> {
    s.get(i..).and_then(|t| t.chars().next())
}

fn is_alnum_at(s: &str, i: usize) -> bool {
    char_at(s, i).is_some_and(char::is_alphanumeric)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Keep,
    Space,
    Remove,
}

fn classify(ch: char) -> Class {
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

fn emit_char(ch: char, w: &mut Writer<'_>) {
    match classify(ch) {
        Class::Keep => w.push(ch),
        Class::Space => w.space(),
        Class::Remove => {}
    }
}

/// A search for the first match at or after a position (`b.len()` if none).
type FindFn = fn(&[u8], usize) -> usize;

/// "First match at or after `from`", remembered so that forward-moving
/// queries scan every byte at most once.
struct Cached {
    from: usize,
    at: usize,
}

impl Cached {
    fn new() -> Self {
        Cached {
            from: usize::MAX,
            at: 0,
        }
    }

    fn find(&mut self, b: &[u8], from: usize, f: FindFn) -> usize {
        if self.from <= from && from <= self.at {
            return self.at;
        }
        self.from = from;
        self.at = f(b, from);
        self.at
    }
}

fn find_byte(b: &[u8], from: usize, c: u8) -> usize {
    b.get(from..)
        .and_then(|t| t.iter().position(|&x| x == c))
        .map_or(b.len(), |p| from + p)
}

fn find_dollar(b: &[u8], from: usize) -> usize {
    find_byte(b, from, b'$')
}

/// First `first` immediately followed by `second`.
fn find_pair(b: &[u8], mut from: usize, first: u8, second: u8) -> usize {
    loop {
        let p = find_byte(b, from, first);
        if p >= b.len() || b.get(p + 1) == Some(&second) {
            return p.min(b.len());
        }
        from = p + 1;
    }
}

fn find_ddollar(b: &[u8], from: usize) -> usize {
    find_pair(b, from, b'$', b'$')
}

fn find_close_paren(b: &[u8], from: usize) -> usize {
    find_pair(b, from, b'\\', b')')
}

fn find_close_bracket(b: &[u8], from: usize) -> usize {
    find_pair(b, from, b'\\', b']')
}

/// Start of the first blank line (`\n`, optional spaces, `\n`).
fn find_blank(b: &[u8], mut from: usize) -> usize {
    loop {
        let p = find_byte(b, from, b'\n');
        if p >= b.len() {
            return b.len();
        }
        let mut k = p + 1;
        while k < b.len() && matches!(b[k], b' ' | b'\t' | b'\r') {
            k += 1;
        }
        if b.get(k) == Some(&b'\n') {
            return p;
        }
        from = p + 1;
    }
}

/// Forward caches for one segment.
struct Finders {
    dollar: Cached,
    ddollar: Cached,
    paren: Cached,
    bracket: Cached,
    blank: Cached,
}

impl Finders {
    fn new() -> Self {
        Finders {
            dollar: Cached::new(),
            ddollar: Cached::new(),
            paren: Cached::new(),
            bracket: Cached::new(),
            blank: Cached::new(),
        }
    }
}

/// Cleans one segment in text mode. The whole document is one segment; link
/// texts and text arguments inside math are sub-segments with a narrower
/// [`Ctx`], so this recurses at most three levels deep.
fn process(s: &str, w: &mut Writer<'_>, ctx: Ctx) {
    let b = s.as_bytes();
    let n = b.len();
    let mut f = Finders::new();
    let mut i = 0;
    while i < n {
        let c = b[i];
        if !SPECIAL.contains(c) {
            let start = i;
            i = run_end(b, i + 1);
            w.push_str(slice(s, start, i));
            continue;
        }
        i = match c {
            b'\\' => backslash(s, i, w, ctx, &mut f),
            b'$' => dollar(s, i, w, ctx, &mut f),
            b'{' | b'}' | b'`' => i + 1,
            b'~' => {
                w.space();
                i + 1
            }
            b'*' => stars(b, i, w),
            b'_' => {
                let mut j = i + 1;
                while j < n && b[j] == b'_' {
                    j += 1;
                }
                underscores(s, j, j - i, w);
                j
            }
            b'[' => bracket(s, i, w, ctx),
            b'&' => amp(s, i + 1, w),
            b'(' => paren(s, i, w),
            b'-' => {
                let mut j = i + 1;
                while j < n && b[j] == b'-' {
                    j += 1;
                }
                if j - i >= 2 {
                    w.space();
                    w.push('-');
                    w.space();
                } else {
                    w.push('-');
                }
                j
            }
            0..=0x7F => {
                // ASCII whitespace and control characters: one space for the
                // whole run.
                w.space();
                let mut j = i + 1;
                while j < n && matches!(b[j], b' ' | b'\t' | b'\n' | b'\r') {
                    j += 1;
                }
                j
            }
            _ => match char_at(s, i) {
                Some(ch) => {
                    emit_char(ch, w);
                    i + ch.len_utf8()
                }
                None => i + 1,
            },
        };
    }
}

/// End of the run of bytes that can be copied verbatim, starting at `i`
/// (the byte before `i` is ordinary). Besides ordinary bytes, a run absorbs a
/// single space or a single `-` between ordinary bytes and a `(` that does
/// not start `(cid:`, so ordinary prose is copied a sentence at a time
/// instead of a word at a time.
#[inline]
fn run_end(b: &[u8], i: usize) -> usize {
    run_end_from(b, i, next_stop)
}

/// [`run_end`] with `stop` finding the next special byte that may end the run (any special
/// byte will do; [`next_stop`] passes over those the run absorbs anyway).
#[inline]
fn run_end_from(b: &[u8], mut i: usize, stop: impl Fn(&[u8], usize) -> usize) -> usize {
    let n = b.len();
    loop {
        i = stop(b, i);
        if i + 1 >= n {
            return i;
        }
        let next_plain = !SPECIAL.contains(b[i + 1]);
        match b[i] {
            b' ' | b'-' if next_plain => i += 2,
            b'(' if !b[i + 1..].starts_with(b"cid:") => i += 1,
            _ => return i,
        }
    }
}

/// The first special byte at or after `i` that may end a run ([`run_end`]): with AVX2, 32
/// bytes at a time, passing over every ` ` or `-` that an ordinary byte follows (which
/// [`run_end`] absorbs); otherwise (and in the last 32 bytes) the first special byte.
#[inline]
fn next_stop(b: &[u8], mut i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has(crate::simd::Level::Avx2) {
        while i + 33 <= b.len() {
            // SAFETY: the CPU has AVX2 (`simd::has` just above), and 32 bytes from `i` are in `b`.
            let (special, joiners) = unsafe { (SPECIAL.mask(b, i), JOINERS.mask(b, i)) };
            // Bit j: byte i + j + 1 is special (the last one read from past the block).
            let next = special >> 1 | u32::from(SPECIAL.contains(b[i + 32])) << 31;
            let stops = special & !(joiners & !next);
            if stops != 0 {
                return i + stops.trailing_zeros() as usize;
            }
            i += 32;
        }
    }
    SPECIAL.find(b, i)
}

/// A run of `count` underscores ending at `after`: kept only inside a word
/// (`snake_case`), otherwise Markdown emphasis and dropped.
fn underscores(s: &str, after: usize, count: usize, w: &mut Writer<'_>) {
    if w.last_is_alnum() && is_alnum_at(s, after) {
        for _ in 0..count {
            w.out.push('_');
        }
    }
}

/// A run of `*`: emphasis markers vanish; a lone `*` between digits
/// (`3*4`) separates them instead of gluing them into `34`.
fn stars(b: &[u8], i: usize, w: &mut Writer<'_>) -> usize {
    let mut j = i + 1;
    while j < b.len() && b[j] == b'*' {
        j += 1;
    }
    if j - i == 1
        && !w.pending
        && w.out.as_bytes().last().is_some_and(u8::is_ascii_digit)
        && b.get(j).is_some_and(u8::is_ascii_digit)
    {
        w.space();
    }
    j
}

/// `&` whose entity name (if any) starts at `q`.
fn amp(s: &str, mut q: usize, w: &mut Writer<'_>) -> usize {
    let b = s.as_bytes();
    loop {
        match tables::entity_at(b, q) {
            Some((Entity::Amp, len)) => q += len,
            Some((Entity::Char(ch), len)) => {
                emit_char(ch, w);
                return q + len;
            }
            Some((Entity::Drop, len)) => return q + len,
            None => {
                w.push('&');
                return q;
            }
        }
    }
}

/// `(`: a PDF `(cid:N)` code, or a plain parenthesis.
fn paren(s: &str, i: usize, w: &mut Writer<'_>) -> usize {
    let b = s.as_bytes();
    let Some((num, end)) = tables::cid_at(b, i) else {
        w.push('(');
        return i + 1;
    };
    if num == 173 {
        // Soft hyphen at a line break: join the two halves of the word.
        let mut k = end;
        while k < b.len() && b[k].is_ascii_whitespace() {
            k += 1;
        }
        return k;
    }
    if let Some(lig) = tables::ligature(num) {
        let next_lower = b.get(end).is_some_and(u8::is_ascii_lowercase);
        let prev_lower = !w.pending && w.out.as_bytes().last().is_some_and(u8::is_ascii_lowercase);
        if next_lower || (prev_lower && !is_alnum_at(s, end)) {
            w.push_str(lig);
        }
    }
    end
}

/// `[`: a Markdown link `[text](url)` keeps its text, else a literal `[`.
fn bracket(s: &str, i: usize, w: &mut Writer<'_>, ctx: Ctx) -> usize {
    let b = s.as_bytes();
    let n = b.len();
    if ctx.links {
        let lim = n.min(i + 1 + LINK_TEXT_MAX);
        let mut r = i + 1;
        while r < lim && b[r] != b']' && b[r] != b'[' {
            r += 1;
        }
        if r < lim && b[r] == b']' && b.get(r + 1) == Some(&b'(') {
            let ulim = n.min(r + 2 + LINK_URL_MAX);
            let mut u = r + 2;
            while u < ulim && !matches!(b[u], b')' | b'(' | b'[') && !b[u].is_ascii_whitespace() {
                u += 1;
            }
            if u < ulim && b[u] == b')' {
                // `![alt](src)` is an image: its `!` goes too.
                if i > 0 && b[i - 1] == b'!' && !w.pending && w.out.ends_with('!') {
                    w.out.pop();
                    if w.out.ends_with(' ') {
                        w.out.pop();
                        w.pending = true;
                    }
                }
                let inner = Ctx {
                    math: ctx.math,
                    links: false,
                };
                process(slice(s, i + 1, r), w, inner);
                return u + 1;
            }
        }
    }
    w.push('[');
    i + 1
}

fn skip_blanks(b: &[u8], mut k: usize) -> usize {
    while k < b.len() && matches!(b[k], b' ' | b'\t' | b'\n' | b'\r') {
        k += 1;
    }
    k
}

/// Index of `close` in `b[from..from+max]`, giving up at any brace or `[`
/// (the arguments we drop are flat: keys, labels, URLs, colour names).
fn find_flat(b: &[u8], from: usize, close: u8, max: usize) -> Option<usize> {
    let lim = b.len().min(from.saturating_add(max));
    let mut k = from;
    while k < lim {
        match b[k] {
            c if c == close => return Some(k),
            b'{' | b'}' | b'[' => return None,
            _ => k += 1,
        }
    }
    None
}

/// After a dropped command name ending at `j`: skips `*`, up to two optional
/// `[...]` arguments and one flat `{...}` argument. Returns where text
/// resumes; when the required argument is missing only the name is dropped.
fn drop_args(b: &[u8], j: usize, w: &mut Writer<'_>) -> usize {
    let mut k = j;
    if b.get(k) == Some(&b'*') {
        k += 1;
    }
    k = skip_blanks(b, k);
    for _ in 0..2 {
        if b.get(k) != Some(&b'[') {
            break;
        }
        match find_flat(b, k + 1, b']', OPT_ARG_MAX) {
            Some(r) => k = skip_blanks(b, r + 1),
            None => return j,
        }
    }
    if b.get(k) != Some(&b'{') {
        return j;
    }
    match find_flat(b, k + 1, b'}', FLAT_ARG_MAX) {
        Some(r) => {
            w.tuck_before_punct(b.get(r + 1).copied());
            r + 1
        }
        None => j,
    }
}

/// Base letter of an accent starting at `k`: `e`, `{e}`, `\i`, `{\i}`.
/// Returns the letter and the index after it.
fn accent_base(b: &[u8], k: usize, braced_only: bool) -> Option<(char, usize)> {
    let (mut k, braced) = if b.get(k) == Some(&b'{') {
        (k + 1, true)
    } else if braced_only {
        return None;
    } else {
        (k, false)
    };
    let base = match b.get(k) {
        Some(b'\\')
            if matches!(b.get(k + 1), Some(b'i' | b'j'))
                && !b.get(k + 2).is_some_and(u8::is_ascii_alphabetic) =>
        {
            let c = char::from(b[k + 1]);
            k += 2;
            c
        }
        Some(&c) if c.is_ascii_alphabetic() => {
            k += 1;
            char::from(c)
        }
        _ => return None,
    };
    if braced {
        if b.get(k) != Some(&b'}') {
            return None;
        }
        k += 1;
    }
    Some((base, k))
}

fn accent(
    b: &[u8],
    accent: char,
    k: usize,
    braced_only: bool,
    w: &mut Writer<'_>,
) -> Option<usize> {
    let (base, end) = accent_base(b, k, braced_only)?;
    w.push(tables::compose(accent, base).unwrap_or(base));
    Some(end)
}

/// `\` at `i`: control word, control symbol or math delimiter.
fn backslash(s: &str, i: usize, w: &mut Writer<'_>, ctx: Ctx, f: &mut Finders) -> usize {
    let b = s.as_bytes();
    let n = b.len();
    let Some(&c) = b.get(i + 1) else {
        return i + 1;
    };
    if c.is_ascii_alphabetic() {
        let mut j = i + 2;
        while j < n && b[j].is_ascii_alphabetic() {
            j += 1;
        }
        return match tables::text_command(slice(s, i + 1, j)) {
            TextCmd::Plain => j,
            TextCmd::DropArg => drop_args(b, j, w),
            TextCmd::Space => {
                w.space();
                j
            }
            TextCmd::Literal(t) => {
                w.push_str(t);
                j
            }
            TextCmd::Accent(a) => accent(b, a, j, true, w).unwrap_or(j),
        };
    }
    match c {
        b'(' | b'[' if ctx.math => {
            let (cache, find): (&mut Cached, FindFn) = if c == b'(' {
                (&mut f.paren, find_close_paren)
            } else {
                (&mut f.bracket, find_close_bracket)
            };
            let j = cache.find(b, i + 2, find);
            if j < n && j - (i + 2) <= DISPLAY_MATH_MAX && f.blank.find(b, i, find_blank) >= j {
                math(s, i + 2, j, j + 2, w);
                j + 2
            } else {
                i + 2
            }
        }
        b'(' | b'[' | b')' | b']' | b'$' | b'{' | b'}' | b'!' | b'/' | b'-' | b'@' => i + 2,
        b'\\' | b',' | b';' | b':' | b'>' | b' ' | b'\t' | b'\n' | b'\r' => {
            w.space();
            i + 2
        }
        b'%' => {
            w.push('%');
            i + 2
        }
        b'#' => {
            w.push('#');
            i + 2
        }
        b'&' => amp(s, i + 2, w),
        b'_' => {
            underscores(s, i + 2, 1, w);
            i + 2
        }
        b'\'' | b'`' | b'^' | b'"' | b'~' | b'=' | b'.' => {
            accent(b, char::from(c), i + 2, false, w).unwrap_or(i + 2)
        }
        // A lone backslash before anything else: drop it, keep what follows.
        _ => i + 1,
    }
}

/// `$` at `i`: opens `$$...$$` or `$...$` math when a valid partner exists,
/// else it is a stray dollar and vanishes.
fn dollar(s: &str, i: usize, w: &mut Writer<'_>, ctx: Ctx, f: &mut Finders) -> usize {
    if !ctx.math {
        return i + 1;
    }
    let b = s.as_bytes();
    let n = b.len();
    if b.get(i + 1) == Some(&b'$') {
        let j = f.ddollar.find(b, i + 2, find_ddollar);
        if j < n && j - (i + 2) <= DISPLAY_MATH_MAX && f.blank.find(b, i, find_blank) >= j {
            math(s, i + 2, j, j + 2, w);
            return j + 2;
        }
        return i + 2;
    }
    if i + 1 >= n {
        return i + 1;
    }
    // b[i + 1] is not `$` (handled above), so a partner is at j >= i + 2.
    let j = f.dollar.find(b, i + 1, find_dollar);
    if j < n
        && j - (i + 1) <= INLINE_MATH_MAX
        && !(b[i + 1].is_ascii_digit() && b.get(j + 1).is_some_and(u8::is_ascii_digit))
        && f.blank.find(b, i, find_blank) >= j
    {
        // Pandoc's rule (no space just inside the dollars) tells prices from
        // math; a body with TeX syntax in it is math even when spaced out,
        // as in `$ (|S|/ N) U_S \geq U_N$`.
        let spaced = b[i + 1].is_ascii_whitespace() || b[j - 1].is_ascii_whitespace();
        if !spaced
            || b[i + 1..j]
                .iter()
                .any(|c| matches!(c, b'\\' | b'^' | b'_' | b'{' | b'}' | b'='))
        {
            math(s, i + 1, j, j + 1, w);
            return j + 1;
        }
    }
    i + 1
}

/// Emits math whose body is `s[a..e]` and whose closing delimiter ends at
/// `after`.
fn math(s: &str, a: usize, e: usize, after: usize, w: &mut Writer<'_>) {
    let glued_left = !w.pending && {
        let mut it = w.out.chars().rev();
        match it.next() {
            Some(c) if c.is_alphanumeric() => true,
            Some('-') => it.next().is_some_and(char::is_alphanumeric),
            _ => false,
        }
    };
    let glued_right = match char_at(s, after) {
        Some(c) if c.is_alphanumeric() => true,
        Some('-') => is_alnum_at(s, after + 1),
        _ => false,
    };
    let glued = glued_left || glued_right;
    let before = w.out.len();
    math_body(s, a, e, glued, w);
    if w.out.len() == before {
        if glued {
            // `4$\times$ faster`, `1.1$\sim$3.4`: an operator between words.
            w.space();
        } else {
            w.tuck_before_punct(s.as_bytes().get(after).copied());
        }
    }
}

/// Index of the `}` matching the `{` at `k`, within `b[..e]`.
fn matching_brace(b: &[u8], k: usize, e: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut p = k;
    while p < e {
        match b[p] {
            b'\\' => p += 1,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(p);
                }
            }
            _ => {}
        }
        p += 1;
    }
    None
}

/// The body of a math span: text-command arguments are cleaned as text; when
/// `glued`, letters, digits and Greek names are kept too, without spaces.
fn math_body(s: &str, a: usize, e: usize, glued: bool, w: &mut Writer<'_>) {
    let b = s.as_bytes();
    let plain = Ctx {
        math: false,
        links: false,
    };
    // After one unmatched text argument, stop looking for more: keeps
    // `\text{\text{\text{…` linear.
    let mut unbalanced = false;
    let mut k = a;
    while k < e {
        let c = b[k];
        if c == b'\\' {
            if k + 1 < e && b[k + 1].is_ascii_alphabetic() {
                let mut m = k + 2;
                while m < e && b[m].is_ascii_alphabetic() {
                    m += 1;
                }
                let name = slice(s, k + 1, m);
                k = m;
                if tables::is_text_bearing(name) {
                    let mut q = k;
                    if q < e && b[q] == b'*' {
                        q += 1;
                    }
                    while q < e && b[q].is_ascii_whitespace() {
                        q += 1;
                    }
                    if !unbalanced && q < e && b[q] == b'{' {
                        match matching_brace(b, q, e) {
                            Some(r) => {
                                process(slice(s, q + 1, r), w, plain);
                                k = r + 1;
                            }
                            None => unbalanced = true,
                        }
                    }
                } else if glued {
                    if let Some(g) = tables::greek(name) {
                        w.push_str(g);
                    }
                }
            } else if k + 1 < e && b[k + 1].is_ascii() {
                k += 2;
            } else {
                k += 1;
            }
        } else if c.is_ascii_alphanumeric() {
            let start = k;
            while k < e && b[k].is_ascii_alphanumeric() {
                k += 1;
            }
            if glued {
                w.push_str(slice(s, start, k));
            }
        } else if c < 0x80 {
            k += 1;
        } else {
            match char_at(s, k) {
                Some(ch) => {
                    if glued && ch.is_alphanumeric() {
                        w.push(ch);
                    }
                    k += ch.len_utf8();
                }
                None => k += 1,
            }
        }
    }
}

/// True when cleaning `s` again would return it unchanged. Meant for the
/// scanner's own output, whose spaces are single and interior by
/// construction of [`Writer`], so spaces are not examined.
fn is_stable(s: &str) -> bool {
    first_unstable(s, 0).is_none()
}

/// Byte range of the first char at or after `from` that the scanner could
/// act on (conservative: every pattern it reacts to is flagged).
fn first_unstable(s: &str, from: usize) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    let n = b.len();
    let mut i = from;
    while i < n {
        let c = b[i];
        if !CHECK.contains(c) {
            i = CHECK.find(b, i);
            continue;
        }
        let len = match c {
            b'\\' | b'$' | b'{' | b'}' | b'~' | b'`' | b'*' => 1,
            b'-' if b.get(i + 1) == Some(&b'-') => 1,
            b']' if b.get(i + 1) == Some(&b'(') => 1,
            b'&' if tables::entity_at(b, i + 1).is_some() => 1,
            b'(' if tables::cid_at(b, i).is_some() => 1,
            b'_' => {
                let prev_ok = slice(s, 0, i)
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric);
                let mut j = i + 1;
                while j < n && b[j] == b'_' {
                    j += 1;
                }
                if prev_ok && is_alnum_at(s, j) {
                    i = j;
                    continue;
                }
                j - i
            }
            b'-' | b']' | b'&' | b'(' | b'[' => 0,
            0..=0x7F => 1,
            _ => match char_at(s, i) {
                Some(ch) if classify(ch) == Class::Keep => 0,
                Some(ch) => ch.len_utf8(),
                None => 1,
            },
        };
        if len > 0 {
            return Some((i, len));
        }
        i += 1;
    }
    None
}

/// Last resort after [`MAX_REPASSES`]: every char the scanner could still act
/// on becomes a space, then spaces are folded. No pattern the scanner reacts
/// to contains a space, and folding never makes two other chars adjacent, so
/// the result is a fixed point.
fn blank_unstable(s: &str, out: &mut String) {
    out.clear();
    let mut w = Writer {
        out,
        pending: false,
    };
    let mut from = 0;
    while let Some((at, len)) = first_unstable(s, from) {
        push_folded(slice(s, from, at), &mut w);
        w.space();
        from = at + len;
    }
    push_folded(slice(s, from, s.len()), &mut w);
}

fn push_folded(part: &str, w: &mut Writer<'_>) {
    for (k, piece) in part.split(' ').enumerate() {
        if k > 0 {
            w.space();
        }
        w.push_str(piece);
    }
}
