//! Choice of the number of topics k: silhouette score and inertia against
//! k, in two side-by-side panels, with the chosen k marked in both.
//!
//! Two panels rather than one chart with two y axes: dual axes invite
//! reading meaning into where the two lines cross, and each metric needs its
//! own "better" direction spelled out. Points are sorted by k; non-finite
//! values break the line instead of being drawn.

use super::canvas::{Align, Canvas, Rect, LABEL_SIZE, TICK_SIZE};
use super::palette::{topic_color, AXIS, GRID, INK, MUTED};
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
}

/// Draws `k_selection.png` / `.svg` into `dir`. `chosen_k` is marked with a
/// dashed line (and a warning is returned if it lies outside the evaluated
/// range). Skipped when fewer than 2 points are given.
pub fn k_selection(
    dir: &Path,
    style: &ChartStyle,
    points: &[KScore],
    chosen_k: usize,
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
        },
    )
}

struct KChart {
    title: String,
    pts: Vec<KScore>,
    chosen_k: usize,
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
            "Silhouette: how well documents sit in their own topic (−1..1). Inertia: within-topic spread; look for the elbow."
                .to_string(),
        ])?;
        let m = c.margin();
        let gap = c.px(90.0);
        let w = (c.width - 2.0 * m - gap) / 2.0;
        let left = Rect::new(m, top, m + w, bottom);
        let right = Rect::new(m + w + gap, top, c.width - m, bottom);
        let ks: Vec<f64> = self.pts.iter().map(|p| p.k as f64).collect();
        let sil: Vec<f64> = self.pts.iter().map(|p| p.silhouette).collect();
        let ine: Vec<f64> = self.pts.iter().map(|p| p.inertia).collect();
        let chosen = in_range.then_some(self.chosen_k as f64);
        panel(
            c,
            left,
            "Silhouette score (higher is better)",
            &ks,
            &sil,
            topic_color(4),
            chosen,
        )?;
        panel(
            c,
            right,
            "Inertia (lower is better)",
            &ks,
            &ine,
            topic_color(5),
            chosen,
        )
    }
}

/// One line panel: title, y grid with tick labels, integer x ticks, the
/// line with markers, the chosen k dashed.
fn panel<DB: DrawingBackend>(
    c: &mut Canvas<'_, DB>,
    r: Rect,
    title: &str,
    xs: &[f64],
    ys: &[f64],
    color: RGBColor,
    chosen: Option<f64>,
) -> Result<(), ChartError> {
    let tf = c.px(LABEL_SIZE);
    let f = c.px(TICK_SIZE);
    let line = c.fit1(title, tf, true, r.w());
    c.text(&line, r.x0, r.y0 + tf * 0.6, tf, true, INK, Align::Left)?;

    let finite: Vec<f64> = ys.iter().copied().filter(|v| v.is_finite()).collect();
    let plot_top = r.y0 + tf * 1.2 + c.px(28.0);
    let axis_title_y = r.y1 - f * 0.6;
    let plot_bottom = axis_title_y - f * 0.6 - c.px(12.0) - f * 1.2 - c.px(8.0);
    if finite.is_empty() {
        c.text(
            "no finite values",
            r.x0,
            (plot_top + plot_bottom) / 2.0,
            f,
            false,
            MUTED,
            Align::Left,
        )?;
        return Ok(());
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
    let labels: Vec<String> = yt.iter().map(|&v| fmt_tick(v, ystep)).collect();
    let lab_w = labels
        .iter()
        .map(|l| c.measure(f, false, l))
        .fold(0.0f32, f32::max);
    let plot = Rect::new(r.x0 + lab_w + c.px(14.0), plot_top, r.x1, plot_bottom);

    let (xlo, xhi) = (
        xs.first().copied().unwrap_or(0.0),
        xs.last().copied().unwrap_or(1.0),
    );
    let xpad = if xhi > xlo { (xhi - xlo) * 0.05 } else { 1.0 };
    let (x0, x1) = (xlo - xpad, xhi + xpad);
    let px = |x: f64| plot.x0 + ((x - x0) / (x1 - x0)) as f32 * plot.w();
    let py = |y: f64| plot.y1 - ((y - ylo) / (yhi - ylo)) as f32 * plot.h();

    for (v, l) in yt.iter().zip(&labels) {
        let y = py(*v);
        c.hline(plot.x0, plot.x1, y, GRID, c.px(1.5))?;
        c.text(l, plot.x0 - c.px(14.0), y, f, false, MUTED, Align::Right)?;
    }
    c.hline(plot.x0, plot.x1, plot.y1, AXIS, c.px(2.0))?;

    // Integer x ticks: every k if they fit, else a nice integer step.
    let widest = c.measure(f, false, &format!("{}", xhi as i64)) + c.px(24.0);
    let max_ticks = ((plot.w() / widest.max(1.0)).floor() as usize).max(2);
    let step = nice_step((xhi - xlo).max(1.0) / max_ticks as f64)
        .max(1.0)
        .ceil();
    let mut k = (xlo / step).ceil() * step;
    while k <= xhi + 1e-9 {
        let x = px(k);
        c.vline(x, plot.y1, plot.y1 + c.px(8.0), AXIS, c.px(2.0))?;
        c.text(
            &format!("{}", k as i64),
            x,
            plot.y1 + c.px(8.0) + f * 0.7,
            f,
            false,
            MUTED,
            Align::Center,
        )?;
        k += step;
    }
    c.text(
        "number of topics k",
        (plot.x0 + plot.x1) / 2.0,
        axis_title_y,
        f,
        false,
        INK,
        Align::Center,
    )?;

    if let Some(k) = chosen {
        let x = px(k);
        c.vdash(x, plot.y0, plot.y1, INK, c.px(2.5))?;
        let label = format!("chosen k = {}", k as i64);
        let lw = c.measure(f, true, &label);
        let (lx, al) = if x + c.px(10.0) + lw <= plot.x1 {
            (x + c.px(10.0), Align::Left)
        } else {
            (x - c.px(10.0), Align::Right)
        };
        c.text(&label, lx, plot.y0 + f * 0.6, f, true, INK, al)?;
    }

    // Line segments between consecutive finite values.
    let mut seg: Vec<(f32, f32)> = Vec::new();
    for (x, y) in xs.iter().zip(ys) {
        if y.is_finite() {
            seg.push((px(*x), py(*y)));
        } else {
            c.polyline(&seg, color, c.px(4.0))?;
            seg.clear();
        }
    }
    c.polyline(&seg, color, c.px(4.0))?;
    for (x, y) in xs.iter().zip(ys) {
        if y.is_finite() {
            let is_chosen = chosen.is_some_and(|k| (k - x).abs() < 0.5);
            let r = if is_chosen { c.px(10.0) } else { c.px(6.0) };
            c.marker(px(*x), py(*y), r, color)?;
        }
    }
    Ok(())
}
