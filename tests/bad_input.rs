//! Bad input: each case fails with its class's exit code (3 for the pipeline file, 4 for the
//! data), a message naming the file (and row and column where that applies), and nothing written
//! to the output folder.

mod common;
use common::*;
use std::fs;
use std::path::Path;

/// Exit code of a configuration error.
const CONFIG: i32 = 3;
/// Exit code of a data error.
const DATA: i32 = 4;

/// Runs the pipeline and checks the failure contract (exit `code`, nothing written); returns
/// stderr.
fn refuse(code: i32, dir: &Path, pipeline_body: &str, extra: &[&str]) -> String {
    let p = pipeline(dir, "p.toml", pipeline_body);
    let out = dir.join("out");
    let mut args = vec!["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = run(&args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(code), "exit code; stderr: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(!out.exists(), "nothing may be written: {err}");
    let leftovers: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "staging folders left: {leftovers:?}");
    err
}

fn list_pipeline(path: &str) -> String {
    format!(
        "name = \"x\"\n[[input]]\npath = \"{path}\"\nformat = \"paper-list\"\n[cluster]\nk = 2\n"
    )
}

#[test]
fn missing_input_file() {
    let d = tempfile::tempdir().unwrap();
    let e = refuse(DATA, d.path(), &list_pipeline("missing-file.txt"), &[]);
    assert!(
        e.contains("missing-file.txt") && e.contains("not found"),
        "{e}"
    );
}

#[test]
fn glob_that_matches_nothing() {
    let d = tempfile::tempdir().unwrap();
    let e = refuse(DATA, d.path(), &list_pipeline("lists/*.txt"), &[]);
    assert!(
        e.contains("lists/*.txt") && e.contains("matched no files"),
        "{e}"
    );
}

#[test]
fn empty_file() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("empty.txt"), "").unwrap();
    let e = refuse(DATA, d.path(), &list_pipeline("empty.txt"), &[]);
    assert!(e.contains("empty.txt") && e.contains("empty"), "{e}");
}

#[test]
fn file_that_is_not_utf8() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("latin.txt"),
        b"Title\n\nna\xefve caf\xe9 text\n",
    )
    .unwrap();
    let e = refuse(DATA, d.path(), &list_pipeline("latin.txt"), &[]);
    assert!(
        e.contains("latin.txt")
            && e.contains("UTF-8")
            && e.contains("byte 9")
            && e.contains("line 3"),
        "{e}"
    );
}

#[test]
fn utf16_file() {
    let d = tempfile::tempdir().unwrap();
    let mut bytes = vec![0xFF, 0xFE];
    for u in "Title\n\nabc\n".encode_utf16() {
        bytes.extend_from_slice(&u.to_le_bytes());
    }
    fs::write(d.path().join("u16.txt"), bytes).unwrap();
    let e = refuse(DATA, d.path(), &list_pipeline("u16.txt"), &[]);
    assert!(e.contains("u16.txt") && e.contains("UTF-16"), "{e}");
}

#[test]
fn directory_given_as_file() {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir(d.path().join("adir.txt")).unwrap();
    let e = refuse(DATA, d.path(), &list_pipeline("adir.txt"), &[]);
    assert!(e.contains("adir.txt") && e.contains("directory"), "{e}");
}

#[test]
fn missing_column() {
    let d = tempfile::tempdir().unwrap();
    let body = format!(
        "name = \"x\"\n[[input]]\npath = {:?}\ntext = [\"title\", \"summary\"]\n[cluster]\nk = 2\n",
        fixture("papers.csv").display().to_string()
    );
    let e = refuse(DATA, d.path(), &body, &[]);
    assert!(
        e.contains("papers.csv") && e.contains("\"summary\"") && e.contains("abstract"),
        "{e}"
    );
}

#[test]
fn non_numeric_year_names_row_and_column() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("t.csv"),
        "id,year,abstract\na,2020,graph networks\nb,soon,graph models\n",
    )
    .unwrap();
    let body = "name = \"x\"\n[[input]]\npath = \"t.csv\"\ntime = \"year\"\n[cluster]\nk = 1\n";
    let e = refuse(DATA, d.path(), body, &[]);
    assert!(
        e.contains("t.csv") && e.contains("row 2") && e.contains("\"year\"") && e.contains("soon"),
        "{e}"
    );
}

#[test]
fn all_documents_empty_after_cleaning() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("s.txt"),
        "Title\n\nthe and of 2020\n\n$x^2$ \\cite{a}\n",
    )
    .unwrap();
    let e = refuse(DATA, d.path(), &list_pipeline("s.txt"), &[]);
    assert!(
        e.contains("all documents are empty") && e.contains("s.txt"),
        "{e}"
    );
}

#[test]
fn k_zero_and_k_larger_than_corpus() {
    let d = tempfile::tempdir().unwrap();
    let p = repo().join("pipelines/neurips-2026.toml");
    let body = fs::read_to_string(&p).unwrap().replace(
        "data/neurips-2026",
        &repo()
            .join("pipelines/data/neurips-2026")
            .display()
            .to_string(),
    );
    let e = refuse(CONFIG, d.path(), &body, &["--set", "cluster.k=0"]);
    assert!(e.contains("cluster.k") && e.contains("p.toml"), "{e}");
    let e = refuse(DATA, d.path(), &body, &["--set", "cluster.k=500"]);
    assert!(e.contains("500") && e.contains("26"), "{e}");
}

#[test]
fn unknown_pipeline_key_and_wrong_type_and_bad_name() {
    let d = tempfile::tempdir().unwrap();
    let e = refuse(
        CONFIG,
        d.path(),
        "name = \"x\"\n[cluster]\nk = 2\nseeed = 3\n[[input]]\npath = \"a.txt\"\n",
        &[],
    );
    assert!(e.contains("seeed") && e.contains("p.toml"), "{e}");
    let e = refuse(
        CONFIG,
        d.path(),
        "name = \"x\"\n[cluster]\nk = 2\nseed = \"abc\"\n[[input]]\npath = \"a.txt\"\n",
        &[],
    );
    assert!(e.contains("seed") || e.contains("line 4"), "{e}");
    let e = refuse(
        CONFIG,
        d.path(),
        "name = \"../../x\"\n[[input]]\npath = \"a.txt\"\n",
        &[],
    );
    assert!(
        e.contains("../../x") && e.contains("letters, digits"),
        "{e}"
    );
}

#[test]
fn out_folder_with_foreign_files_is_never_replaced() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("mine");
    fs::create_dir(&out).unwrap();
    fs::write(out.join("notes.txt"), "keep me").unwrap();
    let p = csv_pipeline(d.path(), "");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(5), "an output error");
    assert!(stderr(&o).contains("not a topicmap report"));
    assert_eq!(
        fs::read_to_string(out.join("notes.txt")).unwrap(),
        "keep me"
    );
}

#[test]
fn duplicate_ids_are_renamed_in_skip_mode_and_refused_in_fail_mode() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("t.csv"),
        "id,abstract\na,graph neural networks on graphs\na,graph networks pass messages\nb,graph attention networks\n",
    )
    .unwrap();
    let body = "name = \"x\"\n[[input]]\npath = \"t.csv\"\nid = \"id\"\n[tokenize]\nmin-df = 1\nmax-df = 1.0\n[cluster]\nk = 1\n";
    let p = pipeline(d.path(), "ok.toml", body);
    let out = d.path().join("ok");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (h, rows) = read_csv(&out.join("documents.csv"));
    assert_eq!(
        column(&h, &rows, "doc_id"),
        ["a", "a~2", "b"],
        "nothing is lost"
    );
    let e = refuse(
        DATA,
        d.path(),
        &format!("{body}[output]\non-bad-document = \"fail\"\n"),
        &[],
    );
    assert!(
        e.contains("t.csv") && e.contains("row 2") && e.contains("duplicate id \"a\""),
        "{e}"
    );
}

#[test]
fn min_df_larger_than_the_corpus() {
    let d = tempfile::tempdir().unwrap();
    let body = format!(
        "name = \"x\"\n[[input]]\npath = {:?}\n[tokenize]\nmin-df = 500\n[cluster]\nk = 2\n",
        fixture("papers.csv").display().to_string()
    );
    let e = refuse(DATA, d.path(), &body, &[]);
    assert!(
        e.contains("min-df = 500")
            && e.contains("18 documents")
            && e.contains("lower tokenize.min-df"),
        "{e}"
    );
}

#[test]
fn ragged_csv_rows_are_refused_with_the_file_name() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("r.csv"),
        "id,abstract\na,graph networks\nb,graph,extra,fields\n",
    )
    .unwrap();
    let e = refuse(
        DATA,
        d.path(),
        "name = \"x\"\n[[input]]\npath = \"r.csv\"\n[cluster]\nk = 1\n",
        &[],
    );
    assert!(e.contains("r.csv"), "{e}");
}

#[test]
fn unclosed_quote_names_the_line_it_opened_on() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("q.csv"),
        "id,abstract\na,\"graph networks\nb,graph models\n",
    )
    .unwrap();
    let e = refuse(
        DATA,
        d.path(),
        "name = \"x\"\n[[input]]\npath = \"q.csv\"\n[cluster]\nk = 1\n",
        &[],
    );
    assert!(
        e.contains("q.csv") && e.contains("line 2") && e.contains("never closed"),
        "{e}"
    );
}

#[test]
fn mixed_date_formats_name_the_odd_row() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("m.csv"),
        "id,date,abstract\na,2020-01-05,graph networks\nb,05/01/2020,graph models\n",
    )
    .unwrap();
    let e = refuse(
        DATA,
        d.path(),
        "name = \"x\"\n[[input]]\npath = \"m.csv\"\ntime = \"date\"\n[cluster]\nk = 1\n",
        &[],
    );
    assert!(
        e.contains("m.csv")
            && e.contains("row 2")
            && e.contains("\"date\"")
            && e.contains("05/01/2020"),
        "{e}"
    );
}

#[test]
fn nul_bytes_mean_binary_data() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("n.txt"), b"Title\n\nabc\x00def\n").unwrap();
    let e = refuse(DATA, d.path(), &list_pipeline("n.txt"), &[]);
    assert!(
        e.contains("n.txt") && e.contains("NUL byte at byte 10") && e.contains("line 3"),
        "{e}"
    );
}

#[test]
fn a_ten_megabyte_line_and_a_million_char_token_are_handled() {
    let d = tempfile::tempdir().unwrap();
    let words = ["graph", "network", "model", "learning", "data", "neural"];
    let long: Vec<&str> = (0..1_700_000)
        .map(|i| words[(i * 7) % words.len()])
        .collect();
    let text = format!(
        "Title\n\n{}\n\nsmall graph network document\n\n{} graph network model\n",
        long.join(" "),
        "x".repeat(1_000_000)
    );
    assert!(text.len() > 10_000_000);
    fs::write(d.path().join("big.txt"), text).unwrap();
    let body = "name = \"x\"\n[[input]]\npath = \"big.txt\"\n[tokenize]\nmin-df = 1\nmax-df = 1.0\n[cluster]\nk = 2\n";
    let p = pipeline(d.path(), "big.toml", body);
    let out = d.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (_, rows) = read_csv(&out.join("documents.csv"));
    assert_eq!(rows.len(), 3, "all three documents are kept");
    let (_, terms) = read_csv(&out.join("terms.csv"));
    assert!(
        terms.iter().all(|r| r[2].len() <= 40),
        "the million-char token is not a term"
    );
}

#[test]
fn silhouette_sample_out_of_range_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = csv_pipeline(d.path(), "");
    let body = fs::read_to_string(&p).unwrap();
    let e = refuse(
        CONFIG,
        d.path(),
        &body,
        &["--set", "cluster.silhouette-sample=50000"],
    );
    assert!(
        e.contains("silhouette-sample") && e.contains("20000"),
        "{e}"
    );
}

#[test]
fn an_output_folder_that_cannot_be_written_is_named() {
    let d = tempfile::tempdir().unwrap();
    // A regular file where a folder is needed: no user, not even root, can create a folder in it.
    let blocker = d.path().join("not-a-folder");
    fs::write(&blocker, "x").unwrap();
    let p = csv_pipeline(d.path(), "");
    let out = blocker.join("report");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(5), "{e}");
    assert!(
        e.contains("cannot write to") && e.contains("not-a-folder"),
        "{e}"
    );
    assert_eq!(fs::read_to_string(&blocker).unwrap(), "x");

    // /proc refuses new folders for every user: the pipeline's history folder cannot be made.
    let p = csv_pipeline(d.path(), "[output]\ndir = \"/proc/topicmap-unwritable\"\n");
    let o = run(&["run", p.to_str().unwrap()]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(5), "{e}");
    assert!(
        e.contains("cannot write to") && e.contains("/proc/topicmap-unwritable"),
        "{e}"
    );
}

#[test]
fn empty_documents_are_skipped_and_counted_by_their_file_row_or_refused_in_fail_mode() {
    let d = tempfile::tempdir().unwrap();
    let fixture_text = fs::read_to_string(fixture("papers.csv")).unwrap();
    let mut lines: Vec<&str> = fixture_text.lines().collect();
    // Data row 3 has no text at all; data row 6 has only stop words. Row 3 is dropped at ingest,
    // row 6 after tokenizing, so its row number must survive the earlier removal.
    lines.insert(3, "e1,2020,,,graphs");
    lines.insert(6, "e2,2020,The and of,we are of the,graphs");
    let csv = d.path().join("holes.csv");
    fs::write(&csv, lines.join("\n") + "\n").unwrap();
    let body = |mode: &str| {
        format!(
            "name = \"holes\"\n[[input]]\npath = \"holes.csv\"\nid = \"id\"\ntime = \"year\"\n[tokenize]\nmin-df = 2\n[cluster]\nk = 3\n[output]\non-bad-document = \"{mode}\"\n"
        )
    };

    let p = pipeline(d.path(), "skip.toml", &body("skip"));
    let out = d.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    assert!(e.contains("holes.csv row 3"), "{e}");
    assert!(e.contains("1 documents left out"), "{e}");
    let run_json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let skipped = run_json["skipped"]
        .as_array()
        .expect("run.json lists skipped documents");
    let rows: Vec<u64> = skipped.iter().map(|s| s["row"].as_u64().unwrap()).collect();
    assert_eq!(rows, vec![3, 6], "{skipped:?}");
    let (header, docs) = read_csv(&out.join("documents.csv"));
    let ids = column(&header, &docs, "doc_id");
    assert_eq!(ids.len(), lines.len() - 3, "every other row is kept");
    assert!(!ids.contains(&"e1") && !ids.contains(&"e2"), "{ids:?}");

    let f = tempfile::tempdir().unwrap();
    fs::copy(&csv, f.path().join("holes.csv")).unwrap();
    let e = refuse(DATA, f.path(), &body("fail"), &[]);
    assert!(e.contains("holes.csv") && e.contains("row 3"), "{e}");
}

/// A record that is only a URL (or only boilerplate) is left out, listed with its row and
/// counted, never a topic; a `keep` entry that matches nothing is warned about; the run goes on.
#[test]
fn records_of_only_links_are_left_out_and_an_unmatched_keep_is_warned_about() {
    let tmp = tempfile::tempdir().unwrap();
    let mut body = String::from("A list\n");
    // Twelve distinct abstracts (a sentence shared by three would be boilerplate).
    let words = [
        "chemistry",
        "proteins",
        "citations",
        "roads",
        "circuits",
        "traffic",
    ];
    for (i, w) in words.iter().enumerate() {
        body.push_str(&format!(
            "\nGraph neural networks pass messages between nodes of {w} graphs.\n\nReinforcement learning agents learn {w} policies from rewards {i}.\n"
        ));
    }
    body.push_str("\nhttps://openreview.net/forum?id=XyZ123abc\n");
    fs::write(tmp.path().join("list.txt"), body).unwrap();
    let p = pipeline(
        tmp.path(),
        "p.toml",
        &format!(
            "{}[clean]\nkeep = [\"Nothing of the kind appears here.\"]\n",
            list_pipeline("list.txt")
        ),
    );
    let out = tmp.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("clean.keep entry \"Nothing of the kind appears here.\" matches no segment"),
        "{err}"
    );
    assert!(
        err.contains("1 documents left out: nothing but boilerplate"),
        "{err}"
    );
    let info: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(info["skipped"][0]["row"], 13, "{}", info["skipped"]);
    assert_eq!(info["clean"]["removed"]["documents_left_out"], 1);
    assert_eq!(
        info["clean"]["unmatched_keep"][0],
        "Nothing of the kind appears here."
    );
    let (h, docs) = read_csv(&out.join("documents.csv"));
    assert_eq!(column(&h, &docs, "doc_id").len(), 12);
}
