//! A CSV or TSV file streamed in blocks of about `chunk_bytes`, each cut after the last record
//! that ends in it (a line break outside quotes) and parsed by polars with the header in front.
//! Every check of a whole-file read is made on each block, and rows, lines and byte offsets in
//! messages count from the file's start; the sha256 is computed as the bytes go by.

use super::super::{
    check_text, lint, table, Corpus, IngestError, InputFormat, InputSpec, OnBadDocument, SourceFile,
};
use super::{Stop, StreamOptions};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Streams one CSV or TSV file in blocks: the header is checked and kept; then each block of
/// whole records is checked (as a whole file would be, with the header in front), parsed and
/// handed to `f` as a chunk, until the file ends or the input's `limit` is reached. The file's
/// bytes are hashed as they go by, the rest of the file too when the limit stops the reading.
#[allow(clippy::too_many_arguments)]
pub(super) fn stream_text_table(
    input: &InputSpec,
    path: &Path,
    shown: &Path,
    format: InputFormat,
    opts: StreamOptions,
    mut select: Option<impl FnMut(usize) -> bool>,
    mut f: impl FnMut(Corpus) -> Result<(), Stop>,
) -> Result<SourceFile, Stop> {
    let file = StreamedFile {
        input,
        path,
        shown,
        format,
        on_bad: opts.on_bad,
    };
    let mut blocks = Blocks::open(path, opts.chunk_bytes)?;
    blocks.fill(blocks.block)?;
    table::check_header(path, format, &blocks.pending, input)?;
    let header = blocks.take_header();
    let mut at = Place::after_header(&header);
    let mut documents = 0usize;
    let mut left = input.limit;
    // The block with the header in front, as polars and the lint read it (reused).
    let mut text_block: Vec<u8> = Vec::new();
    while let Some(cut) = blocks.next_records()? {
        let part = &blocks.pending[..cut];
        text_block.clear();
        text_block.extend_from_slice(&header);
        text_block.extend_from_slice(part);
        file.check_block(part, &text_block, &at, &mut blocks.sha)?;
        let (chunk, usable, height) = file.read_block(&text_block, at.rows, left, &mut select)?;
        documents += usable;
        if let Some(l) = &mut left {
            *l -= usable.min(*l);
        }
        at.advance(height, part);
        blocks.consume(cut);
        f(chunk)?;
        if left == Some(0) {
            // The limit is reached: the rest of the file is still hashed, for run.json.
            blocks.hash_rest()?;
            break;
        }
    }
    let (bytes, sha256) = blocks.finish();
    Ok(file.source(bytes, sha256, documents))
}

/// A CSV or TSV file being streamed, and how its rows become documents.
struct StreamedFile<'a> {
    input: &'a InputSpec,
    /// Where it is read, for messages.
    path: &'a Path,
    /// What outputs show.
    shown: &'a Path,
    format: InputFormat,
    on_bad: OnBadDocument,
}

impl StreamedFile<'_> {
    /// Checks a block of records (`part`; `text_block` is the block with the header in front)
    /// as a whole file is checked, the errors placed in the whole file (`at` is the block's
    /// place): UTF-8 and NUL bytes, then the lint, on one core, while `sha` hashes the block on
    /// the other.
    fn check_block(
        &self,
        part: &[u8],
        text_block: &[u8],
        at: &Place,
        sha: &mut Sha256,
    ) -> Result<(), IngestError> {
        let (checked, ()) = rayon::join(
            || -> Result<(), IngestError> {
                check_text(self.path, part)
                    .map_err(|e| rebase(e, at.bytes, at.lines + at.header_lines))?;
                let text = std::str::from_utf8(text_block).expect("checked as UTF-8");
                lint(self.path, self.format, text).map_err(|e| at.place_malformed(e))
            },
            || sha.update(part),
        );
        checked
    }

    /// Parses a checked block (`text_block`, the header in front) whose first row is row
    /// `rows_before + 1` of the file, and builds the documents of its usable rows that
    /// `select` picks, at most `left` of them. Returns the chunk, the usable rows (built or
    /// not, for the limit) and the block's rows.
    fn read_block(
        &self,
        text_block: &[u8],
        rows_before: usize,
        left: Option<usize>,
        select: &mut Option<impl FnMut(usize) -> bool>,
    ) -> Result<(Corpus, usize, usize), IngestError> {
        let df = table::load_frame(self.path, self.format, text_block)?;
        let height = df.height();
        let spec = InputSpec {
            limit: left,
            ..self.input.clone()
        };
        let mut chunk = Corpus::default();
        let mut usable = 0usize;
        let mut counting = |row: usize| {
            usable += 1;
            select.as_mut().is_none_or(|s| s(row))
        };
        chunk.documents = table::read(
            self.path,
            self.shown,
            df,
            &spec,
            0,
            table::Rows::After(rows_before),
            self.on_bad,
            &mut chunk.skipped,
            Some(&mut counting),
        )?;
        chunk.has_time = self.input.time.is_some();
        chunk.has_label = self.input.label.is_some();
        chunk
            .sources
            .push(self.source(0, String::new(), chunk.documents.len()));
        Ok((chunk, usable, height))
    }

    /// The file as a source of `documents` documents, with its size and sha256.
    fn source(&self, bytes: u64, sha256: String, documents: usize) -> SourceFile {
        SourceFile {
            path: self.shown.to_path_buf(),
            location: self.path.to_path_buf(),
            format: self.format,
            bytes,
            sha256,
            list_title: None,
            documents,
        }
    }
}

/// Where a block starts in its file.
struct Place {
    /// Data rows before the block.
    rows: usize,
    /// Lines before the block, the header's not counted.
    lines: usize,
    /// Bytes before the block, the header's counted.
    bytes: usize,
    /// Lines of the header record.
    header_lines: usize,
}

impl Place {
    /// The first block's place, after `header`.
    fn after_header(header: &[u8]) -> Place {
        Place {
            rows: 0,
            lines: 0,
            bytes: header.len(),
            header_lines: count_lines(header),
        }
    }

    /// Moves past a block of `rows` rows, the bytes `part`.
    fn advance(&mut self, rows: usize, part: &[u8]) {
        self.rows += rows;
        self.lines += count_lines(part);
        self.bytes += part.len();
    }

    /// A lint error of the block (whose text has the header in front) placed in the file.
    fn place_malformed(&self, e: IngestError) -> IngestError {
        match e {
            IngestError::Malformed {
                path,
                row,
                line,
                problem,
            } => IngestError::Malformed {
                path,
                row: row + self.rows,
                line: line + self.lines,
                problem,
            },
            e => e,
        }
    }
}

/// A file read in blocks of whole records, hashed as its bytes go by.
struct Blocks {
    path: PathBuf,
    file: std::fs::File,
    /// About this many bytes per block.
    block: usize,
    /// Bytes read and not yet consumed; the next block starts at its start.
    pending: Vec<u8>,
    eof: bool,
    /// Bytes read so far.
    total: u64,
    sha: Sha256,
}

impl Blocks {
    /// Opens `path` (an empty file is an error) for blocks of about `chunk_bytes` (at least
    /// 64 KiB).
    fn open(path: &Path, chunk_bytes: usize) -> Result<Blocks, IngestError> {
        let io = |source| IngestError::Io {
            path: path.to_path_buf(),
            source,
        };
        match std::fs::metadata(path) {
            Ok(m) if m.len() == 0 => return Err(IngestError::Empty(path.to_path_buf())),
            Ok(_) => {}
            Err(source) => return Err(io(source)),
        }
        let file = std::fs::File::open(path).map_err(io)?;
        let block = chunk_bytes.max(1 << 16);
        Ok(Blocks {
            path: path.to_path_buf(),
            file,
            block,
            pending: Vec::with_capacity(block + (1 << 20)),
            eof: false,
            total: 0,
            sha: Sha256::new(),
        })
    }

    /// Reads until `pending` holds `want` bytes or the file ends.
    fn fill(&mut self, want: usize) -> Result<(), IngestError> {
        while self.pending.len() < want && !self.eof {
            let start = self.pending.len();
            let step = (want - start).min(8 << 20);
            self.pending.resize(start + step, 0);
            let n = self
                .file
                .read(&mut self.pending[start..])
                .map_err(|source| IngestError::Io {
                    path: self.path.clone(),
                    source,
                })?;
            self.pending.truncate(start + n);
            self.total += n as u64;
            self.eof = n == 0;
        }
        Ok(())
    }

    /// Takes the header record (with its line break) off the front, hashed.
    fn take_header(&mut self) -> Vec<u8> {
        let header: Vec<u8> = self.pending.drain(..header_len(&self.pending)).collect();
        self.sha.update(&header);
        header
    }

    /// Fills a block and returns the length of its complete records (the whole rest at the
    /// end of the file), or `None` when nothing is left. A record longer than a block makes
    /// the block grow.
    fn next_records(&mut self) -> Result<Option<usize>, IngestError> {
        self.fill(self.block)?;
        let cut = loop {
            match last_record_end(&self.pending) {
                _ if self.eof => break self.pending.len(),
                Some(end) => break end,
                None => self.fill(self.pending.len() * 2)?,
            }
        };
        Ok((cut > 0).then_some(cut))
    }

    /// Drops the first `cut` bytes (a block that was read and hashed).
    fn consume(&mut self, cut: usize) {
        self.pending.drain(..cut);
    }

    /// Hashes the rest of the file without keeping it.
    fn hash_rest(&mut self) -> Result<(), IngestError> {
        self.sha.update(&self.pending);
        self.pending.clear();
        while !self.eof {
            self.fill(self.block)?;
            self.sha.update(&self.pending);
            self.pending.clear();
        }
        Ok(())
    }

    /// The bytes read and their sha256, in hex.
    fn finish(self) -> (u64, String) {
        let sha = self.sha.finalize();
        (self.total, sha.iter().map(|b| format!("{b:02x}")).collect())
    }
}

/// The header record's length with its line break.
fn header_len(raw: &[u8]) -> usize {
    let mut quoted = false;
    for (i, &b) in raw.iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b'\n' if !quoted => return i + 1,
            _ => {}
        }
    }
    raw.len()
}

/// Just past the last line break outside quotes (the end of the last complete record), for
/// bytes that start at a record's start.
fn last_record_end(raw: &[u8]) -> Option<usize> {
    let mut quoted = false;
    let mut end = None;
    for i in memchr::memchr2_iter(b'"', b'\n', raw) {
        if raw[i] == b'"' {
            quoted = !quoted;
        } else if !quoted {
            end = Some(i + 1);
        }
    }
    end
}

fn count_lines(raw: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', raw).count()
}

/// A text error found in a block, placed in the whole file.
fn rebase(e: IngestError, bytes_before: usize, lines_before: usize) -> IngestError {
    match e {
        IngestError::NotUtf8 {
            path,
            offset,
            line,
            column,
        } => IngestError::NotUtf8 {
            path,
            offset: offset + bytes_before,
            line: line + lines_before,
            column,
        },
        IngestError::Binary { path, offset, line } => IngestError::Binary {
            path,
            offset: offset + bytes_before,
            line: line + lines_before,
        },
        e => e,
    }
}
