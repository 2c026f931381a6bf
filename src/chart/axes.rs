//! Axis pieces that several charts draw alike: horizontal grid lines with
//! their value labels left of the plot, tick marks under an x axis, vertical
//! grid lines with their value labels below, and lines broken where a value
//! is missing.
//!
//! Written once so that every chart's axes share one look (grid lines 1.5 px
//! in the grid grey, axis lines 2 px, tick labels muted and 8 px clear of the
//! axis, all scaled by the canvas).

use super::canvas::{Align, Canvas, Rect};
use super::palette::{AXIS, GRID, MUTED};
use super::ChartError;
use plotters::prelude::DrawingBackend;
use plotters::style::RGBColor;

/// Horizontal grid lines across `plot` at each `(y, label)`, the label
/// right-aligned just left of the plot, then the x axis line along the
/// plot's bottom edge.
pub(crate) fn y_grid<'l, DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    plot: Rect,
    ticks: impl IntoIterator<Item = (f32, &'l str)>,
    size: f32,
) -> Result<(), ChartError> {
    for (y, label) in ticks {
        c.hline(plot.x0, plot.x1, y, GRID, c.px(1.5))?;
        c.text(
            label,
            plot.x0 - c.px(14.0),
            y,
            size,
            false,
            MUTED,
            Align::Right,
        )?;
    }
    c.hline(plot.x0, plot.x1, plot.y1, AXIS, c.px(2.0))
}

/// A tick mark hanging from the x axis (at `axis_y`) at `x`, with its label
/// centred below it.
pub(crate) fn x_tick<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    x: f32,
    axis_y: f32,
    label: &str,
    size: f32,
) -> Result<(), ChartError> {
    c.vline(x, axis_y, axis_y + c.px(8.0), AXIS, c.px(2.0))?;
    c.text(
        label,
        x,
        axis_y + c.px(8.0) + size * 0.7,
        size,
        false,
        MUTED,
        Align::Center,
    )
}

/// A vertical grid line at `x` from `top` to `bottom`, with its value label
/// centred below the bottom end.
pub(crate) fn x_grid_line<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    x: f32,
    top: f32,
    bottom: f32,
    label: &str,
    size: f32,
) -> Result<(), ChartError> {
    c.vline(x, top, bottom, GRID, c.px(1.5))?;
    c.text(
        label,
        x,
        bottom + c.px(8.0) + size * 0.6,
        size,
        false,
        MUTED,
        Align::Center,
    )
}

/// A line through `points`, broken where a point is missing (`None`): each
/// unbroken stretch is drawn as one polyline, so a missing value leaves a
/// gap instead of being bridged.
pub(crate) fn broken_line<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    points: impl IntoIterator<Item = Option<(f32, f32)>>,
    color: RGBColor,
    width: f32,
) -> Result<(), ChartError> {
    let mut stretch: Vec<(f32, f32)> = Vec::new();
    for p in points {
        match p {
            Some(p) => stretch.push(p),
            None => {
                c.polyline(&stretch, color, width)?;
                stretch.clear();
            }
        }
    }
    c.polyline(&stretch, color, width)
}
