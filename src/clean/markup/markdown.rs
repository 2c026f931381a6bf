//! Markdown: emphasis markers, links and images.
//!
//! Abstracts copied from web pages and READMEs carry Markdown. Its markers are not words and
//! would only split or glue tokens, so emphasis (`*`, `**`, `_`, `__`) vanishes and a link
//! keeps its text, not its URL. `_` is the one ambiguous marker: between two letters or digits
//! it is part of a name (`snake_case`) and stays. A link is only recognised within fixed bounds
//! ([`LINK_TEXT_MAX`], [`LINK_URL_MAX`]) so a stray `[` never makes the scan look far ahead.
//! Code ticks are dropped by the scanner itself.

use super::chars::is_alnum_at;
use super::writer::Writer;
use std::ops::Range;

/// Longest Markdown link text and URL.
const LINK_TEXT_MAX: usize = 512;
const LINK_URL_MAX: usize = 2048;

/// A run of `count` underscores ending at `after`: kept only inside a word
/// (`snake_case`), otherwise Markdown emphasis and dropped.
pub(super) fn underscores(s: &str, after: usize, count: usize, w: &mut Writer<'_>) {
    if w.last_is_alnum() && is_alnum_at(s, after) {
        for _ in 0..count {
            w.out.push('_');
        }
    }
}

/// A run of `*`: emphasis markers vanish; a lone `*` between digits
/// (`3*4`) separates them instead of gluing them into `34`.
pub(super) fn stars(b: &[u8], i: usize, w: &mut Writer<'_>) -> usize {
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

/// `[` at `i` opening a Markdown link `[text](url)`: the byte range of its text and where the
/// text after the link starts, or `None` when the `[` is a literal one. An image's `!`
/// (`![alt](src)`) is taken back from the output here; the caller cleans the link's text.
pub(super) fn link(b: &[u8], i: usize, w: &mut Writer<'_>) -> Option<(Range<usize>, usize)> {
    let n = b.len();
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
            return Some((i + 1..r, u + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::c;

    #[test]
    fn markdown_emphasis_is_dropped() {
        assert_eq!(
            c("Furthermore, we propose ***FPRM***: a Fixed-Point Reasoning Model"),
            "Furthermore, we propose FPRM: a Fixed-Point Reasoning Model"
        );
        assert_eq!(
            c("we propose the Behavioral Hypothesis: **the essence of Long-CoT distillation is behavioral alignment.** We"),
            "we propose the Behavioral Hypothesis: the essence of Long-CoT distillation is behavioral alignment. We"
        );
        assert_eq!(
            c("a **F**ully **A**daptive **S**elf"),
            "a Fully Adaptive Self"
        );
        assert_eq!(
            c("often statistically _dependent_ latents, __strong__ too"),
            "often statistically dependent latents, strong too"
        );
        assert_eq!(
            c("the snake_case and meta__x names"),
            "the snake_case and meta__x names"
        );
        assert_eq!(
            c("combines A* search; 3*4 cells; a * b"),
            "combines A search; 3 4 cells; a b"
        );
    }

    #[test]
    fn markdown_links_and_code() {
        assert_eq!(
            c("Code is open-sourced [here](https://github.com/HJ-harry/CDS) now."),
            "Code is open-sourced here now."
        );
        assert_eq!(
            c("see ![a figure](img.png) and [not a link] (x)"),
            "see a figure and [not a link] (x)"
        );
        assert_eq!(c("see ![](x.png) and"), "see and");
        assert_eq!(c("call `foo_bar()` twice"), "call foo_bar() twice");
        assert_eq!(
            c("GeoCoTDrive follows a ``think with 2D first, drive with dedicated 3D priors'' paradigm"),
            "GeoCoTDrive follows a think with 2D first, drive with dedicated 3D priors'' paradigm"
        );
    }
}
