//! Text fitting and number formatting for chart labels.
//!
//! Labels must never overlap or run off the canvas, and character counts are
//! a poor proxy for width (a CJK ideograph is about twice as wide as a Latin
//! letter, "iii" is narrower than "WWW"), so every fitting function here takes
//! a `measure` closure that returns the drawn width in pixels (the canvas
//! passes the real font metrics). Long text is wrapped at spaces (or between
//! characters for scripts written without spaces) and, when it still does not
//! fit, shortened with a trailing ellipsis "…".

/// The ellipsis appended to shortened text.
pub(crate) const ELLIPSIS: char = '…';

/// Replaces control characters (newlines, tabs, NUL, ...) with spaces,
/// collapses runs of whitespace and trims. Control characters are not
/// allowed in XML (SVG) and have no glyphs.
pub(crate) fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_control() || c.is_whitespace() {
            pending_space = !out.is_empty();
        } else {
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            out.push(c);
        }
    }
    out
}

/// Cleans a topic label (see [`clean`]) and substitutes `"topic {id}"` for an
/// empty one.
pub(crate) fn topic_label(label: &str, topic_id: usize) -> String {
    let l = clean(label);
    if !l.is_empty() {
        l
    } else if topic_id == usize::MAX {
        "other".to_string()
    } else {
        format!("topic {topic_id}")
    }
}

/// Shortens `text` to at most `max_chars` characters (Unicode scalar
/// values), replacing the tail with "…" when it is cut; trailing spaces
/// before the ellipsis are dropped. `max_chars == 0` gives an empty string.
/// Meant for the HTML report and other places without font metrics; charts
/// fit by measured width instead.
pub fn shorten(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    if max_chars == 0 {
        return String::new();
    }
    let mut out: String = text.chars().take(max_chars - 1).collect();
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out.push(ELLIPSIS);
    out
}

/// Returns `text` unchanged if `measure(text) <= max_w`, else the longest
/// prefix (cut at a character boundary, trailing spaces dropped) followed by
/// "…" that fits. If not even "…" fits, returns an empty string.
pub(crate) fn ellipsize(text: &str, max_w: f32, measure: &dyn Fn(&str) -> f32) -> String {
    if measure(text) <= max_w {
        return text.to_string();
    }
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    let candidate = |n: usize| {
        let end = bounds.get(n).copied().unwrap_or(text.len());
        let mut s = text[..end].trim_end().to_string();
        s.push(ELLIPSIS);
        s
    };
    // Largest n in [0, len) whose candidate fits; width grows with n.
    let (mut lo, mut hi) = (0usize, bounds.len());
    if measure(&candidate(0)) > max_w {
        return String::new();
    }
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if measure(&candidate(mid)) <= max_w {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    candidate(lo)
}

/// Wraps `text` into at most `max_lines` lines no wider than `max_w`.
/// Breaks at spaces; a word wider than a line is broken between characters
/// (this is how CJK text without spaces wraps). Whatever does not fit in the
/// last line is cut with an ellipsis. Returns at least one line (possibly
/// empty) for non-empty input and no lines for empty input.
pub(crate) fn wrap(
    text: &str,
    max_w: f32,
    max_lines: usize,
    measure: &dyn Fn(&str) -> f32,
) -> Vec<String> {
    let text = text.trim();
    if text.is_empty() || max_lines == 0 {
        return Vec::new();
    }
    let mut lines: Vec<String> = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        if lines.len() + 1 == max_lines || measure(rest) <= max_w {
            lines.push(ellipsize(rest, max_w, measure));
            break;
        }
        let cut = break_point(rest, max_w, measure);
        lines.push(rest[..cut].trim_end().to_string());
        rest = rest[cut..].trim_start();
    }
    lines
}

/// Byte index at which to end the first line of `text` (which does not fit
/// in `max_w` as a whole): after the last space that keeps the line within
/// `max_w`, else after as many characters as fit (at least one).
fn break_point(text: &str, max_w: f32, measure: &dyn Fn(&str) -> f32) -> usize {
    let mut best_space = None;
    let mut best_char = None;
    for (i, c) in text.char_indices() {
        let end = i + c.len_utf8();
        if measure(text[..end].trim_end()) > max_w {
            break;
        }
        best_char = Some(end);
        if c == ' ' {
            best_space = Some(end);
        }
    }
    match (best_space, best_char) {
        (Some(s), _) => s,
        (None, Some(c)) => c,
        (None, None) => text.chars().next().map_or(text.len(), char::len_utf8),
    }
}

/// Formats an integer with thin thousands separators: `12345` -> `"12,345"`.
pub(crate) fn group_thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Formats `v` with `decimals` decimals, using the typographic minus sign
/// "−" (and "+" for positive values when `signed`). Non-finite values give
/// "–".
pub(crate) fn fmt_num(v: f64, decimals: usize, signed: bool) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let s = format!("{:.*}", decimals, v.abs());
    let is_zero = s.chars().all(|c| c == '0' || c == '.');
    if is_zero {
        s
    } else if v < 0.0 {
        format!("−{s}")
    } else if signed {
        format!("+{s}")
    } else {
        s
    }
}

/// Decimals needed to show values of magnitude up to `max_abs` with about
/// two significant digits (at least `min_decimals`, at most 6).
pub(crate) fn decimals_for(max_abs: f64, min_decimals: usize) -> usize {
    if !max_abs.is_finite() || max_abs <= 0.0 {
        return min_decimals;
    }
    let d = 1.0 - max_abs.log10().floor();
    (d.max(0.0) as usize).clamp(min_decimals, 6)
}

/// Formats an axis tick `v` on a grid of spacing `step`: as few decimals as
/// the step needs; thousands and millions compacted to "k" / "M".
pub(crate) fn fmt_tick(v: f64, step: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let (div, suffix) = if step >= 1e5 {
        (1e6, "M")
    } else if step >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let s = step / div;
    let decimals = if s > 0.0 && s.is_finite() {
        (-(s.log10().floor())).max(0.0) as usize
    } else {
        0
    };
    // Steps like 2.5 need one more digit than their magnitude says.
    let decimals = if ((s * 10f64.powi(decimals as i32)).round() - s * 10f64.powi(decimals as i32))
        .abs()
        > 1e-6
    {
        decimals + 1
    } else {
        decimals
    };
    format!("{}{suffix}", fmt_num(v / div, decimals.min(6), false))
}

/// "Nice" tick positions (multiples of 1, 2 or 5 times a power of ten)
/// covering `[lo, hi]` with at most about `max_ticks` ticks. Returns the
/// ticks that lie inside `[lo, hi]` and the step. Degenerate ranges give a
/// single tick.
pub(crate) fn nice_ticks(lo: f64, hi: f64, max_ticks: usize) -> (Vec<f64>, f64) {
    if !lo.is_finite() || !hi.is_finite() || hi <= lo {
        return (vec![if lo.is_finite() { lo } else { 0.0 }], 1.0);
    }
    let step = nice_step((hi - lo) / max_ticks.max(1) as f64);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    let ticks = (first..=last)
        .map(|i| {
            let t = i as f64 * step;
            if t.abs() < step * 1e-9 {
                0.0
            } else {
                t
            }
        })
        .collect();
    (ticks, step)
}

/// Smallest nice step (1, 2, 2.5 or 5 times a power of ten) >= `raw`.
pub(crate) fn nice_step(raw: f64) -> f64 {
    if !raw.is_finite() || raw <= 0.0 {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 + 1e-9 {
        1.0
    } else if f <= 2.0 + 1e-9 {
        2.0
    } else if f <= 2.5 + 1e-9 {
        2.5
    } else if f <= 5.0 + 1e-9 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// Rounds `hi` up to the next multiple of a nice step for about
/// `max_ticks` ticks from 0 (used for axes that start at zero).
pub(crate) fn nice_ceiling(hi: f64, max_ticks: usize) -> f64 {
    if !hi.is_finite() || hi <= 0.0 {
        return 1.0;
    }
    let step = nice_step(hi / max_ticks.max(1) as f64);
    (hi / step - 1e-9).ceil() * step
}

#[cfg(test)]
mod tests {
    use super::super::fonts;
    use super::*;
    use approx::assert_abs_diff_eq;

    /// Fake metric: every char is 10 px wide, CJK ideographs 20 px.
    fn m(s: &str) -> f32 {
        s.chars()
            .map(|c| if (c as u32) >= 0x3000 { 20.0 } else { 10.0 })
            .sum()
    }

    #[test]
    fn shorten_counts_chars_not_bytes() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcdef", 4), "abc…");
        assert_eq!(shorten("论文列表很长", 3), "论文…");
        assert_eq!(shorten("ab cdef", 4), "ab…");
        assert_eq!(shorten("abc", 0), "");
        assert_eq!(shorten("abc", 1), "…");
    }

    #[test]
    fn ellipsize_fits_measured_width() {
        assert_eq!(ellipsize("hello", 50.0, &m), "hello");
        // 100 px: "hello w" (7 chars) + "…" = 80 px; "hello wor…" = 100 px.
        assert_eq!(ellipsize("hello world!", 100.0, &m), "hello wor…");
        // CJK: 3 ideographs (60) + … (10) = 70 <= 75; 4 would be 90.
        assert_eq!(ellipsize("自然语言处理", 75.0, &m), "自然语…");
        assert_eq!(ellipsize("abc", 5.0, &m), "");
        assert_eq!(ellipsize("abcdef", 10.0, &m), "…");
    }

    #[test]
    fn wrap_breaks_at_spaces_then_ellipsizes() {
        // "language model r" is 160 px, "language model re" 170 px: break at
        // the space; "reasoning agents" (160 px) fits the second line.
        let lines = wrap("language model reasoning agents", 160.0, 2, &m);
        assert_eq!(lines, vec!["language model", "reasoning agents"]);
        // Second line too long: 15 chars + "…" = 160 px.
        let lines = wrap("language model reasoning agents planning", 160.0, 2, &m);
        assert_eq!(lines, vec!["language model", "reasoning agent…"]);
        for l in &lines {
            assert!(m(l) <= 160.0);
        }
        // One line only: plain ellipsis, trailing space dropped.
        assert_eq!(wrap("abc def", 50.0, 1, &m), vec!["abc…"]);
        assert!(wrap("", 50.0, 2, &m).is_empty());
    }

    #[test]
    fn wrap_breaks_cjk_between_characters() {
        // 5 ideographs = 100 px per line; the rest (7 = 140 px) is cut to
        // 4 ideographs + "…" = 90 px.
        let lines = wrap("大型语言模型推理能力评估", 100.0, 2, &m);
        assert_eq!(lines, vec!["大型语言模", "型推理能…"]);
        assert!(lines.iter().all(|l| m(l) <= 100.0));
    }

    #[test]
    fn clean_removes_control_chars() {
        assert_eq!(clean("  a\nb\t\u{1}c  "), "a b c");
        assert_eq!(topic_label(" \n", 3), "topic 3");
        assert_eq!(topic_label("", usize::MAX), "other");
    }

    #[test]
    fn numbers_format() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(1234567), "1,234,567");
        assert_eq!(fmt_num(-0.5, 1, false), "−0.5");
        assert_eq!(fmt_num(0.25, 2, true), "+0.25");
        assert_eq!(fmt_num(-0.0001, 2, true), "0.00");
        assert_eq!(fmt_num(f64::NAN, 2, true), "–");
        assert_eq!(decimals_for(12.3, 1), 1);
        assert_eq!(decimals_for(0.052, 0), 3);
        assert_eq!(fmt_tick(0.25, 0.05), "0.25");
        assert_eq!(fmt_tick(2_000_000.0, 500_000.0), "2.0M");
        assert_eq!(fmt_tick(25_000.0, 5_000.0), "25k");
        assert_eq!(fmt_tick(0.125, 0.025), "0.125");
    }

    #[test]
    fn ticks_are_nice_and_inside() {
        let (t, step) = nice_ticks(0.0, 1.0, 5);
        assert_abs_diff_eq!(step, 0.2, epsilon = 1e-12);
        assert_eq!(t.len(), 6);
        assert_abs_diff_eq!(t[5], 1.0, epsilon = 1e-12);
        let (t, step) = nice_ticks(-0.03, 0.07, 5);
        assert_abs_diff_eq!(step, 0.02, epsilon = 1e-12);
        assert_eq!(t.len(), 5); // -0.02, 0, 0.02, 0.04, 0.06
        assert!(t.iter().all(|&v| (-0.03..=0.07).contains(&v)));
        assert!(t.contains(&0.0));
        assert_abs_diff_eq!(nice_ceiling(0.37, 5), 0.4, epsilon = 1e-12);
        assert_abs_diff_eq!(nice_ceiling(0.0, 5), 1.0, epsilon = 1e-12);
        let (t, _) = nice_ticks(1.0, 1.0, 5);
        assert_eq!(t, vec![1.0]);
    }

    #[test]
    fn long_labels_are_shortened_to_the_measured_width() {
        let f = fonts::fonts().unwrap();
        let long =
            "a very long topic label about large language models, reasoning, agents and tool use";
        let cjk = "一个非常长的主题标签关于大型语言模型推理能力与智能体工具使用的研究";
        for (text, size, limit) in [
            (long, 30.0f32, 400.0f32),
            (cjk, 30.0, 300.0),
            (long, 60.0, 500.0),
        ] {
            let m = |s: &str| f.width(s, size, false);
            assert!(m(text) > limit, "test label must be too long to start with");
            let short = ellipsize(text, limit, &m);
            assert!(short.ends_with('…'));
            assert!(
                m(&short) <= limit,
                "{short:?} is {} px > {limit}",
                m(&short)
            );
            // Not needlessly short: one more character would not fit.
            let kept = short.chars().count() - 1;
            let longer: String = text.chars().take(kept + 1).collect::<String>() + "…";
            assert!(m(&longer) > limit || longer.trim_end_matches('…').ends_with(' '));
            let lines = wrap(text, limit, 2, &m);
            assert_eq!(lines.len(), 2);
            assert!(lines.iter().all(|l| m(l) <= limit), "{lines:?}");
        }
        // Character-count shortening for the report.
        assert_eq!(shorten(long, 12), "a very long…");
    }
}
