//! CSV writing through polars, made safe for spreadsheets.
//!
//! Files are UTF-8 with a byte-order mark (Excel needs it to read UTF-8; LibreOffice and Python's
//! `utf-8-sig` accept it), RFC 4180 quoting, CRLF line ends and a header row. Any text cell that
//! starts with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`, so a title such
//! as `=HYPERLINK(...)` is shown as text and never runs as a formula (OWASP's CSV-injection rule).

use polars::prelude::*;
use std::borrow::Cow;
use std::path::Path;

/// Prefixes a cell that a spreadsheet would read as a formula with `'`.
pub fn spreadsheet_safe(s: &str) -> Cow<'_, str> {
    match s.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => Cow::Owned(format!("'{s}")),
        _ => Cow::Borrowed(s),
    }
}

/// A text column, with every cell made spreadsheet-safe (built in place: no `String` per cell).
pub fn text_column<S: AsRef<str>>(name: &str, values: impl IntoIterator<Item = S>) -> Column {
    opt_text_column(name, values.into_iter().map(Some))
}

/// An optional text column (empty cells for `None`).
pub fn opt_text_column<S: AsRef<str>>(
    name: &str,
    values: impl IntoIterator<Item = Option<S>>,
) -> Column {
    let values = values.into_iter();
    let mut b = StringChunkedBuilder::new(name.into(), values.size_hint().0);
    for v in values {
        b.append_option(v.as_ref().map(|s| spreadsheet_safe(s.as_ref())));
    }
    b.finish().into_column()
}

/// Writes a frame as a spreadsheet-friendly CSV.
pub fn write_csv(path: &Path, columns: Vec<Column>) -> Result<(), PolarsError> {
    let height = columns.first().map_or(0, |c| c.len());
    let mut df = DataFrame::new(height, columns)?;
    let mut file = std::fs::File::create(path)?;
    CsvWriter::new(&mut file)
        .include_bom(true)
        .include_header(true)
        .with_line_terminator("\r\n".into())
        .with_float_precision(Some(6))
        .finish(&mut df)?;
    file.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_cells_are_neutralised() {
        for (input, want) in [
            (
                "=HYPERLINK(\"http://x\",\"y\")",
                "'=HYPERLINK(\"http://x\",\"y\")",
            ),
            ("+1", "'+1"),
            ("-2 image", "'-2 image"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
            ("plain", "plain"),
            ("中文 =x", "中文 =x"),
        ] {
            assert_eq!(spreadsheet_safe(input), want);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// What is written reads back equal (after the formula guard), whatever the text.
        #[test]
        fn written_cells_read_back_equal(cells in proptest::collection::vec("\\PC{0,40}|[,\"\n =+@-]{0,6}", 1..12)) {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("p.csv");
            write_csv(&p, vec![text_column("t", &cells)]).unwrap();
            let bytes = std::fs::read(&p).unwrap();
            let text = std::str::from_utf8(&bytes[3..]).unwrap().to_string();
            let df = CsvReadOptions::default()
                .with_has_header(true)
                .with_infer_schema_length(Some(0))
                .into_reader_with_file_handle(std::io::Cursor::new(text.into_bytes()))
                .finish()
                .unwrap();
            let col = df.column("t").unwrap().str().unwrap().clone();
            proptest::prop_assert_eq!(col.len(), cells.len());
            for (i, c) in cells.iter().enumerate() {
                let want = spreadsheet_safe(c).into_owned();
                let got = col.get(i).unwrap_or("").to_string();
                proptest::prop_assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn writes_bom_header_and_quotes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        write_csv(
            &p,
            vec![
                text_column("title", ["a, \"quoted\"\nline", "=1+1"]),
                Column::new("n".into(), [1i64, 2]),
            ],
        )
        .unwrap();
        let s = std::fs::read_to_string(&p).unwrap();
        assert!(s.starts_with("\u{feff}title,n\r\n"), "{s:?}");
        assert!(s.contains("\"a, \"\"quoted\"\"\nline\",1\r\n"), "{s:?}");
        assert!(s.contains("'=1+1,2\r\n"), "{s:?}");
    }
}
