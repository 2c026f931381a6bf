//! The scanner's main loop: one forward pass over a segment, ordinary text copied in runs,
//! each special byte handed to the handler of its syntax.
//!
//! Most of an abstract is prose that needs nothing, so the loop's job is to get past it fast:
//! [`SPECIAL`] is the set of bytes that may need a decision, found 32 at a time
//! ([`ByteSet`]), and a run of ordinary text even absorbs the single spaces and dashes inside
//! it ([`run_end`]), so a sentence is copied at once. A special byte goes to its handler:
//! [`latex`](super::latex) for `\`, [`math`](super::math) for `$`, `\(` and `\[`,
//! [`markdown`](super::markdown) for `* _ [`, [`entities`](super::entities) for `&`,
//! [`pdf`](super::pdf) for `(cid:`; whitespace, `~`, braces and dashes are handled here.
//!
//! A link's text and a text argument inside math are cleaned as sub-segments with a narrower
//! [`Ctx`] (no links inside a link, no math inside the argument), which bounds the recursion
//! to three levels. Math gets the sub-segment scanner as a function ([`prose`]), so the
//! handlers never call back into this module.

use super::byteset::ByteSet;
use super::chars::{char_at, slice};
use super::entities::amp;
use super::latex::backslash;
use super::markdown::{link, stars, underscores};
use super::math::{self, Finders};
use super::pdf::paren;
use super::writer::{emit_char, Writer};

/// Bytes that need a decision: ASCII whitespace and controls, the LaTeX and
/// Markdown syntax characters, and the UTF-8 lead bytes of every Unicode
/// space, control, soft hyphen and zero-width char (C2, E1, E2, E3, EF).
/// Everything else (letters, digits, ordinary punctuation, most non-ASCII) is
/// copied through in runs.
static SPECIAL: ByteSet = ByteSet::new(special_table(false));
/// The special bytes a run of ordinary text absorbs when an ordinary byte follows (see
/// [`run_end`]).
static JOINERS: ByteSet = ByteSet::new({
    let mut t = [false; 256];
    t[b' ' as usize] = true;
    t[b'-' as usize] = true;
    t
});

/// [`SPECIAL`]'s flags; with `with_close_bracket`, those of the stability check instead
/// (`]` added, the space left out).
pub(super) const fn special_table(with_close_bracket: bool) -> [bool; 256] {
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

/// What a segment may contain (limits the nesting to a fixed depth).
#[derive(Debug, Clone, Copy)]
struct Ctx {
    math: bool,
    links: bool,
}

/// One cleaning pass over `text`, appended to `out`.
pub(super) fn run(text: &str, out: &mut String) {
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
            b'\\' if ctx.math && matches!(b.get(i + 1), Some(b'(' | b'[')) => {
                math::display(s, i, w, &mut f, prose)
            }
            b'\\' => backslash(s, i, w),
            b'$' if ctx.math => math::dollar(s, i, w, &mut f, prose),
            b'$' => i + 1,
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

/// `[`: a Markdown link `[text](url)` keeps its text, cleaned as a sub-segment in which
/// brackets are plain text; anything else is a literal `[`.
fn bracket(s: &str, i: usize, w: &mut Writer<'_>, ctx: Ctx) -> usize {
    if ctx.links {
        if let Some((text, end)) = link(s.as_bytes(), i, w) {
            let inner = Ctx {
                math: ctx.math,
                links: false,
            };
            process(slice(s, text.start, text.end), w, inner);
            return end;
        }
    }
    w.push('[');
    i + 1
}

/// A text argument inside math (`$\textbf{SPIN}$`): text mode with neither math nor links,
/// so the nesting ends here.
fn prose(s: &str, w: &mut Writer<'_>) {
    process(
        s,
        w,
        Ctx {
            math: false,
            links: false,
        },
    );
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// [`run_end`] as it was before [`next_stop`]: the next special byte found one byte at a time.
    fn run_end_bytewise(b: &[u8], i: usize) -> usize {
        run_end_from(b, i, |b, i| {
            (i..b.len())
                .find(|&j| SPECIAL.contains(b[j]))
                .unwrap_or(b.len())
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Runs end where the byte-by-byte scan ends them, from every start, over texts long
        /// enough for the 32-byte blocks: spaces and dashes before plain and special bytes, `(cid:`,
        /// and bytes at the block edges.
        #[test]
        fn runs_end_where_the_bytewise_scan_ends_them(
            s in "([a-z]{0,40}|[ \\-(]|\\(cid:|[ \\-][ \\-$_]|\\\\|\u{a0}|\u{200b}){0,40}"
        ) {
            let b = s.as_bytes();
            for from in 0..=b.len() {
                prop_assert_eq!(run_end(b, from), run_end_bytewise(b, from), "from {} in {:?}", from, s);
            }
        }
    }
}
