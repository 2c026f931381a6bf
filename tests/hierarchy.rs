//! The topic hierarchy: topic_tree.csv, its dendrogram and report section, and a report at a
//! coarser level (`describe.merge-to`) without refitting.

mod common;
use common::*;
use std::collections::HashSet;
use std::fs;

#[test]
fn the_tree_joins_every_topic_and_is_drawn_and_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let p = csv_pipeline(tmp.path(), "");
    let out = tmp.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (h, rows) = read_csv(&out.join("topic_tree.csv"));
    assert_eq!(
        h,
        ["node", "parent", "children", "distance", "label", "size", "topics"]
    );
    assert_eq!(rows.len(), 3 + 2, "three topics and two merges");
    let root = rows.iter().find(|r| r[1].is_empty()).expect("one root");
    assert_eq!(root[6].split("; ").count(), 3, "the root holds every topic");
    let (_, docs) = read_csv(&out.join("documents.csv"));
    assert_eq!(root[5], docs.len().to_string());
    // Merges happen at growing distances.
    let merges: Vec<f64> = rows
        .iter()
        .filter(|r| !r[2].is_empty())
        .map(|r| r[3].parse().unwrap())
        .collect();
    assert!(merges.windows(2).all(|w| w[0] <= w[1]), "{merges:?}");
    assert!(out.join("charts/topic_tree.png").is_file());
    let svg = fs::read_to_string(out.join("charts/topic_tree.svg")).unwrap();
    assert!(svg.contains("Topic hierarchy"));
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("id=\"hierarchy\"") && html.contains("Ward distance"));
}

#[test]
fn merge_to_reports_fewer_topics_and_the_model_keeps_the_fitted_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let p = csv_pipeline(tmp.path(), "[describe]\nmerge-to = 2\n");
    let out = tmp.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (h, rows) = read_csv(&out.join("topics.csv"));
    assert_eq!(rows.len(), 2);
    let ids: HashSet<&str> = column(&h, &rows, "topic_id").into_iter().collect();
    let (dh, docs) = read_csv(&out.join("documents.csv"));
    assert!(column(&dh, &docs, "topic_id")
        .iter()
        .all(|t| ids.contains(t)));
    let sizes: usize = column(&h, &rows, "size")
        .iter()
        .map(|s| s.parse::<usize>().unwrap())
        .sum();
    assert_eq!(sizes, docs.len(), "every document is in a reported topic");
    let (th, trows) = read_csv(&out.join("topic_trends.csv"));
    assert!(column(&th, &trows, "topic_id")
        .iter()
        .all(|t| ids.contains(t)));
    let model: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("model.json")).unwrap()).unwrap();
    assert_eq!(
        model["topics"].as_array().unwrap().len(),
        3,
        "the model keeps the fit"
    );
    // Assigning with that model places documents into the fitted topics.
    let again = tmp.path().join("again");
    let o = run(&[
        "assign",
        "--model",
        out.to_str().unwrap(),
        fixture("papers.csv").to_str().unwrap(),
        "--id",
        "id",
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (ah, arows) = read_csv(&again.join("documents.csv"));
    let fitted: HashSet<&str> = column(&ah, &arows, "topic_id").into_iter().collect();
    assert_eq!(fitted.len(), 3, "{fitted:?}");
}
