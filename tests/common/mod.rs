//! Shared helpers for the CLI tests: run the real binary on fixtures in temporary folders.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_topicmap"))
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(name: &str) -> PathBuf {
    repo().join("tests/fixtures").join(name)
}

/// Runs `topicmap ARGS` and returns its output.
pub fn run(args: &[&str]) -> Output {
    bin()
        .args(args)
        .arg("--quiet")
        .output()
        .expect("the binary runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Writes a pipeline file into `dir` and returns its path.
pub fn pipeline(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

/// Reads a CSV written by topicmap (BOM allowed) into header + rows.
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut records = parse_csv(text);
    let header = records.remove(0);
    (header, records)
}

/// A small RFC 4180 reader for the tests (quotes, doubled quotes, CRLF).
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

pub fn column<'a>(header: &[String], rows: &'a [Vec<String>], name: &str) -> Vec<&'a str> {
    let i = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    rows.iter().map(|r| r[i].as_str()).collect()
}

/// A pipeline over the committed CSV fixture.
pub fn csv_pipeline(dir: &Path, extra: &str) -> PathBuf {
    let body = format!(
        "name = \"papers\"\ntitle = \"Fixture papers\"\n[[input]]\npath = {:?}\nid = \"id\"\ntime = \"year\"\nlabel = \"label\"\n[tokenize]\nmin-df = 2\n[cluster]\nk = 3\n{extra}",
        fixture("papers.csv").display().to_string()
    );
    pipeline(dir, "papers.toml", &body)
}
