//! Trend sparklines: a topic's share per period as a tiny inline SVG.
//!
//! Drawn here rather than by the chart module because they are markup, not
//! files: a `<polyline>` in a few hundred bytes that scales with the text,
//! prints sharply and needs no image request. Two sizes exist: a small one
//! for the topic table (line plus a dot on the latest period) and a large
//! one for the topic's own section (shaded area, 0% baseline, top value,
//! period labels, a hover title per point).
//!
//! The y axis always starts at 0 (each topic scaled to its own maximum), so
//! a flat topic looks flat instead of having its noise blown up. A trend
//! needs at least 2 periods and exactly one finite, non-negative share per
//! period; otherwise [`trend_problem`] says why and nothing is drawn.

use super::escape::{safe_colour, Html, Pct};
use std::fmt::{self, Write as _};

/// Why a topic's trend cannot be drawn.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum TrendProblem {
    /// Fewer than 2 periods: nothing to draw, not worth a warning.
    TooFewPeriods,
    /// `shares_by_period` has another length than `periods`.
    Length { shares: usize, periods: usize },
    /// A share is NaN, infinite or negative.
    BadValue,
}

impl fmt::Display for TrendProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooFewPeriods => f.write_str("fewer than 2 periods"),
            Self::Length { shares, periods } => {
                write!(f, "{shares} shares given for {periods} periods")
            }
            Self::BadValue => f.write_str("a share is not a finite, non-negative number"),
        }
    }
}

/// `None` when `shares` can be drawn against `periods`.
pub(crate) fn trend_problem(shares: &[f64], periods: &[String]) -> Option<TrendProblem> {
    if periods.len() < 2 {
        Some(TrendProblem::TooFewPeriods)
    } else if shares.len() != periods.len() {
        Some(TrendProblem::Length {
            shares: shares.len(),
            periods: periods.len(),
        })
    } else if shares.iter().any(|v| !v.is_finite() || *v < 0.0) {
        Some(TrendProblem::BadValue)
    } else {
        None
    }
}

/// Plot-area coordinates (x, y) of each share, left to right, y pointing
/// down with 0 at `bottom` and the largest share at `top`.
fn points(shares: &[f64], left: f64, right: f64, top: f64, bottom: f64) -> Vec<(f64, f64)> {
    let max = shares.iter().copied().fold(0.0_f64, f64::max);
    let n = shares.len();
    let step = if n > 1 {
        (right - left) / (n - 1) as f64
    } else {
        0.0
    };
    shares
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let frac = if max > 0.0 { v / max } else { 0.0 };
            (left + step * i as f64, bottom - (bottom - top) * frac)
        })
        .collect()
}

fn write_points(out: &mut String, pts: &[(f64, f64)]) {
    for (i, (x, y)) in pts.iter().enumerate() {
        let sep = if i == 0 { "" } else { " " };
        let _ = write!(out, "{sep}{x:.1},{y:.1}");
    }
}

/// Writes the table-sized sparkline (120x28) and returns true, or writes
/// nothing and returns false when [`trend_problem`] finds a problem.
pub(crate) fn small(out: &mut String, shares: &[f64], periods: &[String], colour: &str) -> bool {
    if trend_problem(shares, periods).is_some() {
        return false;
    }
    let (w, h, pad) = (120.0, 28.0, 3.0);
    let pts = points(shares, pad, w - pad, pad, h - pad);
    let colour = safe_colour(colour);
    let _ = write!(
        out,
        "<svg class=\"spark\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\""
    );
    let _ = write!(out, "{}", Described(shares, periods));
    let _ = write!(
        out,
        "\"><title>{}</title><polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.75\" \
         stroke-linejoin=\"round\" stroke-linecap=\"round\" points=\"",
        Described(shares, periods)
    );
    write_points(out, &pts);
    out.push_str("\"/>");
    if let Some((x, y)) = pts.last() {
        let _ = write!(
            out,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"2.5\" fill=\"{colour}\"/>"
        );
    }
    out.push_str("</svg>");
    true
}

/// Writes the section-sized trend chart (560x170, responsive) and returns
/// true, or writes nothing and returns false when [`trend_problem`] finds a
/// problem.
pub(crate) fn large(out: &mut String, shares: &[f64], periods: &[String], colour: &str) -> bool {
    if trend_problem(shares, periods).is_some() {
        return false;
    }
    let (w, h) = (560.0, 170.0);
    let (left, right, top, bottom) = (52.0, w - 16.0, 12.0, h - 30.0);
    let pts = points(shares, left, right, top, bottom);
    let colour = safe_colour(colour);
    let max = shares.iter().copied().fold(0.0_f64, f64::max);
    let _ = write!(
        out,
        "<svg class=\"trend\" viewBox=\"0 0 {w} {h}\" width=\"100%\" role=\"img\" aria-label=\""
    );
    let _ = write!(out, "{}", Described(shares, periods));
    let _ = write!(
        out,
        "\"><title>{}</title>\
         <line class=\"axis\" x1=\"{left}\" y1=\"{bottom}\" x2=\"{right}\" y2=\"{bottom}\"/>\
         <line class=\"grid\" x1=\"{left}\" y1=\"{top}\" x2=\"{right}\" y2=\"{top}\"/>\
         <text class=\"tick\" x=\"{lx}\" y=\"{bottom}\" text-anchor=\"end\" dominant-baseline=\"middle\">0%</text>\
         <text class=\"tick\" x=\"{lx}\" y=\"{top}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>",
        Described(shares, periods),
        Pct(max),
        lx = left - 6.0,
    );
    // Shaded area under the line.
    let _ = write!(
        out,
        "<polygon fill=\"{colour}\" fill-opacity=\"0.15\" points=\"{left:.1},{bottom:.1} "
    );
    write_points(out, &pts);
    let _ = write!(out, " {right:.1},{bottom:.1}\"/>");
    let _ = write!(
        out,
        "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2.5\" stroke-linejoin=\"round\" \
         stroke-linecap=\"round\" points=\""
    );
    write_points(out, &pts);
    out.push_str("\"/>");
    // About 10 period labels at most, always including the first and last.
    let n = pts.len();
    let every = n.div_ceil(10).max(1);
    for (i, ((x, y), (period, share))) in pts.iter().zip(periods.iter().zip(shares)).enumerate() {
        let _ = write!(
            out,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.5\" fill=\"{colour}\"><title>{}: {}</title></circle>",
            Html(period),
            Pct(*share)
        );
        let label = i == n - 1 || (i % every == 0 && n - 1 - i >= every.min(2));
        if label {
            let _ = write!(
                out,
                "<text class=\"tick\" x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                h - 10.0,
                Html(&super::escape::truncate(period, 12))
            );
        }
    }
    out.push_str("</svg>");
    true
}

/// Text alternative of a trend: "share 3.1% in 2016 → 5.2% in 2026 (max 6.0%)".
struct Described<'a>(&'a [f64], &'a [String]);

impl fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (shares, periods) = (self.0, self.1);
        let (Some(first), Some(last)) = (shares.first(), shares.last()) else {
            return Ok(());
        };
        let max = shares.iter().copied().fold(0.0_f64, f64::max);
        write!(
            f,
            "Share {} in {} \u{2192} {} in {} (max {})",
            Pct(*first),
            Html(periods.first().map_or("", String::as_str)),
            Pct(*last),
            Html(periods.last().map_or("", String::as_str)),
            Pct(max)
        )
    }
}
