//! Reading an input file's bytes with the checks every input gets first: it exists, is a file,
//! is not empty, and (for text formats) is UTF-8 without NUL bytes, each failure naming the
//! file and, for the text checks, the byte, line and column. Tables are mapped from the page
//! cache rather than copied.

use super::IngestError;
use sha2::{Digest, Sha256};
use std::path::Path;

/// Reads a whole file, refusing directories and empty files.
pub fn read_checked(path: &Path) -> Result<Vec<u8>, IngestError> {
    let meta = std::fs::metadata(path).map_err(|_| IngestError::NotFound(path.to_path_buf()))?;
    if meta.is_dir() {
        return Err(IngestError::IsDirectory(path.to_path_buf()));
    }
    let raw = std::fs::read(path).map_err(|source| IngestError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if raw.is_empty() {
        return Err(IngestError::Empty(path.to_path_buf()));
    }
    Ok(raw)
}

/// A table file's bytes: mapped from the page cache, or read when the file cannot be mapped.
pub enum FileBytes {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(m) => m,
            FileBytes::Read(v) => v,
        }
    }
}

/// As [`read_checked`], but maps the file instead of copying it: the checksum, the checks and
/// polars read the page cache directly (no copy, no private pages in memory). Falls back to
/// reading when the file cannot be mapped (a pipe, a special file).
pub fn map_checked(path: &Path) -> Result<FileBytes, IngestError> {
    let meta = std::fs::metadata(path).map_err(|_| IngestError::NotFound(path.to_path_buf()))?;
    if meta.is_dir() {
        return Err(IngestError::IsDirectory(path.to_path_buf()));
    }
    if meta.is_file() && meta.len() > 0 {
        let file = std::fs::File::open(path).map_err(|source| IngestError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        // SAFETY: the map is read-only and lives only while this input is parsed. Like every
        // mapping it assumes no other process truncates the file meanwhile (that would end the
        // run with SIGBUS rather than wrong results); topicmap never writes its inputs.
        if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
            // The whole file is read soon (checked, hashed, parsed): ask the kernel to read it
            // ahead now, in large requests, instead of one page fault at a time when the file
            // is not in the page cache.
            let _ = map.advise(memmap2::Advice::WillNeed);
            return Ok(FileBytes::Mapped(map));
        }
    }
    read_checked(path).map(FileBytes::Read)
}

/// Checks that bytes are UTF-8 text (a UTF-8 BOM is allowed) and returns the text without the BOM.
pub fn check_text<'a>(path: &Path, raw: &'a [u8]) -> Result<&'a str, IngestError> {
    if raw.starts_with(&[0xFF, 0xFE]) {
        return Err(IngestError::Utf16(path.to_path_buf(), "little-endian BOM"));
    }
    if raw.starts_with(&[0xFE, 0xFF]) {
        return Err(IngestError::Utf16(path.to_path_buf(), "big-endian BOM"));
    }
    let line_col = |offset: usize| {
        let before = &raw[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let column = String::from_utf8_lossy(&raw[start..offset]).chars().count() + 1;
        (line, column)
    };
    let text = std::str::from_utf8(raw).map_err(|e| {
        let offset = e.valid_up_to();
        let (line, column) = line_col(offset);
        IngestError::NotUtf8 {
            path: path.to_path_buf(),
            offset,
            line,
            column,
        }
    })?;
    if let Some(offset) = memchr_nul(raw) {
        let (line, _) = line_col(offset);
        return Err(IngestError::Binary {
            path: path.to_path_buf(),
            offset,
            line,
        });
    }
    Ok(text.strip_prefix('\u{feff}').unwrap_or(text))
}

fn memchr_nul(raw: &[u8]) -> Option<usize> {
    memchr::memchr(0, raw)
}

pub(crate) fn sha256_hex(raw: &[u8]) -> String {
    let digest = Sha256::digest(raw);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
