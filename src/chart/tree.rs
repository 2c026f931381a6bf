//! The topic hierarchy as a dendrogram: topics listed top to bottom on the left, joined to the
//! right by elbows at the distance at which they merge.
//!
//! Horizontal so that every topic label reads left to right at full length; leaves in the
//! tree's own order (each merge's children next to each other), so kin topics sit together.
//! A leaf's colour dot is its topic colour, as on every other chart. The distance axis starts
//! just below the first merge, where the tree begins, not at zero. Groups' labels are in
//! `topic_tree.csv` and the report's table, not on the chart, where they would cross the lines.

use super::axes::x_grid_line;
use super::canvas::{Align, Canvas, Rect, LABEL_SIZE, TICK_SIZE};
use super::palette::{topic_color, AXIS, INK};
use super::text::{fmt_tick, nice_ticks, topic_label};
use super::{render, skipped, Chart, ChartError, ChartOutcome, ChartStyle};
use plotters::prelude::DrawingBackend;
use std::collections::HashMap;
use std::path::Path;

/// One node of the tree: a topic (no children) or the merge of two nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeNode {
    /// Topic id for a leaf (selects its colour); any unique id for a merge.
    pub id: usize,
    pub label: String,
    /// Ids of the two merged nodes; empty for a leaf.
    pub children: Vec<usize>,
    /// Distance at which the children merged (0 for a leaf).
    pub distance: f64,
}

/// Draws `topic_tree.png` / `.svg` into `dir`. The root is the node no other node names as a
/// child. Skipped with fewer than two leaves; an error when a child id is unknown.
pub fn topic_tree(
    dir: &Path,
    style: &ChartStyle,
    nodes: &[TreeNode],
) -> Result<ChartOutcome, ChartError> {
    let leaves = nodes.iter().filter(|n| n.children.is_empty()).count();
    if leaves < 2 {
        return skipped("fewer than 2 topics");
    }
    let by_id: HashMap<usize, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    for n in nodes {
        if let Some(&missing) = n.children.iter().find(|c| !by_id.contains_key(c)) {
            return Err(ChartError::UnknownNode(missing));
        }
    }
    let is_child: std::collections::HashSet<usize> = nodes
        .iter()
        .flat_map(|n| n.children.iter().copied())
        .collect();
    let Some(root) = nodes.iter().rposition(|n| !is_child.contains(&n.id)) else {
        return skipped("the tree has no root");
    };
    // Leaves in tree order: depth first, children in the order given.
    let mut order = Vec::new();
    let mut stack = vec![root];
    while let Some(i) = stack.pop() {
        let n = &nodes[i];
        if n.children.is_empty() {
            order.push(i);
        } else {
            for c in n.children.iter().rev() {
                stack.push(by_id[c]);
            }
        }
    }
    render(
        dir,
        "topic_tree",
        style,
        &TreeChart {
            title: style.title.clone(),
            nodes: nodes
                .iter()
                .map(|n| TreeNode {
                    label: if n.children.is_empty() {
                        topic_label(&n.label, n.id)
                    } else {
                        super::text::clean(&n.label)
                    },
                    ..n.clone()
                })
                .collect(),
            by_id,
            order,
            root,
        },
    )
}

struct TreeChart {
    title: String,
    nodes: Vec<TreeNode>,
    by_id: HashMap<usize, usize>,
    /// Leaf indices, top to bottom.
    order: Vec<usize>,
    root: usize,
}

impl Chart for TreeChart {
    /// Heading and footnote, the layout; then the leaf rows (label and colour
    /// dot), the distance grid, the merges' elbows and the distance axis.
    fn draw<DB: DrawingBackend>(&self, c: &mut Canvas<'_, DB>) -> Result<(), ChartError> {
        let top = c.heading(&self.title, "Topic hierarchy: kin topics merge first")?;
        let bottom = c.footnote(&[
            "Distance: Ward's linkage on the topics' class-based TF-IDF weights (unit vectors; two topics: sqrt(2 (1 - cosine)))."
                .to_string(),
        ])?;
        let lay = TreeLayout::new(c, self, top, bottom);
        let mut y = self.draw_leaves(c, &lay)?;
        lay.draw_distance_grid(c, self.order.len())?;
        self.draw_merges(c, &lay, &mut y)?;
        let plot = lay.plot;
        c.hline(
            plot.x0,
            plot.x1,
            lay.grid_bottom(self.order.len()),
            AXIS,
            c.px(2.0),
        )
    }
}

/// Where the dendrogram goes: one row per leaf (however many there are),
/// the labels on the left, the distance axis from a round value below the
/// first merge to the largest distance.
struct TreeLayout {
    /// The rows (labels and plot).
    area: Rect,
    /// The elbows' area, right of the labels.
    plot: Rect,
    row_h: f32,
    /// Label font size.
    font: f32,
    /// Space between labels, dots and the plot.
    gap: f32,
    /// Widest a label may be.
    label_w: f32,
    /// The distance range drawn.
    lo: f64,
    hi: f64,
}

impl TreeLayout {
    /// Splits the area above the distance axis into one row per leaf, sizes
    /// the label font to the row, and puts the plot right of the widest
    /// label (at most 42% of the width).
    fn new<DB: DrawingBackend>(
        c: &Canvas<'_, DB>,
        chart: &TreeChart,
        top: f32,
        bottom: f32,
    ) -> Self {
        let m = c.margin();
        let f = c.px(TICK_SIZE);
        let axis_block = f * 1.2 + c.px(12.0);
        let area = Rect::new(m, top, c.width - m, bottom - axis_block);
        // Every topic gets a row, however many there are.
        let row_h = area.h().max(1.0) / chart.order.len() as f32;
        let font = (row_h / 1.45).min(c.px(LABEL_SIZE));
        let gap = c.px(14.0);
        let widest = c.widest(font, false, chart.order.iter().map(|&i| chart.leaf_text(i)));
        let label_w = widest.min(area.w() * 0.42);
        let plot = Rect::new(
            area.x0 + label_w + gap * 2.0,
            area.y0,
            area.x1 - gap,
            area.y1,
        );
        let (lo, hi) = distance_range(&chart.nodes);
        TreeLayout {
            area,
            plot,
            row_h,
            font,
            gap,
            label_w,
            lo,
            hi,
        }
    }

    /// x of distance `d` (clamped to the range drawn).
    fn x(&self, d: f64) -> f32 {
        let (lo, hi, plot) = (self.lo, self.hi, self.plot);
        let span = (hi - lo).max(1e-9);
        plot.x0 + ((d.clamp(lo, hi) - lo) / span) as f32 * plot.w()
    }

    /// Bottom of `n` rows: where the grid lines end and the axis runs.
    fn grid_bottom(&self, n: usize) -> f32 {
        self.area.y0 + self.row_h * n as f32
    }

    /// Vertical grid lines at round distances down `n` rows, labelled below.
    fn draw_distance_grid<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        n: usize,
    ) -> Result<(), ChartError> {
        let (lo, hi) = (self.lo, self.hi);
        let grid_bottom = self.grid_bottom(n);
        let f = c.px(TICK_SIZE);
        let (ticks, step) = nice_ticks(lo, hi, 5);
        for t in ticks
            .iter()
            .filter(|t| **t >= lo - 1e-9 && **t <= hi + 1e-9)
        {
            x_grid_line(
                c,
                self.x(*t),
                self.area.y0,
                grid_bottom,
                &fmt_tick(*t, step),
                f,
            )?;
        }
        Ok(())
    }
}

/// The distance axis' range: up to the largest finite distance (1 when
/// there is none above 0), from a round value below the first merge (0 when
/// the first merge is within the first tick step).
fn distance_range(nodes: &[TreeNode]) -> (f64, f64) {
    let max_d = nodes
        .iter()
        .map(|n| n.distance)
        .filter(|d| d.is_finite())
        .fold(0.0f64, f64::max);
    let min_d = nodes
        .iter()
        .filter(|n| !n.children.is_empty())
        .map(|n| n.distance)
        .filter(|d| d.is_finite())
        .fold(f64::INFINITY, f64::min);
    let hi = if max_d > 0.0 { max_d } else { 1.0 };
    let (_, step0) = nice_ticks(0.0, hi, 5);
    let lo = if min_d.is_finite() && min_d > step0 {
        ((min_d * 0.9) / step0).floor() * step0
    } else {
        0.0
    };
    (lo, hi)
}

impl TreeChart {
    /// A leaf's row text: "id  label".
    fn leaf_text(&self, i: usize) -> String {
        format!("{}  {}", self.nodes[i].id, self.nodes[i].label)
    }

    /// One row per leaf, top to bottom: its text right-aligned, then its
    /// topic colour dot. Returns each node's y, the leaves' so far.
    fn draw_leaves<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        lay: &TreeLayout,
    ) -> Result<HashMap<usize, f32>, ChartError> {
        let (area, font) = (lay.area, lay.font);
        let mut y: HashMap<usize, f32> = HashMap::new();
        for (row, &i) in self.order.iter().enumerate() {
            let yc = area.y0 + (row as f32 + 0.5) * lay.row_h;
            y.insert(i, yc);
            let line = c.fit1(&self.leaf_text(i), font, false, lay.label_w);
            c.text(
                &line,
                area.x0 + lay.label_w,
                yc,
                font,
                false,
                INK,
                Align::Right,
            )?;
            let dot_x = area.x0 + lay.label_w + lay.gap;
            c.marker(dot_x, yc, c.px(6.0), topic_color(self.nodes[i].id))?;
        }
        Ok(y)
    }

    /// Each merge as an elbow: a horizontal line from each child (a leaf's
    /// row start, or the child merge's distance) to the merge's distance,
    /// and a vertical line joining them there. Children are drawn before
    /// their parents, depth first from the root; `y` gains each merge's y
    /// (midway between its children).
    fn draw_merges<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        lay: &TreeLayout,
        y: &mut HashMap<usize, f32>,
    ) -> Result<(), ChartError> {
        let width = c.px(3.0);
        let mut stack = vec![(self.root, false)];
        while let Some((i, done)) = stack.pop() {
            let n = &self.nodes[i];
            if n.children.is_empty() {
                continue;
            }
            let kids: Vec<usize> = n.children.iter().map(|id| self.by_id[id]).collect();
            if !done {
                stack.push((i, true));
                for &k in &kids {
                    stack.push((k, false));
                }
                continue;
            }
            let x = lay.x(n.distance);
            let ys: Vec<f32> = kids.iter().map(|k| y[k]).collect();
            for (&k, &yk) in kids.iter().zip(&ys) {
                let xk = if self.nodes[k].children.is_empty() {
                    lay.plot.x0
                } else {
                    lay.x(self.nodes[k].distance)
                };
                c.polyline(&[(xk, yk), (x, yk)], AXIS, width)?;
            }
            let (y0, y1) = (
                ys.iter().copied().fold(f32::INFINITY, f32::min),
                ys.iter().copied().fold(f32::NEG_INFINITY, f32::max),
            );
            c.polyline(&[(x, y0), (x, y1)], AXIS, width)?;
            y.insert(i, (y0 + y1) / 2.0);
        }
        Ok(())
    }
}
