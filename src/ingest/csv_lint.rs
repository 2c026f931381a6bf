//! A fast structural check of CSV/TSV text before polars parses it, so that the two commonest
//! breakages get an error naming the row, line and column instead of a parser's internal message:
//! a quote that is never closed, and a row with more or fewer fields than the header.
//!
//! One pass over the bytes, RFC 4180 rules: a field that starts with `"` runs to the next `"` not
//! followed by another `"`; line breaks inside quotes belong to the field.

/// What is wrong, and where (rows count data records from 1, header excluded; lines from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintError {
    pub row: usize,
    pub line: usize,
    pub problem: Problem,
}

/// The two structural breakages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("{fields} fields where the header has {header}")]
    FieldCount { fields: usize, header: usize },
    #[error("a quoted field (column {column}) opened on line {line} is never closed")]
    UnclosedQuote { column: usize, line: usize },
}

/// Checks `text` with the given separator.
///
/// The bytes that matter (quotes, separators, line breaks) are found with `memchr`, which
/// scans many bytes per instruction: most of an abstracts table is quoted text, so the check
/// runs at memory speed instead of one branch per byte. Field by field: a quoted field is
/// skipped to its closing quote; unquoted content runs to the next separator (the next field)
/// or line break (the record ends, and its field count is checked against the header's).
pub fn lint(text: &str, sep: u8) -> Result<(), LintError> {
    let bytes = text.as_bytes();
    let mut at = Place::default();
    let mut i = 0usize;
    while i < bytes.len() {
        if at.field_start && bytes[i] == b'"' {
            // A quoted field: up to the next quote that is not doubled.
            let (end, lines) = closing_quote(bytes, i + 1).ok_or_else(|| at.unclosed_quote())?;
            at.line += lines;
            i = end;
            at.field_start = false;
            continue;
        }
        if at.field_start && bytes[i] == b'\r' {
            // A carriage return does not start the field's content: a quote may follow.
            i += 1;
            continue;
        }
        // Unquoted content, up to the next separator or line break.
        let off = memchr::memchr2(sep, b'\n', &bytes[i..]).unwrap_or(bytes.len() - i);
        if off > 0 {
            at.field_start = false;
        }
        i += off;
        match bytes.get(i) {
            None => break,
            Some(&b) if b == sep => at.next_field(),
            Some(_) => at.next_line()?,
        }
        i += 1;
    }
    at.finish()
}

/// Just past the quote that closes a quoted field whose content starts at `from`, and the line
/// breaks inside the field; `None` when no quote closes it.
#[inline]
fn closing_quote(bytes: &[u8], from: usize) -> Option<(usize, usize)> {
    let mut i = from;
    let mut lines = 0;
    loop {
        let off = memchr::memchr(b'"', &bytes[i..])?;
        lines += memchr::memchr_iter(b'\n', &bytes[i..i + off]).count();
        i += off;
        if bytes.get(i + 1) == Some(&b'"') {
            i += 2;
        } else {
            return Some((i + 1, lines));
        }
    }
}

/// Where the scan is: the line, the record and its field, and the header's width once known.
struct Place {
    line: usize,
    /// Data record (0 = the header).
    record: usize,
    /// Fields of the record so far (the current one included).
    fields: usize,
    header_fields: Option<usize>,
    /// The line the record started on.
    record_line: usize,
    /// Nothing of the current field read yet.
    field_start: bool,
}

impl Default for Place {
    fn default() -> Self {
        Place {
            line: 1,
            record: 0,
            fields: 1,
            header_fields: None,
            record_line: 1,
            field_start: true,
        }
    }
}

impl Place {
    /// A separator: the next field starts.
    #[inline]
    fn next_field(&mut self) {
        self.fields += 1;
        self.field_start = true;
    }

    /// A line break outside quotes: the record ends (unless the line is blank) and the next
    /// starts on the next line.
    #[inline]
    fn next_line(&mut self) -> Result<(), LintError> {
        if !self.blank() {
            self.end_record()?;
            self.record += 1;
        }
        self.fields = 1;
        self.field_start = true;
        self.line += 1;
        self.record_line = self.line;
        Ok(())
    }

    /// The end of the text: the last record ends unless nothing of it was read.
    fn finish(mut self) -> Result<(), LintError> {
        if !self.blank() {
            self.end_record()?;
        }
        Ok(())
    }

    /// Nothing read on the current line yet.
    fn blank(&self) -> bool {
        self.fields == 1 && self.field_start
    }

    /// Checks the ending record's width: the header's sets it for the rest.
    fn end_record(&mut self) -> Result<(), LintError> {
        match self.header_fields {
            None => {
                self.header_fields = Some(self.fields);
                Ok(())
            }
            Some(h) if h != self.fields => Err(LintError {
                row: self.record,
                line: self.record_line,
                problem: Problem::FieldCount {
                    fields: self.fields,
                    header: h,
                },
            }),
            Some(_) => Ok(()),
        }
    }

    /// The error for a quoted field, opened at the current place, that is never closed.
    fn unclosed_quote(&self) -> LintError {
        LintError {
            row: self.record,
            line: self.line,
            problem: Problem::UnclosedQuote {
                column: self.fields,
                line: self.line,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-at-a-time reading of the rules, which [`lint`] must agree with.
    fn reference(text: &str, sep: u8) -> Result<(), LintError> {
        let bytes = text.as_bytes();
        let mut line = 1usize;
        let mut record = 0usize; // 0 = header
        let mut fields = 1usize;
        let mut header_fields = None;
        let mut record_line = 1usize;
        let mut i = 0usize;
        let mut at_field_start = true;
        let end_record =
            |record: usize, fields: usize, header: &mut Option<usize>, record_line: usize| {
                match *header {
                    None => {
                        *header = Some(fields);
                        Ok(())
                    }
                    Some(h) if h != fields => Err(LintError {
                        row: record,
                        line: record_line,
                        problem: Problem::FieldCount { fields, header: h },
                    }),
                    Some(_) => Ok(()),
                }
            };
        while i < bytes.len() {
            let b = bytes[i];
            if at_field_start && b == b'"' {
                let start_line = line;
                i += 1;
                loop {
                    match bytes.get(i) {
                        None => {
                            return Err(LintError {
                                row: record,
                                line: start_line,
                                problem: Problem::UnclosedQuote {
                                    column: fields,
                                    line: start_line,
                                },
                            })
                        }
                        Some(b'"') if bytes.get(i + 1) == Some(&b'"') => i += 2,
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(b'\n') => {
                            line += 1;
                            i += 1;
                        }
                        Some(_) => i += 1,
                    }
                }
                at_field_start = false;
                continue;
            }
            if b == sep {
                fields += 1;
                at_field_start = true;
            } else if b == b'\n' {
                let blank = fields == 1 && at_field_start;
                if !blank {
                    end_record(record, fields, &mut header_fields, record_line)?;
                    record += 1;
                }
                fields = 1;
                at_field_start = true;
                line += 1;
                record_line = line;
            } else if b != b'\r' {
                at_field_start = false;
            }
            i += 1;
        }
        if !(fields == 1 && at_field_start) {
            end_record(record, fields, &mut header_fields, record_line)?;
        }
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// On any mix of the bytes that matter, the memchr scan gives the same verdict, row,
        /// line and message as the byte-at-a-time reading.
        #[test]
        fn agrees_with_the_bytewise_reading(text in "[a,\"\n\r\t]{0,40}") {
            proptest::prop_assert_eq!(lint(&text, b','), reference(&text, b','));
            proptest::prop_assert_eq!(lint(&text, b'\t'), reference(&text, b'\t'));
        }
    }

    #[test]
    fn well_formed_csv_passes() {
        assert_eq!(lint("a,b\n1,\"x, \"\"y\"\"\nz\"\r\n2,3\n\n", b','), Ok(()));
        assert_eq!(lint("a\tb\n1\t2", b'\t'), Ok(()));
    }

    #[test]
    fn unclosed_quote_names_its_line() {
        let e = lint("id,abstract\na,\"graph networks\nb,graph models\n", b',').unwrap_err();
        assert_eq!((e.row, e.line), (1, 2));
        assert_eq!(e.problem, Problem::UnclosedQuote { column: 2, line: 2 });
        assert!(e.problem.to_string().contains("never closed"));
    }

    #[test]
    fn ragged_rows_name_row_and_line() {
        let e = lint("id,abstract\na,\"multi\nline\"\nb,graph,extra\n", b',').unwrap_err();
        assert_eq!((e.row, e.line), (2, 4));
        assert_eq!(e.problem.to_string(), "3 fields where the header has 2");
    }
}
