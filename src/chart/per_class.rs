//! Topics per class as a heatmap: a row per topic, a column per class.
//!
//! Each column is one class's topic mix: a cell's colour is the share of the class's documents
//! in the topic (viridis, from 0 to the largest share, with the colour bar of
//! `heatmap.rs`), so a small class reads as well as a large one, and its count of documents is
//! printed in it when the cell is large enough for the digits. Rows carry the topic labels (a
//! named topic with its mark, as the caller gives it) and ids, as the similarity heatmap's do;
//! columns carry the class names (wrapped onto two lines, shortened to the column) over each
//! class's size. At most [`MAX_CLASSES`] classes are drawn, the largest (the caller orders
//! them); the subtitle says how many there are.

use super::canvas::{Align, Canvas, Rect, LABEL_SIZE, MIN_LABEL_SIZE, TICK_SIZE};
use super::heatmap::{colour_bar, ColourScale};
use super::palette::{luminance, viridis, INK, MUTED};
use super::text::{clean, group_thousands, topic_label};
use super::{render, skipped, Chart, ChartError, ChartOutcome, ChartStyle};
use plotters::prelude::DrawingBackend;
use plotters::style::RGBColor;
use std::path::Path;

/// Most classes drawn (the largest); the CSV lists every class.
pub const MAX_CLASSES: usize = 20;

/// One class (a column): its name, its documents, and its documents in each topic (one count
/// per topic row).
#[derive(Debug, Clone, PartialEq)]
pub struct ClassColumn {
    pub name: String,
    pub size: usize,
    pub counts: Vec<usize>,
}

/// Draws `topics_per_class.png` / `.svg` into `dir`: topics (`labels[i]`, id `ids[i]`) by
/// `classes`, the first [`MAX_CLASSES`] of them (the caller puts the largest first). Errors
/// when the ids are not one per label or a class's counts not one per topic; skipped without
/// a topic or a class.
pub fn topics_per_class(
    dir: &Path,
    style: &ChartStyle,
    labels: &[String],
    ids: &[usize],
    classes: &[ClassColumn],
) -> Result<ChartOutcome, ChartError> {
    let k = labels.len();
    if ids.len() != k {
        return Err(ChartError::MatrixRows {
            expected: k,
            found: ids.len(),
        });
    }
    if let Some((row, c)) = classes
        .iter()
        .enumerate()
        .find(|(_, c)| c.counts.len() != k)
    {
        return Err(ChartError::MatrixColumns {
            row,
            expected: k,
            found: c.counts.len(),
        });
    }
    if k == 0 || classes.is_empty() {
        return skipped("no topic or no class");
    }
    let shown = &classes[..classes.len().min(MAX_CLASSES)];
    let subtitle = match classes.len() {
        n if n > shown.len() => format!(
            "Topics per class: share of each class's documents, the {} largest of {n} classes",
            shown.len()
        ),
        n => format!("Topics per class: share of each class's documents ({n} classes)"),
    };
    let chart = ClassChart {
        title: style.title.clone(),
        subtitle,
        labels: labels
            .iter()
            .zip(ids)
            .map(|(l, &id)| topic_label(l, id))
            .collect(),
        ids: ids.iter().map(|id| id.to_string()).collect(),
        classes: shown,
    };
    render(dir, "topics_per_class", style, &chart)
}

struct ClassChart<'a> {
    title: String,
    subtitle: String,
    labels: Vec<String>,
    ids: Vec<String>,
    classes: &'a [ClassColumn],
}

const WHITE: RGBColor = RGBColor(255, 255, 255);

impl ClassChart<'_> {
    fn share(&self, class: usize, topic: usize) -> f64 {
        let c = &self.classes[class];
        c.counts[topic] as f64 / c.size.max(1) as f64
    }
}

impl Chart for ClassChart<'_> {
    /// Heading and footnote, the colour scale (0 to the largest share), the layout; then the
    /// cells, the topic labels, the class names and the colour bar.
    fn draw<DB: DrawingBackend>(&self, c: &mut Canvas<'_, DB>) -> Result<(), ChartError> {
        let top = c.heading(&self.title, &self.subtitle)?;
        let bottom = c.footnote(&[
            "Columns: classes, largest first, with their documents (n); a cell: the class's documents in the topic, coloured by their share of the class."
                .to_string(),
        ])?;
        let hi = (0..self.classes.len())
            .flat_map(|j| (0..self.labels.len()).map(move |i| (j, i)))
            .map(|(j, i)| self.share(j, i))
            .fold(0.0f64, f64::max);
        let scale = ColourScale::range(0.0, hi);
        let lay = Layout::new(c, self, &scale, top, bottom);
        self.draw_cells(c, &lay, &scale)?;
        self.draw_rows(c, &lay)?;
        self.draw_columns(c, &lay)?;
        let x = lay.mx + lay.w + c.px(40.0);
        colour_bar(c, &scale, (x, lay.my, lay.bar_w, lay.h), lay.tick_f)
    }
}

/// Where the parts go: the row labels and ids on the left, the class names above the matrix,
/// the colour bar on the right; the matrix takes the rest, its cells as wide as the classes
/// allow and as tall as the topics do.
struct Layout {
    /// Row label font, and the class names' font.
    font: f32,
    head_f: f32,
    gap: f32,
    labels_x: f32,
    row_label_w: f32,
    /// Top-left corner of the matrix, its size and one cell's.
    mx: f32,
    my: f32,
    w: f32,
    h: f32,
    cell_w: f32,
    cell_h: f32,
    tick_f: f32,
    bar_w: f32,
}

impl Layout {
    fn new<DB: DrawingBackend>(
        c: &Canvas<'_, DB>,
        chart: &ClassChart<'_>,
        scale: &ColourScale,
        top: f32,
        bottom: f32,
    ) -> Layout {
        let (k, n) = (chart.labels.len(), chart.classes.len());
        let m = c.margin();
        let gap = c.px(12.0);
        let bar_w = c.px(28.0);
        let tick_f = c.px(TICK_SIZE);
        let bar_block =
            c.px(40.0) + bar_w + c.px(12.0) + c.widest(tick_f, false, &scale.tick_labels);
        // The class names: larger when there are few columns to share the width.
        let head_f = ((c.width - 2.0 * m) * 0.6 / n as f32 / 6.0)
            .clamp(c.px(MIN_LABEL_SIZE), c.px(TICK_SIZE * 0.9));
        // Two lines of name and one of size.
        let head_h = 3.0 * Canvas::<DB>::line_h(head_f) + gap;
        let h = (bottom - top - head_h).max(1.0);
        let font = (h / k as f32 * 0.8).clamp(c.px(MIN_LABEL_SIZE) * 0.75, c.px(LABEL_SIZE * 0.87));
        let num_w = c.widest(font, true, &chart.ids);
        let row_label_w = c
            .widest(font, false, &chart.labels)
            .min((c.width - 2.0 * m) * 0.3);
        let labels_x = m;
        let mx = labels_x + row_label_w + gap + num_w + gap;
        let w = (c.width - m - bar_block - mx).max(1.0);
        Layout {
            font,
            head_f,
            gap,
            labels_x,
            row_label_w,
            mx,
            my: top + head_h,
            w,
            h,
            cell_w: w / n as f32,
            cell_h: h / k as f32,
            tick_f,
            bar_w,
        }
    }

    fn cell(&self, topic: usize, class: usize) -> Rect {
        let (x, y) = (
            self.mx + class as f32 * self.cell_w,
            self.my + topic as f32 * self.cell_h,
        );
        Rect::new(x, y, x + self.cell_w, y + self.cell_h)
    }
}

impl ClassChart<'_> {
    /// Every cell in its share's colour, with thin white lines between cells, and its count
    /// printed when the digits fit the cell at a readable size.
    fn draw_cells<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        lay: &Layout,
        scale: &ColourScale,
    ) -> Result<(), ChartError> {
        let value_f = (lay.cell_h / 2.2).min(c.px(TICK_SIZE));
        let widest = self
            .classes
            .iter()
            .flat_map(|cl| cl.counts.iter().map(|&n| group_thousands(n)))
            .map(|s| c.measure(value_f, false, &s))
            .fold(0.0f32, f32::max);
        let printed = value_f >= c.px(MIN_LABEL_SIZE) * 0.75 && widest <= lay.cell_w * 0.85;
        for j in 0..self.classes.len() {
            for i in 0..self.labels.len() {
                let r = lay.cell(i, j);
                let colour = viridis(scale.norm(self.share(j, i)));
                c.fill_rect(r, colour, 1.0)?;
                if lay.cell_w >= c.px(12.0) && lay.cell_h >= c.px(12.0) {
                    c.stroke_rect(r, WHITE, c.px(1.5))?;
                }
                if printed {
                    let ink = if luminance(colour) > 0.4 { INK } else { WHITE };
                    let n = group_thousands(self.classes[j].counts[i]);
                    let (x, y) = ((r.x0 + r.x1) / 2.0, (r.y0 + r.y1) / 2.0);
                    c.text(&n, x, y, value_f, false, ink, Align::Center)?;
                }
            }
        }
        Ok(())
    }

    /// Each topic's label and id left of its row.
    fn draw_rows<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        lay: &Layout,
    ) -> Result<(), ChartError> {
        let lines = if lay.cell_h >= lay.font * 2.6 { 2 } else { 1 };
        for (i, l) in self.labels.iter().enumerate() {
            let y = lay.my + (i as f32 + 0.5) * lay.cell_h;
            c.text(
                &self.ids[i],
                lay.mx - lay.gap,
                y,
                lay.font,
                true,
                MUTED,
                Align::Right,
            )?;
            let fitted = c.fit(l, lay.font, false, lay.row_label_w, lines);
            let right = lay.labels_x + lay.row_label_w;
            c.lines(&fitted, right, y, lay.font, false, INK, Align::Right)?;
        }
        Ok(())
    }

    /// Each class's name (two lines at most) over its size, above its column.
    fn draw_columns<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        lay: &Layout,
    ) -> Result<(), ChartError> {
        let lh = Canvas::<DB>::line_h(lay.head_f);
        let width = (lay.cell_w - c.px(6.0)).max(1.0);
        for (j, class) in self.classes.iter().enumerate() {
            let x = lay.mx + (j as f32 + 0.5) * lay.cell_w;
            let size_y = lay.my - lay.gap - lh / 2.0;
            let n = format!("n = {}", group_thousands(class.size));
            let n = c.fit1(&n, lay.head_f, false, width);
            c.text(&n, x, size_y, lay.head_f, false, MUTED, Align::Center)?;
            let name = c.fit(&clean(&class.name), lay.head_f, true, width, 2);
            let name_y = size_y - lh / 2.0 - lh * name.len() as f32 / 2.0;
            c.lines(&name, x, name_y, lay.head_f, true, INK, Align::Center)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{assert_well_formed, png_size, style, written};
    use super::*;

    fn classes(n: usize, k: usize) -> Vec<ClassColumn> {
        (0..n)
            .map(|j| ClassColumn {
                name: format!("Venue {j} — 会议 track"),
                size: (n - j) * 40,
                counts: (0..k).map(|i| ((n - j) * 40 / k) + (i * j) % 7).collect(),
            })
            .collect()
    }

    #[test]
    fn draws_at_the_requested_size_and_caps_the_classes() {
        let dir = tempfile::tempdir().unwrap();
        let k = 12;
        let labels: Vec<String> = (0..k).map(|i| format!("★ topic words {i}")).collect();
        let ids: Vec<usize> = (0..k).collect();
        let out = topics_per_class(dir.path(), &style(), &labels, &ids, &classes(30, k)).unwrap();
        let (png, svg, warnings) = written(out);
        assert_eq!(png_size(&png), (1920, 1080));
        assert!(warnings.is_empty(), "{warnings:?}");
        let text = std::fs::read_to_string(svg).unwrap();
        assert_well_formed(&text);
        assert!(
            text.contains("the 20 largest of 30 classes"),
            "the cap is said"
        );
        // Class j has (30 - j) * 40 documents: the 20th is drawn (440), the 21st is not (400).
        assert_eq!(text.matches("n = ").count(), MAX_CLASSES);
        assert!(text.contains("n = 440") && !text.contains("n = 400"));
        assert!(text.contains("★ topic words 3"));
    }

    #[test]
    fn bad_shapes_are_errors_and_nothing_to_draw_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let labels = vec!["a".to_string(), "b".to_string()];
        let e = topics_per_class(dir.path(), &style(), &labels, &[0], &classes(2, 2));
        assert!(matches!(e, Err(ChartError::MatrixRows { .. })));
        let e = topics_per_class(dir.path(), &style(), &labels, &[0, 1], &classes(2, 3));
        assert!(matches!(e, Err(ChartError::MatrixColumns { .. })));
        let out = topics_per_class(dir.path(), &style(), &labels, &[0, 1], &[]).unwrap();
        assert!(matches!(out, ChartOutcome::Skipped { .. }));
    }
}
