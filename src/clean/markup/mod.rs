//! The markup cleaner, the clean stage's last step: turns abstracts full of LaTeX, Markdown,
//! HTML entities and PDF-extraction artefacts into plain, whitespace-folded text before
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
//!
//! Where each part lives: [`scan`] is the main loop and dispatch, [`writer`] the output sink
//! that folds whitespace ([`chars`] the char helpers under both); one file per syntax:
//! [`latex`] (with its vocabulary in [`commands`]), [`math`], [`markdown`], [`entities`],
//! [`pdf`]; [`stable`] is the idempotence guard. Each file's tests hold that syntax's examples;
//! `tests.rs` holds the end-to-end ones (hostile input, properties).

mod byteset;
mod chars;
mod commands;
mod entities;
mod latex;
mod markdown;
mod math;
mod pdf;
mod scan;
mod stable;
#[cfg(test)]
mod tests;
mod writer;

use scan::run;
use stable::{blank_unstable, is_stable};

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

/// Cleans `s` with the fixed rules: the tests' shorthand.
#[cfg(test)]
fn c(s: &str) -> String {
    Cleaner::new().clean(s)
}
