//! The LaTeX vocabulary: which commands drop their argument, which keep it, Greek letter
//! names and accent composition.
//!
//! Why separate: the handlers in `latex.rs` and `math.rs` stay small state machines, and the
//! vocabulary (which grows as new corpora show new macros) lives in plain `match` tables that
//! the compiler turns into length-then-bytes comparisons. Lookups only happen on a backslash,
//! so they are off the hot path of ordinary prose.

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
