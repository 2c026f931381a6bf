//! Drawing one line of text on the canvas, the same in PNG and SVG.
//!
//! * Font fallback by glyph coverage, with a warning for characters no
//!   embedded font has (see `fonts`): in the PNG a mixed Latin/CJK string is
//!   drawn run by run with the embedded fonts on one baseline; in the SVG it
//!   stays one `<text>` element (searchable, selectable) with a CSS font
//!   list, and the viewer falls back per character the same way.
//! * Text is placed by the *centre of its line box*. plotters' `ab_glyph`
//!   bitmap text puts the baseline half a font size below the anchor, while
//!   its SVG backend writes `dy="0.76em"` and a CSS font size of
//!   `size / 1.24`; both are compensated here so the two files match (the
//!   SVG size is corrected to the font's real em).

use super::super::fonts::{font_style, Family, Run, MIXED_FAMILY};
use super::super::text;
use super::super::ChartError;
use super::{Align, Canvas};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontDesc, FontFamily};

/// One line of text on its way to a backend: the anchor (`x` at the aligned
/// edge or centre, `y` at the centre of the line box), size, weight, colour
/// and alignment.
struct Pen {
    x: f32,
    y: f32,
    size: f32,
    bold: bool,
    color: RGBColor,
    align: Align,
}

impl Pen {
    /// Screen position of a point `along` the text and `across` it from the
    /// anchor.
    fn at(&self, along: f32, across: f32) -> (i32, i32) {
        (
            (self.x + along).round() as i32,
            (self.y + across).round() as i32,
        )
    }
}

impl<DB: DrawingBackend> Canvas<'_, DB> {
    /// Draws one line of text whose line box is centred vertically on `y`:
    /// control characters become spaces, characters no embedded font has are
    /// reported once as a warning, then the SVG gets one `<text>` element and
    /// the PNG the text's font runs glyph by glyph.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn text(
        &self,
        s: &str,
        x: f32,
        y: f32,
        size: f32,
        bold: bool,
        color: RGBColor,
        align: Align,
    ) -> Result<(), ChartError> {
        if s.is_empty() || size.is_nan() || size <= 0.5 || !x.is_finite() || !y.is_finite() {
            return Ok(());
        }
        // Callers clean labels already; this guards the SVG's validity.
        let cleaned;
        let s = if s.chars().any(char::is_control) {
            cleaned = text::clean(s);
            cleaned.as_str()
        } else {
            s
        };
        let (runs, missing) = self.fonts.runs(s, bold);
        self.check_coverage(s, &missing);
        let pen = Pen {
            x,
            y,
            size,
            bold,
            color,
            align,
        };
        if self.svg {
            self.svg_text(s, &runs, &pen)
        } else {
            self.png_text(&runs, &pen)
        }
    }

    /// Records a warning for characters of `s` that no embedded font has.
    fn check_coverage(&self, s: &str, missing: &[char]) {
        if missing.is_empty() {
            return;
        }
        let chars: Vec<String> = missing
            .iter()
            .map(|c| format!("'{c}' (U+{:04X})", *c as u32))
            .collect();
        self.warn(format!(
            "chart text \"{}\" has characters no embedded font can draw (shown as boxes): {}",
            text::shorten(s, 60),
            chars.join(", ")
        ));
    }

    /// Offset of the baseline from the line centre, across the text, at `size`.
    fn baseline(&self, size: f32) -> f32 {
        self.fonts.baseline_below_centre() * size
    }

    /// SVG: one element with a CSS font list (the viewer does the
    /// per-character fallback), its size and plotters' `dy="0.76em"`
    /// corrected to the font's real em.
    fn svg_text(&self, s: &str, runs: &[Run<'_>], pen: &Pen) -> Result<(), ChartError> {
        let (size, bold) = (pen.size, pen.bold);
        let family = if runs.iter().any(|r| r.family == Family::Fallback) {
            MIXED_FAMILY
        } else {
            Family::Sans.name()
        };
        let em = self.fonts.em_ratio(Family::Sans, bold);
        let hpos = match pen.align {
            Align::Left => HPos::Left,
            Align::Center => HPos::Center,
            Align::Right => HPos::Right,
        };
        let font = FontDesc::new(
            FontFamily::Name(family),
            (size * 1.24 * em) as f64,
            font_style(bold),
        );
        let style = TextStyle::from(font)
            .color(&pen.color)
            .pos(Pos::new(hpos, VPos::Top));
        let pos = pen.at(0.0, self.baseline(size) - 0.76 * size * em);
        self.area.draw_text(s, &style, pos).map_err(|e| self.err(e))
    }

    /// PNG: the runs one after the other on a shared baseline, placed as a
    /// whole by the alignment.
    fn png_text(&self, runs: &[Run<'_>], pen: &Pen) -> Result<(), ChartError> {
        // (plotters size, width) of each run.
        let widths: Vec<(f32, f32)> = runs
            .iter()
            .map(|r| {
                let rs = self.fonts.run_size(r.family, pen.size);
                (rs, self.fonts.run_width(r.family, pen.bold, rs, r.text))
            })
            .collect();
        let total: f32 = widths.iter().map(|w| w.1).sum();
        let mut along = match pen.align {
            Align::Left => 0.0,
            Align::Center => -total / 2.0,
            Align::Right => -total,
        };
        let mut glyphs: Vec<(char, f32)> = Vec::new();
        for (r, (rs, w)) in runs.iter().zip(widths) {
            self.png_run(r, rs, along, pen, &mut glyphs)?;
            along += w;
        }
        Ok(())
    }

    /// One PNG run at plotters size `rs`, starting `along` pixels from the
    /// anchor, glyph by glyph at the positions the font gives (plotters'
    /// `ab_glyph` puts the baseline half the run's font size below the
    /// anchor). Droid Sans Fallback has no bold face: its bold runs are
    /// emboldened by drawing them twice, offset by about 3% of the size.
    /// `glyphs` is a buffer reused across runs.
    fn png_run(
        &self,
        r: &Run<'_>,
        rs: f32,
        along: f32,
        pen: &Pen,
        glyphs: &mut Vec<(char, f32)>,
    ) -> Result<(), ChartError> {
        let font = FontDesc::new(
            FontFamily::Name(r.family.name()),
            rs as f64,
            font_style(pen.bold),
        );
        let style = TextStyle::from(font)
            .color(&pen.color)
            .pos(Pos::new(HPos::Left, VPos::Top));
        let passes: &[f32] = if pen.bold && r.family == Family::Fallback {
            &[0.0, (rs * 0.03).max(1.0)]
        } else {
            &[0.0]
        };
        let across = self.baseline(pen.size) - rs / 2.0;
        self.fonts
            .glyph_positions(r.family, pen.bold, rs, r.text, glyphs);
        let mut buf = [0u8; 4];
        for &(ch, gx) in glyphs.iter() {
            let glyph: &str = ch.encode_utf8(&mut buf);
            for &dx in passes {
                let pos = pen.at((along + gx).round() + dx, across);
                self.area
                    .draw_text(glyph, &style, pos)
                    .map_err(|e| self.err(e))?;
            }
        }
        Ok(())
    }

    /// Draws lines of text as a block centred vertically on `y`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn lines(
        &self,
        lines: &[String],
        x: f32,
        y: f32,
        size: f32,
        bold: bool,
        color: RGBColor,
        align: Align,
    ) -> Result<(), ChartError> {
        let lh = Self::line_h(size);
        let top = y - lh * lines.len() as f32 / 2.0;
        for (i, l) in lines.iter().enumerate() {
            self.text(l, x, top + lh * (i as f32 + 0.5), size, bold, color, align)?;
        }
        Ok(())
    }
}
