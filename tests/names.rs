//! Curated topic names: `topicmap names` writes a template, a names file renames topics in every
//! output, a name follows its topic across refits, and a name without a topic is reported.

mod common;
use common::*;
use std::fs;

#[test]
fn a_name_replaces_the_label_everywhere_and_follows_its_topic() {
    let tmp = tempfile::tempdir().unwrap();
    let names = tmp.path().join("topic-names.toml");
    let p = csv_pipeline(tmp.path(), "");
    let out = tmp.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));

    // The template lists every topic, commented out, with today's label.
    let o = bin()
        .args(["names", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let template = String::from_utf8(o.stdout).unwrap();
    let (h, rows) = read_csv(&out.join("topics.csv"));
    let labels = column(&h, &rows, "label");
    let ids = column(&h, &rows, "topic_id");
    for (id, label) in ids.iter().zip(&labels) {
        assert!(
            template.contains(&format!("# {id} = \"{label}\"")),
            "{template}"
        );
    }
    // Name the first topic (uncomment its line and write a name).
    let named_id = ids[0];
    let edited = template.replace(
        &format!("# {named_id} = \"{}\"", labels[0]),
        &format!("{named_id} = \"Graph learning\""),
    );
    fs::write(&names, edited).unwrap();
    let with_names = format!(
        "{}\n[describe]\nnames = \"topic-names.toml\"\n",
        fs::read_to_string(&p).unwrap()
    );
    let p = pipeline(tmp.path(), "papers.toml", &with_names);
    for seed in ["42", "7"] {
        let o = run(&[
            "run",
            p.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--set",
            &format!("cluster.seed={seed}"),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let (h, rows) = read_csv(&out.join("topics.csv"));
        let i = column(&h, &rows, "topic_id")
            .iter()
            .position(|t| *t == named_id)
            .unwrap();
        assert_eq!(
            column(&h, &rows, "label")[i],
            "Graph learning",
            "seed {seed}"
        );
        assert_eq!(column(&h, &rows, "auto_label")[i], labels[0], "seed {seed}");
        let (dh, drows) = read_csv(&out.join("documents.csv"));
        assert!(column(&dh, &drows, "topic_label").contains(&"Graph learning"));
        for file in [
            "report.html",
            "summary.md",
            "charts/topic_sizes.svg",
            "charts/top_terms.svg",
        ] {
            let text = fs::read_to_string(out.join(file)).unwrap();
            assert!(text.contains("Graph learning"), "{file} lacks the name");
        }
    }
    // The template of a named run keeps the name, uncommented.
    let o = bin()
        .args(["names", out.to_str().unwrap()])
        .output()
        .unwrap();
    let again = String::from_utf8(o.stdout).unwrap();
    assert!(
        again.contains(&format!("\n{named_id} = \"Graph learning\"")),
        "{again}"
    );
}

#[test]
fn a_name_without_a_topic_is_reported_and_a_bad_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(
        tmp.path().join("names.toml"),
        "0 = \"Graphs\"\n99 = \"Nowhere\"\n",
    )
    .unwrap();
    let p = csv_pipeline(tmp.path(), "");
    let body = format!(
        "{}[describe]\nnames = \"names.toml\"\n",
        fs::read_to_string(&p).unwrap()
    );
    let p = pipeline(tmp.path(), "n.toml", &body);
    let out = tmp.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("topic 99") && stderr(&o).contains("never had"),
        "{}",
        stderr(&o)
    );
    let run_json = fs::read_to_string(out.join("run.json")).unwrap();
    assert!(run_json.contains("topic 99"), "run.json lists the warning");

    fs::write(tmp.path().join("names.toml"), "first = \"Graphs\"\n").unwrap();
    let o = run(&[
        "run",
        p.to_str().unwrap(),
        "--out",
        tmp.path().join("o2").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "a configuration error");
    let e = stderr(&o);
    assert!(
        e.contains("names.toml") && e.contains("\"first\" is not a topic id"),
        "{e}"
    );
}
