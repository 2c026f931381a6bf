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

/// `assign` takes the fit's columns and period from the model unless a flag overrides each, says
/// so on stderr, refuses a table lacking a column so taken, and `--id ""` numbers rows instead.
#[test]
fn assign_reads_a_batch_with_the_columns_of_the_fit() {
    let tmp = tempfile::tempdir().unwrap();
    let p = csv_pipeline(tmp.path(), "[trends]\nperiod = \"quarter\"\n");
    let fit = tmp.path().join("fit");
    let o = run(&["run", p.to_str().unwrap(), "--out", fit.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let input = fixture("papers.csv");
    let assign = |out: &str, extra: &[&str], file: &std::path::Path| {
        let out = tmp.path().join(out);
        let mut args = vec![
            "assign",
            "--model",
            fit.to_str().unwrap(),
            file.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", out.to_str().unwrap()]);
        (run(&args), out)
    };

    let (o, out) = assign("plain", &[], &input);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let taken = info["from_model"].to_string();
    for t in [
        "id = id",
        "time = year",
        "label = label",
        "period = quarter",
        "on-bad-document = skip",
    ] {
        assert!(taken.contains(t), "{t} not in {taken}");
    }
    let (h1, r1) = read_csv(&fit.join("documents.csv"));
    let (h2, r2) = read_csv(&out.join("documents.csv"));
    assert_eq!(column(&h1, &r1, "doc_id"), column(&h2, &r2, "doc_id"));
    assert_eq!(column(&h1, &r1, "time"), column(&h2, &r2, "time"));
    let periods = |dir: &std::path::Path| {
        let (h, r) = read_csv(&dir.join("topic_trends.csv"));
        let mut p: Vec<String> = column(&h, &r, "period")
            .iter()
            .map(|s| s.to_string())
            .collect();
        p.dedup();
        p
    };
    assert_eq!(periods(&out), periods(&fit));
    assert!(periods(&out).len() > 1, "{:?}", periods(&out));

    // A flag overrides: rows numbered by file and row.
    let (o, out) = assign("numbered", &["--id", ""], &input);
    assert!(o.status.success(), "{}", stderr(&o));
    let (h3, r3) = read_csv(&out.join("documents.csv"));
    assert_eq!(column(&h3, &r3, "doc_id")[0], "papers:1");

    // A table without the fit's time column is refused with the column named.
    let lacking = tmp.path().join("batch.csv");
    let body = fs::read_to_string(&input)
        .unwrap()
        .replace("id,year,", "id,published,");
    fs::write(&lacking, body).unwrap();
    let (o, out) = assign("lacking", &[], &lacking);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("year") && err.contains("batch.csv"), "{err}");
    assert!(!out.exists(), "nothing written");
}

/// Assigned documents land on the fitted map, in their topic's region: placed again, a
/// document is nearer its own topic's centre on the map (the mean of the fit's places) than
/// any other topic's.
#[test]
fn assigned_documents_land_in_their_topics_region_of_the_map() {
    let tmp = tempfile::tempdir().unwrap();
    let (files, p) = synthetic_run(tmp.path(), 300);
    let fit = tmp.path().join("fit");
    let o = run(&["run", p.to_str().unwrap(), "--out", fit.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let again = tmp.path().join("again");
    let o = run(&[
        "assign",
        "--model",
        fit.to_str().unwrap(),
        files[0].to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let places = |dir: &std::path::Path| -> Vec<(String, f64, f64)> {
        let (h, rows) = read_csv(&dir.join("documents.csv"));
        let (t, x, y) = (
            column(&h, &rows, "topic_id"),
            column(&h, &rows, "map_x"),
            column(&h, &rows, "map_y"),
        );
        (0..rows.len())
            .map(|i| {
                (
                    t[i].to_string(),
                    x[i].parse().unwrap(),
                    y[i].parse().unwrap(),
                )
            })
            .collect()
    };
    let (fitted, placed) = (places(&fit), places(&again));
    assert_eq!(fitted.len(), placed.len());
    let mut centres: std::collections::BTreeMap<String, (f64, f64, f64)> = Default::default();
    for (t, x, y) in &fitted {
        let c = centres.entry(t.clone()).or_default();
        *c = (c.0 + x, c.1 + y, c.2 + 1.0);
    }
    let nearest = |x: f64, y: f64| {
        centres
            .iter()
            .map(|(t, c)| (t.clone(), (c.0 / c.2 - x).powi(2) + (c.1 / c.2 - y).powi(2)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap()
            .0
    };
    let home = placed
        .iter()
        .filter(|(t, x, y)| nearest(*x, *y) == *t)
        .count();
    assert!(
        home * 10 >= placed.len() * 9,
        "{home} of {} placed in their topic's region",
        placed.len()
    );
}
