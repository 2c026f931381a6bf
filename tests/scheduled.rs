//! Scheduled operation: stable topic ids across refits (matched topics keep their ids, new ones
//! get fresh ids, vanished ones are listed in drift.csv), runs killed mid-way, JSON logs,
//! machine-independent paths in the outputs, and shell completions.

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

#[test]
fn json_logs_are_one_object_per_line_with_every_stage_and_the_error_class() {
    let tmp = tempfile::tempdir().unwrap();
    let p = csv_pipeline(tmp.path(), "");
    let out = tmp.path().join("out");
    let o = bin()
        .args(["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .args(["--log-format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let events: Vec<serde_json::Value> = stderr(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect();
    let stages: Vec<&str> = events
        .iter()
        .filter(|e| e["event"] == "stage")
        .map(|e| e["stage"].as_str().unwrap())
        .collect();
    for s in [
        "ingest", "tokenize", "cluster", "describe", "export", "report", "workbook",
    ] {
        assert!(stages.contains(&s), "no {s} stage in {stages:?}");
    }
    assert!(events
        .iter()
        .all(|e| e["event"] != "stage" || e["seconds"].is_number()));
    let done = events
        .iter()
        .find(|e| e["event"] == "done")
        .expect("a done event");
    assert_eq!(done["folder"].as_str().unwrap(), out.display().to_string());
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        out.display().to_string(),
        "stdout keeps the report folder alone"
    );

    // A data error: one error event, with the same exit code the process returns.
    let bad = pipeline(
        tmp.path(),
        "bad.toml",
        "name = \"b\"\n[[input]]\npath = \"nowhere.csv\"\n",
    );
    let o = bin()
        .args(["run", bad.to_str().unwrap(), "--log-format", "json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4));
    let last: serde_json::Value = serde_json::from_str(stderr(&o).lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "error");
    assert_eq!(last["exit_code"], 4);
    assert_eq!(last["class"], "data");
    assert!(
        last["causes"][0].as_str().unwrap().contains("nowhere.csv"),
        "{last}"
    );
}

/// `TOPICMAP_DEBUG_CPU` and `TOPICMAP_DEBUG_RSS` add, per stage line, its CPU seconds and page
/// faults, and the memory it holds at its end beside its peak (Linux only: both read `/proc`
/// and `getrusage`).
#[cfg(target_os = "linux")]
#[test]
fn debug_lines_show_each_stages_cpu_page_faults_and_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let p = csv_pipeline(tmp.path(), "");
    let out = tmp.path().join("out");
    let o = bin()
        .args(["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .env("TOPICMAP_DEBUG_CPU", "1")
        .env("TOPICMAP_DEBUG_RSS", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let line = |stage: &str| {
        err.lines()
            .find(|l| l.starts_with(stage))
            .unwrap_or_else(|| panic!("no {stage} line in {err}"))
            .to_string()
    };
    for stage in [
        "ingest", "tokenize", "reduce", "cluster", "describe", "report",
    ] {
        let l = line(stage);
        assert!(l.contains(" cpu-s ("), "{l}");
        assert!(l.contains(" page faults"), "{l}");
        // "... 23 MiB peak  21 MiB now ...": what a stage holds at its end is within its peak.
        let mib = |what: &str| -> f64 {
            let words: Vec<&str> = l.split_whitespace().collect();
            let i = words.windows(2).position(|w| w == ["MiB", what]).unwrap();
            words[i - 1].parse().unwrap()
        };
        assert!(mib("now") <= mib("peak"), "{l}");
    }
    // The lines show each stage's own peak; run.json keeps the process's peak so far.
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    // [[stage, MiB], ...] in the order the stages ended.
    let peaks: Vec<f64> = run["peak_rss_mib_after_stage"]
        .as_array()
        .map(|a| a.iter().filter_map(|p| p[1].as_f64()).collect())
        .unwrap_or_default();
    assert!(peaks.len() >= 6, "{}", run["peak_rss_mib_after_stage"]);
    assert!(peaks.windows(2).all(|w| w[0] <= w[1]), "{peaks:?}");
}

#[test]
fn every_error_exits_2_by_default_and_by_class_when_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let config = pipeline(
        tmp.path(),
        "config.toml",
        "name = \"c\"\nbogus-key = 1\n[[input]]\npath = \"a.csv\"\n",
    );
    let data = pipeline(
        tmp.path(),
        "data.toml",
        "name = \"d\"\n[[input]]\npath = \"nowhere.csv\"\n",
    );
    // An output folder inside a file cannot be made.
    std::fs::write(tmp.path().join("a-file"), "x").unwrap();
    let blocked = tmp.path().join("a-file/out");
    let good = csv_pipeline(tmp.path(), "");
    let cases: [(&str, Vec<&str>, &str, i32); 3] = [
        (
            "configuration",
            vec!["check", config.to_str().unwrap()],
            "configuration",
            3,
        ),
        ("data", vec!["run", data.to_str().unwrap()], "data", 4),
        (
            "output",
            vec![
                "run",
                good.to_str().unwrap(),
                "--out",
                blocked.to_str().unwrap(),
            ],
            "output",
            5,
        ),
    ];
    for (what, args, class, code) in cases {
        let o = plain_bin().args(&args).arg("--quiet").output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(2),
            "{what} by default: {}",
            stderr(&o)
        );
        assert!(stderr(&o).starts_with("error: "), "{what}: {}", stderr(&o));
        let o = plain_bin()
            .args(&args)
            .args(["--quiet", "--exit-codes", "classes", "--log-format", "json"])
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(code),
            "{what} by class: {}",
            stderr(&o)
        );
        let last: serde_json::Value =
            serde_json::from_str(stderr(&o).lines().last().unwrap()).unwrap();
        assert_eq!(last["class"], class);
        assert_eq!(last["exit_code"], code);
        let o = plain_bin()
            .args(&args)
            .arg("--quiet")
            .env("TOPICMAP_EXIT_CODES", "classes")
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(code),
            "{what} by class from the environment"
        );
    }
}

#[test]
fn outputs_name_inputs_as_the_pipeline_writes_them_never_by_absolute_path() {
    // The pipeline is given by its absolute path, as a scheduler would.
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::copy(fixture("papers.csv"), data.join("papers.csv")).unwrap();
    let p = pipeline(
        tmp.path(),
        "p.toml",
        "name = \"p\"\n[[input]]\npath = \"data/*.csv\"\nid = \"id\"\ntime = \"year\"\n[tokenize]\nmin-df = 2\n[cluster]\nk = 3\n[output]\ndir = \"out\"\n",
    );
    let out = tmp.path().join("exact");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (h, rows) = read_csv(&out.join("documents.csv"));
    assert!(column(&h, &rows, "source")
        .iter()
        .all(|s| *s == "data/papers.csv"));
    let run_json = std::fs::read_to_string(out.join("run.json")).unwrap();
    let here = tmp.path().display().to_string();
    assert!(
        !run_json.contains(&here),
        "run.json holds a machine path: {run_json}"
    );
    let v: serde_json::Value = serde_json::from_str(&run_json).unwrap();
    assert_eq!(v["inputs"][0]["path"], "data/papers.csv");
    assert_eq!(v["settings"]["pipeline"], "p.toml");
    assert_eq!(v["settings"]["output"]["dir"], "out");
}

#[test]
fn completion_scripts_name_the_commands() {
    for shell in ["bash", "zsh", "fish"] {
        let o = bin().args(["completions", shell]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let script = String::from_utf8(o.stdout).unwrap();
        assert!(
            script.contains("topicmap")
                && script.contains("assign")
                && script.contains("log-format"),
            "{shell}: {script:.200}"
        );
    }
}
