//! Choice of the number of topics k: the rise of the smoothed silhouette (the curve the rule
//! reads, with its 60% level), the silhouette and the inertia against k, in three side-by-side
//! panels, with the chosen k marked in each, and the evidence that decided written under them.
//!
//! Panels rather than one chart with several y axes: dual axes invite
//! reading meaning into where the lines cross, and each metric needs its
//! own "better" direction spelled out. Points are sorted by k; non-finite
//! values break the line instead of being drawn.

use super::axes::{broken_line, x_tick, y_grid};
use super::canvas::{Align, Canvas, Rect, LABEL_SIZE, TICK_SIZE};
use super::palette::{topic_color, INK, MUTED};
use super::text::{fmt_tick, nice_step, nice_ticks};
use super::{render, skipped, Chart, ChartError, ChartOutcome, ChartStyle};
use plotters::prelude::DrawingBackend;
use plotters::style::RGBColor;
use std::path::Path;

/// Scores of one k-means run.
#[derive(Clone, Debug, PartialEq)]
pub struct KScore {
    /// Number of clusters.
    pub k: usize,
    /// Mean silhouette coefficient (higher is better).
    pub silhouette: f64,
    /// Within-cluster sum of squares (lower is better; look for the elbow).
    pub inertia: f64,
    /// The share of its rise the smoothed silhouette made by k (0..1; NaN beyond the rule's
    /// window).
    pub rise: f64,
}

/// Draws `k_selection.png` / `.svg` into `dir`. `chosen_k` is marked with a
/// dashed line (and a warning is returned if it lies outside the evaluated
/// range); `level` is the rise the rule's knee is read at (a dashed line in the
/// first panel); `rule` is the footnote that says what decided. Skipped when
/// fewer than 2 points are given.
pub fn k_selection(
    dir: &Path,
    style: &ChartStyle,
    points: &[KScore],
    (chosen_k, level): (usize, f64),
    rule: &str,
) -> Result<ChartOutcome, ChartError> {
    if points.len() < 2 {
        return skipped("fewer than 2 values of k were evaluated");
    }
    let mut pts = points.to_vec();
    pts.sort_by_key(|p| p.k);
    render(
        dir,
        "k_selection",
        style,
        &KChart {
            title: style.title.clone(),
            pts,
            chosen_k,
            level,
            rule: rule.to_string(),
        },
    )
}

struct KChart {
    title: String,
    pts: Vec<KScore>,
    chosen_k: usize,
    level: f64,
    rule: String,
}

impl Chart for KChart {
    fn draw<DB: DrawingBackend>(&self, c: &mut Canvas<'_, DB>) -> Result<(), ChartError> {
        let top = c.heading(&self.title, "Choosing the number of topics k")?;
        let k_lo = self.pts.first().map_or(0, |p| p.k);
        let k_hi = self.pts.last().map_or(0, |p| p.k);
        let in_range = (k_lo..=k_hi).contains(&self.chosen_k);
        if !in_range {
            c.warn(format!(
                "k_selection: chosen k = {} is outside the evaluated range {k_lo}..={k_hi}; not marked",
                self.chosen_k
            ));
        }
        let bottom = c.footnote(&[
            self.rule.clone(),
            "Silhouette: how well documents sit in their own topic (−1..1). Inertia: within-topic spread."
                .to_string(),
        ])?;
        let m = c.margin();
        let gap = c.px(70.0);
        let w = (c.width - 2.0 * m - 2.0 * gap) / 3.0;
        let ks: Vec<f64> = self.pts.iter().map(|p| p.k as f64).collect();
        let chosen = in_range.then_some(self.chosen_k as f64);
        let level = format!(
            "Silhouette's rise, smoothed (k: the first at {:.0}%)",
            self.level * 100.0
        );
        let panels: [(&str, Vec<f64>, usize); 3] = [
            (&level, self.pts.iter().map(|p| p.rise).collect(), 0),
            (
                "Silhouette (higher is better)",
                self.pts.iter().map(|p| p.silhouette).collect(),
                4,
            ),
            (
                "Inertia (lower is better)",
                self.pts.iter().map(|p| p.inertia).collect(),
                5,
            ),
        ];
        for (i, (title, ys, color)) in panels.iter().enumerate() {
            let x0 = m + i as f32 * (w + gap);
            let r = Rect::new(x0, top, x0 + w, bottom);
            let reference = (i == 0).then_some(self.level);
            panel(
                c,
                r,
                title,
                &ks,
                ys,
                topic_color(*color),
                (chosen, reference),
            )?;
        }
        Ok(())
    }
}

/// One line panel: its title, then (when there are finite values) the y
/// grid with tick labels, integer k ticks and the axis title, the chosen k
/// dashed, and the line with markers.
fn panel<DB: DrawingBackend>(
    c: &mut Canvas<'_, DB>,
    r: Rect,
    title: &str,
    xs: &[f64],
    ys: &[f64],
    color: RGBColor,
    (chosen, reference): (Option<f64>, Option<f64>),
) -> Result<(), ChartError> {
    let tf = c.px(LABEL_SIZE);
    let f = c.px(TICK_SIZE);
    let line = c.fit1(title, tf, true, r.w());
    c.text(&line, r.x0, r.y0 + tf * 0.6, tf, true, INK, Align::Left)?;

    let plot_top = r.y0 + tf * 1.2 + c.px(28.0);
    let axis_title_y = r.y1 - f * 0.6;
    let plot_bottom = axis_title_y - f * 0.6 - c.px(12.0) - f * 1.2 - c.px(8.0);
    let Some(axes) = PanelAxes::new(c, r, plot_top, plot_bottom, xs, ys) else {
        let y = (plot_top + plot_bottom) / 2.0;
        return c.text("no finite values", r.x0, y, f, false, MUTED, Align::Left);
    };
    let plot = axes.plot;
    let y_ticks = axes.y_ticks.iter().map(|(v, l)| (axes.y(*v), l.as_str()));
    y_grid(c, plot, y_ticks, f)?;
    axes.draw_k_ticks(c, f)?;
    let mid = (plot.x0 + plot.x1) / 2.0;
    c.text(
        "number of topics k",
        mid,
        axis_title_y,
        f,
        false,
        INK,
        Align::Center,
    )?;
    if let Some(k) = chosen {
        axes.mark_chosen(c, k, f)?;
    }
    if let Some(y) = reference.filter(|y| (axes.ylo..=axes.yhi).contains(y)) {
        axes.mark_level(c, y)?;
    }
    axes.draw_line(c, xs, ys, color, chosen)
}

/// A panel's plot area and scales: y over the finite values' range padded
/// by 8% (a range of its own around a single value), x over the evaluated
/// k padded by 5%.
struct PanelAxes {
    plot: Rect,
    /// The y range drawn.
    ylo: f64,
    yhi: f64,
    /// The y ticks with their labels.
    y_ticks: Vec<(f64, String)>,
    /// The smallest and largest evaluated k.
    k_lo: f64,
    k_hi: f64,
    /// The x range drawn.
    x0: f64,
    x1: f64,
}

impl PanelAxes {
    /// Axes for `xs`, `ys` within `r`, between `plot_top` and `plot_bottom`,
    /// the plot right of the y tick labels; `None` when no y is finite.
    fn new<DB: DrawingBackend>(
        c: &Canvas<'_, DB>,
        r: Rect,
        plot_top: f32,
        plot_bottom: f32,
        xs: &[f64],
        ys: &[f64],
    ) -> Option<Self> {
        let finite: Vec<f64> = ys.iter().copied().filter(|v| v.is_finite()).collect();
        if finite.is_empty() {
            return None;
        }
        let (lo, hi) = finite
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        let pad = if hi > lo {
            (hi - lo) * 0.08
        } else {
            lo.abs().max(1.0) * 0.1
        };
        let (ylo, yhi) = (lo - pad, hi + pad);
        let (yt, ystep) = nice_ticks(ylo, yhi, 5);
        let y_ticks: Vec<(f64, String)> = yt.iter().map(|&v| (v, fmt_tick(v, ystep))).collect();
        let lab_w = c.widest(c.px(TICK_SIZE), false, y_ticks.iter().map(|t| &t.1));
        let plot = Rect::new(r.x0 + lab_w + c.px(14.0), plot_top, r.x1, plot_bottom);

        let (k_lo, k_hi) = (
            xs.first().copied().unwrap_or(0.0),
            xs.last().copied().unwrap_or(1.0),
        );
        let xpad = if k_hi > k_lo {
            (k_hi - k_lo) * 0.05
        } else {
            1.0
        };
        Some(PanelAxes {
            plot,
            ylo,
            yhi,
            y_ticks,
            k_lo,
            k_hi,
            x0: k_lo - xpad,
            x1: k_hi + xpad,
        })
    }

    fn x(&self, x: f64) -> f32 {
        let plot = self.plot;
        plot.x0 + ((x - self.x0) / (self.x1 - self.x0)) as f32 * plot.w()
    }

    fn y(&self, y: f64) -> f32 {
        let plot = self.plot;
        plot.y1 - ((y - self.ylo) / (self.yhi - self.ylo)) as f32 * plot.h()
    }

    /// Integer k ticks under the plot: every k if they fit, else a nice
    /// integer step.
    fn draw_k_ticks<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        f: f32,
    ) -> Result<(), ChartError> {
        let (xlo, xhi) = (self.k_lo, self.k_hi);
        let widest = c.measure(f, false, &format!("{}", xhi as i64)) + c.px(24.0);
        let max_ticks = ((self.plot.w() / widest.max(1.0)).floor() as usize).max(2);
        let step = nice_step((xhi - xlo).max(1.0) / max_ticks as f64)
            .max(1.0)
            .ceil();
        let mut k = (xlo / step).ceil() * step;
        while k <= xhi + 1e-9 {
            x_tick(c, self.x(k), self.plot.y1, &format!("{}", k as i64), f)?;
            k += step;
        }
        Ok(())
    }

    /// The chosen k as a dashed vertical line, labelled at the top on the
    /// side where the label fits.
    fn mark_chosen<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        k: f64,
        f: f32,
    ) -> Result<(), ChartError> {
        let plot = self.plot;
        let x = self.x(k);
        c.vdash(x, plot.y0, plot.y1, INK, c.px(2.5))?;
        let label = format!("chosen k = {}", k as i64);
        let lw = c.measure(f, true, &label);
        let (lx, al) = if x + c.px(10.0) + lw <= plot.x1 {
            (x + c.px(10.0), Align::Left)
        } else {
            (x - c.px(10.0), Align::Right)
        };
        c.text(&label, lx, plot.y0 + f * 0.6, f, true, INK, al)
    }

    /// A level as a dashed horizontal line across the plot.
    fn mark_level<DB: DrawingBackend>(&self, c: &Canvas<'_, DB>, y: f64) -> Result<(), ChartError> {
        let (plot, y) = (self.plot, self.y(y));
        let (dash, gap) = (c.px(12.0), c.px(8.0));
        let mut x = plot.x0;
        while x < plot.x1 {
            c.hline(x, (x + dash).min(plot.x1), y, MUTED, c.px(2.0))?;
            x += dash + gap;
        }
        Ok(())
    }

    /// The scores as a line broken at non-finite values, with a marker on
    /// every finite point (larger at the chosen k).
    fn draw_line<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        xs: &[f64],
        ys: &[f64],
        color: RGBColor,
        chosen: Option<f64>,
    ) -> Result<(), ChartError> {
        let points = xs
            .iter()
            .zip(ys)
            .map(|(x, y)| y.is_finite().then(|| (self.x(*x), self.y(*y))));
        broken_line(c, points, color, c.px(4.0))?;
        for (x, y) in xs.iter().zip(ys) {
            if y.is_finite() {
                let is_chosen = chosen.is_some_and(|k| (k - x).abs() < 0.5);
                let r = if is_chosen { c.px(10.0) } else { c.px(6.0) };
                c.marker(self.x(*x), self.y(*y), r, color)?;
            }
        }
        Ok(())
    }
}
