//! Top terms per topic as small multiples: a grid of panels, one per topic,
//! each a horizontal bar chart of the topic's strongest terms.
//!
//! Small multiples (rather than one big chart) because the audience compares
//! *within* a topic ("what is this topic about?"). Bars are scaled per panel
//! to the topic's strongest term: raw term weights are not comparable across
//! topics of different sizes, and a shared scale would leave small topics
//! with invisible bars. The grid is chosen to maximise the font size that
//! fits (trying every column count), with at least 5 terms per panel when
//! available and up to [`MAX_TERMS_PER_PANEL`]; with many topics (~30) the
//! font shrinks to a floor and panels show fewer terms.

use super::canvas::{Align, Canvas, Rect, LABEL_SIZE, MIN_LABEL_SIZE};
use super::palette::{topic_color, INK, MUTED};
use super::text::{clean, topic_label};
use super::{render, skipped, Chart, ChartError, ChartOutcome, ChartStyle};
use plotters::prelude::DrawingBackend;
use std::path::Path;

/// Most terms drawn in one panel.
pub const MAX_TERMS_PER_PANEL: usize = 8;

/// One topic's top terms.
#[derive(Clone, Debug, PartialEq)]
pub struct TopicTerms {
    /// Topic id (selects the colour).
    pub topic_id: usize,
    /// Topic label, the panel title.
    pub label: String,
    /// (term, weight) pairs; sorted here by weight (descending, stable) and
    /// cut to at most [`MAX_TERMS_PER_PANEL`]. Non-finite or negative weights
    /// draw as empty bars.
    pub terms: Vec<(String, f64)>,
}

/// Draws `top_terms.png` / `.svg` into `dir`: one panel per topic in the
/// given order. Skipped when there are no topics or no topic has terms.
pub fn top_terms(
    dir: &Path,
    style: &ChartStyle,
    topics: &[TopicTerms],
) -> Result<ChartOutcome, ChartError> {
    if topics.is_empty() {
        return skipped("no topics to show");
    }
    if topics.iter().all(|t| t.terms.is_empty()) {
        return skipped("no topic has any terms");
    }
    let panels = topics
        .iter()
        .map(|t| {
            let mut terms: Vec<(String, f64)> = t
                .terms
                .iter()
                .map(|(s, w)| (clean(s), if w.is_finite() { w.max(0.0) } else { 0.0 }))
                .filter(|(s, _)| !s.is_empty())
                .collect();
            terms.sort_by(|a, b| b.1.total_cmp(&a.1));
            terms.truncate(MAX_TERMS_PER_PANEL);
            Panel {
                topic_id: t.topic_id,
                label: topic_label(&t.label, t.topic_id),
                terms,
            }
        })
        .collect();
    render(
        dir,
        "top_terms",
        style,
        &TermsChart {
            title: style.title.clone(),
            panels,
        },
    )
}

struct Panel {
    topic_id: usize,
    label: String,
    terms: Vec<(String, f64)>,
}

struct TermsChart {
    title: String,
    panels: Vec<Panel>,
}

/// Chosen grid and font.
struct Grid {
    cols: usize,
    rows: usize,
    panel_w: f32,
    panel_h: f32,
    font: f32,
}

/// Row height per term, in font sizes.
const TERM_ROW: f32 = 1.3;
/// Panel title height, in term font sizes (bold title at 1.1x + spacing).
const TITLE_ROWS: f32 = 1.8;

/// Tries every column count; keeps the grid giving the largest term font
/// (ties: fewer empty cells).
fn choose_grid(n: usize, w: f32, h: f32, gap_x: f32, gap_y: f32, want: usize, max_f: f32) -> Grid {
    let k = want.clamp(1, 5) as f32;
    let mut best: Option<(f32, Grid)> = None;
    for cols in 1..=n.max(1) {
        let rows = n.div_ceil(cols).max(1);
        let pw = (w - gap_x * (cols - 1) as f32) / cols as f32;
        let ph = (h - gap_y * (rows - 1) as f32) / rows as f32;
        if pw <= 0.0 || ph <= 0.0 {
            continue;
        }
        let f_w = pw / 15.0;
        let f_h = ph / (TITLE_ROWS + k * TERM_ROW);
        let font = f_w.min(f_h).min(max_f);
        let score = font - 0.01 * (rows * cols - n) as f32;
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((
                score,
                Grid {
                    cols,
                    rows,
                    panel_w: pw,
                    panel_h: ph,
                    font,
                },
            ));
        }
    }
    best.map(|(_, g)| g).unwrap_or(Grid {
        cols: 1,
        rows: n.max(1),
        panel_w: w.max(0.0),
        panel_h: (h / n.max(1) as f32).max(0.0),
        font: 1.0,
    })
}

impl Chart for TermsChart {
    fn draw<DB: DrawingBackend>(&self, c: &mut Canvas<'_, DB>) -> Result<(), ChartError> {
        let top = c.heading(
            &self.title,
            "Top terms per topic (bar length relative to the topic's strongest term)",
        )?;
        let bottom = c.footnote(&[])?;
        let m = c.margin();
        let area = Rect::new(m, top, c.width - m, bottom);
        let want = self
            .panels
            .iter()
            .map(|p| p.terms.len())
            .max()
            .unwrap_or(0)
            .max(1);
        let (gap_x, gap_y) = (c.px(48.0), c.px(30.0));
        let g = choose_grid(
            self.panels.len(),
            area.w(),
            area.h(),
            gap_x,
            gap_y,
            want,
            c.px(LABEL_SIZE * 0.9),
        );
        let font = g.font.max(c.px(MIN_LABEL_SIZE));
        let title_f = font * 1.1;
        let title_lh = Canvas::<DB>::line_h(title_f);
        let fit_rows = ((g.panel_h - font * TITLE_ROWS) / (font * TERM_ROW))
            .floor()
            .max(1.0) as usize;
        let n_terms = want.min(fit_rows).min(MAX_TERMS_PER_PANEL);
        let gap = c.px(10.0);
        let sw = title_f * 0.8;
        let title_w = (g.panel_w - sw - gap).max(0.0);
        // Panel titles may take two lines when some title is too long for
        // one and the panel has a line to spare; all panels then reserve
        // two lines so term rows line up across the grid.
        let spare = g.panel_h - font * TITLE_ROWS - n_terms as f32 * font * TERM_ROW;
        let long_title = self
            .panels
            .iter()
            .any(|p| c.measure(title_f, true, &p.label) > title_w);
        let title_lines = if long_title && spare >= title_lh {
            2
        } else {
            1
        };
        let title_block = font * TITLE_ROWS + (title_lines - 1) as f32 * title_lh;
        // Spread rows over the panel height, up to 1.55 font sizes each.
        let row_h = ((g.panel_h - title_block) / n_terms.max(1) as f32)
            .min(font * 1.55)
            .max(font * TERM_ROW);

        // One term column width for all panels keeps the grid calm.
        let widest = self
            .panels
            .iter()
            .flat_map(|p| p.terms.iter().take(n_terms))
            .map(|(t, _)| c.measure(font, false, t))
            .fold(0.0f32, f32::max);
        let term_w = widest.min(g.panel_w * 0.55);

        for (i, p) in self.panels.iter().enumerate() {
            let (col, row) = (i % g.cols, i / g.cols);
            if row >= g.rows {
                break;
            }
            let x0 = area.x0 + col as f32 * (g.panel_w + gap_x);
            let y0 = area.y0 + row as f32 * (g.panel_h + gap_y);
            let color = topic_color(p.topic_id);
            // Title: colour swatch + bold label (1 or 2 lines).
            let ty = y0 + title_lh / 2.0;
            c.fill_rect(
                Rect::new(x0, ty - sw / 2.0, x0 + sw, ty + sw / 2.0),
                color,
                1.0,
            )?;
            let lines = c.fit(&p.label, title_f, true, title_w, title_lines);
            for (li, line) in lines.iter().enumerate() {
                let y = ty + li as f32 * title_lh;
                c.text(line, x0 + sw + gap, y, title_f, true, INK, Align::Left)?;
            }

            let bars_y0 = y0 + title_block;
            if p.terms.is_empty() {
                c.text(
                    "(no terms)",
                    x0,
                    bars_y0 + row_h / 2.0,
                    font,
                    false,
                    MUTED,
                    Align::Left,
                )?;
                continue;
            }
            let max_w = p.terms.iter().map(|t| t.1).fold(0.0f64, f64::max);
            let bar_x0 = x0 + term_w + gap;
            let bar_max = (x0 + g.panel_w - bar_x0).max(0.0);
            for (j, (term, w)) in p.terms.iter().take(n_terms).enumerate() {
                let yc = bars_y0 + (j as f32 + 0.5) * row_h;
                let tl = c.fit1(term, font, false, term_w);
                c.text(&tl, bar_x0 - gap, yc, font, false, INK, Align::Right)?;
                let len = if max_w > 0.0 {
                    (w / max_w) as f32 * bar_max
                } else {
                    0.0
                };
                let bh = font * 0.85;
                c.fill_rect(
                    Rect::new(bar_x0, yc - bh / 2.0, bar_x0 + len, yc + bh / 2.0),
                    color,
                    1.0,
                )?;
            }
        }
        Ok(())
    }
}
