//! Topic share over time: one line per topic (plus a grey "other" line),
//! labelled directly at the line ends.
//!
//! Lines rather than stacked areas because the audience reads the trend of
//! each topic, which a stacked area hides for every band but the bottom
//! one. Direct labels instead of a legend: no eye travel, and no legend box
//! covering data. Labels sit right of the plot at the height of their line's
//! last value and are pushed apart (a deterministic 1-D pass down, then up)
//! so they never overlap; a thin leader joins a moved label to its line.
//! Periods sit at their place in time (`positions`: a year is 1.0), so 2018,
//! 2022, 2023 are not spaced evenly; a gap longer than the usual step between
//! periods is shaded and named in a footnote, so a line across it is not
//! read as data. Period labels on the x axis are thinned from the right when
//! they would collide.

use super::canvas::{Align, Canvas, Rect, LABEL_SIZE, MIN_LABEL_SIZE, TICK_SIZE};
use super::palette::{topic_color, AXIS, GRID, INK, MUTED};
use super::text::{clean, fmt_tick, nice_ceiling, nice_ticks, topic_label};
use super::{render, skipped, Chart, ChartError, ChartOutcome, ChartStyle};
use plotters::prelude::DrawingBackend;
use std::path::Path;

/// One line of the chart.
#[derive(Clone, Debug, PartialEq)]
pub struct TopicSeries {
    /// Topic id (selects the colour); `usize::MAX` marks the grey "other"
    /// series, drawn first (underneath) and thinner.
    pub topic_id: usize,
    /// Label drawn at the line's end.
    pub label: String,
    /// Share of the period's documents, in [0, 1], one value per period.
    /// Non-finite values leave a gap.
    pub values: Vec<f64>,
}

/// Draws `topic_share_over_time.png` / `.svg` into `dir`. `positions[i]` is
/// period `i`'s place on the time axis (ascending; batches: 0, 1, 2, ...).
/// Errors when a series or the positions do not have one value per period;
/// skipped when there are fewer than 2 periods or no series.
pub fn topic_share_over_time(
    dir: &Path,
    style: &ChartStyle,
    periods: &[String],
    positions: &[f64],
    series: &[TopicSeries],
) -> Result<ChartOutcome, ChartError> {
    if positions.len() != periods.len() {
        return Err(ChartError::SeriesLength {
            label: "period positions".into(),
            expected: periods.len(),
            found: positions.len(),
        });
    }
    for s in series {
        if s.values.len() != periods.len() {
            return Err(ChartError::SeriesLength {
                label: s.label.clone(),
                expected: periods.len(),
                found: s.values.len(),
            });
        }
    }
    if periods.len() < 2 {
        return skipped("fewer than 2 periods");
    }
    if series.is_empty() {
        return skipped("no series to show");
    }
    if series
        .iter()
        .all(|s| s.values.iter().all(|v| !v.is_finite()))
    {
        return skipped("no finite shares to show");
    }
    // "other" first so topic lines are drawn on top of it.
    let mut lines: Vec<TopicSeries> = series
        .iter()
        .map(|s| TopicSeries {
            topic_id: s.topic_id,
            label: topic_label(&s.label, s.topic_id),
            values: s.values.clone(),
        })
        .collect();
    lines.sort_by_key(|s| s.topic_id != usize::MAX);
    render(
        dir,
        "topic_share_over_time",
        style,
        &TimeChart {
            title: style.title.clone(),
            periods: periods.iter().map(|p| clean(p)).collect(),
            positions: positions.to_vec(),
            lines,
        },
    )
}

struct TimeChart {
    title: String,
    periods: Vec<String>,
    positions: Vec<f64>,
    lines: Vec<TopicSeries>,
}

/// The gaps in time: `(i, i + 1)` where the step from period `i` to the next is more than
/// 1.5 times the smallest step (2018 -> 2022 among yearly periods).
pub(crate) fn gaps(positions: &[f64]) -> Vec<usize> {
    let steps: Vec<f64> = positions.windows(2).map(|w| w[1] - w[0]).collect();
    let Some(unit) = steps
        .iter()
        .copied()
        .filter(|d| *d > 0.0 && d.is_finite())
        .min_by(f64::total_cmp)
    else {
        return Vec::new();
    };
    steps
        .iter()
        .enumerate()
        .filter(|(_, d)| **d > 1.5 * unit)
        .map(|(i, _)| i)
        .collect()
}

/// Spreads label centres `want` (sorted ascending) so neighbours are at
/// least `h` apart within `[lo, hi]`, moving them as little as a forward
/// and a backward pass allow. Deterministic.
pub(crate) fn spread(want: &[f32], h: f32, lo: f32, hi: f32) -> Vec<f32> {
    let mut y: Vec<f32> = want.iter().map(|v| v.clamp(lo, hi.max(lo))).collect();
    for i in 1..y.len() {
        if y[i] < y[i - 1] + h {
            y[i] = y[i - 1] + h;
        }
    }
    if let Some(last) = y.last_mut() {
        if *last > hi {
            *last = hi;
        }
    }
    for i in (0..y.len().saturating_sub(1)).rev() {
        if y[i] > y[i + 1] - h {
            y[i] = y[i + 1] - h;
        }
    }
    y
}

impl Chart for TimeChart {
    fn draw<DB: DrawingBackend>(&self, c: &mut Canvas<'_, DB>) -> Result<(), ChartError> {
        let top = c.heading(&self.title, "Share of documents per period")?;
        let has_other = self.lines.iter().any(|l| l.topic_id == usize::MAX);
        let mut notes = if has_other {
            vec!["Grey line: all other topics combined.".to_string()]
        } else {
            Vec::new()
        };
        let gaps = gaps(&self.positions);
        if !gaps.is_empty() {
            let spans: Vec<String> = gaps
                .iter()
                .map(|&i| format!("{} to {}", self.periods[i], self.periods[i + 1]))
                .collect();
            notes.push(format!(
                "Shaded: a gap in time without documents ({}).",
                spans.join(", ")
            ));
        }
        let bottom = c.footnote(&notes)?;
        let m = c.margin();
        let f = c.px(TICK_SIZE);
        let n = self.periods.len();

        // y axis in percent, from 0.
        let vmax = self
            .lines
            .iter()
            .flat_map(|l| l.values.iter())
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        let yhi = nice_ceiling(vmax * 100.0, 5);
        let (yt, ystep) = nice_ticks(0.0, yhi, 5);
        let ylabels: Vec<String> = yt
            .iter()
            .map(|v| format!("{}%", fmt_tick(*v, ystep)))
            .collect();
        let ylab_w = ylabels
            .iter()
            .map(|l| c.measure(f, false, l))
            .fold(0.0f32, f32::max);

        // Direct-label column on the right.
        let k = self.lines.len();
        let plot_top = top + f * 0.5;
        let plot_bottom = bottom - f * 1.2 - c.px(14.0);
        let avail_h = (plot_bottom - plot_top).max(1.0);
        let label_f = (avail_h / (k as f32 * 1.15))
            .min(c.px(LABEL_SIZE * 0.9))
            .max(c.px(MIN_LABEL_SIZE) * 0.75);
        let label_h = label_f * 1.15;
        let widest = self
            .lines
            .iter()
            .map(|l| c.measure(label_f, false, &l.label))
            .fold(0.0f32, f32::max);
        let label_w = widest.min((c.width - 2.0 * m) * 0.26);
        let leader = c.px(30.0);
        let plot = Rect::new(
            m + ylab_w + c.px(14.0),
            plot_top,
            c.width - m - label_w - leader - c.px(8.0),
            plot_bottom,
        );

        let (t0, t1) = (self.positions[0], self.positions[n - 1]);
        let span = if t1 > t0 { t1 - t0 } else { 1.0 };
        let px = |i: usize| {
            let pad = plot.w() * 0.02;
            plot.x0 + pad + (plot.w() - 2.0 * pad) * ((self.positions[i] - t0) / span) as f32
        };
        for &i in &gaps {
            let band = Rect::new(px(i) + c.px(6.0), plot.y0, px(i + 1) - c.px(6.0), plot.y1);
            c.fill_rect(band, GRID, 0.6)?;
        }
        let py = |v: f64| plot.y1 - ((v * 100.0) / yhi) as f32 * plot.h();

        for (v, l) in yt.iter().zip(&ylabels) {
            let y = plot.y1 - (*v / yhi) as f32 * plot.h();
            c.hline(plot.x0, plot.x1, y, GRID, c.px(1.5))?;
            c.text(l, plot.x0 - c.px(14.0), y, f, false, MUTED, Align::Right)?;
        }
        c.hline(plot.x0, plot.x1, plot.y1, AXIS, c.px(2.0))?;

        // Period labels, thinned from the right so the last is always shown: a label is drawn
        // when it clears the last one drawn to its right.
        let pw = self
            .periods
            .iter()
            .map(|p| c.measure(f, false, p))
            .fold(0.0f32, f32::max)
            + c.px(20.0);
        let max_label = (pw - c.px(20.0)).max(0.0);
        let mut right_edge = f32::INFINITY;
        for (i, p) in self.periods.iter().enumerate().rev() {
            let x = px(i);
            if x + pw / 2.0 > right_edge {
                continue;
            }
            right_edge = x - pw / 2.0;
            c.vline(x, plot.y1, plot.y1 + c.px(8.0), AXIS, c.px(2.0))?;
            let line = c.fit1(p, f, false, max_label);
            c.text(
                &line,
                x,
                plot.y1 + c.px(8.0) + f * 0.7,
                f,
                false,
                MUTED,
                Align::Center,
            )?;
        }

        // Lines and markers.
        let mut ends: Vec<(f32, f32, usize)> = Vec::new(); // (y, x, line index)
        for (li, l) in self.lines.iter().enumerate() {
            let color = topic_color(l.topic_id);
            let width = if l.topic_id == usize::MAX {
                c.px(3.0)
            } else {
                c.px(4.5)
            };
            let mut seg: Vec<(f32, f32)> = Vec::new();
            for (i, v) in l.values.iter().enumerate() {
                if v.is_finite() {
                    seg.push((px(i), py(*v)));
                } else {
                    c.polyline(&seg, color, width)?;
                    seg.clear();
                }
            }
            c.polyline(&seg, color, width)?;
            for (i, v) in l.values.iter().enumerate() {
                if v.is_finite() {
                    c.marker(px(i), py(*v), c.px(5.0), color)?;
                }
            }
            if let Some((i, v)) = l
                .values
                .iter()
                .enumerate()
                .rev()
                .find(|(_, v)| v.is_finite())
            {
                ends.push((py(*v), px(i), li));
            }
        }

        // Direct labels.
        ends.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
        let want: Vec<f32> = ends.iter().map(|e| e.0).collect();
        let ys = spread(&want, label_h, plot.y0 + label_h / 2.0, plot.y1);
        let lx = plot.x1 + leader;
        for ((y_line, x_end, li), y) in ends.iter().zip(ys) {
            let l = &self.lines[*li];
            let color = topic_color(l.topic_id);
            c.polyline(
                &[(*x_end + c.px(8.0), *y_line), (lx - c.px(6.0), y)],
                color,
                c.px(2.0),
            )?;
            let line = c.fit1(&l.label, label_f, false, label_w);
            c.text(&line, lx, y, label_f, false, INK, Align::Left)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{gaps, spread};
    use approx::assert_abs_diff_eq;

    #[test]
    fn gaps_are_steps_longer_than_the_usual_one() {
        assert_eq!(gaps(&[2016.0, 2017.0, 2018.0, 2022.0, 2023.0]), [2]);
        assert!(gaps(&[0.0, 1.0, 2.0]).is_empty());
        assert_eq!(gaps(&[2025.0, 2025.25, 2025.75]), [1], "a missing quarter");
        assert!(gaps(&[2020.0]).is_empty());
    }

    #[test]
    fn spread_separates_and_keeps_order() {
        // Three labels wanting the same spot, height 10, room [0, 100]:
        // forward pass gives 50, 60, 70.
        let y = spread(&[50.0, 50.0, 50.0], 10.0, 0.0, 100.0);
        assert_abs_diff_eq!(y[0], 50.0);
        assert_abs_diff_eq!(y[1], 60.0);
        assert_abs_diff_eq!(y[2], 70.0);
        // Near the bottom edge the backward pass pushes them up: 80, 90, 100.
        let y = spread(&[99.0, 99.0, 99.0], 10.0, 0.0, 100.0);
        assert_abs_diff_eq!(y[0], 80.0);
        assert_abs_diff_eq!(y[1], 90.0);
        assert_abs_diff_eq!(y[2], 100.0);
        // Already apart: unchanged.
        let y = spread(&[10.0, 40.0], 10.0, 0.0, 100.0);
        assert_abs_diff_eq!(y[0], 10.0);
        assert_abs_diff_eq!(y[1], 40.0);
    }
}
