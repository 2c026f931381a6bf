//! Stable topic ids across refits (issue 6): matched topics keep their ids, new ones get fresh
//! ids, vanished ones are listed in drift.csv.

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
