//! `topicmap assign`: new documents into a saved run's topics, with the fit's own preprocessing.

mod common;
use common::*;
use std::fs;

#[test]
fn assigning_the_training_documents_reproduces_the_fit_exactly() {
    // Refined topics (the default: decided in the TF-IDF space) and plain k-means topics.
    reproduces("", true);
    reproduces("refine-iter = 0\n", false);
}

fn reproduces(cluster_extra: &str, refined: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let p = csv_pipeline(tmp.path(), cluster_extra);
    let fit = tmp.path().join("fit");
    let o = run(&["run", p.to_str().unwrap(), "--out", fit.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let model: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(fit.join("model.json")).unwrap()).unwrap();
    assert_eq!(model["version"], 2);
    assert_eq!(
        model.get("term_centroids").is_some(),
        refined,
        "term centroids saved exactly when refined"
    );

    let again = tmp.path().join("again");
    let input = fixture("papers.csv");
    let o = run(&[
        "assign",
        "--model",
        fit.to_str().unwrap(),
        input.to_str().unwrap(),
        "--id",
        "id",
        "--time",
        "year",
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (h1, r1) = read_csv(&fit.join("documents.csv"));
    let (h2, r2) = read_csv(&again.join("documents.csv"));
    assert_eq!(column(&h1, &r1, "doc_id"), column(&h2, &r2, "doc_id"));
    assert_eq!(
        column(&h1, &r1, "topic_id"),
        column(&h2, &r2, "topic_id"),
        "same topics"
    );
    assert_eq!(
        column(&h1, &r1, "topic_label"),
        column(&h2, &r2, "topic_label")
    );
    assert_eq!(
        column(&h1, &r1, "distance"),
        column(&h2, &r2, "distance"),
        "same distances"
    );
    assert!(again.join("topic_trends.csv").is_file() && again.join("trends.csv").is_file());
}

#[test]
fn new_documents_land_in_the_matching_topic() {
    let tmp = tempfile::tempdir().unwrap();
    let p = csv_pipeline(tmp.path(), "");
    let fit = tmp.path().join("fit");
    assert!(
        run(&["run", p.to_str().unwrap(), "--out", fit.to_str().unwrap()])
            .status
            .success()
    );
    let list = tmp.path().join("new.txt");
    fs::write(
        &list,
        "New papers\n\nReinforcement learning agents maximise rewards with policy gradients.\n\nConvolutional networks segment medical images.\n\nzzzz qqqq\n",
    )
    .unwrap();
    let out = tmp.path().join("new");
    let o = run(&[
        "assign",
        "--model",
        fit.to_str().unwrap(),
        list.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (h, rows) = read_csv(&out.join("documents.csv"));
    assert_eq!(rows.len(), 2, "the document with no known word is left out");
    let (fh, fr) = read_csv(&fit.join("documents.csv"));
    let topic_of = |id: &str| {
        let ids = column(&fh, &fr, "doc_id");
        let i = ids.iter().position(|x| *x == id).unwrap();
        column(&fh, &fr, "topic_id")[i].to_string()
    };
    let topics = column(&h, &rows, "topic_id");
    assert_eq!(
        topics[0],
        topic_of("p07"),
        "the RL abstract joins the RL topic"
    );
    assert_eq!(
        topics[1],
        topic_of("p13"),
        "the segmentation abstract joins the vision topic"
    );
    let run_json = fs::read_to_string(out.join("run.json")).unwrap();
    assert!(run_json.contains("no word in the model's vocabulary"));
}

#[test]
fn a_model_of_another_version_is_refused_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(
        tmp.path().join("model.json"),
        r#"{"format":"topicmap-model","version":7}"#,
    )
    .unwrap();
    let o = run(&[
        "assign",
        "--model",
        tmp.path().to_str().unwrap(),
        fixture("papers.csv").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(4), "a data error");
    assert!(stderr(&o).contains("version 7"), "{}", stderr(&o));
}
