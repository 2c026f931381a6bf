//! A small pixel-space drawing layer over a plotters `DrawingArea`.
//!
//! The charts lay themselves out in pixels (computing where every label goes
//! so that none overlaps or leaves the canvas) and only use plotters as a
//! backend for shapes and text, the same code driving the PNG and the SVG
//! backend. This layer adds what plotters lacks for that:
//!
//! * text drawn with font fallback and placed by the centre of its line box,
//!   identically in PNG and SVG (see `text_line`);
//! * measuring and fitting text to a width (wrap, then "…"), from the
//!   embedded fonts' metrics;
//! * shapes in pixel coordinates (rectangles, lines, dashes, dots, markers)
//!   and the heading and footnotes every chart shares;
//! * everything scaled by [`ChartStyle::scale`](super::ChartStyle) through
//!   [`Canvas::px`].

use super::fonts::Fonts;
use super::palette::{INK, MUTED};
use super::text;
use super::ChartError;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::RGBAColor;
use std::cell::RefCell;
use std::path::Path;

mod text_line;

/// Base font sizes at scale 1 on a 1920x1080 canvas (plotters size =
/// ascent-to-descent height in pixels).
pub(crate) const TITLE_SIZE: f32 = 48.0;
pub(crate) const SUBTITLE_SIZE: f32 = 30.0;
pub(crate) const LABEL_SIZE: f32 = 30.0;
pub(crate) const TICK_SIZE: f32 = 26.0;
pub(crate) const FOOT_SIZE: f32 = 22.0;
/// Smallest font used for labels when space runs short (at scale 1).
pub(crate) const MIN_LABEL_SIZE: f32 = 16.0;
/// Outer margin at scale 1.
pub(crate) const MARGIN: f32 = 40.0;

/// Horizontal alignment of a text line relative to its anchor x.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Center,
    Right,
}

/// An axis-aligned rectangle in canvas pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rect {
    pub x0: f32,
    pub y0: f32,
    pub x1: f32,
    pub y1: f32,
}

impl Rect {
    pub(crate) fn new(x0: f32, y0: f32, x1: f32, y1: f32) -> Self {
        Self {
            x0: x0.min(x1),
            y0: y0.min(y1),
            x1: x0.max(x1),
            y1: y0.max(y1),
        }
    }
    pub(crate) fn w(&self) -> f32 {
        self.x1 - self.x0
    }
    pub(crate) fn h(&self) -> f32 {
        self.y1 - self.y0
    }
    /// Area shared with `o` (0 when disjoint).
    pub(crate) fn overlap(&self, o: &Rect) -> f32 {
        let w = self.x1.min(o.x1) - self.x0.max(o.x0);
        let h = self.y1.min(o.y1) - self.y0.max(o.y0);
        if w > 0.0 && h > 0.0 {
            w * h
        } else {
            0.0
        }
    }
    /// True when `self` lies within `o`.
    #[cfg(test)]
    pub(crate) fn inside(&self, o: &Rect) -> bool {
        self.x0 >= o.x0 && self.y0 >= o.y0 && self.x1 <= o.x1 && self.y1 <= o.y1
    }
    /// Grows the rectangle by `d` on every side.
    pub(crate) fn grow(&self, d: f32) -> Rect {
        Rect::new(self.x0 - d, self.y0 - d, self.x1 + d, self.y1 + d)
    }
}

/// Drawing surface for one output file.
pub(crate) struct Canvas<'a, DB: DrawingBackend> {
    area: &'a DrawingArea<DB, Shift>,
    fonts: &'static Fonts,
    svg: bool,
    path: &'a Path,
    scale: f32,
    pub(crate) width: f32,
    pub(crate) height: f32,
    warnings: RefCell<Vec<String>>,
}

fn rgba(c: RGBColor, alpha: f64) -> RGBAColor {
    RGBAColor(c.0, c.1, c.2, alpha)
}

impl<'a, DB: DrawingBackend> Canvas<'a, DB> {
    pub(crate) fn new(
        area: &'a DrawingArea<DB, Shift>,
        fonts: &'static Fonts,
        svg: bool,
        path: &'a Path,
        scale: f32,
    ) -> Self {
        let (w, h) = area.dim_in_pixel();
        Self {
            area,
            fonts,
            svg,
            path,
            scale,
            width: w as f32,
            height: h as f32,
            warnings: RefCell::new(Vec::new()),
        }
    }

    /// Warnings collected while drawing (characters no font covers).
    pub(crate) fn into_warnings(self) -> Vec<String> {
        self.warnings.into_inner()
    }

    /// Records a warning once.
    pub(crate) fn warn(&self, w: String) {
        let mut ws = self.warnings.borrow_mut();
        if !ws.contains(&w) {
            ws.push(w);
        }
    }

    /// `v` pixels at scale 1, scaled.
    pub(crate) fn px(&self, v: f32) -> f32 {
        v * self.scale
    }

    /// A drawing error. The canvas is generic over the backend, whose error type need not be
    /// `'static`, so the error is kept by its message; writing the file (`render`) keeps the
    /// backend's own error.
    fn err<E: std::error::Error + Send + Sync>(
        &self,
        e: plotters::drawing::DrawingAreaErrorKind<E>,
    ) -> ChartError {
        ChartError::Draw {
            path: self.path.to_path_buf(),
            source: e.to_string().into(),
        }
    }

    /// Width in pixels of `text` at `size` (all font runs included).
    pub(crate) fn measure(&self, size: f32, bold: bool, text: &str) -> f32 {
        self.fonts.width(text, size, bold)
    }

    /// Width in pixels of the widest of `texts` at `size` (0 for none).
    pub(crate) fn widest<S: AsRef<str>>(
        &self,
        size: f32,
        bold: bool,
        texts: impl IntoIterator<Item = S>,
    ) -> f32 {
        texts
            .into_iter()
            .map(|t| self.measure(size, bold, t.as_ref()))
            .fold(0.0f32, f32::max)
    }

    /// Fits `text` into `max_lines` lines of width `max_w` at `size` (wrap,
    /// then ellipsis).
    pub(crate) fn fit(
        &self,
        text: &str,
        size: f32,
        bold: bool,
        max_w: f32,
        max_lines: usize,
    ) -> Vec<String> {
        let fonts = self.fonts;
        let m = move |s: &str| fonts.width(s, size, bold);
        text::wrap(text, max_w, max_lines, &m)
    }

    /// Fits `text` on one line of width `max_w` (ellipsis).
    pub(crate) fn fit1(&self, text: &str, size: f32, bold: bool, max_w: f32) -> String {
        let fonts = self.fonts;
        let m = move |s: &str| fonts.width(s, size, bold);
        text::ellipsize(text, max_w, &m)
    }

    /// Line height for `size` (1.2 x size).
    pub(crate) fn line_h(size: f32) -> f32 {
        size * 1.2
    }

    /// Fills a rectangle (`alpha` in [0, 1]).
    pub(crate) fn fill_rect(&self, r: Rect, color: RGBColor, alpha: f64) -> Result<(), ChartError> {
        if !(r.w() > 0.0 && r.h() > 0.0) {
            return Ok(());
        }
        let style = ShapeStyle {
            color: rgba(color, alpha),
            filled: true,
            stroke_width: 0,
        };
        self.area
            .draw(&Rectangle::new(
                [
                    (r.x0.round() as i32, r.y0.round() as i32),
                    (r.x1.round() as i32, r.y1.round() as i32),
                ],
                style,
            ))
            .map_err(|e| self.err(e))
    }

    /// Outlines a rectangle with a stroke of `width` pixels drawn inside it.
    pub(crate) fn stroke_rect(
        &self,
        r: Rect,
        color: RGBColor,
        width: f32,
    ) -> Result<(), ChartError> {
        let w = width.max(1.0);
        self.fill_rect(Rect::new(r.x0, r.y0, r.x1, r.y0 + w), color, 1.0)?;
        self.fill_rect(Rect::new(r.x0, r.y1 - w, r.x1, r.y1), color, 1.0)?;
        self.fill_rect(Rect::new(r.x0, r.y0, r.x0 + w, r.y1), color, 1.0)?;
        self.fill_rect(Rect::new(r.x1 - w, r.y0, r.x1, r.y1), color, 1.0)
    }

    /// Horizontal line from `x0` to `x1` at `y`, `width` pixels thick.
    pub(crate) fn hline(
        &self,
        x0: f32,
        x1: f32,
        y: f32,
        color: RGBColor,
        width: f32,
    ) -> Result<(), ChartError> {
        let w = width.max(1.0);
        self.fill_rect(Rect::new(x0, y - w / 2.0, x1, y + w / 2.0), color, 1.0)
    }

    /// Vertical line from `y0` to `y1` at `x`, `width` pixels thick.
    pub(crate) fn vline(
        &self,
        x: f32,
        y0: f32,
        y1: f32,
        color: RGBColor,
        width: f32,
    ) -> Result<(), ChartError> {
        let w = width.max(1.0);
        self.fill_rect(Rect::new(x - w / 2.0, y0, x + w / 2.0, y1), color, 1.0)
    }

    /// Dashed vertical line.
    pub(crate) fn vdash(
        &self,
        x: f32,
        y0: f32,
        y1: f32,
        color: RGBColor,
        width: f32,
    ) -> Result<(), ChartError> {
        let dash = self.px(12.0);
        let gap = self.px(8.0);
        let (top, bottom) = (y0.min(y1), y0.max(y1));
        let mut y = top;
        while y < bottom {
            self.vline(x, y, (y + dash).min(bottom), color, width)?;
            y += dash + gap;
        }
        Ok(())
    }

    /// Polyline through `pts`, `width` pixels thick.
    pub(crate) fn polyline(
        &self,
        pts: &[(f32, f32)],
        color: RGBColor,
        width: f32,
    ) -> Result<(), ChartError> {
        if pts.len() < 2 {
            return Ok(());
        }
        let coords: Vec<(i32, i32)> = pts
            .iter()
            .map(|&(x, y)| (x.round() as i32, y.round() as i32))
            .collect();
        let style = ShapeStyle {
            color: rgba(color, 1.0),
            filled: false,
            stroke_width: width.round().max(1.0) as u32,
        };
        self.area
            .draw(&PathElement::new(coords, style))
            .map_err(|e| self.err(e))
    }

    /// Filled circle (`alpha` in [0, 1]).
    pub(crate) fn dot(
        &self,
        x: f32,
        y: f32,
        r: f32,
        color: RGBColor,
        alpha: f64,
    ) -> Result<(), ChartError> {
        let style = ShapeStyle {
            color: rgba(color, alpha),
            filled: true,
            stroke_width: 0,
        };
        self.area
            .draw(&Circle::new(
                (x.round() as i32, y.round() as i32),
                r.round().max(1.0) as u32,
                style,
            ))
            .map_err(|e| self.err(e))
    }

    /// Marker: filled circle with a white ring, so it stays visible where
    /// lines cross.
    pub(crate) fn marker(&self, x: f32, y: f32, r: f32, color: RGBColor) -> Result<(), ChartError> {
        self.dot(x, y, r + self.px(2.0), WHITE, 1.0)?;
        self.dot(x, y, r, color, 1.0)
    }

    /// Fills the canvas white, draws the heading (the pipeline title in bold
    /// and a chart subtitle below it, both shortened with "…" to the canvas
    /// width) and returns the y where the chart content may start.
    pub(crate) fn heading(&self, title: &str, subtitle: &str) -> Result<f32, ChartError> {
        self.area.fill(&WHITE).map_err(|e| self.err(e))?;
        let m = self.px(MARGIN);
        let max_w = (self.width - 2.0 * m).max(0.0);
        let mut y = m * 0.75;
        let (title, subtitle) = if title.trim().is_empty() {
            (subtitle, "")
        } else {
            (title, subtitle)
        };
        let t = text::clean(title);
        if !t.is_empty() {
            let size = self.px(TITLE_SIZE);
            let line = self.fit1(&t, size, true, max_w);
            y += Self::line_h(size) / 2.0;
            self.text(&line, m, y, size, true, INK, Align::Left)?;
            y += Self::line_h(size) / 2.0;
        }
        let st = text::clean(subtitle);
        if !st.is_empty() {
            let size = self.px(SUBTITLE_SIZE);
            let line = self.fit1(&st, size, false, max_w);
            y += Self::line_h(size) / 2.0 + self.px(2.0);
            self.text(&line, m, y, size, false, MUTED, Align::Left)?;
            y += Self::line_h(size) / 2.0;
        }
        Ok(y + self.px(28.0))
    }

    /// Draws footnote lines at the bottom left (each shortened to one line)
    /// and returns the y above which the chart content must stay.
    pub(crate) fn footnote(&self, notes: &[String]) -> Result<f32, ChartError> {
        let m = self.px(MARGIN);
        let size = self.px(FOOT_SIZE);
        let lh = Self::line_h(size);
        let max_w = (self.width - 2.0 * m).max(0.0);
        let mut y = self.height - m * 0.6 - lh * notes.len() as f32;
        let top = y;
        for n in notes {
            let line = self.fit1(&text::clean(n), size, false, max_w);
            self.text(&line, m, y + lh / 2.0, size, false, MUTED, Align::Left)?;
            y += lh;
        }
        if notes.is_empty() {
            Ok(self.height - m)
        } else {
            Ok(top - self.px(16.0))
        }
    }

    /// The y above which content must stay when `n` footnote lines are
    /// drawn (what [`Canvas::footnote`] returns, without drawing).
    pub(crate) fn footnote_top(&self, n: usize) -> f32 {
        if n == 0 {
            return self.height - self.margin();
        }
        let lh = Self::line_h(self.px(FOOT_SIZE));
        self.height - self.margin() * 0.6 - lh * n as f32 - self.px(16.0)
    }

    /// Margin (scaled).
    pub(crate) fn margin(&self) -> f32 {
        self.px(MARGIN)
    }
}
