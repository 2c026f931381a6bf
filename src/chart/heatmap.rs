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

impl Chart for HeatChart<'_> {
    fn draw<DB: DrawingBackend>(&self, c: &mut Canvas<'_, DB>) -> Result<(), ChartError> {
        let top = c.heading(&self.title, "Cosine similarity between topics")?;
        let bottom = c.footnote(&[
            "Diagonal (self-similarity = 1) in grey; the colour scale spans the off-diagonal values."
                .to_string(),
        ])?;
        let k = self.labels.len();
        let m = c.margin();

        // Colour range from the off-diagonal finite values.
        let mut lo = 0.0f64;
        let mut hi = f64::NEG_INFINITY;
        for (i, row) in self.sim.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                if i != j && v.is_finite() {
                    lo = lo.min(*v);
                    hi = hi.max(*v);
                }
            }
        }
        if hi <= lo {
            hi = lo + 1.0;
        }
        let norm = |v: f64| (v - lo) / (hi - lo);

        // Geometry: the matrix is square and as tall as the content area
        // allows. Rows carry the full (wrapped / shortened) labels plus a
        // position number; columns carry only the number, which keeps the
        // matrix large and every label horizontal (rotated, shortened column
        // labels are hard to read on a projector). Colour bar on the right.
        let avail_h = bottom - top;
        let cb_w = c.px(28.0);
        let f_tick = c.px(TICK_SIZE);
        let (cticks, cstep) = nice_ticks(lo, hi, 5);
        let ctick_labels: Vec<String> = cticks.iter().map(|v| fmt_tick(*v, cstep)).collect();
        let cb_label_w = ctick_labels
            .iter()
            .map(|l| c.measure(f_tick, false, l))
            .fold(0.0f32, f32::max);
        let cb_block = c.px(40.0) + cb_w + c.px(12.0) + cb_label_w;
        let gap = c.px(12.0);

        let col_num_h = Canvas::<DB>::line_h(f_tick) + gap;
        let side0 = (avail_h - col_num_h).max(1.0);
        // Label font: up to ~26 px, at most 0.8 of a cell.
        let font =
            (side0 / k as f32 * 0.8).clamp(c.px(MIN_LABEL_SIZE) * 0.75, c.px(LABEL_SIZE * 0.87));
        let num_w = self
            .ids
            .iter()
            .map(|id| c.measure(font, true, id))
            .fold(0.0f32, f32::max);
        let widest = self
            .labels
            .iter()
            .map(|l| c.measure(font, false, l))
            .fold(0.0f32, f32::max);
        let row_label_w = widest.min((c.width - 2.0 * m) * 0.32);
        let left_w = row_label_w + gap + num_w + gap;
        let side = side0.min(c.width - 2.0 * m - left_w - cb_block).max(1.0);
        let cell = side / k as f32;
        // The block (labels + matrix + colour bar) is centred horizontally.
        let block_w = left_w + side + cb_block;
        let bx = m + ((c.width - 2.0 * m - block_w) / 2.0).max(0.0);
        let mx = bx + left_w;
        let my = top;
        let lines_fit = if cell >= font * 2.6 { 2 } else { 1 };

        for (i, row) in self.sim.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                let r = Rect::new(
                    mx + j as f32 * cell,
                    my + i as f32 * cell,
                    mx + (j + 1) as f32 * cell,
                    my + (i + 1) as f32 * cell,
                );
                let color = if i == j {
                    DIAGONAL
                } else if v.is_finite() {
                    viridis(norm(*v))
                } else {
                    MISSING
                };
                c.fill_rect(r, color, 1.0)?;
                if k <= MAX_PRINTED_K && i != j {
                    let vf = (cell / 2.9).min(c.px(TICK_SIZE));
                    let txt = fmt_num(*v, 2, false);
                    let ink = if luminance(color) > 0.4 {
                        INK
                    } else {
                        RGBColor(255, 255, 255)
                    };
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
        // Thin white grid between cells for k small enough to see it.
        if cell >= c.px(12.0) {
            for i in 1..k {
                let o = i as f32 * cell;
                c.hline(mx, mx + side, my + o, RGBColor(255, 255, 255), c.px(1.5))?;
                c.vline(mx + o, my, my + side, RGBColor(255, 255, 255), c.px(1.5))?;
            }
        }

        // Column ids: shrink to fit the cell width.
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
            let lines = c.fit(l, font, false, row_label_w, lines_fit);
            c.lines(&lines, bx + row_label_w, y, font, false, INK, Align::Right)?;
            let x = mx + (i as f32 + 0.5) * cell;
            c.text(
                n,
                x,
                my + side + gap + num_f * 0.6,
                num_f,
                true,
                MUTED,
                Align::Center,
            )?;
        }

        // Colour bar.
        let cbx = mx + side + c.px(40.0);
        let steps = 64;
        let cb_h = side;
        for s in 0..steps {
            let t0 = s as f32 / steps as f32;
            let t1 = (s + 1) as f32 / steps as f32;
            let y0 = my + cb_h * (1.0 - t1);
            let y1 = my + cb_h * (1.0 - t0);
            let col = viridis((t0 as f64 + t1 as f64) / 2.0);
            c.fill_rect(Rect::new(cbx, y0.floor(), cbx + cb_w, y1.ceil()), col, 1.0)?;
        }
        for (v, l) in cticks.iter().zip(&ctick_labels) {
            let y = my + cb_h * (1.0 - norm(*v) as f32);
            c.hline(cbx + cb_w, cbx + cb_w + c.px(8.0), y, AXIS, c.px(2.0))?;
            c.text(
                l,
                cbx + cb_w + c.px(12.0),
                y,
                f_tick,
                false,
                MUTED,
                Align::Left,
            )?;
        }
        Ok(())
    }
}
