//! Trend movers: diverging horizontal bars around zero, rising topics
//! (positive change) on top pointing right, declining ones below pointing
//! left.
//!
//! One sorted list (largest rise first, largest decline last) keeps the
//! story top-to-bottom. Bars keep their topic colour (the same topic has the
//! same colour on every slide); direction is carried by position and by the
//! signed value printed at each bar end. The horizontal scale is solved so
//! that the longest bar on each side plus its value label exactly fits, and
//! the change measure (e.g. "change in share, percentage points") names the
//! x axis.

use super::axes::x_grid_line;
use super::canvas::{Align, Canvas, Rect, TICK_SIZE};
use super::palette::{topic_color, AXIS, INK};
use super::sizes::{row_layout, RowLayout};
use super::text::{clean, decimals_for, fmt_num, fmt_tick, nice_ticks, topic_label};
use super::{render, skipped, Chart, ChartError, ChartOutcome, ChartStyle};
use plotters::prelude::DrawingBackend;
use std::path::Path;

/// Smallest label font (at scale 1) for movers: a slide needs the strongest
/// movers legible more than it needs all of them, so rows that do not fit at
/// this size are left out (from the middle of the list).
const MOVERS_MIN_FONT: f32 = 20.0;

/// One topic's change.
#[derive(Clone, Debug, PartialEq)]
pub struct Mover {
    /// Topic id (selects the colour).
    pub topic_id: usize,
    /// Topic label.
    pub label: String,
    /// Signed change (positive = rising). Non-finite changes are left out
    /// with a warning.
    pub change: f64,
}

/// Draws `trend_movers.png` / `.svg` into `dir`; `measure` names the change
/// (x-axis title). Skipped when `movers` is empty or has no finite change.
pub fn movers(
    dir: &Path,
    style: &ChartStyle,
    movers: &[Mover],
    measure: &str,
) -> Result<ChartOutcome, ChartError> {
    if movers.is_empty() {
        return skipped("no rising or declining topics");
    }
    let mut rows: Vec<Mover> = movers
        .iter()
        .filter(|m| m.change.is_finite())
        .map(|m| Mover {
            topic_id: m.topic_id,
            label: topic_label(&m.label, m.topic_id),
            change: m.change,
        })
        .collect();
    if rows.is_empty() {
        return skipped("no finite change values");
    }
    let dropped = movers.len() - rows.len();
    rows.sort_by(|a, b| {
        b.change
            .total_cmp(&a.change)
            .then(a.topic_id.cmp(&b.topic_id))
    });
    render(
        dir,
        "trend_movers",
        style,
        &MoversChart {
            title: style.title.clone(),
            measure: clean(measure),
            rows,
            dropped,
        },
    )
}

struct MoversChart {
    title: String,
    measure: String,
    rows: Vec<Mover>,
    dropped: usize,
}

impl Chart for MoversChart {
    /// Heading, the rows that fit (the strongest at both ends) with a
    /// footnote when some are left out, the horizontal scale; then the x
    /// grid and ticks, the axis title, one bar per row and the zero line.
    fn draw<DB: DrawingBackend>(&self, c: &mut Canvas<'_, DB>) -> Result<(), ChartError> {
        if self.dropped > 0 {
            c.warn(format!(
                "trend_movers: {} topic(s) with a non-finite change were left out",
                self.dropped
            ));
        }
        let top = c.heading(&self.title, "Rising and declining topics")?;
        let m = c.margin();
        let f = c.px(TICK_SIZE);
        // Bottom: tick labels + axis title.
        let axis_block = f * 1.2 + c.px(12.0) + f * 1.3;
        let (shown, notes) = self.rows_that_fit(c, top, axis_block);
        let bottom = c.footnote(&notes)?;
        let area = Rect::new(m, top, c.width - m, bottom - axis_block);
        let rows = row_layout(c, area.h(), shown.len(), MOVERS_MIN_FONT);
        let shown = &shown[..rows.shown.min(shown.len())];
        let lay = MoversLayout::new(c, shown, area, rows);
        lay.draw_x_grid(c, shown.len())?;
        let line = c.fit1(&self.measure, f, false, lay.plot.w());
        c.text(
            &line,
            (lay.plot.x0 + lay.plot.x1) / 2.0,
            bottom - f * 0.6,
            f,
            false,
            INK,
            Align::Center,
        )?;
        lay.draw_bars(c, shown)?;
        c.vline(
            lay.x_zero,
            area.y0,
            lay.grid_bottom(shown.len()),
            AXIS,
            c.px(2.5),
        )
    }
}

impl MoversChart {
    /// The rows to draw: all when they fit at the smallest font with a
    /// one-line footnote reserved; else the strongest rises and declines (as
    /// many as fit, half from each end) and the footnote that says so.
    fn rows_that_fit<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        top: f32,
        axis_block: f32,
    ) -> (Vec<&Mover>, Vec<String>) {
        let probe = row_layout(
            c,
            c.footnote_top(1) - top - axis_block,
            self.rows.len(),
            MOVERS_MIN_FONT,
        );
        if probe.shown >= self.rows.len() {
            return (self.rows.iter().collect(), Vec::new());
        }
        // Keep the strongest movers at both ends.
        let up = probe.shown.div_ceil(2);
        let down = probe.shown - up;
        let n = self.rows.len();
        let shown = self.rows[..up]
            .iter()
            .chain(self.rows[n - down..].iter())
            .collect();
        let note = format!(
            "Showing the {up} strongest rises and {down} strongest declines of {n} topics."
        );
        (shown, vec![note])
    }
}

/// Where the diverging bars go: the labels on the left, the plot on the
/// right with the zero line placed so that the longest bar on each side plus
/// its value label exactly fits.
struct MoversLayout {
    /// The labels and the plot.
    area: Rect,
    /// Row heights, label font and bar thickness.
    rows: RowLayout,
    /// Space between label, plot and value labels.
    gap: f32,
    /// Widest a label may be.
    label_w: f32,
    /// The bars' area, right of the labels.
    plot: Rect,
    /// Each row's signed value label, and their font size.
    values: Vec<String>,
    value_f: f32,
    /// x of zero, and pixels per unit of change (0 when every change is 0).
    x_zero: f32,
    k: f64,
    /// The largest rise and the largest decline (both >= 0).
    max_pos: f64,
    max_neg: f64,
}

impl MoversLayout {
    /// Measures the labels and the value labels of `shown` and solves the
    /// horizontal scale.
    fn new<DB: DrawingBackend>(
        c: &Canvas<'_, DB>,
        shown: &[&Mover],
        area: Rect,
        rows: RowLayout,
    ) -> Self {
        let font = rows.font;
        let gap = c.px(14.0);
        let max_pos = shown.iter().map(|r| r.change).fold(0.0f64, f64::max);
        let max_neg = shown.iter().map(|r| -r.change).fold(0.0f64, f64::max);
        let decimals = decimals_for(max_pos.max(max_neg), 1);
        let values: Vec<String> = shown
            .iter()
            .map(|r| fmt_num(r.change, decimals, true))
            .collect();
        let value_f = font * 0.93;
        let value_w = |neg: bool| {
            let side = shown.iter().zip(&values);
            c.widest(
                value_f,
                false,
                side.filter(|(r, _)| (r.change < 0.0) == neg)
                    .map(|(_, v)| v),
            )
        };
        let (vw_pos, vw_neg) = (value_w(false), value_w(true));
        let widest_label = c.widest(font, false, shown.iter().map(|r| &r.label));
        let label_w = widest_label.min(area.w() * 0.32);
        let plot = Rect::new(area.x0 + label_w + gap * 2.0, area.y0, area.x1, area.y1);
        let side = |has: bool, w: f32| if has { w + gap } else { 0.0 };
        let room =
            plot.w() - side(max_pos > 0.0 || max_neg == 0.0, vw_pos) - side(max_neg > 0.0, vw_neg);
        let span = max_pos + max_neg;
        let k = if span > 0.0 {
            room.max(0.0) as f64 / span
        } else {
            0.0
        };
        let x_zero = plot.x0 + side(max_neg > 0.0, vw_neg) + (max_neg * k) as f32;
        MoversLayout {
            area,
            rows,
            gap,
            label_w,
            plot,
            values,
            value_f,
            x_zero,
            k,
            max_pos,
            max_neg,
        }
    }

    /// x of a change `v`.
    fn x(&self, v: f64) -> f32 {
        self.x_zero + (v * self.k) as f32
    }

    /// Bottom of `n` rows: where the grid lines end.
    fn grid_bottom(&self, n: usize) -> f32 {
        self.area.y0 + self.rows.row_h * n as f32
    }

    /// Vertical grid lines down `n` rows at round changes within the drawn
    /// range, labelled below ("+1.5", "0", "−0.5").
    fn draw_x_grid<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        n: usize,
    ) -> Result<(), ChartError> {
        let (plot, k) = (self.plot, self.k);
        let f = c.px(TICK_SIZE);
        let grid_bottom = self.grid_bottom(n);
        if k > 0.0 {
            let lo_v = ((plot.x0 - self.x_zero) as f64) / k;
            let hi_v = ((plot.x1 - self.x_zero) as f64) / k;
            let (ticks, step) = nice_ticks(lo_v.max(-self.max_neg), hi_v.min(self.max_pos), 6);
            for t in ticks {
                let l = if t == 0.0 {
                    "0".to_string()
                } else if t > 0.0 {
                    format!("+{}", fmt_tick(t, step))
                } else {
                    fmt_tick(t, step)
                };
                x_grid_line(c, self.x(t), self.area.y0, grid_bottom, &l, f)?;
            }
        }
        Ok(())
    }

    /// Each row's label (right-aligned, wrapped to fit), its bar from zero in
    /// the topic's colour, and its signed value at the bar's end.
    fn draw_bars<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        shown: &[&Mover],
    ) -> Result<(), ChartError> {
        let (area, lay, font, gap) = (self.area, &self.rows, self.rows.font, self.gap);
        for (i, (r, v)) in shown.iter().zip(&self.values).enumerate() {
            let yc = area.y0 + (i as f32 + 0.5) * lay.row_h;
            let lines = c.fit(&r.label, font, false, self.label_w, lay.max_lines);
            let right = area.x0 + self.label_w;
            c.lines(&lines, right, yc, font, false, INK, Align::Right)?;
            let x1 = self.x(r.change);
            c.fill_rect(
                Rect::new(self.x_zero, yc - lay.bar_h / 2.0, x1, yc + lay.bar_h / 2.0),
                topic_color(r.topic_id),
                1.0,
            )?;
            let vf = self.value_f;
            if r.change < 0.0 {
                c.text(v, x1 - gap * 0.6, yc, vf, false, INK, Align::Right)?;
            } else {
                c.text(v, x1 + gap * 0.6, yc, vf, false, INK, Align::Left)?;
            }
        }
        Ok(())
    }
}
