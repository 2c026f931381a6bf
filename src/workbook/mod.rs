//! `report.xlsx`: the report's tables as one workbook, written with rust_xlsxwriter.
//!
//! Sheets: Topics, Documents, Terms, Trends (period x topic shares), Drift, Topics per class
//! (with `describe.per-class`) and About (settings, inputs with their checksums, run date,
//! version). Cells are typed: text is a string (so no
//! formula guard is needed: a string cell never runs), ids and counts are numbers, shares are
//! numbers shown as percentages. Every sheet has a frozen, bold header row with an autofilter
//! and columns sized to their content. A document's topic label links to its topic's row in
//! Topics. Two native Excel charts read the sheets' own cells, so they follow any edit: topic
//! sizes (beside Topics) and share over time (beside Trends).
//!
//! The Documents sheet holds the first `documents` rows (default 100,000: a larger sheet is slow
//! to open and to scroll, and Excel stops at 1,048,575); About says how many it holds, and
//! `documents.csv` (or the Parquet copy) has all. Excel holds at most 65,530 links per sheet, so
//! only that many documents link to their topic.
//!
//! This file writes the sheets in order; [`frame`] writes a table as typed cells, [`charts`]
//! the two native charts and [`about`] the About sheet.

mod about;
mod charts;
mod frame;

use crate::tables::ExportError;
use frame::{write_frame, Links, Styles};
use polars::prelude::*;
use rust_xlsxwriter::{DocProperties, ExcelDateTime, Workbook, XlsxError};
use std::collections::HashMap;
use std::path::Path;

/// Writes `report.xlsx` into `dir`.
pub fn write_file(dir: &Path, tables: &WorkbookTables<'_>) -> Result<(), ExportError> {
    let path = dir.join("report.xlsx");
    write(&path, tables).map_err(|source| ExportError::Xlsx { path, source })
}

/// Most data rows a sheet holds (Excel's limit, less the header).
pub const MAX_ROWS: usize = 1_048_575;
/// Documents the Documents sheet holds when the pipeline does not say.
pub const DEFAULT_DOCUMENTS: usize = 100_000;
/// Most hyperlinks a sheet holds (Excel's limit).
pub const MAX_LINKS: usize = 65_530;

/// A value of the About sheet.
#[derive(Debug, Clone, PartialEq)]
pub enum AboutValue {
    Text(String),
    Number(f64),
}

/// What the About sheet says: how the report was made.
#[derive(Debug, Clone)]
pub struct About {
    /// Key/value rows: title, run date, version, counts, settings.
    pub rows: Vec<(String, AboutValue)>,
    /// The inputs: path, format, bytes, sha256, documents.
    pub inputs: Vec<(String, String, u64, String, usize)>,
    /// The run's start (the workbook's creation time, so equal runs write equal files).
    pub created: chrono::DateTime<chrono::Utc>,
}

/// The tables and facts a workbook is made of.
#[derive(Debug)]
pub struct WorkbookTables<'a> {
    pub topics: &'a DataFrame,
    /// The documents table, or its first rows; None for a report built from summed counts
    /// alone (no document is at hand).
    pub documents: Option<&'a DataFrame>,
    /// The rows of the whole documents table (`documents` may hold only the first).
    pub documents_total: usize,
    pub terms: &'a DataFrame,
    /// Period x topic shares (see `tables::trends_wide`).
    pub trends_wide: &'a DataFrame,
    pub drift: Option<&'a DataFrame>,
    /// Topics per class (see `tables::topics_per_class`), with `describe.per-class`.
    pub per_class: Option<&'a DataFrame>,
    pub about: &'a About,
    /// Columns of `trends_wide` (topic columns, 0 = the first topic) drawn in the chart.
    pub chart_topics: &'a [usize],
    /// Most documents the Documents sheet holds (at most [`MAX_ROWS`]).
    pub max_documents: usize,
}

impl WorkbookTables<'_> {
    /// How many documents the Documents sheet shows at most.
    fn documents_shown(&self) -> usize {
        self.max_documents.min(MAX_ROWS)
    }
}

/// Writes the workbook to `path`: Topics, Documents, Terms, Trends, Drift, Topics per class
/// (with `describe.per-class`) and About, in order.
pub fn write(path: &Path, t: &WorkbookTables<'_>) -> Result<(), XlsxError> {
    let mut wb = Workbook::new();
    // Level 1 deflate: most of the save time is compression, and the file grows little.
    wb.set_zip_compression_level(1);
    wb.set_properties(
        &DocProperties::new()
            .set_title("topicmap report")
            .set_creation_datetime(&ExcelDateTime::from_timestamp(t.about.created.timestamp())?),
    );
    let styles = Styles::new();
    topics_sheet(&mut wb, t, &styles)?;
    if let Some(documents) = t.documents {
        documents_sheet(&mut wb, t, documents, &styles)?;
    }
    let ws = wb.add_worksheet().set_name("Terms")?;
    write_frame(ws, t.terms, &styles, &|_| false, None)?;
    trends_sheet(&mut wb, t, &styles)?;
    drift_sheet(&mut wb, t, &styles)?;
    per_class_sheet(&mut wb, t, &styles)?;
    let ws = wb.add_worksheet().set_name("About")?;
    about::write_about(
        ws,
        t.about,
        &styles,
        t.documents.map(|_| t.documents_total),
        t.documents_shown(),
    )?;
    wb.save(path)
}

/// The Topics sheet, with the topic-size chart beside the table.
fn topics_sheet(
    wb: &mut Workbook,
    t: &WorkbookTables<'_>,
    styles: &Styles,
) -> Result<(), XlsxError> {
    let ws = wb.add_worksheet().set_name("Topics")?;
    write_frame(ws, t.topics, styles, &|name| name == "share", None)?;
    charts::topic_sizes(ws, t.topics)
}

/// The Documents sheet: the first [`WorkbookTables::documents_shown`] documents, each topic
/// label a link to its topic's row. Documents can run to a million rows: its sheet streams to
/// a temporary file as it is written, with inline strings, instead of holding every cell until
/// the file is saved.
fn documents_sheet(
    wb: &mut Workbook,
    t: &WorkbookTables<'_>,
    documents: &DataFrame,
    styles: &Styles,
) -> Result<(), XlsxError> {
    let rows = topic_rows(t.topics);
    let ws = wb
        .add_worksheet_with_constant_memory()?
        .set_name("Documents")?;
    let links = Links {
        column: "topic_label",
        by: "topic_id",
        sheet: "Topics",
        rows: &rows,
    };
    write_frame(
        ws,
        &documents.slice(0, t.documents_shown()),
        styles,
        &|_| false,
        Some(&links),
    )?;
    Ok(())
}

/// Each topic id's row in the Topics sheet (1 is the first under the header).
fn topic_rows(topics: &DataFrame) -> HashMap<u32, u32> {
    topics
        .column("topic_id")
        .ok()
        .and_then(|c| c.u32().ok().cloned())
        .map(|ids| {
            ids.iter()
                .enumerate()
                .filter_map(|(i, id)| Some((id?, i as u32 + 1)))
                .collect()
        })
        .unwrap_or_default()
}

/// The Trends sheet (every column but the period and its document count is a share), with the
/// share-over-time chart below it.
fn trends_sheet(
    wb: &mut Workbook,
    t: &WorkbookTables<'_>,
    styles: &Styles,
) -> Result<(), XlsxError> {
    let ws = wb.add_worksheet().set_name("Trends")?;
    write_frame(
        ws,
        t.trends_wide,
        styles,
        &|name| name != "period" && name != "documents",
        None,
    )?;
    charts::share_over_time(ws, t.trends_wide, t.chart_topics)
}

/// The Topics per class sheet (with `describe.per-class`): each topic label links to its row
/// in Topics, as in Documents.
fn per_class_sheet(
    wb: &mut Workbook,
    t: &WorkbookTables<'_>,
    styles: &Styles,
) -> Result<(), XlsxError> {
    let Some(per_class) = t.per_class else {
        return Ok(());
    };
    let rows = topic_rows(t.topics);
    let links = Links {
        column: "topic_label",
        by: "topic_id",
        sheet: "Topics",
        rows: &rows,
    };
    let ws = wb.add_worksheet().set_name("Topics per class")?;
    write_frame(ws, per_class, styles, &|name| name == "share", Some(&links))?;
    Ok(())
}

/// The Drift sheet: how this run's topics map onto the previous run's, or a line saying there
/// was none.
fn drift_sheet(
    wb: &mut Workbook,
    t: &WorkbookTables<'_>,
    styles: &Styles,
) -> Result<(), XlsxError> {
    let ws = wb.add_worksheet().set_name("Drift")?;
    match t.drift {
        Some(df) => {
            write_frame(ws, df, styles, &|name| name == "share_change", None)?;
        }
        None => {
            ws.write_string(
                0,
                0,
                "No previous run to compare with: this run's topic ids are new.",
            )?;
        }
    }
    Ok(())
}
