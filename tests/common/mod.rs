//! Shared helpers for the CLI tests: run the real binary on fixtures in temporary folders.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The Spark driver's fixtures, for `tests/spark.rs`.
pub mod spark;

/// The binary, reporting errors by class (exit 3 configuration, 4 data, 5 output) so tests
/// can tell the classes apart; `plain_bin` keeps the default (2 for every error).
pub fn bin() -> Command {
    let mut c = plain_bin();
    c.env("TOPICMAP_EXIT_CODES", "classes");
    c
}

/// The binary with the default exit codes (the environment's TOPICMAP_EXIT_CODES removed).
pub fn plain_bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_topicmap"));
    c.env_remove("TOPICMAP_EXIT_CODES");
    c
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

/// Runs `topicmap ARGS` with `stdin` piped in; returns (status ok, stdout, stderr).
pub fn piped(args: &[&str], stdin: &[u8]) -> (bool, Vec<u8>, String) {
    let mut child = bin()
        .args(args)
        .arg("--quiet")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Fed from its own thread, so a child that writes before it has read everything cannot
    // block us. A child that refuses its input may exit without reading it all: the broken
    // pipe that leaves is no failure of ours; its exit status says what happened.
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let feeder = std::thread::spawn(move || match std::io::Write::write_all(&mut pipe, &input) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    });
    let o = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    (
        o.status.success(),
        o.stdout,
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
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

/// Report files that hold the run date.
pub const DATED: [&str; 4] = ["run.json", "report.html", "summary.md", "report.xlsx"];

/// Asserts two report folders hold the same files with the same bytes (dated lines aside).
pub fn same_reports(a: &Path, b: &Path) {
    let files = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = walk(d)
            .into_iter()
            .map(|p| p.strip_prefix(d).unwrap().display().to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(files(a), files(b));
    for f in files(a) {
        if DATED.contains(&f.as_str()) {
            continue;
        }
        assert!(
            fs::read(a.join(&f)).unwrap() == fs::read(b.join(&f)).unwrap(),
            "{f} differs"
        );
    }
    let undated = |p: &Path| -> String {
        fs::read_to_string(p)
            .unwrap()
            .lines()
            .filter(|l| {
                !["run 20", "UTC</small>", "Generated by topicmap"]
                    .iter()
                    .any(|d| l.contains(d))
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    for f in ["summary.md", "report.html"] {
        assert!(undated(&a.join(f)) == undated(&b.join(f)), "{f} differs");
    }
}

/// Every file under `d`.
pub fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A synthetic corpus of `n` documents in `files` CSV files: each abstract joins two fixture
/// abstracts of the same label, so topics are clear and no two documents are alike.
pub fn synthetic(dir: &Path, n: usize, files: usize) -> Vec<PathBuf> {
    let (h, rows) = read_csv(&fixture("papers.csv"));
    let abstracts = column(&h, &rows, "abstract");
    let titles = column(&h, &rows, "title");
    let labels = column(&h, &rows, "label");
    let per = n.div_ceil(files);
    (0..files)
        .map(|f| {
            let path = dir.join(format!("part-{f}.csv"));
            let mut body = String::from("id,year,title,abstract,label\r\n");
            for i in f * per..((f + 1) * per).min(n) {
                let a = i % 18;
                let b = (a / 6) * 6 + (i / 18 + a) % 6;
                body.push_str(&format!(
                    "s{i},{},\"{} {}\",\"{} {} (variant {i})\",{}\r\n",
                    2019 + i % 4,
                    titles[a],
                    i,
                    abstracts[a],
                    abstracts[b],
                    labels[a]
                ));
            }
            fs::write(&path, body).unwrap();
            path
        })
        .collect()
}

/// A pipeline over a one-file [`synthetic`] corpus of `n` documents, k = 3 (its sentences
/// repeat, so the boilerplate rule is off): the corpus files and the pipeline file.
pub fn synthetic_run(dir: &Path, n: usize) -> (Vec<PathBuf>, PathBuf) {
    let files = synthetic(dir, n, 1);
    let body = format!(
        "name = \"m\"\n[[input]]\npath = {:?}\nid = \"id\"\ntime = \"year\"\n[clean]\nboilerplate = false\n[cluster]\nk = 3\n",
        files[0].display().to_string()
    );
    let p = pipeline(dir, "m.toml", &body);
    (files, p)
}

/// A Parquet file as a polars frame.
pub fn parquet(path: &Path) -> polars::prelude::DataFrame {
    use polars::prelude::SerReader;
    polars::prelude::ParquetReader::new(fs::File::open(path).unwrap())
        .finish()
        .unwrap()
}
