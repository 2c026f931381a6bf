//! Lookup tables for the cleaner: which LaTeX commands drop their argument,
//! which keep it, Greek letter names, accent composition, HTML entities and
//! PDF `(cid:N)` codes.
//!
//! Why separate: the scanner in `mod.rs` stays a small state machine, and the
//! vocabulary (which grows as new corpora show new macros) lives in plain
//! `match` tables that the compiler turns into length-then-bytes comparisons.
//! Lookups only happen on a backslash, `&` or `(cid:`, so they are off the
//! hot path of ordinary prose.

/// What a control word (`\name`) does outside math.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TextCmd {
    /// Drop the name only; a following `{...}` group is ordinary text whose
    /// braces vanish (so `\textbf{GAP}` becomes `GAP`, `\alpha` vanishes).
    Plain,
    /// Drop the name, optional `[...]` arguments and one flat `{...}`
    /// argument (citations, references, labels, URLs, environment names).
    DropArg,
    /// Acts as a word separator (`\quad`, `\item`, `\\`...).
    Space,
    /// Expands to fixed text (`\ss` -> `ß`).
    Literal(&'static str),
    /// A control-word accent (`\c{c}` -> `ç`); the char is the accent key
    /// understood by [`compose`].
    Accent(char),
}

/// Classifies a control word met in text mode.
pub(super) fn text_command(name: &str) -> TextCmd {
    match name {
        // Citations and cross references: the argument is a key, never prose.
        "cite" | "citep" | "citet" | "citealp" | "citealt" | "citeauthor" | "citeyear"
        | "citeyearpar" | "citenum" | "citetext" | "Cite" | "Citep" | "Citet" | "Citealp"
        | "Citeauthor" | "shortcite" | "parencite" | "textcite" | "autocite" | "footcite"
        | "nocite" | "ref" | "eqref" | "autoref" | "cref" | "Cref" | "pageref" | "nameref"
        | "vref" | "label" | "url" | "nolinkurl" | "href" | "includegraphics" | "vspace"
        | "hspace" | "bibliography" | "bibliographystyle" | "usepackage" | "documentclass"
        | "input" | "include" | "begin" | "end" | "color" | "textcolor" | "colorbox"
        | "footnotemark" => TextCmd::DropArg,
        "quad" | "qquad" | "newline" | "par" | "item" | "hfill" | "vfill" | "linebreak"
        | "pagebreak" | "newpage" | "smallskip" | "medskip" | "bigskip" | "enspace" | "enskip"
        | "thinspace" | "ldots" | "dots" | "cdots" | "textendash" | "textemdash" | "hline"
        | "and" | "cr" => TextCmd::Space,
        "i" => TextCmd::Literal("i"),
        "j" => TextCmd::Literal("j"),
        "o" => TextCmd::Literal("ø"),
        "O" => TextCmd::Literal("Ø"),
        "ss" => TextCmd::Literal("ß"),
        "ae" => TextCmd::Literal("æ"),
        "AE" => TextCmd::Literal("Æ"),
        "oe" => TextCmd::Literal("œ"),
        "OE" => TextCmd::Literal("Œ"),
        "aa" => TextCmd::Literal("å"),
        "AA" => TextCmd::Literal("Å"),
        "l" => TextCmd::Literal("ł"),
        "L" => TextCmd::Literal("Ł"),
        "LaTeX" => TextCmd::Literal("LaTeX"),
        "TeX" => TextCmd::Literal("TeX"),
        "c" => TextCmd::Accent('c'),
        "v" => TextCmd::Accent('v'),
        "H" => TextCmd::Accent('H'),
        "r" => TextCmd::Accent('r'),
        "u" => TextCmd::Accent('u'),
        "k" => TextCmd::Accent('k'),
        "d" | "b" | "t" => TextCmd::Accent('-'),
        _ => TextCmd::Plain,
    }
}

/// Commands whose braced argument is prose even inside math
/// (`$\textbf{SPIN}$` -> `SPIN`, `$\mathrm{KL}$` -> `KL`).
pub(super) fn is_text_bearing(name: &str) -> bool {
    matches!(
        name,
        "text"
            | "textrm"
            | "textbf"
            | "textit"
            | "textsl"
            | "textsf"
            | "texttt"
            | "textsc"
            | "textup"
            | "textmd"
            | "textnormal"
            | "emph"
            | "underline"
            | "mbox"
            | "hbox"
            | "fbox"
            | "mathrm"
            | "mathit"
            | "mathtt"
            | "mathsf"
            | "operatorname"
            | "textsuperscript"
            | "textsubscript"
    )
}

/// Spelled-out name of a Greek-letter command, used only for math glued to a
/// word (`$\epsilon$-greedy` -> `epsilon-greedy`, `$\ell_1$-norm` -> `l1-norm`).
pub(super) fn greek(name: &str) -> Option<&'static str> {
    Some(match name {
        "alpha" => "alpha",
        "beta" => "beta",
        "gamma" => "gamma",
        "delta" => "delta",
        "epsilon" | "varepsilon" => "epsilon",
        "zeta" => "zeta",
        "eta" => "eta",
        "theta" | "vartheta" => "theta",
        "iota" => "iota",
        "kappa" | "varkappa" => "kappa",
        "lambda" => "lambda",
        "mu" => "mu",
        "nu" => "nu",
        "xi" => "xi",
        "pi" | "varpi" => "pi",
        "rho" | "varrho" => "rho",
        "sigma" | "varsigma" => "sigma",
        "tau" => "tau",
        "upsilon" => "upsilon",
        "phi" | "varphi" => "phi",
        "chi" => "chi",
        "psi" => "psi",
        "omega" => "omega",
        "Gamma" => "Gamma",
        "Delta" => "Delta",
        "Theta" => "Theta",
        "Lambda" => "Lambda",
        "Xi" => "Xi",
        "Pi" => "Pi",
        "Sigma" => "Sigma",
        "Upsilon" => "Upsilon",
        "Phi" => "Phi",
        "Psi" => "Psi",
        "Omega" => "Omega",
        "ell" => "l",
        _ => return None,
    })
}

/// Composes a LaTeX accent with its base letter (`\'e` -> `é`). `accent` is
/// the control symbol (`'` `` ` `` `^` `"` `~` `=` `.`) or the control-word
/// letter (`c` `v` `H` `r` `u` `k`). `None` when no precomposed char is known;
/// the caller then keeps the bare letter.
pub(super) fn compose(accent: char, base: char) -> Option<char> {
    let (from, to) = match accent {
        '\'' => ("aeiouyAEIOUYcnszCNSZ", "áéíóúýÁÉÍÓÚÝćńśźĆŃŚŹ"),
        '`' => ("aeiouAEIOU", "àèìòùÀÈÌÒÙ"),
        '^' => ("aeiouAEIOU", "âêîôûÂÊÎÔÛ"),
        '"' => ("aeiouyAEIOU", "äëïöüÿÄËÏÖÜ"),
        '~' => ("anoANO", "ãñõÃÑÕ"),
        '=' => ("aeiouAEIOU", "āēīōūĀĒĪŌŪ"),
        '.' => ("zZeE", "żŻėĖ"),
        'c' => ("csCS", "çşÇŞ"),
        'v' => ("csznreCSZNRE", "čšžňřěČŠŽŇŘĚ"),
        'H' => ("ouOU", "őűŐŰ"),
        'r' => ("auAU", "åůÅŮ"),
        'u' => ("agAG", "ăğĂĞ"),
        'k' => ("aeAE", "ąęĄĘ"),
        _ => return None,
    };
    from.chars()
        .zip(to.chars())
        .find(|&(f, _)| f == base)
        .map(|(_, t)| t)
}

/// Result of decoding an HTML entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entity {
    /// `&amp;` (or `&#38;`): an ampersand, which may itself start another entity
    /// (double-encoded `&amp;lt;` decodes all the way to `<`).
    Amp,
    /// Any other entity, decoded to one char.
    Char(char),
    /// A numeric entity naming no valid char: dropped.
    Drop,
}

/// Decodes the entity whose name starts at `b[q]` (just after the `&`).
/// Returns the entity and the number of bytes it spans from `q`, `;` included.
pub(super) fn entity_at(b: &[u8], q: usize) -> Option<(Entity, usize)> {
    // Longest name we know is 6 bytes ("hellip", "thinsp"); numeric forms are
    // at most "#x10FFFF" (8) or "#1114111" (8).
    let rest = b.get(q..)?;
    let end = rest.iter().take(10).position(|&c| c == b';')?;
    let name = &rest[..end];
    let len = end + 1;
    let ch = match name {
        b"amp" => return Some((Entity::Amp, len)),
        b"lt" => '<',
        b"gt" => '>',
        b"quot" => '"',
        b"apos" => '\'',
        b"nbsp" => '\u{A0}',
        b"shy" => '\u{AD}',
        b"ndash" => '–',
        b"mdash" => '—',
        b"hellip" => '…',
        b"lsquo" => '‘',
        b"rsquo" => '’',
        b"ldquo" => '“',
        b"rdquo" => '”',
        b"times" => '×',
        b"ensp" | b"emsp" | b"thinsp" => '\u{2002}',
        [b'#', b'x' | b'X', hex @ ..] if (1..=6).contains(&hex.len()) => {
            let mut v: u32 = 0;
            for &h in hex {
                v = v * 16 + (h as char).to_digit(16)?;
            }
            return Some((numeric(v), len));
        }
        [b'#', dec @ ..] if (1..=7).contains(&dec.len()) => {
            let mut v: u32 = 0;
            for &d in dec {
                v = v * 10 + (d as char).to_digit(10)?;
            }
            return Some((numeric(v), len));
        }
        _ => return None,
    };
    Some((Entity::Char(ch), len))
}

/// A numeric entity's value: `&#38;` is an ampersand like `&amp;`.
fn numeric(v: u32) -> Entity {
    match char::from_u32(v) {
        Some('&') => Entity::Amp,
        Some(c) => Entity::Char(c),
        None => Entity::Drop,
    }
}

/// Parses `(cid:N)` at `b[i]`; returns `N` and the index just past `)`.
pub(super) fn cid_at(b: &[u8], i: usize) -> Option<(u32, usize)> {
    let rest = b.get(i..)?;
    let digits = rest.strip_prefix(b"(cid:")?;
    let nd = digits
        .iter()
        .take(6)
        .take_while(|c| c.is_ascii_digit())
        .count();
    if nd == 0 || nd > 5 || digits.get(nd) != Some(&b')') {
        return None;
    }
    let n = digits[..nd]
        .iter()
        .fold(0u32, |acc, &d| acc * 10 + u32::from(d - b'0'));
    Some((n, i + 5 + nd + 1))
}

/// The ligature a PDF `(cid:N)` code stands for in TeX's OT1 fonts, as seen
/// in the NeurIPS extraction (`classi(cid:12)cation`, `di(cid:14)cult`,
/// `in(cid:3)uenced`). Used only when glued to lowercase letters.
pub(super) fn ligature(n: u32) -> Option<&'static str> {
    match n {
        2 | 12 => Some("fi"),
        3 | 13 => Some("fl"),
        11 => Some("ff"),
        14 => Some("ffi"),
        _ => None,
    }
}
