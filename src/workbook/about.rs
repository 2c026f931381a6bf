//! The About sheet: how the report was made (key/value rows: title, run date, version, counts,
//! every setting), what the Documents sheet leaves out, and the inputs with their checksums.

use super::frame::Styles;
use super::{About, AboutValue, MAX_LINKS};
use rust_xlsxwriter::{Worksheet, XlsxError};

/// Writes the About sheet: key/value rows, then the inputs table. `documents` is the number
/// of documents listed (None when the report has no Documents sheet), `shown` how many the
/// Documents sheet holds at most.
pub(super) fn write_about(
    ws: &mut Worksheet,
    about: &About,
    styles: &Styles,
    documents: Option<usize>,
    shown: usize,
) -> Result<(), XlsxError> {
    ws.write_string_with_format(0, 0, "key", &styles.header)?;
    ws.write_string_with_format(0, 1, "value", &styles.header)?;
    let mut row = 1u32;
    for (key, value) in about.rows.iter().chain(&documents_notes(documents, shown)) {
        ws.write_string(row, 0, key)?;
        match value {
            AboutValue::Text(s) => ws.write_string(row, 1, s)?,
            AboutValue::Number(n) => ws.write_number(row, 1, *n)?,
        };
        row += 1;
    }
    write_inputs(ws, about, styles, row + 1)?;
    ws.set_column_width(0, 28)?;
    ws.set_column_width(1, 60)?;
    ws.set_column_width(3, 66)?;
    ws.set_freeze_panes(1, 0)?;
    Ok(())
}

/// The rows that say what the Documents sheet holds, when it is not every document with its
/// link: none at all (a report from summed counts), only the first, or links for the first.
fn documents_notes(documents: Option<usize>, shown: usize) -> Vec<(String, AboutValue)> {
    let mut rows = Vec::new();
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
    rows
}

/// The inputs table from `header_row`: path, format, bytes, sha256 and documents of each.
fn write_inputs(
    ws: &mut Worksheet,
    about: &About,
    styles: &Styles,
    header_row: u32,
) -> Result<(), XlsxError> {
    let mut row = header_row;
    for (j, h) in ["input", "format", "bytes", "sha256", "documents"]
        .iter()
        .enumerate()
    {
        ws.write_string_with_format(row, j as u16, *h, &styles.header)?;
    }
    for (path, format, bytes, sha, docs) in &about.inputs {
        row += 1;
        ws.write_string(row, 0, path)?;
        ws.write_string(row, 1, format)?;
        ws.write_number(row, 2, *bytes as f64)?;
        ws.write_string(row, 3, sha)?;
        ws.write_number(row, 4, *docs as f64)?;
    }
    Ok(())
}
