//! Topic-by-topic cosine similarity as a heatmap.
//!
//! Viridis colours (sequential, perceptually uniform, colour-blind safe).
//! The diagonal (self-similarity, always 1) is drawn light grey and left out
//! of the colour range: otherwise it would claim the top of the scale and
//! squash the off-diagonal values that carry the information. The colour
//! range runs from min(0, smallest off-diagonal value) to the largest, and a
//! colour bar shows it. Rows are labelled with the (wrapped or shortened)
//! topic labels and their topic ids (the ids every CSV uses); columns with
//! the ids only, so the matrix can use the full height and no label is
//! rotated.
//! Values are printed in the cells when there are at most
//! [`MAX_PRINTED_K`] topics (beyond that the digits would be too small to
//! read on a projector).

use super::canvas::{Align, Canvas, Rect, LABEL_SIZE, MIN_LABEL_SIZE, TICK_SIZE};
use super::palette::{luminance, viridis, AXIS, INK, MUTED};
use super::text::{fmt_num, fmt_tick, nice_ticks, topic_label};
use super::{render, skipped, Chart, ChartError, ChartOutcome, ChartStyle};
use plotters::prelude::DrawingBackend;
use plotters::style::RGBColor;
use std::path::Path;

/// Largest number of topics for which cell values are printed.
pub const MAX_PRINTED_K: usize = 15;

/// Draws `topic_similarity.png` / `.svg` into `dir` from a `k x k` matrix
/// (`sim[i][j]` = similarity of topics `i` and `j`, labelled `labels[i]` with
/// topic id `ids[i]`). Errors when the matrix is not `k x k` or the ids are
/// not one per label; skipped when `k < 2`.
pub fn similarity_heatmap(
    dir: &Path,
    style: &ChartStyle,
    labels: &[String],
    ids: &[usize],
    sim: &[Vec<f64>],
) -> Result<ChartOutcome, ChartError> {
    let k = labels.len();
    if ids.len() != k {
        return Err(ChartError::MatrixRows {
            expected: k,
            found: ids.len(),
        });
    }
    if sim.len() != k {
        return Err(ChartError::MatrixRows {
            expected: k,
            found: sim.len(),
        });
    }
    if let Some((row, r)) = sim.iter().enumerate().find(|(_, r)| r.len() != k) {
        return Err(ChartError::MatrixColumns {
            row,
            expected: k,
            found: r.len(),
        });
    }
    if k < 2 {
        return skipped("fewer than 2 topics");
    }
    let labels = labels
        .iter()
        .zip(ids)
        .map(|(l, &id)| topic_label(l, id))
        .collect();
    render(
        dir,
        "topic_similarity",
        style,
        &HeatChart {
            title: style.title.clone(),
            labels,
            ids: ids.iter().map(|id| id.to_string()).collect(),
            sim,
        },
    )
}

struct HeatChart<'a> {
    title: String,
    labels: Vec<String>,
    /// Each row's topic id, as text.
    ids: Vec<String>,
    sim: &'a [Vec<f64>],
}

const DIAGONAL: RGBColor = RGBColor(0xEE, 0xEE, 0xEE);
const MISSING: RGBColor = RGBColor(0xFF, 0xFF, 0xFF);
const WHITE: RGBColor = RGBColor(255, 255, 255);

impl Chart for HeatChart<'_> {
    /// Heading and footnote, the colour scale from the off-diagonal values,
    /// the layout; then the cells (values printed for small k), a thin white
    /// grid, the row labels and column ids, and the colour bar.
    fn draw<DB: DrawingBackend>(&self, c: &mut Canvas<'_, DB>) -> Result<(), ChartError> {
        let top = c.heading(&self.title, "Cosine similarity between topics")?;
        let bottom = c.footnote(&[
            "Diagonal (self-similarity = 1) in grey; the colour scale spans the off-diagonal values."
                .to_string(),
        ])?;
        let scale = ColourScale::off_diagonal(self.sim);
        let lay = HeatLayout::new(c, self, &scale, top, bottom);
        self.draw_cells(c, &lay, &scale)?;
        lay.draw_cell_grid(c, self.labels.len())?;
        self.draw_labels(c, &lay)?;
        lay.draw_colour_bar(c, &scale)
    }
}

/// A colour range with the colour bar's ticks (also the per-class
/// heatmap's, `per_class.rs`).
pub(super) struct ColourScale {
    lo: f64,
    hi: f64,
    /// Tick values and their labels.
    ticks: Vec<f64>,
    pub(super) tick_labels: Vec<String>,
}

impl ColourScale {
    /// The range of the finite off-diagonal values of `sim`: from min(0,
    /// smallest) to the largest.
    fn off_diagonal(sim: &[Vec<f64>]) -> Self {
        let mut lo = 0.0f64;
        let mut hi = f64::NEG_INFINITY;
        for (i, row) in sim.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                if i != j && v.is_finite() {
                    lo = lo.min(*v);
                    hi = hi.max(*v);
                }
            }
        }
        Self::range(lo, hi)
    }

    /// The range `lo..=hi` (a unit range from `lo` when `hi <= lo`).
    pub(super) fn range(lo: f64, mut hi: f64) -> Self {
        if hi.is_nan() || hi <= lo {
            hi = lo + 1.0;
        }
        let (ticks, step) = nice_ticks(lo, hi, 5);
        let tick_labels = ticks.iter().map(|v| fmt_tick(*v, step)).collect();
        ColourScale {
            lo,
            hi,
            ticks,
            tick_labels,
        }
    }

    /// `v`'s place in the range, 0 at `lo` and 1 at `hi`.
    pub(super) fn norm(&self, v: f64) -> f64 {
        (v - self.lo) / (self.hi - self.lo)
    }
}

/// Where the heatmap's parts go. The matrix is square and as tall as the
/// content area allows. Rows carry the full (wrapped / shortened) labels
/// plus the topic id; columns carry only the id, which keeps the matrix
/// large and every label horizontal (rotated, shortened column labels are
/// hard to read on a projector). The colour bar is on the right, and the
/// block (labels + matrix + colour bar) is centred horizontally.
struct HeatLayout {
    /// Row label font size (up to ~26 px, at most 0.8 of a cell).
    font: f32,
    /// Space between labels, ids and the matrix.
    gap: f32,
    /// Left edge of the row labels, and their widest.
    labels_x: f32,
    row_label_w: f32,
    /// Lines a row label may wrap onto (2 when a cell is tall enough).
    label_lines: usize,
    /// Top-left corner of the matrix, its side and one cell's side.
    mx: f32,
    my: f32,
    side: f32,
    cell: f32,
    /// Tick label font size (colour bar ticks, cell values at most).
    tick_f: f32,
    /// Colour bar width.
    bar_w: f32,
}

impl HeatLayout {
    /// Sizes the row label font to the height a row gets, then fits the
    /// square matrix between the row labels and the colour bar.
    fn new<DB: DrawingBackend>(
        c: &Canvas<'_, DB>,
        chart: &HeatChart<'_>,
        scale: &ColourScale,
        top: f32,
        bottom: f32,
    ) -> Self {
        let k = chart.labels.len();
        let m = c.margin();
        let avail_h = bottom - top;
        let bar_w = c.px(28.0);
        let tick_f = c.px(TICK_SIZE);
        let tick_label_w = c.widest(tick_f, false, &scale.tick_labels);
        let bar_block = c.px(40.0) + bar_w + c.px(12.0) + tick_label_w;
        let gap = c.px(12.0);

        let col_num_h = Canvas::<DB>::line_h(tick_f) + gap;
        let side0 = (avail_h - col_num_h).max(1.0);
        let font =
            (side0 / k as f32 * 0.8).clamp(c.px(MIN_LABEL_SIZE) * 0.75, c.px(LABEL_SIZE * 0.87));
        let num_w = c.widest(font, true, &chart.ids);
        let widest = c.widest(font, false, &chart.labels);
        let row_label_w = widest.min((c.width - 2.0 * m) * 0.32);
        let left_w = row_label_w + gap + num_w + gap;
        let side = side0.min(c.width - 2.0 * m - left_w - bar_block).max(1.0);
        let cell = side / k as f32;
        let block_w = left_w + side + bar_block;
        let labels_x = m + ((c.width - 2.0 * m - block_w) / 2.0).max(0.0);
        HeatLayout {
            font,
            gap,
            labels_x,
            row_label_w,
            label_lines: if cell >= font * 2.6 { 2 } else { 1 },
            mx: labels_x + left_w,
            my: top,
            side,
            cell,
            tick_f,
            bar_w,
        }
    }

    /// Cell `(i, j)` of the matrix.
    fn cell_rect(&self, i: usize, j: usize) -> Rect {
        let (mx, my, cell) = (self.mx, self.my, self.cell);
        Rect::new(
            mx + j as f32 * cell,
            my + i as f32 * cell,
            mx + (j + 1) as f32 * cell,
            my + (i + 1) as f32 * cell,
        )
    }

    /// Thin white lines between the `k` x `k` cells, when cells are large
    /// enough to show them.
    fn draw_cell_grid<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        k: usize,
    ) -> Result<(), ChartError> {
        if self.cell < c.px(12.0) {
            return Ok(());
        }
        let (mx, my, side) = (self.mx, self.my, self.side);
        for i in 1..k {
            let o = i as f32 * self.cell;
            c.hline(mx, mx + side, my + o, WHITE, c.px(1.5))?;
            c.vline(mx + o, my, my + side, WHITE, c.px(1.5))?;
        }
        Ok(())
    }

    /// The colour bar right of the matrix, as tall as it: 64 steps of the
    /// scale, ticks and their labels on its right.
    fn draw_colour_bar<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        scale: &ColourScale,
    ) -> Result<(), ChartError> {
        let x = self.mx + self.side + c.px(40.0);
        colour_bar(c, scale, (x, self.my, self.bar_w, self.side), self.tick_f)
    }
}

/// A colour bar at `(x, y)`, `w` wide and `h` tall: 64 steps of the scale
/// (viridis), bottom to top, ticks and their labels (at `tick_f`) on its
/// right.
pub(super) fn colour_bar<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    scale: &ColourScale,
    (cbx, my, cb_w, cb_h): (f32, f32, f32, f32),
    tick_f: f32,
) -> Result<(), ChartError> {
    let steps = 64;
    for s in 0..steps {
        let t0 = s as f32 / steps as f32;
        let t1 = (s + 1) as f32 / steps as f32;
        let y0 = my + cb_h * (1.0 - t1);
        let y1 = my + cb_h * (1.0 - t0);
        let col = viridis((t0 as f64 + t1 as f64) / 2.0);
        c.fill_rect(Rect::new(cbx, y0.floor(), cbx + cb_w, y1.ceil()), col, 1.0)?;
    }
    for (v, l) in scale.ticks.iter().zip(&scale.tick_labels) {
        let y = my + cb_h * (1.0 - scale.norm(*v) as f32);
        c.hline(cbx + cb_w, cbx + cb_w + c.px(8.0), y, AXIS, c.px(2.0))?;
        c.text(
            l,
            cbx + cb_w + c.px(12.0),
            y,
            tick_f,
            false,
            MUTED,
            Align::Left,
        )?;
    }
    Ok(())
}

impl HeatChart<'_> {
    /// Every cell in its colour (the diagonal grey, missing values white),
    /// with its value printed when there are at most [`MAX_PRINTED_K`]
    /// topics, in ink that contrasts with the cell.
    fn draw_cells<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        lay: &HeatLayout,
        scale: &ColourScale,
    ) -> Result<(), ChartError> {
        let k = self.labels.len();
        for (i, row) in self.sim.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                let r = lay.cell_rect(i, j);
                let color = if i == j {
                    DIAGONAL
                } else if v.is_finite() {
                    viridis(scale.norm(*v))
                } else {
                    MISSING
                };
                c.fill_rect(r, color, 1.0)?;
                if k <= MAX_PRINTED_K && i != j {
                    let vf = (lay.cell / 2.9).min(c.px(TICK_SIZE));
                    let txt = fmt_num(*v, 2, false);
                    let ink = if luminance(color) > 0.4 { INK } else { WHITE };
                    c.text(
                        &txt,
                        (r.x0 + r.x1) / 2.0,
                        (r.y0 + r.y1) / 2.0,
                        vf,
                        false,
                        ink,
                        Align::Center,
                    )?;
                }
            }
        }
        Ok(())
    }

    /// Each row's id and label left of the matrix, and each column's id
    /// below it (shrunk to fit the cell width).
    fn draw_labels<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        lay: &HeatLayout,
    ) -> Result<(), ChartError> {
        let (mx, my, cell, gap, font) = (lay.mx, lay.my, lay.cell, lay.gap, lay.font);
        let digits = self
            .ids
            .iter()
            .map(|id| id.chars().count())
            .max()
            .unwrap_or(1) as f32;
        let num_f = font.min(cell / (0.7 * digits + 0.4));
        for (i, l) in self.labels.iter().enumerate() {
            let n = &self.ids[i];
            let y = my + (i as f32 + 0.5) * cell;
            c.text(n, mx - gap, y, font, true, MUTED, Align::Right)?;
            let lines = c.fit(l, font, false, lay.row_label_w, lay.label_lines);
            let right = lay.labels_x + lay.row_label_w;
            c.lines(&lines, right, y, font, false, INK, Align::Right)?;
            let x = mx + (i as f32 + 0.5) * cell;
            c.text(
                n,
                x,
                my + lay.side + gap + num_f * 0.6,
                num_f,
                true,
                MUTED,
                Align::Center,
            )?;
        }
        Ok(())
    }
}
