//! `report.xlsx`: the report's tables as one workbook, written with rust_xlsxwriter.
//!
//! Sheets: Topics, Documents, Terms, Trends (period x topic shares), Drift and About (settings,
//! inputs with their checksums, run date, version). Cells are typed: text is a string (so no
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

use crate::tables::ExportError;
use polars::prelude::*;
use rust_xlsxwriter::{
    Chart, ChartLegendPosition, ChartType, DocProperties, ExcelDateTime, Format, Url, Workbook,
    Worksheet, XlsxError,
};
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
    pub about: &'a About,
    /// Columns of `trends_wide` (topic columns, 0 = the first topic) drawn in the chart.
    pub chart_topics: &'a [usize],
    /// Most documents the Documents sheet holds (at most [`MAX_ROWS`]).
    pub max_documents: usize,
}

/// Writes the workbook to `path`.
pub fn write(path: &Path, t: &WorkbookTables<'_>) -> Result<(), XlsxError> {
    let mut wb = Workbook::new();
    // Level 1 deflate: most of the save time is compression, and the file grows little.
    wb.set_zip_compression_level(1);
    wb.set_properties(
        &DocProperties::new()
            .set_title("topicmap report")
            .set_creation_datetime(&ExcelDateTime::from_timestamp(t.about.created.timestamp())?),
    );
    let header = Format::new().set_bold();
    let percent = Format::new().set_num_format("0.0%");
    let decimal = Format::new().set_num_format("0.0000");
    let styles = Styles {
        header: &header,
        percent: &percent,
        decimal: &decimal,
    };

    // Topics, with the topic-size chart beside the table.
    let ws = wb.add_worksheet().set_name("Topics")?;
    write_frame(ws, t.topics, &styles, &|name| name == "share", None)?;
    let n_topics = t.topics.height() as u32;
    if n_topics > 0 {
        let mut chart = Chart::new(ChartType::Bar);
        chart
            .add_series()
            .set_name("documents")
            .set_categories(("Topics", 1, 1, n_topics, 1))
            .set_values(("Topics", 1, 2, n_topics, 2));
        chart.title().set_name("Documents per topic");
        chart.legend().set_hidden();
        chart.y_axis().set_reverse();
        chart.set_width(720).set_height(60 + 24 * n_topics.max(8));
        ws.insert_chart(1, t.topics.width() as u16 + 1, &chart)?;
    }

    // Documents: each topic label links to its topic's row.
    let topic_row: HashMap<u32, u32> = t
        .topics
        .column("topic_id")
        .ok()
        .and_then(|c| c.u32().ok().cloned())
        .map(|ids| {
            ids.iter()
                .enumerate()
                .filter_map(|(i, id)| Some((id?, i as u32 + 1)))
                .collect()
        })
        .unwrap_or_default();
    // Documents can run to a million rows: its sheet streams to a temporary file as it is
    // written, with inline strings, instead of holding every cell until the file is saved.
    let shown = t.max_documents.min(MAX_ROWS);
    if let Some(documents) = t.documents {
        let ws = wb
            .add_worksheet_with_constant_memory()?
            .set_name("Documents")?;
        let links = Links {
            column: "topic_label",
            by: "topic_id",
            sheet: "Topics",
            rows: &topic_row,
        };
        write_frame(
            ws,
            &documents.slice(0, shown),
            &styles,
            &|_| false,
            Some(&links),
        )?;
    }

    let ws = wb.add_worksheet().set_name("Terms")?;
    write_frame(ws, t.terms, &styles, &|_| false, None)?;

    // Trends, with the share-over-time chart: one line per chosen topic.
    let ws = wb.add_worksheet().set_name("Trends")?;
    write_frame(
        ws,
        t.trends_wide,
        &styles,
        &|name| name != "period" && name != "documents",
        None,
    )?;
    let n_periods = t.trends_wide.height() as u32;
    if n_periods >= 2 && !t.chart_topics.is_empty() {
        let mut chart = Chart::new(ChartType::Line);
        for &topic in t.chart_topics {
            let col = 2 + topic as u16;
            chart
                .add_series()
                .set_name(("Trends", 0, col))
                .set_categories(("Trends", 1, 0, n_periods, 0))
                .set_values(("Trends", 1, col, n_periods, col));
        }
        chart.title().set_name("Share of each period's documents");
        chart.y_axis().set_num_format("0%");
        chart.legend().set_position(ChartLegendPosition::Bottom);
        chart.set_width(900).set_height(480);
        ws.insert_chart(n_periods + 2, 0, &chart)?;
    }

    let ws = wb.add_worksheet().set_name("Drift")?;
    match t.drift {
        Some(df) => {
            write_frame(ws, df, &styles, &|name| name == "share_change", None)?;
        }
        None => {
            ws.write_string(
                0,
                0,
                "No previous run to compare with: this run's topic ids are new.",
            )?;
        }
    }

    let ws = wb.add_worksheet().set_name("About")?;
    write_about(
        ws,
        t.about,
        &styles,
        t.documents.map(|_| t.documents_total),
        shown,
    )?;

    wb.save(path)
}

struct Styles<'a> {
    header: &'a Format,
    percent: &'a Format,
    decimal: &'a Format,
}

/// Cells of `column` link to the row of `sheet` that `rows` gives for the value in `by`.
struct Links<'a> {
    column: &'a str,
    by: &'a str,
    sheet: &'a str,
    rows: &'a HashMap<u32, u32>,
}

/// A cell about to be written.
enum Cell<'a> {
    Empty,
    Text(&'a str),
    Owned(String),
    Bool(bool),
    Number(f64),
}

/// How a column's numbers are shown.
#[derive(Clone, Copy, PartialEq)]
enum Shown {
    Text,
    Whole,
    Decimal,
    Percent,
}

/// Writes `df` as a table from A1: header, typed cells, frozen header, autofilter, widths.
/// Rows are written in order, one after the other (what "constant memory" sheets need).
/// Returns the number of data rows written (at most [`MAX_ROWS`]).
fn write_frame(
    ws: &mut Worksheet,
    df: &DataFrame,
    styles: &Styles<'_>,
    is_share: &dyn Fn(&str) -> bool,
    links: Option<&Links<'_>>,
) -> Result<usize, XlsxError> {
    let rows = df.height().min(MAX_ROWS);
    let df = df.slice(0, rows);
    // The linked column, and each row's target row (for the first MAX_LINKS rows).
    let targets: Option<(usize, Vec<Option<u32>>)> = links.and_then(|l| {
        let col = df.get_column_index(l.column)?;
        let ids = df.column(l.by).ok()?.u32().ok()?;
        let rows = ids
            .iter()
            .take(MAX_LINKS)
            .map(|id| id.and_then(|id| l.rows.get(&id).copied()))
            .collect();
        Some((col, rows))
    });
    let sheet = links.map_or("", |l| l.sheet);
    // One typed cell iterator per column; numbers go through f64.
    let floats: Vec<Option<Float64Chunked>> = df
        .columns()
        .iter()
        .map(|c| {
            c.dtype()
                .is_primitive_numeric()
                .then(|| c.cast(&DataType::Float64).ok())
                .flatten()
                .and_then(|c| c.f64().ok().cloned())
        })
        .collect();
    let others: Vec<Option<StringChunked>> = df
        .columns()
        .iter()
        .map(|c| match c.dtype() {
            DataType::String | DataType::Boolean => None,
            dt if dt.is_primitive_numeric() => None,
            _ => c
                .cast(&DataType::String)
                .ok()
                .and_then(|c| c.str().ok().cloned()),
        })
        .collect();
    let mut columns: Vec<(Shown, Box<dyn Iterator<Item = Cell<'_>> + '_>)> = Vec::new();
    for (j, col) in df.columns().iter().enumerate() {
        let name = col.name().as_str();
        let cells: Box<dyn Iterator<Item = Cell<'_>>> = if let Ok(t) = col.str() {
            Box::new(t.iter().map(|v| v.map_or(Cell::Empty, Cell::Text)))
        } else if let Ok(b) = col.bool() {
            Box::new(b.iter().map(|v| v.map_or(Cell::Empty, Cell::Bool)))
        } else if let Some(f) = &floats[j] {
            Box::new(f.iter().map(|v| v.map_or(Cell::Empty, Cell::Number)))
        } else if let Some(t) = &others[j] {
            Box::new(
                t.iter()
                    .map(|v| v.map_or(Cell::Empty, |s| Cell::Owned(s.to_string()))),
            )
        } else {
            Box::new(std::iter::repeat_with(|| Cell::Empty))
        };
        let shown = match col.dtype() {
            _ if is_share(name) => Shown::Percent,
            dt if dt.is_float() => Shown::Decimal,
            dt if dt.is_primitive_numeric() => Shown::Whole,
            _ => Shown::Text,
        };
        ws.write_string_with_format(0, j as u16, name, styles.header)?;
        columns.push((shown, cells));
    }
    let mut widths: Vec<usize> = df
        .columns()
        .iter()
        .zip(&columns)
        .map(|(c, (shown, _))| {
            let header = c.name().chars().count();
            match shown {
                Shown::Text => header,
                Shown::Percent => header.max(7),
                _ => header.max(10),
            }
        })
        .collect();
    for i in 0..rows {
        let row = i as u32 + 1;
        for (j, (shown, cells)) in columns.iter_mut().enumerate() {
            let col = j as u16;
            match cells.next().unwrap_or(Cell::Empty) {
                Cell::Empty => {}
                Cell::Bool(b) => {
                    ws.write_boolean(row, col, b)?;
                }
                Cell::Number(v) if !v.is_finite() => {
                    ws.write_string(row, col, "n/a")?;
                }
                Cell::Number(v) => {
                    match shown {
                        Shown::Percent => {
                            ws.write_number_with_format(row, col, v, styles.percent)?
                        }
                        Shown::Decimal => {
                            ws.write_number_with_format(row, col, v, styles.decimal)?
                        }
                        _ => ws.write_number(row, col, v)?,
                    };
                }
                Cell::Text(v) => write_text(ws, row, col, v, &targets, sheet, i, &mut widths[j])?,
                Cell::Owned(v) => write_text(ws, row, col, &v, &targets, sheet, i, &mut widths[j])?,
            }
        }
    }
    for (j, w) in widths.iter().enumerate() {
        ws.set_column_width(j as u16, (*w).clamp(6, 60) as f64 * 1.1 + 1.0)?;
    }
    ws.set_freeze_panes(1, 0)?;
    if df.width() > 0 {
        ws.autofilter(0, 0, rows as u32, df.width() as u16 - 1)?;
    }
    Ok(rows)
}

/// Writes a text cell: a link to its target row when the column links, else a string. The
/// first 500 rows size the column.
#[allow(clippy::too_many_arguments)]
fn write_text(
    ws: &mut Worksheet,
    row: u32,
    col: u16,
    v: &str,
    targets: &Option<(usize, Vec<Option<u32>>)>,
    sheet: &str,
    i: usize,
    width: &mut usize,
) -> Result<(), XlsxError> {
    if i < 500 {
        *width = (*width).max(v.chars().count());
    }
    let target = targets
        .as_ref()
        .filter(|(c, _)| *c == col as usize)
        .and_then(|(_, t)| t.get(i).copied().flatten());
    match target {
        Some(r) => {
            let url = Url::new(format!("internal:'{sheet}'!A{}", r + 1));
            ws.write_url(row, col, url.set_text(v))?;
        }
        None => {
            ws.write_string(row, col, v)?;
        }
    }
    Ok(())
}

/// Writes the About sheet: key/value rows, then the inputs table.
fn write_about(
    ws: &mut Worksheet,
    about: &About,
    styles: &Styles<'_>,
    documents: Option<usize>,
    shown: usize,
) -> Result<(), XlsxError> {
    ws.write_string_with_format(0, 0, "key", styles.header)?;
    ws.write_string_with_format(0, 1, "value", styles.header)?;
    let mut row = 1u32;
    let mut rows = about.rows.clone();
    if documents.is_none() {
        rows.push((
            "documents sheet".into(),
            AboutValue::Text(
                "none: this report was built from counts summed over the documents; the engine's output (or assign's documents.csv) lists them".into(),
            ),
        ));
    }
    let documents = documents.unwrap_or(0);
    if documents > shown {
        rows.push((
            "documents sheet".into(),
            AboutValue::Text(format!(
                "the first {shown} of {documents} documents (output.workbook-documents); documents.csv has all"
            )),
        ));
    }
    if documents.min(shown) > MAX_LINKS {
        rows.push((
            "topic links".into(),
            AboutValue::Text(format!(
                "the first {MAX_LINKS} documents link to their topic (Excel's link limit)"
            )),
        ));
    }
    for (key, value) in &rows {
        ws.write_string(row, 0, key)?;
        match value {
            AboutValue::Text(s) => ws.write_string(row, 1, s)?,
            AboutValue::Number(n) => ws.write_number(row, 1, *n)?,
        };
        row += 1;
    }
    row += 1;
    for (j, h) in ["input", "format", "bytes", "sha256", "documents"]
        .iter()
        .enumerate()
    {
        ws.write_string_with_format(row, j as u16, *h, styles.header)?;
    }
    for (path, format, bytes, sha, docs) in &about.inputs {
        row += 1;
        ws.write_string(row, 0, path)?;
        ws.write_string(row, 1, format)?;
        ws.write_number(row, 2, *bytes as f64)?;
        ws.write_string(row, 3, sha)?;
        ws.write_number(row, 4, *docs as f64)?;
    }
    ws.set_column_width(0, 28)?;
    ws.set_column_width(1, 60)?;
    ws.set_column_width(3, 66)?;
    ws.set_freeze_panes(1, 0)?;
    Ok(())
}
