//! Math: `$...$`, `$$...$$`, `\(...\)` and `\[...\]`, dropped, except what reads as words.
//!
//! A formula's symbols are not topic words, so math is dropped; but math glued to a word is
//! part of it (`A$^3$Bench` -> `A3Bench`, `$k$-means`, `$\epsilon$-greedy` -> `epsilon-greedy`),
//! and a text command inside math holds prose (`$\textbf{SPIN}$` -> `SPIN`), cleaned by the
//! text scanner that [`Prose`] hands in. A `$` is also a price, so a span only counts as math
//! within bounds ([`INLINE_MATH_MAX`], [`DISPLAY_MATH_MAX`], no blank line) and by Pandoc's
//! spacing rule; otherwise the `$` is dropped and the text after it kept.
//!
//! Finding a closing delimiter is a lookahead, and a document of a million `$` would make a
//! naive search quadratic. Each delimiter's next position is cached and only moves forward
//! ([`Finders`]), so the whole segment is searched once per kind of delimiter.

use super::chars::{char_at, is_alnum_at, slice};
use super::commands::{greek, is_text_bearing};
use super::writer::Writer;

/// Cleans the prose argument of a text command inside math: the text scanner with neither
/// math nor links, handed in by the scanner (which calls into math, so math does not call it
/// by name).
pub(super) type Prose = fn(&str, &mut Writer<'_>);

/// Longest inline `$...$` body, in bytes, still treated as math; a `$` whose
/// partner is further away (or across a blank line) is a stray dollar.
const INLINE_MATH_MAX: usize = 256;
/// Longest `$$...$$`, `\(...\)` or `\[...\]` body, in bytes.
const DISPLAY_MATH_MAX: usize = 2048;

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
pub(super) struct Finders {
    dollar: Cached,
    ddollar: Cached,
    paren: Cached,
    bracket: Cached,
    blank: Cached,
}

impl Finders {
    pub(super) fn new() -> Self {
        Finders {
            dollar: Cached::new(),
            ddollar: Cached::new(),
            paren: Cached::new(),
            bracket: Cached::new(),
            blank: Cached::new(),
        }
    }
}

/// `$` at `i`: opens `$$...$$` or `$...$` math when a valid partner exists,
/// else it is a stray dollar and vanishes.
pub(super) fn dollar(
    s: &str,
    i: usize,
    w: &mut Writer<'_>,
    f: &mut Finders,
    prose: Prose,
) -> usize {
    let b = s.as_bytes();
    let n = b.len();
    if b.get(i + 1) == Some(&b'$') {
        let j = f.ddollar.find(b, i + 2, find_ddollar);
        if j < n && j - (i + 2) <= DISPLAY_MATH_MAX && f.blank.find(b, i, find_blank) >= j {
            math(s, i + 2, j, j + 2, w, prose);
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
            math(s, i + 1, j, j + 1, w, prose);
            return j + 1;
        }
    }
    i + 1
}

/// `\(` or `\[` at `i`: display math up to its `\)` or `\]` when that is in reach, else the
/// two bytes are dropped.
pub(super) fn display(
    s: &str,
    i: usize,
    w: &mut Writer<'_>,
    f: &mut Finders,
    prose: Prose,
) -> usize {
    let b = s.as_bytes();
    let n = b.len();
    let (cache, find): (&mut Cached, FindFn) = if b[i + 1] == b'(' {
        (&mut f.paren, find_close_paren)
    } else {
        (&mut f.bracket, find_close_bracket)
    };
    let j = cache.find(b, i + 2, find);
    if j < n && j - (i + 2) <= DISPLAY_MATH_MAX && f.blank.find(b, i, find_blank) >= j {
        math(s, i + 2, j, j + 2, w, prose);
        j + 2
    } else {
        i + 2
    }
}

/// Emits math whose body is `s[a..e]` and whose closing delimiter ends at
/// `after`.
fn math(s: &str, a: usize, e: usize, after: usize, w: &mut Writer<'_>, prose: Prose) {
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
    math_body(s, a, e, glued, w, prose);
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

/// The body of a math span: text-command arguments are cleaned as text (by `prose`); when
/// `glued`, letters, digits and Greek names are kept too, without spaces.
fn math_body(s: &str, a: usize, e: usize, glued: bool, w: &mut Writer<'_>, prose: Prose) {
    let b = s.as_bytes();
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
                if is_text_bearing(name) {
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
                                prose(slice(s, q + 1, r), w);
                                k = r + 1;
                            }
                            None => unbalanced = true,
                        }
                    }
                } else if glued {
                    if let Some(g) = greek(name) {
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

#[cfg(test)]
mod tests {
    use super::super::c;

    #[test]
    fn inline_math_is_dropped() {
        assert_eq!(
            c(r"the KL bias of the pooled sampler decays as $\mathcal{O}(1/N)$ in the pool size."),
            "the KL bias of the pooled sampler decays as in the pool size."
        );
        assert_eq!(
            c(r"standard ToT often operates near $\Delta \approx 0$, failing to distinguish"),
            "standard ToT often operates near, failing to distinguish"
        );
        assert_eq!(
            c(r"For autoregressive linear thresholds in \(\mathbb{R}^d\), we prove that the optimal mistake bound is \(\Theta(d^2)\) under both"),
            "For autoregressive linear thresholds in, we prove that the optimal mistake bound is under both"
        );
        assert_eq!(c("a $$x^2 + y^2$$ b"), "a b");
        assert_eq!(c(r"a \[ x = 1 \] b"), "a b");
        assert_eq!(c("the $K$ and the $M$ steps"), "the and the steps");
    }

    #[test]
    fn math_glued_to_words_keeps_alphanumerics() {
        assert_eq!(
            c("To address this gap, we introduce **A$^3$Bench**, a benchmark to study *aggressive action and association* in videos."),
            "To address this gap, we introduce A3Bench, a benchmark to study aggressive action and association in videos."
        );
        assert_eq!(
            c("improves over ToT by up to $+22$pp on Game of 24"),
            "improves over ToT by up to 22pp on Game of 24"
        );
        assert_eq!(c("CO$_2$ emissions"), "CO2 emissions");
        assert_eq!(c(r"$\textit{g}^\textit{n}$Conv"), "gnConv");
        // Hyphenated words count as glued.
        assert_eq!(
            c("$k$-means and $K$-DPP sampling"),
            "k-means and K-DPP sampling"
        );
        assert_eq!(c("sampling a size-$K$ subset"), "sampling a size-K subset");
        assert_eq!(
            c(r"$\epsilon$-greedy and $\ell_1$-norm"),
            "epsilon-greedy and l1-norm"
        );
        // Glued math with nothing alphanumeric separates instead of merging.
        assert_eq!(
            c(r"a 1.1$\times$$\sim$3.4$\times$ speedup"),
            "a 1.1 3.4 speedup"
        );
    }

    #[test]
    fn text_command_inside_math_keeps_words() {
        assert_eq!(
            c(
                r"To address this limitation, we introduce $\textbf{SPIN}$, a cognitive-affective personality"
            ),
            "To address this limitation, we introduce SPIN, a cognitive-affective personality"
        );
        assert_eq!(c(r"the $\mathrm{KL}(p\|q)$ term"), "the KL term");
    }

    #[test]
    fn stray_dollars_do_not_swallow_text() {
        assert_eq!(
            c("it costs $5 and $10 per run"),
            "it costs 5 and 10 per run"
        );
        assert_eq!(c("prices of $5-$10 apply"), "prices of 5-10 apply");
        assert_eq!(c("a lone $ sign here"), "a lone sign here");
        let long = format!("start $x{} end", " word".repeat(100));
        assert_eq!(
            c(&format!("{long}$")),
            format!("start x{} end", " word".repeat(100))
        );
        assert_eq!(c("a $x\n\ny$ b"), "a x y b");
        assert_eq!(c("trailing $"), "trailing");
        // Spaced-out math still counts when its body holds TeX syntax.
        assert_eq!(
            c(r"based on their utilities (i.e., $ (|S|/ N) U_S \geq U_N$). Core-stable"),
            "based on their utilities (i.e.,). Core-stable"
        );
        assert_eq!(c("learning $ k $-NN graphs"), "learning k -NN graphs");
    }
}
