//! LaTeX in text mode: control words and symbols, their arguments, escapes and accents.
//!
//! Abstracts from arXiv and conference systems are LaTeX source. A formatting command's
//! argument is the author's own words, so `\textbf{GAP}` keeps `GAP` (the command vanishes and
//! its braces are ordinary text, whose braces the scanner drops); a citation, reference or URL
//! argument is a key, never prose, so it goes with the command ([`drop_args`], flat and bounded:
//! [`FLAT_ARG_MAX`], [`OPT_ARG_MAX`]). Escapes become their char (`\%`, `\&`, `\#`) and
//! accents compose (`Lov\'asz` -> `Lovász`). Which command does what is the vocabulary in
//! [`commands`](super::commands). The math delimiters `\(` and `\[` are [`math`](super::math)'s,
//! dispatched before a backslash gets here.

use super::chars::slice;
use super::commands::{compose, text_command, TextCmd};
use super::entities::amp;
use super::markdown::underscores;
use super::writer::Writer;

/// Longest flat argument of a dropped command (`\cite{...}`, `\url{...}`).
const FLAT_ARG_MAX: usize = 1024;
/// Longest optional argument (`\cite[p.~3]{x}`).
const OPT_ARG_MAX: usize = 256;

/// `\` at `i`: control word or control symbol (outside math, or `\(` and `\[` that are
/// plain text here, both dropped).
pub(super) fn backslash(s: &str, i: usize, w: &mut Writer<'_>) -> usize {
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
        return match text_command(slice(s, i + 1, j)) {
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

/// The first byte at or after `k` that is not ASCII whitespace.
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

/// Writes the accent `accent` composed with its base letter at `k` (the bare letter when no
/// precomposed char is known); `None`, writing nothing, when no base letter is there.
fn accent(
    b: &[u8],
    accent: char,
    k: usize,
    braced_only: bool,
    w: &mut Writer<'_>,
) -> Option<usize> {
    let (base, end) = accent_base(b, k, braced_only)?;
    w.push(compose(accent, base).unwrap_or(base));
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::super::c;

    #[test]
    fn text_commands_keep_argument() {
        assert_eq!(
            c(r"Motivated by this diagnosis, we propose \textbf{GAP}, a \textbf{G}ranular \textbf{A}lignment \textbf{P}aradigm for visual latent modeling."),
            "Motivated by this diagnosis, we propose GAP, a Granular Alignment Paradigm for visual latent modeling."
        );
        assert_eq!(
            c(r"a failure mode we call \textit{reasoning basin collapse}. We introduce \textsc{BASIN}, a training-free selection method"),
            "a failure mode we call reasoning basin collapse. We introduce BASIN, a training-free selection method"
        );
        assert_eq!(
            c(r"\emph{a} \texttt{b} \underline{c} \mathrm{d} \text{e} {\em f} {\bf g}"),
            "a b c d e f g"
        );
    }

    #[test]
    fn unknown_commands_are_dropped() {
        assert_eq!(
            c(r"so we propose \algname: draw a finite candidate pool"),
            "so we propose : draw a finite candidate pool"
        );
        assert_eq!(c(r"x \alpha y \sim z \approx w"), "x y z w");
    }

    #[test]
    fn citations_are_dropped() {
        assert_eq!(
            c(
                r"the model was trained to consume~\citep{xie2025mhc,li2026siamesenorm,team2026attention}. This mismatch"
            ),
            "the model was trained to consume. This mismatch"
        );
        assert_eq!(
            c(r"see \cite[p.~3]{x} and \citet[see][ch.~2]{y, z} too"),
            "see and too"
        );
        assert_eq!(
            c(r"Eq.~\eqref{eq:1} in Sec.~\ref{sec:a}\label{l} at \url{https://x.org/a_b}."),
            "Eq. in Sec. at."
        );
        assert_eq!(
            c(r"\begin{abstract}We study X.\end{abstract}"),
            "We study X."
        );
        assert_eq!(c(r"\href{https://a.b}{our code}"), "our code");
    }

    #[test]
    fn latex_escapes_and_tilde() {
        assert_eq!(
            c(r"With 80\% visual token reduction, R\&D \#1 uses snake\_case and \$5."),
            "With 80% visual token reduction, R&D #1 uses snake_case and 5."
        );
        assert_eq!(c("i.i.d.~from a Gaussian"), "i.i.d. from a Gaussian");
        assert_eq!(
            c("the quality--diversity Pareto and A---B"),
            "the quality - diversity Pareto and A - B"
        );
        assert_eq!(
            c(r#"Lov\'asz, Schr\"odinger, Erd\H{o}s, Nystr\"{o}m, na\"{\i}ve"#),
            "Lovász, Schrödinger, Erdős, Nyström, naïve"
        );
        assert_eq!(c(r"line\\break"), "line break");
        assert_eq!(c(r"x\{y\}z"), "xyz");
    }
}
