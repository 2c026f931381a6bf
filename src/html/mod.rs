//! The two human-facing summaries of a run: `report.html` and `summary.md`.
//!
//! * [`render_html`] builds ONE self-contained page that tells the whole
//!   story (summary, topic table with sparklines, charts, movers, one section
//!   per topic, metrics, warnings). It is opened from disk and printed to
//!   PDF, so it makes no network request at all: the CSS is inlined in a
//!   `<style>`, the charts are inlined `<svg>` elements, there is no
//!   JavaScript, and a Content-Security-Policy `<meta>` (`default-src
//!   'none'`) blocks scripts and requests even if something slipped through.
//!   The only links are `#topic-N` anchors.
//! * [`render_markdown`] builds a short summary for an e-mail or a chat:
//!   a one-line header, the largest topics and the biggest movers.
//!
//! Design choices, and why:
//!
//! * **Self-contained.** This module depends on no other topicmap module;
//!   it takes the plain structs below ([`ReportData`], ...) which the
//!   pipeline fills, so the report can be tested and restyled alone.
//! * **No template engine.** The HTML is written with `write!` into one
//!   `String`; every piece of document-derived text goes through one
//!   escaping wrapper (`& < > " '`), so titles such as
//!   `<script>alert(1)</script>` show as literal text.
//! * **Charts are sanitised anyway.** They come from our own plotters
//!   renderer, which escapes its text, but [`sanitize_svg`] re-serialises
//!   each one through an element allowlist (no `<script>`, no
//!   `<foreignObject>`, no `on*=` handlers, no `javascript:` or external
//!   URLs) before inlining, and makes it responsive (`width="100%"`, a
//!   `viewBox`, height from the aspect ratio).
//! * **Print.** `@media print` keeps table rows, charts and papers whole,
//!   starts each topic section on a new page and forces swatch colours to
//!   print. Settings sit in a `<details>` that is collapsed on screen and
//!   printed open where the browser supports it.
//! * **Any script.** A system font stack with CJK fallbacks
//!   (`system-ui, ..., "Noto Sans CJK SC", "Microsoft YaHei", sans-serif`) and
//!   `dir="auto"` on document text, so Chinese, Arabic or Hebrew titles
//!   render and align correctly.
//!
//! Units: `share` and `shares_by_period` are fractions of documents (0.12 =
//! 12%); a mover's `change` is in the same unit (shown as percentage
//! points, e.g. +1.20 pp) and its meaning is given by `trend_measure`.

mod cleaning;
mod details;
mod escape;
mod map;
mod markdown;
mod page;
mod parts;
mod per_class;
mod sparkline;
mod svg;

#[cfg(test)]
mod tests;

pub use svg::{sanitize_svg, SafeSvg, SvgError, ALLOWED_ELEMENTS};

use serde::{Deserialize, Serialize};

/// Everything the report shows; the pipeline fills it. All text is shown
/// escaped, whatever it contains.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportData {
    /// The pipeline's title (any script), e.g. "NeurIPS 2026 论文列表".
    /// Empty shows as "Topic report".
    pub title: String,
    /// What was read, e.g. "2 files, 26 documents".
    pub corpus: String,
    /// Number of documents clustered.
    pub documents: usize,
    /// Period labels in time order; empty when there is no time axis.
    /// Trends are drawn only with 2 or more periods.
    pub periods: Vec<String>,
    /// Number of topics.
    pub k: usize,
    /// How `k` was chosen, e.g. "fixed in the pipeline file".
    pub k_rule: String,
    /// When the run happened, ISO 8601 date-time in UTC.
    pub run_date: String,
    /// Settings as key/value pairs, shown in a compact table.
    pub settings: Vec<(String, String)>,
    /// The topics, in the order the table shows them.
    pub topics: Vec<ReportTopic>,
    /// The charts, in display order.
    pub charts: Vec<ReportChart>,
    /// Rising (`change > 0`) and declining (`change < 0`) topics, each group
    /// already ranked (biggest first); `change == 0` entries are not shown.
    pub movers: Vec<Mover>,
    /// What a mover's `change` measures, e.g. "slope of share per period
    /// (weighted least squares)".
    pub trend_measure: String,
    /// External-label metrics (e.g. V-measure, ARI) when a label column
    /// exists; `None` or empty hides the section.
    pub metrics: Option<Vec<(String, f64)>>,
    /// Things the reader should know (skipped documents, skipped charts...).
    /// The page shows at most [`MAX_WARNINGS_SHOWN`] of them.
    pub warnings: Vec<String>,
    /// The merges of the topic hierarchy, closest first; empty hides the section (its chart,
    /// named `topic_tree`, is then shown with the others).
    pub hierarchy: Vec<ReportMerge>,
    /// What the clean stage removed; `None` (or nothing in it) hides the section.
    #[serde(default)]
    pub cleaning: Option<ReportCleaning>,
    /// The interactive document map; `None` (or no points) hides it.
    #[serde(default)]
    pub map: Option<ReportMap>,
    /// Topics per class (`[describe] per-class`), when the pipeline asks for them.
    #[serde(default)]
    pub per_class: Option<ReportPerClass>,
}

/// Topics per class, for the report's section: the column and its classes, largest first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportPerClass {
    pub column: String,
    pub classes: Vec<ReportClass>,
}

/// One class: its name, its documents, and its topics, largest share first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportClass {
    pub name: String,
    pub size: usize,
    pub topics: Vec<ReportClassTopic>,
}

/// A topic within a class: its id, label (a named topic's with its mark), share of the class's
/// documents and terms within the class.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportClassTopic {
    pub id: usize,
    pub label: String,
    pub share: f64,
    pub terms: Vec<String>,
}

/// The document map: every document's place, and each topic's label anchor.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportMap {
    /// How the map was laid out (shown above it).
    pub note: String,
    pub points: Vec<ReportMapPoint>,
    /// (topic id, x, y) of each topic's label.
    pub anchors: Vec<(usize, f32, f32)>,
}

/// One document on the map.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportMapPoint {
    pub x: f32,
    pub y: f32,
    pub topic_id: usize,
    pub outlier: bool,
    pub title: String,
}

/// What the clean stage removed before the analysis.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportCleaning {
    /// Repeated segments (text, documents holding it), the most frequent first.
    pub segments: Vec<(String, usize)>,
    /// All repeated segments found (more than `segments` lists when many).
    pub segments_found: usize,
    /// Documents a segment had to recur in.
    pub min_docs: usize,
    /// What was removed and how often, e.g. ("URLs", 14068); zero counts are left out.
    pub counts: Vec<(String, u64)>,
    /// Rules that stood down for this corpus, in a sentence each.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The first documents that repeat another's whole text: (id, the first one's id).
    #[serde(default)]
    pub duplicates: Vec<(String, String)>,
}

/// One topic.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportTopic {
    /// Topic number; also the anchor `#topic-{id}`. Ids should be unique.
    pub id: usize,
    /// Short human label; empty shows as "Topic {id}".
    pub label: String,
    /// Number of documents in the topic.
    pub size: usize,
    /// Fraction of all documents (0..=1).
    pub share: f64,
    /// Top terms with their weights, best first. The table shows the first
    /// [`TABLE_TERMS`]; the topic's section shows all.
    pub terms: Vec<(String, f64)>,
    /// Representative documents, best first. The table shows the first
    /// [`TABLE_PAPERS`] titles; the topic's section shows all with snippets.
    pub representatives: Vec<ReportDoc>,
    /// Share of each period's documents in this topic; same length as
    /// [`ReportData::periods`], or empty.
    pub shares_by_period: Vec<f64>,
    /// CSS hex colour such as "#E69F00"; anything else shows as grey.
    pub colour: String,
    /// Named in the pipeline file (`[[topic]]`); its label carries the mark.
    #[serde(default)]
    pub named: bool,
}

/// One representative document.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportDoc {
    /// The document's id in the input.
    pub id: String,
    /// Its title; empty shows the id instead.
    pub title: String,
    /// The start of its abstract.
    pub snippet: String,
}

impl ReportDoc {
    /// What the report shows as its title: the title, or the id when it has none.
    pub fn shown_title(&self) -> &str {
        if self.title.trim().is_empty() {
            &self.id
        } else {
            &self.title
        }
    }
}

/// One chart to inline.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportChart {
    /// Short name, e.g. "timeline".
    pub name: String,
    /// One-sentence caption shown below the chart; empty shows the name.
    pub caption: String,
    /// The full SVG document text (as written by plotters).
    pub svg: String,
}

/// One merge of the topic hierarchy: a group of kin topics.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportMerge {
    /// The group's label (its documents' c-TF-IDF label).
    pub label: String,
    /// The topics in the group: ids (linking to `#topic-{id}`) and labels.
    pub topics: Vec<(usize, String)>,
    /// The distance at which the group formed (1 - cosine similarity).
    pub distance: f64,
    /// Documents in the group.
    pub size: usize,
}

/// A rising or declining topic.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Mover {
    /// The topic's id (links to `#topic-{id}` when that topic exists).
    pub topic_id: usize,
    /// The topic's label.
    pub label: String,
    /// Change in share (a fraction, like [`ReportTopic::share`]), measured
    /// as [`ReportData::trend_measure`] says; > 0 rising, < 0 declining.
    pub change: f64,
}

/// Terms per topic in the HTML topic table (the topic section shows all).
pub const TABLE_TERMS: usize = 8;
/// Representative titles per topic in the HTML topic table.
pub const TABLE_PAPERS: usize = 3;
/// Warnings listed in the HTML page; the rest are counted.
pub const MAX_WARNINGS_SHOWN: usize = 200;
/// Topics listed in `summary.md` (the largest by size).
pub const SUMMARY_TOPICS: usize = 10;
/// Rising and declining topics listed in `summary.md`, each.
pub const SUMMARY_MOVERS: usize = 5;

/// Renders `report.html`: one self-contained, script-free page (see the
/// module docs). Never fails: charts that cannot be inlined and trends that
/// cannot be drawn are reported in the page's warnings.
pub fn render_html(data: &ReportData) -> String {
    page::render(data)
}

/// Renders `summary.md`: a one-line header (title, corpus, topic count, run
/// date), the [`SUMMARY_TOPICS`] largest topics (label, size, share) and up
/// to [`SUMMARY_MOVERS`] rising and declining topics. Plain Markdown, no
/// HTML.
pub fn render_markdown(data: &ReportData) -> String {
    markdown::render(data)
}

/// The label to show for a topic: its own, or "Topic {id}" when empty.
fn topic_label(id: usize, label: &str) -> std::borrow::Cow<'_, str> {
    let l = label.trim();
    if l.is_empty() {
        std::borrow::Cow::Owned(format!("Topic {id}"))
    } else {
        std::borrow::Cow::Borrowed(l)
    }
}
