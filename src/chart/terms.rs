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
    /// Heading, the grid with the largest font that fits, the sizes shared
    /// by every panel; then each panel: its title, then its term bars.
    fn draw<DB: DrawingBackend>(&self, c: &mut Canvas<'_, DB>) -> Result<(), ChartError> {
        let top = c.heading(
            &self.title,
            "Top terms per topic (bar length relative to the topic's strongest term)",
        )?;
        let bottom = c.footnote(&[])?;
        let m = c.margin();
        let area = Rect::new(m, top, c.width - m, bottom);
        let lay = PanelLayout::new(c, &self.panels, area);
        for (i, p) in self.panels.iter().enumerate() {
            let (col, row) = (i % lay.grid.cols, i / lay.grid.cols);
            if row >= lay.grid.rows {
                break;
            }
            let x0 = area.x0 + col as f32 * (lay.grid.panel_w + lay.gap_x);
            let y0 = area.y0 + row as f32 * (lay.grid.panel_h + lay.gap_y);
            lay.draw_title(c, p, x0, y0)?;
            lay.draw_bars(c, p, x0, y0 + lay.title_block)?;
        }
        Ok(())
    }
}

/// Panel title font size (bold) for term font size `font`.
fn title_font(font: f32) -> f32 {
    font * 1.1
}

/// Side of a panel title's colour swatch, for title font size `title_f`.
fn swatch(title_f: f32) -> f32 {
    title_f * 0.8
}

/// The grid and the sizes every panel shares, so that term rows and bars
/// line up across the grid.
struct PanelLayout {
    grid: Grid,
    /// Space between panels.
    gap_x: f32,
    gap_y: f32,
    /// Term font size (at least the minimum label size).
    font: f32,
    /// Lines a panel title may take (1 or 2), and its room beside the swatch.
    title_lines: usize,
    title_w: f32,
    /// Height of the title block above the bars.
    title_block: f32,
    /// Space between swatch and title, term and bar.
    gap: f32,
    /// Terms shown per panel, and the height of one term row.
    n_terms: usize,
    row_h: f32,
    /// One term column width for all panels (keeps the grid calm).
    term_w: f32,
}

impl PanelLayout {
    /// Chooses the grid for `panels` in `area`, then how many terms fit a
    /// panel, whether titles get two lines, the row height and the term
    /// column width.
    fn new<DB: DrawingBackend>(c: &Canvas<'_, DB>, panels: &[Panel], area: Rect) -> Self {
        let want = panels
            .iter()
            .map(|p| p.terms.len())
            .max()
            .unwrap_or(0)
            .max(1);
        let (gap_x, gap_y) = (c.px(48.0), c.px(30.0));
        let grid = choose_grid(
            panels.len(),
            area.w(),
            area.h(),
            gap_x,
            gap_y,
            want,
            c.px(LABEL_SIZE * 0.9),
        );
        let font = grid.font.max(c.px(MIN_LABEL_SIZE));
        let title_f = title_font(font);
        let title_lh = Canvas::<DB>::line_h(title_f);
        let fit_rows = ((grid.panel_h - font * TITLE_ROWS) / (font * TERM_ROW))
            .floor()
            .max(1.0) as usize;
        let n_terms = want.min(fit_rows).min(MAX_TERMS_PER_PANEL);
        let gap = c.px(10.0);
        let title_w = (grid.panel_w - swatch(title_f) - gap).max(0.0);
        // Panel titles may take two lines when some title is too long for
        // one and the panel has a line to spare; all panels then reserve
        // two lines so term rows line up across the grid.
        let spare = grid.panel_h - font * TITLE_ROWS - n_terms as f32 * font * TERM_ROW;
        let long_title = panels
            .iter()
            .any(|p| c.measure(title_f, true, &p.label) > title_w);
        let title_lines = if long_title && spare >= title_lh {
            2
        } else {
            1
        };
        let title_block = font * TITLE_ROWS + (title_lines - 1) as f32 * title_lh;
        // Spread rows over the panel height, up to 1.55 font sizes each.
        let row_h = ((grid.panel_h - title_block) / n_terms.max(1) as f32)
            .min(font * 1.55)
            .max(font * TERM_ROW);
        let terms = panels.iter().flat_map(|p| p.terms.iter().take(n_terms));
        let widest = c.widest(font, false, terms.map(|(t, _)| t));
        let term_w = widest.min(grid.panel_w * 0.55);
        PanelLayout {
            grid,
            gap_x,
            gap_y,
            font,
            title_lines,
            title_w,
            title_block,
            gap,
            n_terms,
            row_h,
            term_w,
        }
    }

    /// A panel's title at (`x0`, `y0`): colour swatch + bold label (1 or 2
    /// lines).
    fn draw_title<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        p: &Panel,
        x0: f32,
        y0: f32,
    ) -> Result<(), ChartError> {
        let title_f = title_font(self.font);
        let title_lh = Canvas::<DB>::line_h(title_f);
        let sw = swatch(title_f);
        let ty = y0 + title_lh / 2.0;
        c.fill_rect(
            Rect::new(x0, ty - sw / 2.0, x0 + sw, ty + sw / 2.0),
            topic_color(p.topic_id),
            1.0,
        )?;
        let lines = c.fit(&p.label, title_f, true, self.title_w, self.title_lines);
        for (li, line) in lines.iter().enumerate() {
            let y = ty + li as f32 * title_lh;
            c.text(line, x0 + sw + self.gap, y, title_f, true, INK, Align::Left)?;
        }
        Ok(())
    }

    /// A panel's term rows from `bars_y0` down: each term right-aligned in
    /// the term column, then its bar scaled to the panel's strongest term;
    /// "(no terms)" for a topic without any.
    fn draw_bars<DB: DrawingBackend>(
        &self,
        c: &Canvas<'_, DB>,
        p: &Panel,
        x0: f32,
        bars_y0: f32,
    ) -> Result<(), ChartError> {
        let (font, gap, row_h) = (self.font, self.gap, self.row_h);
        if p.terms.is_empty() {
            let y = bars_y0 + row_h / 2.0;
            return c.text("(no terms)", x0, y, font, false, MUTED, Align::Left);
        }
        let max_w = p.terms.iter().map(|t| t.1).fold(0.0f64, f64::max);
        let bar_x0 = x0 + self.term_w + gap;
        let bar_max = (x0 + self.grid.panel_w - bar_x0).max(0.0);
        for (j, (term, w)) in p.terms.iter().take(self.n_terms).enumerate() {
            let yc = bars_y0 + (j as f32 + 0.5) * row_h;
            let tl = c.fit1(term, font, false, self.term_w);
            c.text(&tl, bar_x0 - gap, yc, font, false, INK, Align::Right)?;
            let len = if max_w > 0.0 {
                (w / max_w) as f32 * bar_max
            } else {
                0.0
            };
            let bh = font * 0.85;
            c.fill_rect(
                Rect::new(bar_x0, yc - bh / 2.0, bar_x0 + len, yc + bh / 2.0),
                topic_color(p.topic_id),
                1.0,
            )?;
        }
        Ok(())
    }
}
