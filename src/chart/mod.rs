//! Slide-ready charts (PNG + SVG) for talks and the HTML report.
//!
//! Each public function draws one chart and writes it twice into a
//! directory, as `<name>.png` (default 1920x1080, for slides and
//! projectors) and `<name>.svg` (for the HTML report). A chart with nothing
//! to show is not drawn: the function returns [`ChartOutcome::Skipped`] with
//! the reason.
//!
//! Design choices, and why:
//!
//! * **Self-contained.** This module depends on no other topicmap module;
//!   it takes small plain input structs ([`TopicBar`], [`TopicTerms`], ...)
//!   that the pipeline fills, so charts can be tested and restyled alone.
//! * **Headless, no system fonts.** DejaVu Sans and Droid Sans Fallback are
//!   embedded and registered with plotters' `ab_glyph` support. Droid Sans
//!   Fallback has no Latin glyphs, so the font is picked per *run* of
//!   characters by glyph coverage (DejaVu first): "NeurIPS 2026 论文列表"
//!   renders with real glyphs in both scripts. Characters no embedded font
//!   covers are still drawn (as boxes) and reported in
//!   [`ChartOutcome::Written::warnings`].
//! * **Pixel layout by hand.** plotters is used as a drawing backend only;
//!   the charts compute every position themselves from measured text widths
//!   so labels never overlap or leave the canvas (long labels wrap onto two
//!   lines or end in "…"). The same code drives the PNG and the SVG backend.
//! * **Projector legibility.** White background, large type (title 48 px,
//!   labels ~26-30 px at 1920x1080; everything multiplies by
//!   [`ChartStyle::scale`]), no 3-D, no heavy frames, one colour-blind-safe
//!   palette in which topic `i` always has colour `i` (see [`palette_hex`]).
//! * **Safe SVG.** plotters' SVG backend XML-escapes text and attribute
//!   values itself (`<`, `>`, `&`, quotes), so labels are passed to it
//!   unescaped (escaping here too would show `&amp;lt;`). Control characters,
//!   which XML forbids and which would make the SVG invalid, are replaced by
//!   spaces before drawing.

mod axes;
mod canvas;
mod document_map;
mod fonts;
mod heatmap;
mod kselect;
mod movers;
mod palette;
mod per_class;
mod sizes;
mod terms;
mod text;
mod timeline;
mod tree;

pub use document_map::{document_map, MapPoint, MapTopic, MAX_MAP_POINTS};
pub use heatmap::{similarity_heatmap, MAX_PRINTED_K};
pub use kselect::{k_selection, KScore};
pub use movers::{movers, Mover};
pub use palette::{palette_hex, PALETTE_LEN};
pub use per_class::{topics_per_class, ClassColumn, MAX_CLASSES};
pub use sizes::{topic_sizes, TopicBar};
pub use terms::{top_terms, TopicTerms, MAX_TERMS_PER_PANEL};
pub use text::shorten;
pub use timeline::{topic_share_over_time, TopicSeries};
pub use tree::{topic_tree, TreeNode};

use canvas::Canvas;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// Smallest accepted canvas width or height, in pixels.
pub const MIN_SIDE: u32 = 200;
/// Largest accepted canvas width or height, in pixels (a 10000x10000 RGB
/// bitmap is 300 MB).
pub const MAX_SIDE: u32 = 10_000;
/// Accepted range of [`ChartStyle::scale`].
pub const SCALE_RANGE: (f32, f32) = (0.25, 8.0);

/// Size and heading shared by all charts of a run.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ChartStyle {
    /// PNG width in pixels (also the SVG's width). Default 1920.
    pub width: u32,
    /// PNG height in pixels. Default 1080.
    pub height: u32,
    /// Multiplies font sizes, line widths, margins and dot sizes. Default 1.0;
    /// use 2.0 with 3840x2160 for the same look at 4K.
    pub scale: f32,
    /// The pipeline's title, shown in bold at the top of every chart (each
    /// chart adds its own subtitle below). Default empty (the subtitle then
    /// becomes the heading).
    #[serde(skip)]
    pub title: String,
}

impl Default for ChartStyle {
    /// 1920x1080, scale 1.0, empty title.
    fn default() -> Self {
        Self {
            width: 1920,
            height: 1080,
            scale: 1.0,
            title: String::new(),
        }
    }
}

impl ChartStyle {
    /// Checks the style's rules (one [`ChartError`] variant per rule). Every
    /// chart function calls this first.
    pub fn check(&self) -> Result<(), ChartError> {
        if !(MIN_SIDE..=MAX_SIDE).contains(&self.width) {
            return Err(ChartError::Width(self.width));
        }
        if !(MIN_SIDE..=MAX_SIDE).contains(&self.height) {
            return Err(ChartError::Height(self.height));
        }
        if !(self.scale.is_finite() && (SCALE_RANGE.0..=SCALE_RANGE.1).contains(&self.scale)) {
            return Err(ChartError::Scale(self.scale));
        }
        Ok(())
    }
}

/// What a chart function did.
#[derive(Clone, Debug, PartialEq)]
pub enum ChartOutcome {
    /// Both files were written.
    Written {
        /// `<dir>/<name>.png`
        png: PathBuf,
        /// `<dir>/<name>.svg`
        svg: PathBuf,
        /// Human-readable problems that did not stop drawing (e.g. characters
        /// no embedded font covers); the caller prints them to stderr.
        warnings: Vec<String>,
    },
    /// Nothing to show; no file was written.
    Skipped {
        /// Why, e.g. "fewer than 2 periods".
        reason: String,
    },
}

/// Errors of the chart functions.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// Rule: width within [MIN_SIDE, MAX_SIDE].
    #[error("charts.width must be between 200 and 10000 pixels, got {0}")]
    Width(u32),
    /// Rule: height within [MIN_SIDE, MAX_SIDE].
    #[error("charts.height must be between 200 and 10000 pixels, got {0}")]
    Height(u32),
    /// Rule: scale finite and within SCALE_RANGE.
    #[error("charts.scale must be a finite number between 0.25 and 8, got {0}")]
    Scale(f32),
    /// Rule: every time series has one value per period.
    #[error("series {label:?} must have one value per period ({expected}), got {found}")]
    SeriesLength {
        label: String,
        expected: usize,
        found: usize,
    },
    /// Rule: a heatmap's matrix (similarity, topics per class) has one row per label.
    #[error("heatmap matrix must have one row per label ({expected}), got {found} rows")]
    MatrixRows { expected: usize, found: usize },
    /// Rule: every row (or class column) of a heatmap has one value per label.
    #[error("heatmap matrix row {row} must have one value per label ({expected}), got {found}")]
    MatrixColumns {
        row: usize,
        expected: usize,
        found: usize,
    },
    /// Rule: a tree node names only nodes that exist as its children.
    #[error("tree node {0} is named as a child but not given")]
    UnknownNode(usize),
    /// The embedded fonts could not be loaded (a build problem). The reason is kept as text:
    /// the fonts are loaded once per process and the outcome cached, for every chart.
    #[error("could not load the embedded chart fonts: {0}")]
    Font(String),
    /// The output directory could not be created.
    #[error("could not create chart directory {path}: {source}")]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// plotters failed to draw or write a file.
    #[error("could not draw or write {path}")]
    Draw {
        path: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// A chart ready to draw on any plotters backend.
pub(crate) trait Chart {
    /// Draws the whole chart, heading included.
    fn draw<DB: DrawingBackend>(&self, c: &mut Canvas<'_, DB>) -> Result<(), ChartError>;
}

/// Validates `style`, then draws `chart` into `<dir>/<name>.png` and
/// `<dir>/<name>.svg` (creating `dir` if needed).
pub(crate) fn render(
    dir: &Path,
    name: &str,
    style: &ChartStyle,
    chart: &impl Chart,
) -> Result<ChartOutcome, ChartError> {
    style.check()?;
    let fonts = fonts::fonts().map_err(ChartError::Font)?;
    std::fs::create_dir_all(dir).map_err(|source| ChartError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let png = dir.join(format!("{name}.png"));
    let svg = dir.join(format!("{name}.svg"));
    let size = (style.width, style.height);
    let draw_err = |path: &Path, e: Box<dyn std::error::Error + Send + Sync>| ChartError::Draw {
        path: path.to_path_buf(),
        source: e,
    };

    let warnings = {
        let root = BitMapBackend::new(&png, size).into_drawing_area();
        let mut c = Canvas::new(&root, fonts, false, &png, style.scale);
        chart.draw(&mut c)?;
        let w = c.into_warnings();
        root.present().map_err(|e| draw_err(&png, Box::new(e)))?;
        w
    };
    {
        let root = SVGBackend::new(&svg, size).into_drawing_area();
        let mut c = Canvas::new(&root, fonts, true, &svg, style.scale);
        chart.draw(&mut c)?;
        root.present().map_err(|e| draw_err(&svg, Box::new(e)))?;
    }
    Ok(ChartOutcome::Written { png, svg, warnings })
}

/// Shorthand for a skip.
pub(crate) fn skipped(reason: impl Into<String>) -> Result<ChartOutcome, ChartError> {
    Ok(ChartOutcome::Skipped {
        reason: reason.into(),
    })
}

#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod tests;
