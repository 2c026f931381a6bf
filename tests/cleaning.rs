//! The clean stage end to end: it must never be why a corpus fails (issue 40). Templated
//! records make their own topics, whole repeated texts are reported as duplicates and kept.

mod common;
use common::*;
use std::path::Path;

/// The three templates of issue 40's table; each record differs only in its number.
const TEMPLATES: [&str; 3] = [
    "neural network training {} graph",
    "protein folding diffusion {} steps",
    "bandit regret bounds {} arms",
];

/// Title cells a spreadsheet would run as formulas, or a browser as markup.
const HOSTILE: [&str; 4] = [
    "=HYPERLINK(\"http://example.invalid/x\",\"click\")",
    "<img src=x onerror=alert(1)>",
    "@SUM(A1:A9)",
    "+1 -1 =cmd|' /C calc'!A0",
];

/// A CSV cell in RFC 4180 quoting.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Writes issue 40's table (30 x 3 templated records, ids `t<template>-<n>`, a hostile title on
/// every record, cycling through four forms independently of the template, so that junk words
/// would split every template if they were features) and a pipeline with default settings.
fn templated_table(dir: &Path) -> std::path::PathBuf {
    let mut csv = String::from("id,title,abstract,year\n");
    for n in 1..=30 {
        for (t, template) in TEMPLATES.iter().enumerate() {
            let title = HOSTILE[n % HOSTILE.len()];
            let text = template.replace("{}", &n.to_string());
            let year = 2020 + (n % 4);
            csv.push_str(&format!("t{t}-{n},{},{text},{year}\n", quoted(title)));
        }
    }
    std::fs::write(dir.join("h.csv"), csv).unwrap();
    pipeline(
        dir,
        "h.toml",
        "name = \"h\"\n[[input]]\npath = \"h.csv\"\nid = \"id\"\ntime = \"year\"\n",
    )
}

#[test]
fn issue_40_templated_records_are_topics_not_boilerplate() {
    let tmp = tempfile::tempdir().unwrap();
    let p = templated_table(tmp.path());
    let out = tmp.path().join("out");
    let o = bin()
        .args(["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("the repetition rule (clean.boilerplate) is off for this corpus")
            && err.contains("90 of 90 documents (100%, more than 5%)"),
        "one warning names the rule and the share: {err}"
    );
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(
        run["clean"]["removed"]["markup"].as_u64(),
        Some(90),
        "one cell per record"
    );
    let off = &run["clean"]["repetition_backed_off"];
    assert_eq!(off["documents"].as_u64(), Some(90), "{off}");
    assert_eq!(
        off["found"].as_u64(),
        Some(12),
        "a template with each title: {off}"
    );

    // Every document is analysed, and each topic is exactly one template.
    let (h, rows) = read_csv(&out.join("documents.csv"));
    let (ids, topics) = (column(&h, &rows, "doc_id"), column(&h, &rows, "topic_id"));
    assert_eq!(ids.len(), 90, "no document left out");
    let mut template_of_topic = std::collections::BTreeMap::new();
    for (id, topic) in ids.iter().zip(&topics) {
        let template = &id[..2];
        let was = template_of_topic.insert(*topic, template);
        assert!(
            was.is_none_or(|w| w == template),
            "topic {topic} mixes {was:?} and {template}"
        );
    }
    assert_eq!(template_of_topic.len(), 3, "{template_of_topic:?}");

    // The labels are the templates' words.
    let (h, rows) = read_csv(&out.join("topics.csv"));
    let labels = column(&h, &rows, "label").join(" | ");
    for word in ["network", "protein", "bandit"] {
        assert!(labels.contains(word), "{labels}");
    }

    // No CSV cell starts a formula.
    for f in [
        "documents.csv",
        "topics.csv",
        "terms.csv",
        "topic_trends.csv",
    ] {
        let (_, rows) = read_csv(&out.join(f));
        for cell in rows.iter().flatten() {
            let numeric = cell.parse::<f64>().is_ok();
            let first = cell.chars().next().unwrap_or(' ');
            assert!(
                numeric || !"=+-@\t\r".contains(first),
                "{f}: unescaped cell {cell:?}"
            );
        }
    }
    // And the report shows the titles as text, not markup.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        !html.contains("<img src=x"),
        "markup from a title reached the report"
    );
    assert!(
        html.contains("Nothing was removed as repeated"),
        "the report says why"
    );
}

#[test]
fn issue_40_whole_repeated_texts_are_duplicates_and_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let mut csv = std::fs::read_to_string(fixture("papers.csv")).unwrap();
    let copy =
        "Cross-listed: sparse attention for long context language models with linear memory.";
    for n in 1..=4 {
        csv.push_str(&format!("x{n},2021,Sparse attention {n},{copy},language\n"));
    }
    std::fs::write(tmp.path().join("p.csv"), csv).unwrap();
    let p = pipeline(
        tmp.path(),
        "p.toml",
        "name = \"p\"\n[[input]]\npath = \"p.csv\"\nid = \"id\"\ntime = \"year\"\ntext = [\"abstract\"]\n\
         [tokenize]\nmin-df = 2\n[cluster]\nk = 3\n",
    );
    let out = tmp.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (h, rows) = read_csv(&out.join("duplicates.csv"));
    assert_eq!(h, ["id", "duplicate_of", "source", "row"]);
    assert_eq!(column(&h, &rows, "id"), ["x2", "x3", "x4"]);
    assert_eq!(column(&h, &rows, "duplicate_of"), ["x1", "x1", "x1"]);
    assert_eq!(column(&h, &rows, "row"), ["20", "21", "22"]);
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(
        run["clean"]["removed"]["duplicates"].as_u64(),
        Some(3),
        "{}",
        run["clean"]
    );
    assert!(run["clean"].get("repetition_backed_off").is_none());
    let listed: Vec<&str> = run["duplicates"]
        .as_array()
        .expect("run.json lists the duplicates")
        .iter()
        .map(|d| d["duplicate_of"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["x1", "x1", "x1"]);
    // Kept: all four copies are analysed, in one topic.
    let (h, rows) = read_csv(&out.join("documents.csv"));
    let (ids, topics) = (column(&h, &rows, "doc_id"), column(&h, &rows, "topic_id"));
    let copies: Vec<&str> = ids
        .iter()
        .zip(&topics)
        .filter(|(id, _)| id.starts_with('x'))
        .map(|(_, t)| *t)
        .collect();
    assert_eq!(copies.len(), 4);
    assert!(copies.iter().all(|t| *t == copies[0]), "{copies:?}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Duplicate documents (kept; listed in duplicates.csv)"));
    assert!(
        html.contains("<tr><td>x2</td><td>x1</td></tr>"),
        "the ids are listed"
    );
}
