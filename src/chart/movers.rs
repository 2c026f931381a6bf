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

use super::canvas::{Align, Canvas, Rect, TICK_SIZE};
use super::palette::{topic_color, AXIS, GRID, INK, MUTED};
use super::sizes::row_layout;
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
        let probe = row_layout(
            c,
            c.footnote_top(1) - top - axis_block,
            self.rows.len(),
            MOVERS_MIN_FONT,
        );
        let mut notes = Vec::new();
        let mut shown: Vec<&Mover> = self.rows.iter().collect();
        if probe.shown < self.rows.len() {
            // Keep the strongest movers at both ends.
            let up = probe.shown.div_ceil(2);
            let down = probe.shown - up;
            let n = self.rows.len();
            shown = self.rows[..up]
                .iter()
                .chain(self.rows[n - down..].iter())
                .collect();
            notes.push(format!(
                "Showing the {up} strongest rises and {down} strongest declines of {n} topics."
            ));
        }
        let bottom = c.footnote(&notes)?;
        let area = Rect::new(m, top, c.width - m, bottom - axis_block);
        let lay = row_layout(c, area.h(), shown.len(), MOVERS_MIN_FONT);
        let shown = &shown[..lay.shown.min(shown.len())];
        let font = lay.font;
        let gap = c.px(14.0);

        let max_pos = shown.iter().map(|r| r.change).fold(0.0f64, f64::max);
        let max_neg = shown.iter().map(|r| -r.change).fold(0.0f64, f64::max);
        let decimals = decimals_for(max_pos.max(max_neg), 1);
        let vals: Vec<String> = shown
            .iter()
            .map(|r| fmt_num(r.change, decimals, true))
            .collect();
        let val_f = font * 0.93;
        let val_w = |neg: bool| {
            shown
                .iter()
                .zip(&vals)
                .filter(|(r, _)| (r.change < 0.0) == neg)
                .map(|(_, v)| c.measure(val_f, false, v))
                .fold(0.0f32, f32::max)
        };
        let (vw_pos, vw_neg) = (val_w(false), val_w(true));

        let widest_label = shown
            .iter()
            .map(|r| c.measure(font, false, &r.label))
            .fold(0.0f32, f32::max);
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
        let px = |v: f64| x_zero + (v * k) as f32;

        // x grid and ticks over the drawn value range.
        let (lo_v, hi_v) = if k > 0.0 {
            (
                ((plot.x0 - x_zero) as f64) / k,
                ((plot.x1 - x_zero) as f64) / k,
            )
        } else {
            (-1.0, 1.0)
        };
        let grid_bottom = area.y0 + lay.row_h * shown.len() as f32;
        if k > 0.0 {
            let (ticks, step) = nice_ticks(lo_v.max(-max_neg), hi_v.min(max_pos), 6);
            for t in ticks {
                let x = px(t);
                c.vline(x, area.y0, grid_bottom, GRID, c.px(1.5))?;
                let l = if t == 0.0 {
                    "0".to_string()
                } else if t > 0.0 {
                    format!("+{}", fmt_tick(t, step))
                } else {
                    fmt_tick(t, step)
                };
                c.text(
                    &l,
                    x,
                    grid_bottom + c.px(8.0) + f * 0.6,
                    f,
                    false,
                    MUTED,
                    Align::Center,
                )?;
            }
        }
        let line = c.fit1(&self.measure, f, false, plot.w());
        c.text(
            &line,
            (plot.x0 + plot.x1) / 2.0,
            bottom - f * 0.6,
            f,
            false,
            INK,
            Align::Center,
        )?;

        for (i, (r, v)) in shown.iter().zip(&vals).enumerate() {
            let yc = area.y0 + (i as f32 + 0.5) * lay.row_h;
            let lines = c.fit(&r.label, font, false, label_w, lay.max_lines);
            c.lines(
                &lines,
                area.x0 + label_w,
                yc,
                font,
                false,
                INK,
                Align::Right,
            )?;
            let x1 = px(r.change);
            c.fill_rect(
                Rect::new(x_zero, yc - lay.bar_h / 2.0, x1, yc + lay.bar_h / 2.0),
                topic_color(r.topic_id),
                1.0,
            )?;
            if r.change < 0.0 {
                c.text(v, x1 - gap * 0.6, yc, val_f, false, INK, Align::Right)?;
            } else {
                c.text(v, x1 + gap * 0.6, yc, val_f, false, INK, Align::Left)?;
            }
        }
        c.vline(x_zero, area.y0, grid_bottom, AXIS, c.px(2.5))
    }
}
