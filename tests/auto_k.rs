//! Automatic k end to end (issue 38): the chosen k is reproducible, stays when a scheduled
//! rerun sees a slightly larger corpus, moves when the data change, and run.json and the
//! k_selection table say how it was chosen.

mod common;
use common::*;
use std::path::Path;

/// Words of topic `t` (12 each, no word shared between topics).
fn topic_words(t: usize) -> Vec<String> {
    let stems = [
        "galaxy", "protein", "tariff", "violin", "glacier", "compiler", "harvest", "sonnet",
    ];
    (0..12)
        .map(|i| {
            format!(
                "{}{}",
                stems[t],
                ["a", "o", "u", "e", "ia", "ous", "ine", "ax", "ix", "um", "ol", "ent"][i]
            )
        })
        .collect()
}

/// A CSV of `per` documents for each of `topics` topics: 14 words of the document's topic and
/// 4 shared words, picked by a fixed generator, so the corpus is the same on every run.
fn corpus(dir: &Path, name: &str, topics: usize, per: usize) -> std::path::PathBuf {
    let shared = ["method", "result", "study", "model", "data", "analysis"];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |m: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % m as u64) as usize
    };
    let mut csv = String::from("id,text,label\n");
    for d in 0..per {
        for t in 0..topics {
            let words = topic_words(t);
            let mut text: Vec<&str> = (0..14).map(|_| words[next(12)].as_str()).collect();
            text.extend((0..4).map(|_| shared[next(shared.len())]));
            csv.push_str(&format!("d{t}-{d},{},t{t}\n", text.join(" ")));
        }
    }
    let path = dir.join(format!("{name}.csv"));
    std::fs::write(&path, csv).unwrap();
    pipeline(
        dir,
        &format!("{name}.toml"),
        &format!(
            "name = \"{name}\"\n[[input]]\npath = \"{name}.csv\"\nid = \"id\"\nlabel = \"label\"\n"
        ),
    )
}

fn run_json(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap()
}

fn chosen(out: &Path) -> u64 {
    run_json(out)["k_selection"]["chosen"]
        .as_u64()
        .expect("an automatic k")
}

#[test]
fn issue_38_k_is_reproducible_and_stable_across_a_rerun_unless_the_data_change() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let go = |p: &Path, out: &Path| {
        let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    let six = corpus(tmp.path(), "six", 6, 100);
    go(&six, &out);
    let first = chosen(&out);
    assert_eq!(first, 6, "{}", run_json(&out)["k_selection"]);
    let sel = run_json(&out)["k_selection"].clone();
    assert_eq!(sel["documents"].as_u64(), Some(600));
    assert!(
        sel["rule"]
            .as_str()
            .unwrap()
            .contains("sqrt(documents) / 10"),
        "{sel}"
    );
    // The table has every k of the range with its score, and one k marked chosen.
    let (h, rows) = read_csv(&out.join("k_selection.csv"));
    assert_eq!(
        h,
        [
            "k",
            "silhouette",
            "smoothed",
            "rise",
            "inertia",
            "chosen",
            "decided_by"
        ]
    );
    // Six separated topics: a clear silhouette peak decides, and every place says so.
    assert_eq!(sel["decided_by"], "clear-peak", "{sel}");
    let decided: Vec<&str> = column(&h, &rows, "decided_by")
        .into_iter()
        .filter(|d| !d.is_empty())
        .collect();
    assert_eq!(decided, ["clear-peak"]);
    let marked: Vec<&str> = column(&h, &rows, "chosen")
        .into_iter()
        .zip(column(&h, &rows, "k"))
        .filter(|(c, _)| *c == "true")
        .map(|(_, k)| k)
        .collect();
    assert_eq!(marked, ["6"]);

    // Same inputs and seed: the same k, and byte-identical tables.
    let again = tmp.path().join("again");
    go(&six, &again);
    assert_eq!(
        std::fs::read(out.join("k_selection.csv")).unwrap(),
        std::fs::read(again.join("k_selection.csv")).unwrap()
    );

    // A scheduled rerun on 5% more documents of the same kind, into the same report: same k.
    let grown = corpus(tmp.path(), "six", 6, 105);
    go(&grown, &out);
    assert_eq!(chosen(&out), first);
    assert_eq!(
        run_json(&out)["k_selection"]["documents"].as_u64(),
        Some(630)
    );

    // The data change (three topics): k follows.
    let three = corpus(tmp.path(), "six", 3, 210);
    go(&three, &out);
    assert_eq!(chosen(&out), 3, "{}", run_json(&out)["k_selection"]);
}

#[test]
fn issue_38_an_edge_of_the_range_is_said_in_the_log_and_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let p = corpus(tmp.path(), "six", 6, 60);
    let out = tmp.path().join("out");
    let o = bin()
        .args(["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .args(["--set", "cluster.k-max=4"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let said = "the chosen k = 4 is the top of the range tried (cluster.k-max = 4)";
    assert!(err.contains(said), "{err}");
    assert!(run_json(&out)["k_selection"]["edge"]
        .as_str()
        .unwrap()
        .contains(said));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains(said), "the report shows the warning");
}

/// A CSV of `per` documents for each of `topics` topics that share much of their vocabulary: 6
/// words of the document's topic, 3 of a neighbouring topic and 9 common words, so topics
/// overlap as real ones do and no silhouette is high.
fn overlapping(dir: &Path, topics: usize, per: usize) -> std::path::PathBuf {
    let stems = [
        "galaxy", "protein", "tariff", "violin", "glacier", "compiler", "harvest", "sonnet",
        "enzyme", "orbit",
    ];
    let common: Vec<String> = (0..40).map(|i| format!("common{i}")).collect();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |m: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % m as u64) as usize
    };
    let mut csv = String::from("id,text,label\n");
    for d in 0..per {
        for t in 0..topics {
            let word = |t: usize, i: usize| {
                format!(
                    "{}{}",
                    stems[t],
                    ["a", "o", "u", "e", "ia", "ous", "ine", "ax"][i]
                )
            };
            let mut text: Vec<String> = (0..6).map(|_| word(t, next(8))).collect();
            text.extend((0..3).map(|_| word((t + 1) % topics, next(8))));
            text.extend((0..9).map(|_| common[next(common.len())].clone()));
            csv.push_str(&format!("d{t}-{d},{},t{t}\n", text.join(" ")));
        }
    }
    std::fs::write(dir.join("overlap.csv"), csv).unwrap();
    pipeline(
        dir,
        "overlap.toml",
        "name = \"overlap\"\n[[input]]\npath = \"overlap.csv\"\nid = \"id\"\nlabel = \"label\"\n",
    )
}

#[test]
fn issue_53_a_small_corpus_of_ten_overlapping_groups_gets_about_ten_topics() {
    // 1,000 documents: the size prior alone (sqrt(n) / 10) said 3.
    let tmp = tempfile::tempdir().unwrap();
    let p = overlapping(tmp.path(), 10, 100);
    let out = tmp.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let sel = run_json(&out)["k_selection"].clone();
    let k = sel["chosen"].as_u64().unwrap();
    assert!((7..=15).contains(&k), "k = {k}: {sel}");
    let best = sel["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["silhouette"].as_f64().unwrap())
        .fold(f64::MIN, f64::max);
    assert!(best < 0.25, "the groups overlap: no clear peak ({best})");
    assert_eq!(sel["floor"], 3);
    assert!(
        ["knee", "fall", "peak"].contains(&sel["decided_by"].as_str().unwrap()),
        "the curve decided, not the floor: {sel}"
    );
}
