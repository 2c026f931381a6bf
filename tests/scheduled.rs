//! Scheduled operation (issue 6): stable topic ids across refits (matched topics keep their ids,
//! new ones get fresh ids, vanished ones are listed in drift.csv) and runs killed mid-way.

mod common;
use common::*;
use std::collections::HashMap;
use std::fs;

fn topic_by_doc(dir: &std::path::Path) -> HashMap<String, String> {
    let (h, rows) = read_csv(&dir.join("documents.csv"));
    column(&h, &rows, "doc_id")
        .into_iter()
        .zip(column(&h, &rows, "topic_id"))
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn a_refit_with_a_new_batch_keeps_every_matched_topic_id() {
    let tmp = tempfile::tempdir().unwrap();
    let hist = tmp.path().join("hist");
    let extra = format!("[output]\ndir = {:?}\n", hist.display().to_string());
    let p = csv_pipeline(tmp.path(), &extra);
    let o = run(&["run", p.to_str().unwrap(), "--set", "cluster.seed=1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let first = fs::canonicalize(hist.join("latest")).unwrap();
    let before = topic_by_doc(&first);
    assert!(
        !first.join("drift.csv").exists(),
        "a first run has nothing to drift from"
    );

    // Same data plus a new batch about a fourth subject, another seed, one more topic.
    let batch = tmp.path().join("batch.txt");
    fs::write(
        &batch,
        "New batch\n\nProtein folding predicts protein structure from amino acid sequences.\n\nProtein structure prediction with amino acid language models and folding.\n\nAmino acid sequences determine protein folding and protein structure.\n\nProtein design generates amino acid sequences that fold into a structure.\n",
    )
    .unwrap();
    let body = fs::read_to_string(&p).unwrap().replace(
        "[tokenize]",
        &format!(
            "[[input]]\npath = {:?}\nformat = \"paper-list\"\n\n[tokenize]",
            batch.display().to_string()
        ),
    );
    let p2 = pipeline(tmp.path(), "p2.toml", &body);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let o = run(&[
        "run",
        p2.to_str().unwrap(),
        "--set",
        "cluster.seed=2",
        "--set",
        "cluster.k=4",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let second = fs::canonicalize(hist.join("latest")).unwrap();
    assert_ne!(first, second);
    let after = topic_by_doc(&second);
    for (doc, id) in &before {
        assert_eq!(after.get(doc), Some(id), "{doc} changed topic id");
    }
    let (h, rows) = read_csv(&second.join("drift.csv"));
    let status = column(&h, &rows, "status");
    assert_eq!(
        status.iter().filter(|s| **s == "matched").count(),
        3,
        "{rows:?}"
    );
    assert_eq!(status.iter().filter(|s| **s == "new").count(), 1);
    let new_row = rows.iter().find(|r| r[2] == "new").unwrap();
    assert_eq!(new_row[1], "3", "the new topic gets the next fresh id");
    let new_ids: Vec<&String> = after
        .iter()
        .filter(|(d, _)| d.starts_with("batch:"))
        .map(|(_, t)| t)
        .collect();
    assert!(
        new_ids.iter().all(|t| *t == "3"),
        "the new batch forms the new topic: {new_ids:?}"
    );
}

/// A run killed at any point leaves the previous report intact and no visible half-written run.
#[test]
fn a_killed_run_leaves_the_previous_report_intact() {
    let tmp = tempfile::tempdir().unwrap();
    let hist = tmp.path().join("hist");
    let p = csv_pipeline(
        tmp.path(),
        &format!("[output]\ndir = {:?}\n", hist.display().to_string()),
    );
    let o = run(&["run", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let first = fs::read(hist.join("latest/documents.csv")).unwrap();
    for delay_ms in [0u64, 5, 10, 20, 30, 45, 60, 80] {
        let mut child = bin()
            .args(["run", p.to_str().unwrap(), "--quiet"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        let latest = fs::canonicalize(hist.join("latest")).unwrap();
        assert!(
            latest.join("run.json").is_file(),
            "latest is a complete run after a kill at {delay_ms} ms"
        );
        assert_eq!(
            fs::read(latest.join("documents.csv")).unwrap(),
            first,
            "same data, same report"
        );
        for e in fs::read_dir(hist.join("runs")).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if !name.starts_with('.') {
                assert!(
                    e.path().join("run.json").is_file(),
                    "{name} is a half-written run"
                );
            }
        }
    }
}
