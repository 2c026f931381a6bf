//! Colours shared by every chart (and by the HTML report via
//! [`palette_hex`]).
//!
//! Topic `i` always gets colour `i`, so a topic looks the same in every chart
//! and on every slide. The first 8 colours are the Okabe-Ito palette
//! (Okabe & Ito 2008, "Color Universal Design"), designed to stay
//! distinguishable for the common forms of colour blindness. Topics 8..16 use
//! Paul Tol's "muted" scheme (minus its pale-grey "bad data" colour), which is
//! also colour-blind safe and has a different hue/lightness rhythm from
//! Okabe-Ito. After 17 topics the 17 colours repeat (labels still identify
//! topics). Grey is reserved for the "other" series / unassigned points
//! (`topic_id == usize::MAX`). The sequential scale for heatmaps is viridis,
//! which is perceptually uniform and colour-blind safe.

use plotters::style::RGBColor;

/// Okabe-Ito: orange, sky blue, bluish green, yellow, blue, vermillion,
/// reddish purple, black.
const OKABE_ITO: [(u8, u8, u8); 8] = [
    (0xE6, 0x9F, 0x00),
    (0x56, 0xB4, 0xE9),
    (0x00, 0x9E, 0x73),
    (0xF0, 0xE4, 0x42),
    (0x00, 0x72, 0xB2),
    (0xD5, 0x5E, 0x00),
    (0xCC, 0x79, 0xA7),
    (0x00, 0x00, 0x00),
];

/// Paul Tol's muted scheme: rose, indigo, sand, green, cyan, wine, teal,
/// olive, purple.
const TOL_MUTED: [(u8, u8, u8); 9] = [
    (0xCC, 0x66, 0x77),
    (0x33, 0x22, 0x88),
    (0xDD, 0xCC, 0x77),
    (0x11, 0x77, 0x33),
    (0x88, 0xCC, 0xEE),
    (0x88, 0x22, 0x55),
    (0x44, 0xAA, 0x99),
    (0x99, 0x99, 0x33),
    (0xAA, 0x44, 0x99),
];

/// Number of distinct topic colours before the palette repeats.
pub const PALETTE_LEN: usize = OKABE_ITO.len() + TOL_MUTED.len();

/// Grey for the "other" series and unassigned points (`usize::MAX`).
pub(crate) const OTHER: (u8, u8, u8) = (0x99, 0x99, 0x99);

/// Main text colour (near-black reads softer than pure black on projectors).
pub(crate) const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
/// Secondary text (subtitles, axis ticks, footnotes).
pub(crate) const MUTED: RGBColor = RGBColor(0x59, 0x59, 0x59);
/// Grid lines.
pub(crate) const GRID: RGBColor = RGBColor(0xE3, 0xE3, 0xE3);
/// Axis / zero lines.
pub(crate) const AXIS: RGBColor = RGBColor(0x8A, 0x8A, 0x8A);

/// RGB of topic `topic_id`'s colour (grey for `usize::MAX`).
pub(crate) fn topic_rgb(topic_id: usize) -> (u8, u8, u8) {
    if topic_id == usize::MAX {
        return OTHER;
    }
    let i = topic_id % PALETTE_LEN;
    if i < OKABE_ITO.len() {
        OKABE_ITO[i]
    } else {
        TOL_MUTED[i - OKABE_ITO.len()]
    }
}

/// plotters colour of topic `topic_id`.
pub(crate) fn topic_color(topic_id: usize) -> RGBColor {
    let (r, g, b) = topic_rgb(topic_id);
    RGBColor(r, g, b)
}

/// CSS hex colour (`"#E69F00"`) of topic `topic_id`, identical to the colour
/// the charts use. Topic 0 is Okabe-Ito orange; ids 8..16 use Paul Tol's
/// muted colours; ids repeat every 17; `usize::MAX` ("other") is grey
/// `#999999`.
pub fn palette_hex(topic_id: usize) -> String {
    let (r, g, b) = topic_rgb(topic_id);
    format!("#{r:02X}{g:02X}{b:02X}")
}

/// Viridis sampled at 9 evenly spaced points (matplotlib's `viridis`).
const VIRIDIS: [(u8, u8, u8); 9] = [
    (0x44, 0x01, 0x54),
    (0x47, 0x2C, 0x7A),
    (0x3B, 0x51, 0x8B),
    (0x2C, 0x71, 0x8E),
    (0x21, 0x90, 0x8D),
    (0x27, 0xAD, 0x81),
    (0x5C, 0xC8, 0x63),
    (0xAA, 0xDC, 0x32),
    (0xFD, 0xE7, 0x25),
];

/// Viridis colour for `t` in [0, 1] (clamped; NaN maps to 0), linearly
/// interpolated between the 9 samples.
pub(crate) fn viridis(t: f64) -> RGBColor {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let pos = t * (VIRIDIS.len() - 1) as f64;
    let i = (pos.floor() as usize).min(VIRIDIS.len() - 2);
    let f = pos - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Relative luminance (sRGB, WCAG formula) of a colour, in [0, 1]; used to
/// pick black or white text on a filled cell.
pub(crate) fn luminance(c: RGBColor) -> f64 {
    let lin = |v: u8| {
        let v = v as f64 / 255.0;
        if v <= 0.03928 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c.0) + 0.7152 * lin(c.1) + 0.0722 * lin(c.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_follows_okabe_ito_then_tol_and_repeats() {
        // Published Okabe-Ito / Tol values.
        assert_eq!(palette_hex(0), "#E69F00");
        assert_eq!(palette_hex(4), "#0072B2");
        assert_eq!(palette_hex(8), "#CC6677");
        assert_eq!(palette_hex(16), "#AA4499");
        assert_eq!(palette_hex(17), palette_hex(0));
        assert_eq!(palette_hex(usize::MAX), "#999999");
    }

    #[test]
    fn viridis_endpoints_and_middle() {
        let lo = viridis(0.0);
        let hi = viridis(1.0);
        assert_eq!((lo.0, lo.1, lo.2), (0x44, 0x01, 0x54));
        assert_eq!((hi.0, hi.1, hi.2), (0xFD, 0xE7, 0x25));
        let mid = viridis(0.5);
        assert_eq!((mid.0, mid.1, mid.2), (0x21, 0x90, 0x8D));
        // Out of range and NaN are clamped rather than panicking.
        let n = viridis(f64::NAN);
        assert_eq!((n.0, n.1, n.2), (0x44, 0x01, 0x54));
        let big = viridis(7.0);
        assert_eq!((big.0, big.1, big.2), (0xFD, 0xE7, 0x25));
    }

    #[test]
    fn luminance_orders_black_and_white() {
        assert!(luminance(RGBColor(0, 0, 0)) < 1e-9);
        assert!((luminance(RGBColor(255, 255, 255)) - 1.0).abs() < 1e-9);
        assert!(luminance(viridis(1.0)) > 0.5);
        assert!(luminance(viridis(0.0)) < 0.1);
    }

    #[test]
    fn palette_hex_matches_okabe_ito() {
        assert_eq!(palette_hex(0), "#E69F00");
        assert_eq!(palette_hex(1), "#56B4E9");
        assert_eq!(palette_hex(7), "#000000");
    }
}
