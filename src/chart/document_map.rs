//! Document map: a 2-D scatter of documents coloured by topic, with each
//! topic's label in a white-backed box at its centre.
//!
//! * Dots are small and semi-transparent so dense regions read as dense
//!   instead of as a solid blob; dot size and opacity adapt to the count.
//! * At most [`MAX_MAP_POINTS`] dots are drawn (more adds nothing visible and
//!   bloats the SVG): larger inputs are subsampled deterministically at
//!   evenly spaced indices, and a footnote says so.
//! * The view covers the central 99% of documents on each axis (plus a
//!   margin) so a few outliers cannot squash the map; documents outside are
//!   counted in the footnote.
//! * Labels must not overlap: they are placed in the given topic order, each
//!   at the first free spot on rings of candidate offsets around its centre
//!   (deterministic), with a leader line when moved.
//! * Outliers (documents far from their topic's centre) are drawn first, in light grey, so
//!   each topic's region reads in its colour.
//! * The footnote says how the map was laid out (the layout's note).
//! * Axes are omitted: the map's coordinates have no units.

use super::canvas::{Align, Canvas, Rect, LABEL_SIZE};
use super::palette::{topic_color, INK};
use plotters::style::RGBColor;

/// The colour of outliers: a light grey that recedes behind the topics.
const MUTED: RGBColor = RGBColor(190, 190, 190);
use super::text::{group_thousands, topic_label};
use super::{render, skipped, Chart, ChartError, ChartOutcome, ChartStyle};
use plotters::prelude::DrawingBackend;
use std::path::Path;

/// Most documents drawn in the document map.
pub const MAX_MAP_POINTS: usize = 50_000;

/// One document's 2-D position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MapPoint {
    pub x: f32,
    pub y: f32,
    /// Topic id (colour); `usize::MAX` draws grey.
    pub topic_id: usize,
    /// An outlier of its topic: drawn first, in grey, under the topics' colours.
    pub muted: bool,
}

/// A topic's label position (usually its centroid in the same 2-D space).
#[derive(Clone, Debug, PartialEq)]
pub struct MapTopic {
    pub topic_id: usize,
    pub label: String,
    pub x: f32,
    pub y: f32,
}

/// Draws `document_map.png` / `.svg` into `dir`, with `how` (the layout's note) under it.
/// Skipped when there are no documents with finite coordinates.
pub fn document_map(
    dir: &Path,
    style: &ChartStyle,
    points: &[MapPoint],
    topics: &[MapTopic],
    how: &str,
) -> Result<ChartOutcome, ChartError> {
    let finite = points
        .iter()
        .filter(|p| p.x.is_finite() && p.y.is_finite())
        .count();
    if finite == 0 {
        return skipped("no documents with finite 2-D coordinates");
    }
    let xs = quantile_bounds(points.iter().map(|p| p.x));
    let ys = quantile_bounds(points.iter().map(|p| p.y));
    let topics = topics
        .iter()
        .map(|t| MapTopic {
            topic_id: t.topic_id,
            label: topic_label(&t.label, t.topic_id),
            x: t.x,
            y: t.y,
        })
        .collect();
    render(
        dir,
        "document_map",
        style,
        &MapChart {
            title: style.title.clone(),
            points,
            topics,
            bounds: (xs, ys),
            how: how.to_string(),
        },
    )
}

/// The map's central range ([`crate::sample::central_range`]), widened by 5% of the span each
/// side (a unit span when all values are equal).
fn quantile_bounds(vals: impl Iterator<Item = f32>) -> (f32, f32) {
    let Some((lo, hi)) = crate::sample::central_range(vals) else {
        return (0.0, 1.0);
    };
    let span = hi - lo;
    if span > 0.0 {
        (lo - span * 0.05, hi + span * 0.05)
    } else {
        (lo - 0.5, hi + 0.5)
    }
}

struct MapChart<'p> {
    title: String,
    points: &'p [MapPoint],
    topics: Vec<MapTopic>,
    bounds: ((f32, f32), (f32, f32)),
    how: String,
}

/// Candidate offsets (in units of `step`) for label nudging: the centre, then
/// 12 directions on each of 10 rings.
fn candidates() -> Vec<(f32, f32)> {
    let mut out = vec![(0.0, 0.0)];
    for ring in 1..=10 {
        for d in 0..12 {
            let a = std::f32::consts::PI * 2.0 * d as f32 / 12.0;
            out.push((ring as f32 * a.cos(), ring as f32 * a.sin()));
        }
    }
    out
}

/// Places boxes of the given sizes near their anchors inside `area`
/// without overlapping each other (each box tries the candidates in order
/// and takes the first free one, else the one with the least overlap).
/// Returns the chosen box of each label.
pub(crate) fn place_labels(
    anchors: &[(f32, f32, f32, f32)],
    area: Rect,
    step: f32,
    pad: f32,
) -> Vec<Rect> {
    let cands = candidates();
    let mut placed: Vec<Rect> = Vec::with_capacity(anchors.len());
    for &(ax, ay, w, h) in anchors {
        let mut best: Option<(f32, Rect)> = None;
        for &(dx, dy) in &cands {
            let cx = ax + dx * step * 1.6;
            let cy = ay + dy * step;
            // Clamp into the area.
            let x0 = (cx - w / 2.0).clamp(area.x0, (area.x1 - w).max(area.x0));
            let y0 = (cy - h / 2.0).clamp(area.y0, (area.y1 - h).max(area.y0));
            let r = Rect::new(x0, y0, x0 + w, y0 + h);
            let overlap: f32 = placed.iter().map(|p| p.grow(pad).overlap(&r)).sum();
            if overlap == 0.0 {
                best = Some((0.0, r));
                break;
            }
            if best.as_ref().is_none_or(|(o, _)| overlap < *o) {
                best = Some((overlap, r));
            }
        }
        let r = best
            .map(|(_, r)| r)
            .unwrap_or(Rect::new(ax, ay, ax + w, ay + h));
        placed.push(r);
    }
    placed
}

impl Chart for MapChart<'_> {
    /// Heading and footnotes (sampling, outliers), the view; then the
    /// documents' dots, and the topic labels placed without overlap.
    fn draw<DB: DrawingBackend>(&self, c: &mut Canvas<'_, DB>) -> Result<(), ChartError> {
        let top = c.heading(
            &self.title,
            "Documents by topic: near each other on the map, alike in words",
        )?;
        let bottom = c.footnote(&self.notes())?;
        let m = c.margin();
        let view = MapView {
            plot: Rect::new(m, top, c.width - m, bottom),
            bounds: self.bounds,
        };
        self.draw_dots(c, &view)?;
        let labels = self.measure_labels(c, &view);
        let f = c.px(LABEL_SIZE * 0.87);
        let anchors: Vec<(f32, f32, f32, f32)> = labels.iter().map(|l| l.anchor).collect();
        let placed = place_labels(
            &anchors,
            view.plot,
            Canvas::<DB>::line_h(f) * 1.2,
            c.px(4.0),
        );
        for (label, rect) in labels.iter().zip(placed) {
            draw_label(c, label, rect, f)?;
        }
        Ok(())
    }
}

/// The plot area and the part of the 2-D space drawn into it.
struct MapView {
    plot: Rect,
    /// `((x0, x1), (y0, y1))`: the space's ranges shown.
    bounds: ((f32, f32), (f32, f32)),
}

impl MapView {
    fn x(&self, x: f32) -> f32 {
        let (x0, x1) = self.bounds.0;
        self.plot.x0 + (x - x0) / (x1 - x0) * self.plot.w()
    }

    fn y(&self, y: f32) -> f32 {
        let (y0, y1) = self.bounds.1;
        self.plot.y1 - (y - y0) / (y1 - y0) * self.plot.h()
    }
}

/// A topic label to place: its topic, its lines, and the anchor with the
/// box size it needs, as [`place_labels`] takes them.
struct MapLabel {
    topic_id: usize,
    lines: Vec<String>,
    /// (anchor x, anchor y, box width, box height).
    anchor: (f32, f32, f32, f32),
}

impl MapChart<'_> {
    /// True when `p` has finite coordinates within the view's bounds.
    fn in_view(&self, p: &MapPoint) -> bool {
        let ((x0, x1), (y0, y1)) = self.bounds;
        p.x.is_finite() && p.y.is_finite() && p.x >= x0 && p.x <= x1 && p.y >= y0 && p.y <= y1
    }

    /// The footnotes: whether the documents were sampled, and how many lie
    /// outside the view.
    fn notes(&self) -> Vec<String> {
        let n = self.points.len();
        let outside = self.points.iter().filter(|p| !self.in_view(p)).count();
        let mut notes = Vec::new();
        if !self.how.is_empty() {
            notes.push(self.how.clone());
        }
        let muted = self.points.iter().filter(|p| p.muted).count();
        if muted > 0 {
            let (what, are) = if muted == 1 {
                ("outlier", "is")
            } else {
                ("outliers", "are")
            };
            notes.push(format!(
                "{} {what}, far from their topic's centre, {are} in grey. Axes have no units.",
                group_thousands(muted)
            ));
        } else {
            notes.push("Axes have no units.".into());
        }
        if n > MAX_MAP_POINTS {
            notes.push(format!(
                "Showing an evenly spaced sample of {} of {} documents.",
                group_thousands(MAX_MAP_POINTS),
                group_thousands(n)
            ));
        }
        if outside > 0 {
            notes.push(format!(
                "{} outlying document(s) lie outside the view.",
                group_thousands(outside)
            ));
        }
        notes
    }

    /// The (sampled) documents in the view as dots in their topic's colour;
    /// the more documents, the smaller and fainter the dots.
    fn draw_dots<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        view: &MapView,
    ) -> Result<(), ChartError> {
        let n = self.points.len();
        let drawn = n.min(MAX_MAP_POINTS);
        let (r, alpha) = if drawn <= 2_000 {
            (c.px(6.0), 0.7)
        } else if drawn <= 10_000 {
            (c.px(4.0), 0.5)
        } else {
            (c.px(3.0), 0.35)
        };
        // Outliers first, muted, so the topics' colours lie on top.
        for muted in [true, false] {
            for i in crate::sample::even_indices(n, MAX_MAP_POINTS) {
                let Some(p) = self
                    .points
                    .get(i)
                    .filter(|p| p.muted == muted && self.in_view(p))
                else {
                    continue;
                };
                let (color, a) = if muted {
                    (MUTED, alpha * 0.6)
                } else {
                    (topic_color(p.topic_id), alpha)
                };
                c.dot(view.x(p.x), view.y(p.y), r, color, a)?;
            }
        }
        Ok(())
    }

    /// Each topic's label fitted into at most two lines, with its anchor
    /// (the topic's centre, clamped into the plot) and the box it needs; a
    /// topic without a finite centre is left out with a warning.
    fn measure_labels<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        view: &MapView,
    ) -> Vec<MapLabel> {
        let f = c.px(LABEL_SIZE * 0.87);
        let pad_x = c.px(12.0);
        let pad_y = c.px(6.0);
        let max_text_w = c.px(360.0);
        let plot = view.plot;
        let mut labels = Vec::new();
        for t in &self.topics {
            if !(t.x.is_finite() && t.y.is_finite()) {
                c.warn(format!(
                    "document_map: topic {} has no finite centre; its label is not drawn",
                    t.topic_id
                ));
                continue;
            }
            let lines = c.fit(&t.label, f, false, max_text_w, 2);
            let tw = c.widest(f, false, &lines);
            let th = Canvas::<DB>::line_h(f) * lines.len() as f32;
            let (ax, ay) = (
                view.x(t.x).clamp(plot.x0, plot.x1),
                view.y(t.y).clamp(plot.y0, plot.y1),
            );
            labels.push(MapLabel {
                topic_id: t.topic_id,
                lines,
                anchor: (ax, ay, tw + 2.0 * pad_x, th + 2.0 * pad_y),
            });
        }
        labels
    }
}

/// A topic label in its placed box: white, outlined in the topic's colour,
/// with a leader line to a marker at the anchor when the box was moved off
/// it.
fn draw_label<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    label: &MapLabel,
    rect: Rect,
    f: f32,
) -> Result<(), ChartError> {
    let color = topic_color(label.topic_id);
    let (ax, ay, _, _) = label.anchor;
    let moved = !(rect.x0 <= ax && ax <= rect.x1 && rect.y0 <= ay && ay <= rect.y1);
    if moved {
        let (bx, by) = (ax.clamp(rect.x0, rect.x1), ay.clamp(rect.y0, rect.y1));
        c.polyline(&[(ax, ay), (bx, by)], INK, c.px(2.0))?;
        c.marker(ax, ay, c.px(5.0), color)?;
    }
    c.fill_rect(rect, plotters::style::colors::WHITE, 1.0)?;
    c.stroke_rect(rect, color, c.px(3.0))?;
    c.lines(
        &label.lines,
        (rect.x0 + rect.x1) / 2.0,
        (rect.y0 + rect.y1) / 2.0,
        f,
        false,
        INK,
        Align::Center,
    )
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{map_data, style, written};
    use super::*;
    use std::fs;

    #[test]
    fn labels_do_not_overlap_even_when_anchors_coincide() {
        let area = Rect::new(0.0, 0.0, 1000.0, 600.0);
        let anchors: Vec<(f32, f32, f32, f32)> =
            (0..8).map(|_| (500.0, 300.0, 200.0, 40.0)).collect();
        let boxes = place_labels(&anchors, area, 48.0, 4.0);
        for (i, a) in boxes.iter().enumerate() {
            assert!(a.inside(&area), "box {i} leaves the area: {a:?}");
            for b in &boxes[..i] {
                assert_eq!(a.overlap(b), 0.0, "{a:?} overlaps {b:?}");
            }
        }
        // The first label stays centred on its anchor.
        assert_eq!(boxes[0], Rect::new(400.0, 280.0, 600.0, 320.0));
    }

    #[test]
    fn large_maps_are_subsampled_and_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let (pts, tops) = map_data(120_000);
        let (_, svg, _) = written(document_map(dir.path(), &style(), &pts, &tops, "").unwrap());
        let text = fs::read_to_string(svg).unwrap();
        // At most the cap (plus one marker per moved label); the few documents
        // outside the central-99% view are not drawn.
        let circles = text.matches("<circle").count();
        assert!(circles <= MAX_MAP_POINTS + tops.len(), "{circles} circles");
        assert!(circles >= MAX_MAP_POINTS * 98 / 100, "{circles} circles");
        assert!(text.contains("50,000 of 120,000"));
    }
}
