//! Snapshot tests of what a user reads on the command line (insta, as ruff does): `--help` of
//! every command, `check`'s report, and one error of each class with its exit code. A change to
//! any of them shows up as a snapshot diff to review (`cargo insta review`, or delete the
//! `.snap` file and rerun to accept).

mod common;
use common::*;
use std::path::Path;
use std::process::Output;

/// Exit code and stderr, with the temporary folder written as `[TMP]`.
fn outcome(o: &Output, tmp: &Path) -> String {
    let err = stderr(o).replace(&tmp.display().to_string(), "[TMP]");
    format!("exit: {:?}\n{err}", o.status.code())
}

fn help(args: &[&str]) -> String {
    let o = plain_bin().args(args).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn help_texts() {
    insta::assert_snapshot!("help", help(&["--help"]));
    insta::assert_snapshot!("help_run", help(&["run", "--help"]));
    insta::assert_snapshot!("help_check", help(&["check", "--help"]));
    insta::assert_snapshot!("help_assign", help(&["assign", "--help"]));
}

#[test]
fn check_lists_each_input_with_its_format() {
    let o = run(&["check", "tests/fixtures/papers.toml"]);
    assert!(o.status.success(), "{}", stderr(&o));
    insta::assert_snapshot!(String::from_utf8(o.stdout).unwrap());
}

/// Runs `topicmap run` on a pipeline written into a fresh folder, and returns the outcome.
fn run_pipeline(body: &str, extra: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let p = pipeline(tmp.path(), "p.toml", body);
    let out = tmp.path().join("out");
    let mut args = vec!["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    outcome(&run(&args), tmp.path())
}

fn csv_input(extra: &str) -> String {
    format!(
        "name = \"p\"\n[[input]]\npath = {:?}\nid = \"id\"\n{extra}\n[tokenize]\nmin-df = 2\n[cluster]\nk = 3\n",
        fixture("papers.csv").display().to_string()
    )
}

#[test]
fn configuration_errors_exit_3() {
    let unknown_key = run_pipeline(
        "name = \"p\"\nbogus = 1\n[[input]]\npath = \"a.csv\"\n",
        &[],
    );
    insta::assert_snapshot!("config_unknown_key", unknown_key);
    let bad_value = run_pipeline(&csv_input("[trends]\nperiod = \"week\""), &[]);
    insta::assert_snapshot!("config_bad_value", bad_value);
    let bad_scale = run_pipeline(&csv_input("[charts]\nscale = 0.2"), &[]);
    insta::assert_snapshot!("config_chart_scale", bad_scale);
    let bad_set = run_pipeline(&csv_input(""), &["--set", "cluster.k"]);
    insta::assert_snapshot!("config_bad_set", bad_set);
}

#[test]
fn data_errors_exit_4() {
    let missing_file = run_pipeline("name = \"p\"\n[[input]]\npath = \"missing.csv\"\n", &[]);
    insta::assert_snapshot!("data_missing_file", missing_file);

    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("t.csv"),
        "id,abstract,date\n1,graph networks,2025-02-31\n",
    )
    .unwrap();
    let body = |time: &str| {
        format!("name = \"p\"\n[[input]]\npath = \"t.csv\"\nid = \"id\"\ntime = \"{time}\"\n")
    };
    let p = pipeline(tmp.path(), "p.toml", &body("year"));
    let missing_column = outcome(&run(&["check", p.to_str().unwrap()]), tmp.path());
    insta::assert_snapshot!("data_missing_column", missing_column);
    let p = pipeline(tmp.path(), "p.toml", &body("date"));
    let bad_date = outcome(&run(&["check", p.to_str().unwrap()]), tmp.path());
    insta::assert_snapshot!("data_bad_date", bad_date);

    let k_too_large = run_pipeline(&csv_input(""), &["--set", "cluster.k=500"]);
    insta::assert_snapshot!("data_k_larger_than_corpus", k_too_large);
}

#[test]
fn a_corpus_too_small_to_reduce_says_which_setting_to_change() {
    // Two abstracts with no word in common: after min-df = 1 and max-df = 1.0 every term is in one
    // document, and LSA on 2 documents keeps at most 1 dimension; one abstract keeps none.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("one.txt"),
        "A list\n\nGraph neural networks learn representations.\n",
    )
    .unwrap();
    let p = pipeline(
        tmp.path(),
        "p.toml",
        "name = \"p\"\n[[input]]\npath = \"one.txt\"\n[tokenize]\nmax-df = 1.0\n[cluster]\nk = 1\n",
    );
    let out = tmp.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let text = outcome(&o, tmp.path());
    assert!(!text.contains("<= 0"), "{text}");
    insta::assert_snapshot!("data_corpus_too_small", text);
}

#[test]
fn output_and_model_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("mine");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "keep me").unwrap();
    let p = pipeline(tmp.path(), "p.toml", &csv_input(""));
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    insta::assert_snapshot!("output_not_a_report", outcome(&o, tmp.path()));

    let model = tmp.path().join("model.json");
    std::fs::write(&model, r#"{"format": "topicmap-model", "version": 99}"#).unwrap();
    let input = fixture("papers.csv");
    let o = run(&[
        "assign",
        "--model",
        model.to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    insta::assert_snapshot!("model_other_version", outcome(&o, tmp.path()));
}

#[test]
fn a_closed_stdout_pipe_exits_quietly() {
    // The read end is closed before topicmap starts, so its first write meets a broken pipe,
    // as `topicmap check ... | head -0` does.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = bin()
        .args(["check", "tests/fixtures/papers.toml", "--quiet"])
        .stdout(writer)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "nothing on stderr: {}", stderr(&o));
}
