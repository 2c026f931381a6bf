//! Topic sizes: one horizontal bar per topic, largest first, with the
//! document count and share printed after each bar.
//!
//! Horizontal bars because topic labels are phrases ("language model,
//! reasoning") that only read well horizontally; values are printed instead
//! of an x axis (the exact count is what a talk audience asks for). When
//! there are more topics than rows that fit at the minimum legible font size,
//! the largest are shown and a footnote says how many were left out.
//! This module also holds the row layout shared with the movers chart.

use super::canvas::{Align, Canvas, Rect, LABEL_SIZE, MIN_LABEL_SIZE};
use super::palette::{topic_color, AXIS, INK};
use super::text::{group_thousands, topic_label};
use super::{render, skipped, Chart, ChartError, ChartOutcome, ChartStyle};
use plotters::prelude::DrawingBackend;
use std::path::Path;

/// One topic's size.
#[derive(Clone, Debug, PartialEq)]
pub struct TopicBar {
    /// Topic id (selects the colour, see [`palette_hex`](super::palette_hex)).
    pub topic_id: usize,
    /// Topic label shown next to the bar (wrapped / shortened to fit).
    pub label: String,
    /// Number of documents in the topic.
    pub size: usize,
    /// Share of all documents as a fraction in [0, 1]; printed as a
    /// percentage. Non-finite or negative shares are not printed.
    pub share: f64,
}

/// Draws `topic_sizes.png` / `.svg` into `dir`: horizontal bars sorted by
/// size (descending, ties by topic id), labelled "123 (12.3%)". Skipped when
/// `topics` is empty or every topic is empty.
pub fn topic_sizes(
    dir: &Path,
    style: &ChartStyle,
    topics: &[TopicBar],
) -> Result<ChartOutcome, ChartError> {
    if topics.is_empty() {
        return skipped("no topics to show");
    }
    if topics.iter().all(|t| t.size == 0) {
        return skipped("every topic has 0 documents");
    }
    let mut rows: Vec<(usize, String, usize, String)> = topics
        .iter()
        .map(|t| {
            let value = if t.share.is_finite() && t.share >= 0.0 {
                format!("{} ({:.1}%)", group_thousands(t.size), t.share * 100.0)
            } else {
                group_thousands(t.size)
            };
            (t.topic_id, topic_label(&t.label, t.topic_id), t.size, value)
        })
        .collect();
    rows.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    render(
        dir,
        "topic_sizes",
        style,
        &SizesChart {
            title: style.title.clone(),
            rows,
        },
    )
}

struct SizesChart {
    title: String,
    /// (topic id, label, size, value label), sorted.
    rows: Vec<(usize, String, usize, String)>,
}

/// Vertical layout of a list of labelled rows.
pub(crate) struct RowLayout {
    /// Rows that fit (the first `shown` rows are drawn).
    pub shown: usize,
    /// Height of one row.
    pub row_h: f32,
    /// Label font size.
    pub font: f32,
    /// Lines a label may wrap onto (1 or 2).
    pub max_lines: usize,
    /// Bar thickness.
    pub bar_h: f32,
}

/// Lays out `n` rows in `avail_h` pixels: font between `min_font` (at scale
/// 1) and the label size (scaled), as many rows as fit at `min_font`.
pub(crate) fn row_layout<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    avail_h: f32,
    n: usize,
    min_font: f32,
) -> RowLayout {
    let (min_f, max_f) = (c.px(min_font), c.px(LABEL_SIZE));
    let per_row = 1.45;
    let fit = ((avail_h / (min_f * per_row)).floor() as usize).max(1);
    let shown = n.min(fit).max(1);
    let row_h = avail_h.max(0.0) / shown as f32;
    let font = (row_h / per_row).clamp(min_f, max_f);
    let max_lines = if row_h >= font * 2.7 { 2 } else { 1 };
    let bar_h = (row_h * 0.62).min(font * 2.0).max(1.0);
    RowLayout {
        shown,
        row_h,
        font,
        max_lines,
        bar_h,
    }
}

impl Chart for SizesChart {
    fn draw<DB: DrawingBackend>(&self, c: &mut Canvas<'_, DB>) -> Result<(), ChartError> {
        let top = c.heading(&self.title, "Documents per topic, largest first")?;
        let m = c.margin();
        // Would all rows fit with a one-line footnote reserved?
        let probe = row_layout(c, c.footnote_top(1) - top, self.rows.len(), MIN_LABEL_SIZE);
        let notes = if probe.shown < self.rows.len() {
            vec![format!(
                "Showing the {} largest of {} topics.",
                probe.shown,
                self.rows.len()
            )]
        } else {
            Vec::new()
        };
        let bottom = c.footnote(&notes)?;
        let area = Rect::new(m, top, c.width - m, bottom);
        let lay = row_layout(c, area.h(), self.rows.len(), MIN_LABEL_SIZE);
        let rows = &self.rows[..lay.shown.min(self.rows.len())];
        let font = lay.font;
        let gap = c.px(16.0);

        let widest_label = c.widest(font, false, rows.iter().map(|r| &r.1));
        let label_w = widest_label.min(area.w() * 0.34);
        let val_font = font * 0.93;
        let val_w = c.widest(val_font, false, rows.iter().map(|r| &r.3));
        let bar_x0 = area.x0 + label_w + gap;
        let bar_max = (area.x1 - val_w - gap - bar_x0).max(0.0);
        let max_size = rows.iter().map(|r| r.2).max().unwrap_or(0).max(1) as f32;

        for (i, (id, label, size, value)) in rows.iter().enumerate() {
            let yc = area.y0 + (i as f32 + 0.5) * lay.row_h;
            let lines = c.fit(label, font, false, label_w, lay.max_lines);
            c.lines(&lines, bar_x0 - gap, yc, font, false, INK, Align::Right)?;
            let len = *size as f32 / max_size * bar_max;
            c.fill_rect(
                Rect::new(
                    bar_x0,
                    yc - lay.bar_h / 2.0,
                    bar_x0 + len,
                    yc + lay.bar_h / 2.0,
                ),
                topic_color(*id),
                1.0,
            )?;
            c.text(
                value,
                bar_x0 + len + gap * 0.6,
                yc,
                val_font,
                false,
                INK,
                Align::Left,
            )?;
        }
        c.vline(
            bar_x0,
            area.y0,
            area.y0 + lay.row_h * rows.len() as f32,
            AXIS,
            c.px(2.0),
        )
    }
}
