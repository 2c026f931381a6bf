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

/// The text columns of `df` with the formula guard applied. Only a column that holds a cell
/// needing the guard is rebuilt; the others are shared with `df`, not copied.
fn guarded(df: &DataFrame) -> Result<DataFrame, PolarsError> {
    let mut columns = Vec::with_capacity(df.width());
    for col in df.columns() {
        let Ok(text) = col.str() else {
            columns.push(col.clone());
            continue;
        };
        let needs = |s: &str| matches!(spreadsheet_safe(s), Cow::Owned(_));
        if !text.iter().flatten().any(needs) {
            columns.push(col.clone());
            continue;
        }
        let mut b = StringChunkedBuilder::new(col.name().clone(), text.len());
        for v in text.iter() {
            b.append_option(v.map(spreadsheet_safe));
        }
        columns.push(b.finish().into_column());
    }
    DataFrame::new(df.height(), columns)
}

/// Writes a frame as a spreadsheet-friendly CSV (every text cell guarded).
pub fn write_csv(path: &Path, df: &DataFrame) -> Result<(), PolarsError> {
    let mut df = guarded(df)?;
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

/// A CSV written a frame at a time (a streaming run's documents), exactly as [`write_csv`]
/// writes the frames stacked: the byte-order mark and header once, then each frame's rows.
pub struct CsvAppender {
    out: std::io::BufWriter<std::fs::File>,
    first: bool,
}

impl CsvAppender {
    pub fn create(path: &Path) -> Result<CsvAppender, PolarsError> {
        Ok(CsvAppender {
            out: std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?),
            first: true,
        })
    }

    /// Appends `df`'s rows (its columns as the first frame's).
    pub fn append(&mut self, df: &DataFrame) -> Result<(), PolarsError> {
        let mut df = guarded(df)?;
        CsvWriter::new(&mut self.out)
            .include_bom(self.first)
            .include_header(self.first)
            .with_line_terminator("\r\n".into())
            .with_float_precision(Some(6))
            .finish(&mut df)?;
        self.first = false;
        Ok(())
    }

    /// Flushes and syncs the file.
    pub fn finish(self) -> Result<(), PolarsError> {
        let file = self.out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        Ok(())
    }
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
            write_csv(&p, &DataFrame::new(cells.len(), vec![crate::tables::frames::text("t", &cells)]).unwrap()).unwrap();
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
        let df = DataFrame::new(
            2,
            vec![
                crate::tables::frames::text("title", ["a, \"quoted\"\nline", "=1+1"]),
                Column::new("n".into(), [1i64, 2]),
            ],
        )
        .unwrap();
        write_csv(&p, &df).unwrap();
        let s = std::fs::read_to_string(&p).unwrap();
        assert!(s.starts_with("\u{feff}title,n\r\n"), "{s:?}");
        assert!(s.contains("\"a, \"\"quoted\"\"\nline\",1\r\n"), "{s:?}");
        assert!(s.contains("'=1+1,2\r\n"), "{s:?}");
    }
}
