//! Small pieces of markup that several sections of the report share: the colour swatch beside
//! a topic's name and the length of a weight bar. They live apart from the sections so that
//! the topic details (`details.rs`) use them without importing the page (`page.rs`) that
//! calls the details: page -> details -> parts.

use super::escape::safe_colour;
use std::fmt::{self, Write as _};

/// A bar length in percent of its track, 0..=100.
pub(super) fn bar_pct(value: f64, max: f64) -> f64 {
    if value.is_finite() && max > 0.0 {
        (value / max * 100.0).clamp(0.0, 100.0)
    } else {
        0.0
    }
}

/// The colour square shown beside a topic's name (the colour checked by [`safe_colour`]).
pub(super) fn swatch(out: &mut String, colour: &str) -> fmt::Result {
    write!(
        out,
        "<span class=\"swatch\" style=\"background:{}\"></span>",
        safe_colour(colour)
    )
}
