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

use super::axes::{broken_line, x_tick, y_grid};
use super::canvas::{Align, Canvas, Rect, LABEL_SIZE, MIN_LABEL_SIZE, TICK_SIZE};
use super::palette::{topic_color, GRID, INK};
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
    /// Heading and footnotes, then the layout; the gaps in time shaded, the
    /// y grid in percent, the period labels, one line per series, and the
    /// direct labels at the line ends.
    fn draw<DB: DrawingBackend>(&self, c: &mut Canvas<'_, DB>) -> Result<(), ChartError> {
        let top = c.heading(&self.title, "Share of documents per period")?;
        let gaps = gaps(&self.positions);
        let bottom = c.footnote(&self.notes(&gaps))?;
        let lay = TimelineLayout::new(c, self, top, bottom);
        self.shade_gaps(c, &lay, &gaps)?;
        let y_ticks = lay
            .y_ticks
            .iter()
            .map(|(v, l)| (lay.y_tick(*v), l.as_str()));
        y_grid(c, lay.plot, y_ticks, lay.tick_f)?;
        self.draw_period_labels(c, &lay)?;
        let ends = self.draw_lines(c, &lay)?;
        self.draw_direct_labels(c, &lay, ends)
    }
}

/// Where the timeline's parts go, computed from the measured text.
struct TimelineLayout {
    /// The lines and the grid.
    plot: Rect,
    /// Tick label font size.
    tick_f: f32,
    /// Top of the y axis, in percent (the axis starts at 0).
    yhi: f64,
    /// The y ticks, in percent, with their labels ("20%").
    y_ticks: Vec<(f64, String)>,
    /// Direct-label font size.
    label_f: f32,
    /// Height one direct label needs.
    label_h: f32,
    /// Widest a direct label may be.
    label_w: f32,
    /// Left edge of the direct labels (right of the plot, past the leaders).
    label_x: f32,
    /// The first period's position on the time axis.
    t0: f64,
    /// The time the x axis spans (1 when all periods share a position).
    span: f64,
}

impl TimelineLayout {
    /// The y axis from 0 to a round percentage above the largest share, the
    /// direct-label column as wide as the widest label allows (at most 26%
    /// of the canvas), and the plot between the y tick labels and that
    /// column.
    fn new<DB: DrawingBackend>(
        c: &Canvas<'_, DB>,
        chart: &TimeChart,
        top: f32,
        bottom: f32,
    ) -> Self {
        let m = c.margin();
        let f = c.px(TICK_SIZE);
        let (yhi, y_ticks) = percent_axis(&chart.lines);
        let ylab_w = c.widest(f, false, y_ticks.iter().map(|t| &t.1));

        // Direct-label column on the right.
        let k = chart.lines.len();
        let plot_top = top + f * 0.5;
        let plot_bottom = bottom - f * 1.2 - c.px(14.0);
        let avail_h = (plot_bottom - plot_top).max(1.0);
        let label_f = (avail_h / (k as f32 * 1.15))
            .min(c.px(LABEL_SIZE * 0.9))
            .max(c.px(MIN_LABEL_SIZE) * 0.75);
        let widest = c.widest(label_f, false, chart.lines.iter().map(|l| &l.label));
        let label_w = widest.min((c.width - 2.0 * m) * 0.26);
        let leader = c.px(30.0);
        let plot = Rect::new(
            m + ylab_w + c.px(14.0),
            plot_top,
            c.width - m - label_w - leader - c.px(8.0),
            plot_bottom,
        );
        let n = chart.positions.len();
        let (t0, t1) = (chart.positions[0], chart.positions[n - 1]);
        TimelineLayout {
            plot,
            tick_f: f,
            yhi,
            y_ticks,
            label_f,
            label_h: label_f * 1.15,
            label_w,
            label_x: plot.x1 + leader,
            t0,
            span: if t1 > t0 { t1 - t0 } else { 1.0 },
        }
    }

    /// x of a period at position `t` on the time axis (2% padding each side).
    fn x(&self, t: f64) -> f32 {
        let plot = self.plot;
        let pad = plot.w() * 0.02;
        plot.x0 + pad + (plot.w() - 2.0 * pad) * ((t - self.t0) / self.span) as f32
    }

    /// y of a share in [0, 1].
    fn y_share(&self, v: f64) -> f32 {
        self.plot.y1 - ((v * 100.0) / self.yhi) as f32 * self.plot.h()
    }

    /// y of a tick at `v` percent.
    fn y_tick(&self, v: f64) -> f32 {
        self.plot.y1 - (v / self.yhi) as f32 * self.plot.h()
    }
}

/// The y axis in percent: its top (a round value above the largest finite
/// share) and about five ticks from 0 with their labels.
fn percent_axis(lines: &[TopicSeries]) -> (f64, Vec<(f64, String)>) {
    let vmax = lines
        .iter()
        .flat_map(|l| l.values.iter())
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let yhi = nice_ceiling(vmax * 100.0, 5);
    let (yt, ystep) = nice_ticks(0.0, yhi, 5);
    let ticks = yt
        .iter()
        .map(|v| (*v, format!("{}%", fmt_tick(*v, ystep))))
        .collect();
    (yhi, ticks)
}

/// Where a series' line ends: its last finite point, and which line it is.
struct LineEnd {
    y: f32,
    x: f32,
    line: usize,
}

impl TimeChart {
    /// The footnotes: what the grey line is (when there is one) and which
    /// gaps in time are shaded.
    fn notes(&self, gaps: &[usize]) -> Vec<String> {
        let has_other = self.lines.iter().any(|l| l.topic_id == usize::MAX);
        let mut notes = if has_other {
            vec!["Grey line: all other topics combined.".to_string()]
        } else {
            Vec::new()
        };
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
        notes
    }

    /// A light band over each gap in time, between its two periods.
    fn shade_gaps<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        lay: &TimelineLayout,
        gaps: &[usize],
    ) -> Result<(), ChartError> {
        let plot = lay.plot;
        for &i in gaps {
            let (x0, x1) = (lay.x(self.positions[i]), lay.x(self.positions[i + 1]));
            let band = Rect::new(x0 + c.px(6.0), plot.y0, x1 - c.px(6.0), plot.y1);
            c.fill_rect(band, GRID, 0.6)?;
        }
        Ok(())
    }

    /// Period labels under the x axis, thinned from the right so the last is
    /// always shown: a label is drawn when it clears the last one drawn to
    /// its right.
    fn draw_period_labels<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        lay: &TimelineLayout,
    ) -> Result<(), ChartError> {
        let f = lay.tick_f;
        let pw = c.widest(f, false, &self.periods) + c.px(20.0);
        let max_label = (pw - c.px(20.0)).max(0.0);
        let mut right_edge = f32::INFINITY;
        for (p, &t) in self.periods.iter().zip(&self.positions).rev() {
            let x = lay.x(t);
            if x + pw / 2.0 > right_edge {
                continue;
            }
            right_edge = x - pw / 2.0;
            let line = c.fit1(p, f, false, max_label);
            x_tick(c, x, lay.plot.y1, &line, f)?;
        }
        Ok(())
    }

    /// Each series as a line broken at missing values, with a marker on
    /// every finite point ("other" thinner); returns where each line ends.
    fn draw_lines<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        lay: &TimelineLayout,
    ) -> Result<Vec<LineEnd>, ChartError> {
        let mut ends = Vec::new();
        for (li, l) in self.lines.iter().enumerate() {
            let color = topic_color(l.topic_id);
            let width = if l.topic_id == usize::MAX {
                c.px(3.0)
            } else {
                c.px(4.5)
            };
            let points: Vec<Option<(f32, f32)>> = l
                .values
                .iter()
                .zip(&self.positions)
                .map(|(v, &t)| v.is_finite().then(|| (lay.x(t), lay.y_share(*v))))
                .collect();
            broken_line(c, points.iter().copied(), color, width)?;
            for &(x, y) in points.iter().flatten() {
                c.marker(x, y, c.px(5.0), color)?;
            }
            if let Some(&(x, y)) = points.iter().rev().flatten().next() {
                ends.push(LineEnd { y, x, line: li });
            }
        }
        Ok(ends)
    }

    /// The series' labels right of the plot at the height of their line's
    /// end, spread apart so none overlaps, each joined to its line by a thin
    /// leader.
    fn draw_direct_labels<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        lay: &TimelineLayout,
        mut ends: Vec<LineEnd>,
    ) -> Result<(), ChartError> {
        ends.sort_by(|a, b| a.y.total_cmp(&b.y).then(a.line.cmp(&b.line)));
        let want: Vec<f32> = ends.iter().map(|e| e.y).collect();
        let (plot, label_h) = (lay.plot, lay.label_h);
        let ys = spread(&want, label_h, plot.y0 + label_h / 2.0, plot.y1);
        let lx = lay.label_x;
        for (end, y) in ends.iter().zip(ys) {
            let l = &self.lines[end.line];
            let color = topic_color(l.topic_id);
            c.polyline(
                &[(end.x + c.px(8.0), end.y), (lx - c.px(6.0), y)],
                color,
                c.px(2.0),
            )?;
            let line = c.fit1(&l.label, lay.label_f, false, lay.label_w);
            c.text(&line, lx, y, lay.label_f, false, INK, Align::Left)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::style;
    use super::super::ChartOutcome;
    use super::{gaps, spread, topic_share_over_time, TopicSeries};
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

    #[test]
    fn time_is_proportional_and_a_gap_is_shaded_and_named() {
        // 2016-2018, then 2022-2026: the gap gets a shaded band and a footnote.
        let dir = tempfile::tempdir().unwrap();
        let periods: Vec<String> = ["2016", "2017", "2018", "2022", "2023"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let positions: Vec<f64> = periods.iter().map(|p| p.parse().unwrap()).collect();
        let series = vec![TopicSeries {
            topic_id: 0,
            label: "graph networks".into(),
            values: vec![0.1, 0.2, 0.3, 0.2, 0.4],
        }];
        let out =
            topic_share_over_time(dir.path(), &style(), &periods, &positions, &series).unwrap();
        let ChartOutcome::Written { svg, .. } = out else {
            panic!("not drawn")
        };
        let svg = std::fs::read_to_string(svg).unwrap();
        assert!(
            svg.contains("Shaded: a gap in time without documents (2018 to 2022)"),
            "no gap note"
        );
        // The x of each period's label is proportional to its year: 2018 -> 2022 is four times
        // the 2016 -> 2017 step.
        // Each <text x="..." ...>content</text>, content trimmed.
        let texts: Vec<(f64, String)> = svg
            .split("<text")
            .skip(1)
            .map(|t| {
                let x = t.split("x=\"").nth(1).unwrap().split('"').next().unwrap();
                let body = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
                (x.parse().unwrap(), body.trim().to_string())
            })
            .collect();
        let x_of = |label: &str| -> f64 {
            texts
                .iter()
                .find(|(_, t)| t == label)
                .unwrap_or_else(|| panic!("no label {label}"))
                .0
        };
        let (x16, x17, x18, x22) = (x_of("2016"), x_of("2017"), x_of("2018"), x_of("2022"));
        let ratio = (x22 - x18) / (x17 - x16);
        assert!((ratio - 4.0).abs() < 0.1, "2018->2022 is {ratio} steps");
    }
}
