//! The sample pass over a CSV or TSV file without parsing every row: seeded random windows,
//! one in each of `m` equal strata of the file's bytes, their records parsed by polars.
//!
//! **The design.** The file's data (after the header) is cut into `m` strata of `L` bytes; in
//! stratum `i` a window of `W = φ·L` bytes starts at a seeded uniform offset `o` and wraps
//! round inside the stratum (`[o, o+W)` past its end continues at its start). A record belongs
//! to the window when its first byte does; the record is read whole, however far it runs. So
//! every record of the file is in the *frame* with probability exactly `φ` (= `W / L`),
//! whatever its length and place, and the frame is spread evenly over the file: a file sorted
//! by time keeps every period in proportion. The sample is then the `n` usable rows of the
//! frame with the smallest seeded keys of (file, byte offset) — a uniform `n`-subset of the
//! frame (bottom-k), so each row's chance to be drawn is the same, `n / N` in expectation. It is
//! a stratified cluster sample, not a simple random one: rows come in runs of about
//! `W / (bytes per row)` neighbours (about 200 with the defaults), so a quantity that varies
//! only between neighbouring rows has a larger variance than under simple random sampling (by
//! the design effect `1 + (run - 1)·ρ`, ρ the correlation of neighbours); with at least 64
//! strata per file and hundreds of runs in a 200,000-row sample this is small for topics. `φ`
//! is chosen from the bytes per row of the file's first MiB so the frame holds about 1.5 `n`
//! rows; if it holds fewer, the sample is the whole frame.
//!
//! **Finding a record start.** A window starts at an arbitrary byte, maybe inside a quoted
//! field that holds line breaks. Each line start from there on is tried as a record start by
//! parsing forward with the file's quoting rules: [`CHECKED`] records in a row must have the
//! header's number of fields, every quote either opening a field or closing it (followed by a
//! separator or a line end), or doubled inside a quoted field. A line break inside a quoted
//! field, taken for a record start, inverts the quoting: the text of the field is then read
//! as unquoted cells, and the first separator, line break or quote in it breaks the rule. The
//! first line start that passes is the window's first record, and from there records are
//! walked in phase (the walk knows where each quoted field ends).
//!
//! Nothing here reports a bad row: any check that fails (a block polars cannot parse, a time
//! that does not parse, a row count that differs from the walk's) gives up on the windows, and
//! the caller samples with a full pass instead, whose messages name the file's own rows. The
//! sample's documents are numbered by their place in the sample.

use super::super::{table, Document, IngestError, InputFormat, InputSpec, OnBadDocument};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Records in a row that must parse for a line start to be taken as a record start.
pub const CHECKED: usize = 8;
/// Strata of a file at least (more for a larger sample: about one per 256 KiB of frame).
const MIN_STRATA: usize = 64;
/// Frame bytes per stratum aimed at.
const WINDOW: f64 = 256.0 * 1024.0;
/// Bytes parsed by polars at once.
const BATCH: usize = 64 << 20;

/// One file to sample from, as the stream reads it.
pub struct SampledFile<'a> {
    pub input: &'a InputSpec,
    pub path: &'a Path,
    pub shown: &'a Path,
    pub format: InputFormat,
}

/// The frame of one file: its usable rows as documents, each with its byte offset (its
/// `row` is the offset + 1 until the caller renumbers it), and the file's rows estimated.
pub struct Frame {
    pub documents: Vec<Document>,
    pub rows_estimate: usize,
}

/// The file's bytes, its header and the parts of a record.
struct Bytes {
    path: std::path::PathBuf,
    file: std::fs::File,
    len: u64,
    header: Vec<u8>,
    delim: u8,
    width: usize,
}

/// Reads the windows of one file with fraction `phi` of each stratum (see the module docs).
pub fn frame(f: &SampledFile<'_>, phi: f64, seed: u64, file: usize) -> Result<Frame, IngestError> {
    let bytes = Bytes::open(f)?;
    let data = bytes.header.len() as u64;
    let span = bytes.len - data;
    let m = ((span as f64 * phi / WINDOW).round() as usize).max(MIN_STRATA);
    let mut batch = bytes.header.clone();
    let mut offsets: Vec<usize> = Vec::new();
    let mut documents = Vec::new();
    for i in 0..m as u64 {
        let (a, b) = (data + span * i / m as u64, data + span * (i + 1) / m as u64);
        let len = b - a;
        let u = super::splitmix(seed ^ super::splitmix((file as u64) << 40 ^ (1 << 39) ^ i));
        let o = a + ((u >> 11) as f64 / (1u64 << 53) as f64 * len as f64) as u64;
        let w = (phi * len as f64).round() as u64;
        let first_end = (o + w).min(b);
        bytes.records(o, first_end, a == data && o == a, &mut batch, &mut offsets)?;
        if o + w > b {
            bytes.records(a, a + (o + w - b), a == data, &mut batch, &mut offsets)?;
        }
        if batch.len() >= BATCH {
            documents.extend(parse(f, &mut batch, &mut offsets, bytes.header.len())?);
        }
    }
    documents.extend(parse(f, &mut batch, &mut offsets, bytes.header.len())?);
    let rows_estimate = (documents.len() as f64 / phi).round() as usize;
    Ok(Frame {
        documents,
        rows_estimate,
    })
}

/// The bytes per row of a file's first MiB (header excluded), or `None` for an empty file.
pub fn bytes_per_row(f: &SampledFile<'_>) -> Result<(u64, Option<f64>), IngestError> {
    let bytes = Bytes::open(f)?;
    let data = bytes.header.len() as u64;
    let head = bytes.read(data, 1 << 20)?;
    let mut walk = Walk::new(&head, bytes.delim);
    let mut rows = 0usize;
    let mut end = 0usize;
    while let Some(Ok((_, next))) = walk.record() {
        rows += 1;
        end = next;
    }
    let per_row = (rows > 0).then(|| end as f64 / rows as f64);
    Ok((bytes.len - data, per_row))
}

/// Parses the records gathered in `batch` (the header in front, each record's byte offset in
/// `offsets`) into documents whose rows are the offsets + 1, and empties both.
fn parse(
    f: &SampledFile<'_>,
    batch: &mut Vec<u8>,
    offsets: &mut Vec<usize>,
    header: usize,
) -> Result<Vec<Document>, IngestError> {
    if offsets.is_empty() {
        return Ok(Vec::new());
    }
    let df = table::load_frame(f.path, f.format, batch)?;
    if df.height() != offsets.len() {
        return Err(IngestError::Table {
            path: f.path.to_path_buf(),
            source: table::PolarsMessage(polars::error::PolarsError::ComputeError(
                format!(
                    "{} rows parsed where {} records were walked",
                    df.height(),
                    offsets.len()
                )
                .into(),
            )),
        });
    }
    let rows: Vec<usize> = offsets.iter().map(|o| o + 1).collect();
    let mut skipped = Vec::new();
    let docs = table::read(
        f.path,
        f.shown,
        df,
        f.input,
        0,
        table::Rows::Given(&rows),
        OnBadDocument::Skip,
        &mut skipped,
        None,
    )?;
    batch.truncate(header);
    offsets.clear();
    Ok(docs)
}

impl Bytes {
    fn open(f: &SampledFile<'_>) -> Result<Bytes, IngestError> {
        let io = |source| IngestError::Io {
            path: f.path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(f.path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let delim = if f.format == InputFormat::Tsv {
            b'\t'
        } else {
            b','
        };
        let mut bytes = Bytes {
            path: f.path.to_path_buf(),
            file,
            len,
            header: Vec::new(),
            delim,
            width: 0,
        };
        let head = bytes.read(0, 1 << 20)?;
        let mut walk = Walk::new(&head, delim);
        let (width, end) = match walk.record() {
            Some(Ok(r)) => r,
            _ => (0, head.len()),
        };
        bytes.header = head[..end].to_vec();
        bytes.width = width;
        Ok(bytes)
    }

    /// Up to `n` bytes from `at`.
    fn read(&self, at: u64, n: usize) -> Result<Vec<u8>, IngestError> {
        let n = n.min(self.len.saturating_sub(at) as usize);
        let mut buf = vec![0; n];
        self.file
            .read_exact_at(&mut buf, at)
            .map_err(|source| IngestError::Io {
                path: self.path.clone(),
                source,
            })?;
        Ok(buf)
    }

    /// Appends to `batch` the records whose first byte lies in `[from, to)` (the first found
    /// as the module docs say, unless `from` is known to start a record), with their offsets.
    fn records(
        &self,
        from: u64,
        to: u64,
        at_start: bool,
        batch: &mut Vec<u8>,
        offsets: &mut Vec<usize>,
    ) -> Result<(), IngestError> {
        // The byte before `from` too (is it a line break?), and room for the last record.
        let back = u64::from(from > 0);
        let mut extra = 1 << 16;
        loop {
            let want = (to - from + back) as usize + extra;
            let buf = self.read(from - back, want)?;
            let eof = (from - back) + buf.len() as u64 >= self.len;
            let span = &buf[back as usize..];
            let limit = (to - from) as usize;
            // The window's first byte starts a line when the byte before is a line break.
            let line_start = at_start || (back == 1 && buf.first() == Some(&b'\n'));
            match self.walk_window(span, limit, (at_start, line_start), eof) {
                Some((start, end, starts)) => {
                    batch.extend_from_slice(&span[start..end]);
                    offsets.extend(starts.into_iter().map(|s| (from as usize) + s));
                    return Ok(());
                }
                None if eof || extra >= 1 << 24 => return Ok(()),
                None => extra *= 4,
            }
        }
    }

    /// In `span` (bytes from the window's start; `limit` of them are the window's): the first
    /// checked record start, the end of the last record starting before `limit`, and each
    /// record's start. `None` when a record runs past the bytes read (read more).
    fn walk_window(
        &self,
        span: &[u8],
        limit: usize,
        (at_start, line_start): (bool, bool),
        eof: bool,
    ) -> Option<(usize, usize, Vec<usize>)> {
        let first = if at_start {
            Some(0)
        } else {
            let starts_line = |q: usize| {
                if q == 0 {
                    line_start
                } else {
                    span[q - 1] == b'\n'
                }
            };
            (0..limit.min(span.len()))
                .filter(|&q| starts_line(q))
                .find(|&q| self.checks(&span[q..], eof))
        };
        let Some(first) = first else {
            return Some((0, 0, Vec::new()));
        };
        let mut walk = Walk::new(&span[first..], self.delim);
        let mut starts = Vec::new();
        let mut end = first;
        while first + walk.at < limit {
            let start = first + walk.at;
            match walk.record() {
                Some(Ok((_, next))) => {
                    starts.push(start);
                    end = first + next;
                }
                // Runs past the bytes read: read more, unless the file ends here.
                None if !eof => return None,
                _ => break,
            }
        }
        Some((first, end, starts))
    }

    /// Whether `CHECKED` records (or all up to the end of the file) parse from `rest`.
    fn checks(&self, rest: &[u8], eof: bool) -> bool {
        let mut walk = Walk::new(rest, self.delim);
        for _ in 0..CHECKED {
            match walk.record() {
                Some(Ok((width, _))) if width == self.width => {}
                None => return eof && walk.at >= rest.len(),
                _ => return false,
            }
        }
        true
    }
}

/// Records read one at a time from bytes that start at a record start, by the quoting rules.
struct Walk<'a> {
    raw: &'a [u8],
    delim: u8,
    at: usize,
}

impl<'a> Walk<'a> {
    fn new(raw: &'a [u8], delim: u8) -> Walk<'a> {
        Walk { raw, delim, at: 0 }
    }

    /// The next record: `Some(Ok((fields, end)))` (end just past its line break), `Some(Err)`
    /// when it breaks the quoting rules, `None` when the bytes end before it does.
    fn record(&mut self) -> Option<Result<(usize, usize), ()>> {
        let raw = self.raw;
        if self.at >= raw.len() {
            return None;
        }
        let (mut i, mut fields) = (self.at, 1usize);
        loop {
            if raw.get(i) == Some(&b'"') {
                // A quoted field: to the closing quote (a doubled one is a quote).
                i += 1;
                loop {
                    let q = i + memchr::memchr(b'"', raw.get(i..)?)?;
                    if raw.get(q + 1) == Some(&b'"') {
                        i = q + 2;
                    } else {
                        i = q + 1;
                        break;
                    }
                }
                match raw.get(i) {
                    Some(&b) if b == self.delim => {}
                    Some(b'\n') => break,
                    Some(b'\r') if raw.get(i + 1) == Some(&b'\n') => break,
                    None => return None,
                    _ => return Some(Err(())),
                }
            } else {
                let end = i + memchr::memchr3(self.delim, b'\n', b'"', raw.get(i..)?)?;
                match raw[end] {
                    b'"' => return Some(Err(())),
                    b'\n' => {
                        i = end;
                        break;
                    }
                    _ => i = end,
                }
            }
            // At a separator: the next field.
            i += 1;
            fields += 1;
        }
        // At the line break (or the \r before it).
        let end = i + memchr::memchr(b'\n', &raw[i..]).expect("a line break") + 1;
        self.at = end;
        Some(Ok((fields, end)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_tells_records_from_quoted_line_breaks() {
        let text = b"a,\"x\ny, \"\"z\"\"\",3\nb,plain,4\n";
        let mut w = Walk::new(text, b',');
        assert_eq!(w.record(), Some(Ok((3, 17))));
        assert_eq!(w.record(), Some(Ok((3, 27))));
        assert_eq!(w.record(), None);
        // Started inside the quoted field, at its line break: the rule breaks at once.
        let mut inside = Walk::new(&text[5..], b',');
        assert_eq!(inside.record(), Some(Err(())));
    }
}
