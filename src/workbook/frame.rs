//! One table (a polars frame) as a sheet: a bold header, typed cells, a frozen header row, an
//! autofilter and columns sized to their content.
//!
//! Each column becomes one iterator of typed cells: text and booleans as they are, every other
//! number through f64, anything else (dates, lists) as its text. Rows are written in order, one
//! after the other, which is what "constant memory" sheets need.

use super::{MAX_LINKS, MAX_ROWS};
use polars::prelude::*;
use rust_xlsxwriter::{Format, Url, Worksheet, XlsxError};
use std::collections::HashMap;

/// The cell formats of the workbook.
pub(super) struct Styles {
    /// Header rows: bold.
    pub(super) header: Format,
    /// Shares: `0.0%`.
    pub(super) percent: Format,
    /// Other fractional numbers: `0.0000`.
    pub(super) decimal: Format,
}

impl Styles {
    pub(super) fn new() -> Styles {
        Styles {
            header: Format::new().set_bold(),
            percent: Format::new().set_num_format("0.0%"),
            decimal: Format::new().set_num_format("0.0000"),
        }
    }
}

/// Cells of `column` link to the row of `sheet` that `rows` gives for the value in `by`.
pub(super) struct Links<'a> {
    pub(super) column: &'a str,
    pub(super) by: &'a str,
    pub(super) sheet: &'a str,
    pub(super) rows: &'a HashMap<u32, u32>,
}

/// Where the cells of a linked column point: the target row of each of the first
/// [`MAX_LINKS`] data rows.
struct Targets<'a> {
    sheet: &'a str,
    column: usize,
    rows: Vec<Option<u32>>,
}

impl<'a> Targets<'a> {
    /// The targets of `links` in `df`; None when `df` lacks the linked column or its ids.
    fn new(df: &DataFrame, links: &Links<'a>) -> Option<Targets<'a>> {
        let column = df.get_column_index(links.column)?;
        let ids = df.column(links.by).ok()?.u32().ok()?;
        let rows = ids
            .iter()
            .take(MAX_LINKS)
            .map(|id| id.and_then(|id| links.rows.get(&id).copied()))
            .collect();
        Some(Targets {
            sheet: links.sheet,
            column,
            rows,
        })
    }

    /// The link of the cell in column `col` of data row `i`, if it has one.
    fn url(&self, col: u16, i: usize) -> Option<Url> {
        if col as usize != self.column {
            return None;
        }
        let r = self.rows.get(i).copied().flatten()?;
        Some(Url::new(format!("internal:'{}'!A{}", self.sheet, r + 1)))
    }
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

/// A column's values in the type its cells are written as.
enum Values<'a> {
    Text(&'a StringChunked),
    Bool(&'a BooleanChunked),
    /// Any primitive number, as f64.
    Number(Float64Chunked),
    /// Anything else, as its text.
    Cast(StringChunked),
    /// A column that could not be converted: its cells stay empty.
    Missing,
}

impl Values<'_> {
    fn of(col: &Column) -> Values<'_> {
        if let Ok(t) = col.str() {
            return Values::Text(t);
        }
        if let Ok(b) = col.bool() {
            return Values::Bool(b);
        }
        let cast = if col.dtype().is_primitive_numeric() {
            col.cast(&DataType::Float64)
                .ok()
                .and_then(|c| c.f64().ok().cloned())
                .map(Values::Number)
        } else {
            col.cast(&DataType::String)
                .ok()
                .and_then(|c| c.str().ok().cloned())
                .map(Values::Cast)
        };
        cast.unwrap_or(Values::Missing)
    }

    /// The column's cells, top to bottom.
    fn cells(&self) -> Box<dyn Iterator<Item = Cell<'_>> + '_> {
        match self {
            Values::Text(t) => Box::new(t.iter().map(|v| v.map_or(Cell::Empty, Cell::Text))),
            Values::Bool(b) => Box::new(b.iter().map(|v| v.map_or(Cell::Empty, Cell::Bool))),
            Values::Number(f) => Box::new(f.iter().map(|v| v.map_or(Cell::Empty, Cell::Number))),
            Values::Cast(t) => Box::new(
                t.iter()
                    .map(|v| v.map_or(Cell::Empty, |s| Cell::Owned(s.to_string()))),
            ),
            Values::Missing => Box::new(std::iter::repeat_with(|| Cell::Empty)),
        }
    }
}

/// A column being written: how its numbers are shown, its cells still to write, and its
/// width so far (in characters).
struct SheetColumn<'a> {
    shown: Shown,
    cells: Box<dyn Iterator<Item = Cell<'a>> + 'a>,
    width: usize,
}

impl<'a> SheetColumn<'a> {
    /// Column `col` with its `values`; its width starts at its header's (at least 7 for a
    /// percentage, 10 for another number).
    fn new(col: &Column, values: &'a Values<'_>, is_share: &dyn Fn(&str) -> bool) -> Self {
        let shown = match col.dtype() {
            _ if is_share(col.name().as_str()) => Shown::Percent,
            dt if dt.is_float() => Shown::Decimal,
            dt if dt.is_primitive_numeric() => Shown::Whole,
            _ => Shown::Text,
        };
        let header = col.name().chars().count();
        let width = match shown {
            Shown::Text => header,
            Shown::Percent => header.max(7),
            _ => header.max(10),
        };
        SheetColumn {
            shown,
            cells: values.cells(),
            width,
        }
    }
}

/// Writes `df` as a table from A1: header, typed cells, frozen header, autofilter, widths.
/// Returns the number of data rows written (at most [`MAX_ROWS`]).
pub(super) fn write_frame(
    ws: &mut Worksheet,
    df: &DataFrame,
    styles: &Styles,
    is_share: &dyn Fn(&str) -> bool,
    links: Option<&Links<'_>>,
) -> Result<usize, XlsxError> {
    let rows = df.height().min(MAX_ROWS);
    let df = df.slice(0, rows);
    let targets = links.and_then(|l| Targets::new(&df, l));
    let values: Vec<Values<'_>> = df.columns().iter().map(Values::of).collect();
    let mut columns: Vec<SheetColumn<'_>> = df
        .columns()
        .iter()
        .zip(&values)
        .map(|(c, v)| SheetColumn::new(c, v, is_share))
        .collect();
    for (j, col) in df.columns().iter().enumerate() {
        ws.write_string_with_format(0, j as u16, col.name().as_str(), &styles.header)?;
    }
    for i in 0..rows {
        for (j, column) in columns.iter_mut().enumerate() {
            write_cell(ws, i, j as u16, column, styles, targets.as_ref())?;
        }
    }
    for (j, c) in columns.iter().enumerate() {
        ws.set_column_width(j as u16, c.width.clamp(6, 60) as f64 * 1.1 + 1.0)?;
    }
    ws.set_freeze_panes(1, 0)?;
    if df.width() > 0 {
        ws.autofilter(0, 0, rows as u32, df.width() as u16 - 1)?;
    }
    Ok(rows)
}

/// Writes the next cell of `column`, in data row `i` (sheet row `i + 1`): a number in its
/// format ("n/a" when not finite), a boolean, or text.
fn write_cell(
    ws: &mut Worksheet,
    i: usize,
    col: u16,
    column: &mut SheetColumn<'_>,
    styles: &Styles,
    targets: Option<&Targets<'_>>,
) -> Result<(), XlsxError> {
    let row = i as u32 + 1;
    match column.cells.next().unwrap_or(Cell::Empty) {
        Cell::Empty => {}
        Cell::Bool(b) => {
            ws.write_boolean(row, col, b)?;
        }
        Cell::Number(v) if !v.is_finite() => {
            ws.write_string(row, col, "n/a")?;
        }
        Cell::Number(v) => {
            match column.shown {
                Shown::Percent => ws.write_number_with_format(row, col, v, &styles.percent)?,
                Shown::Decimal => ws.write_number_with_format(row, col, v, &styles.decimal)?,
                _ => ws.write_number(row, col, v)?,
            };
        }
        Cell::Text(v) => write_text(ws, i, col, v, &mut column.width, targets)?,
        Cell::Owned(v) => write_text(ws, i, col, &v, &mut column.width, targets)?,
    }
    Ok(())
}

/// Writes a text cell in data row `i`: a link to its target row when the column links, else a
/// string. The first 500 rows size the column.
fn write_text(
    ws: &mut Worksheet,
    i: usize,
    col: u16,
    v: &str,
    width: &mut usize,
    targets: Option<&Targets<'_>>,
) -> Result<(), XlsxError> {
    if i < 500 {
        *width = (*width).max(v.chars().count());
    }
    let row = i as u32 + 1;
    match targets.and_then(|t| t.url(col, i)) {
        Some(url) => {
            ws.write_url(row, col, url.set_text(v))?;
        }
        None => {
            ws.write_string(row, col, v)?;
        }
    }
    Ok(())
}
