//! Named topics (`[[topic]]`, issue 51): a named topic carries its name, lands on the documents
//! it means, keeps its name and id over a rerun, and bad topic lists are clear errors.

mod common;
use common::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Topic words: eight stems, twelve words each.
const STEMS: [&str; 8] = [
    "galaxy", "protein", "tariff", "violin", "glacier", "compiler", "harvest", "sonnet",
];

fn word(t: usize, i: usize) -> String {
    let ends = [
        "a", "o", "u", "e", "ia", "ous", "ine", "ax", "ix", "um", "ol", "ent",
    ];
    format!("{}{}", STEMS[t], ends[i])
}

/// `per` documents for each of `topics` topics: 8 words of its topic, 3 of the next topic's and
/// 7 common ones, from a fixed generator (so overlapping topics, the same corpus every time).
fn corpus(dir: &Path, topics: usize, per: usize, extra: &str) -> PathBuf {
    let common: Vec<String> = (0..30).map(|i| format!("common{i}")).collect();
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
            let mut text: Vec<String> = (0..8).map(|_| word(t, next(12))).collect();
            text.extend((0..3).map(|_| word((t + 1) % topics, next(12))));
            text.extend((0..7).map(|_| common[next(common.len())].clone()));
            csv.push_str(&format!("d{t}-{d},{},t{t}\n", text.join(" ")));
        }
    }
    std::fs::write(dir.join("named.csv"), csv).unwrap();
    pipeline(
        dir,
        "named.toml",
        &format!(
            "name = \"named\"\n[[input]]\npath = \"named.csv\"\nid = \"id\"\nlabel = \"label\"\n{extra}"
        ),
    )
}

fn go(p: &Path, out: &Path) {
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// topic_id -> (label, named) from topics.csv.
fn topics(out: &Path) -> HashMap<String, (String, String)> {
    let (h, rows) = read_csv(&out.join("topics.csv"));
    let ids = column(&h, &rows, "topic_id");
    let labels = column(&h, &rows, "label");
    let named = column(&h, &rows, "named");
    ids.into_iter()
        .zip(labels.into_iter().zip(named))
        .map(|(i, (l, n))| (i.to_string(), (l.to_string(), n.to_string())))
        .collect()
}

/// The label column's majority value among the documents of the topic labelled `name`.
fn majority_class(out: &Path, name: &str) -> String {
    let (h, rows) = read_csv(&out.join("documents.csv"));
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (l, c) in column(&h, &rows, "topic_label")
        .into_iter()
        .zip(column(&h, &rows, "label"))
    {
        if l == name {
            *count.entry(c).or_default() += 1;
        }
    }
    let best = count
        .into_iter()
        .max_by_key(|&(c, n)| (n, std::cmp::Reverse(c)));
    best.map(|(c, _)| c.to_string()).unwrap_or_default()
}

#[test]
fn issue_51_named_topics_carry_their_names_onto_the_documents_they_mean() {
    let tmp = tempfile::tempdir().unwrap();
    let extra = "[cluster]\nk = 6\n\
                 [[topic]]\nname = \"Protein science\"\nseeds = [\"proteina\", \"proteino\"]\n\
                 [[topic]]\nname = \"Glaciers\"\nseeds = [\"glaciera\", \"glacieru\", \"nosuchword\"]\n";
    let p = corpus(tmp.path(), 6, 40, extra);
    let out = tmp.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("named topic \"Glaciers\": the corpus has no nosuchword"),
        "a seed the corpus lacks is named: {err}"
    );
    let t = topics(&out);
    assert_eq!(t.len(), 6, "k counts the named topics");
    let named: Vec<&String> = t
        .values()
        .filter(|(_, n)| n == "true")
        .map(|(l, _)| l)
        .collect();
    assert_eq!(named.len(), 2, "{t:?}");
    assert!(
        named.contains(&&"Protein science".to_string()) && named.contains(&&"Glaciers".to_string())
    );
    // Each name sits on the documents of its own class (t1: protein words, t4: glacier words).
    assert_eq!(majority_class(&out, "Protein science"), "t1");
    assert_eq!(majority_class(&out, "Glaciers"), "t4");
    // documents.csv says how each was placed; the chart, the report and the summary mark them.
    let (h, rows) = read_csv(&out.join("documents.csv"));
    let placed = column(&h, &rows, "placed_by");
    assert!(
        placed.contains(&"guided")
            && placed.contains(&"clustered")
            && !placed.contains(&"zero-shot")
    );
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        md.contains("★ Protein science") && md.contains("pipeline file names"),
        "{md}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("★ Glaciers"));
    let model: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("model.json")).unwrap()).unwrap();
    let saved_named = model["topics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["named"] == true)
        .count();
    assert_eq!(saved_named, 2);
}

#[test]
fn issue_51_named_topics_keep_their_names_and_ids_over_a_rerun_with_more_documents() {
    let tmp = tempfile::tempdir().unwrap();
    let extra = "[cluster]\nk = \"auto\"\n\
                 [[topic]]\nname = \"violins\"\nseeds = [\"violina\", \"violino\"]\n\
                 [[topic]]\nname = \"compilers\"\nseeds = [\"compilera\", \"compileru\"]\n\
                 [[topic]]\nname = \"harvests\"\nseeds = [\"harvesta\"]\n";
    let p = corpus(tmp.path(), 8, 40, extra);
    let out = tmp.path().join("out");
    go(&p, &out);
    let first = topics(&out);
    let id_of = |t: &HashMap<String, (String, String)>, name: &str| {
        t.iter()
            .find(|(_, (l, _))| l == name)
            .map(|(id, _)| id.clone())
            .unwrap_or_else(|| panic!("no topic named {name}: {t:?}"))
    };
    // 5% more documents of the same kind, into the same report: same names, same ids.
    let p = corpus(tmp.path(), 8, 42, extra);
    go(&p, &out);
    let again = topics(&out);
    for name in ["violins", "compilers", "harvests"] {
        assert_eq!(id_of(&first, name), id_of(&again, name), "{name}");
        assert_eq!(
            majority_class(&out, name),
            match name {
                "violins" => "t3",
                "compilers" => "t5",
                _ => "t6",
            }
        );
    }
    assert_eq!(
        first.len(),
        again.len(),
        "the other topics are found as before"
    );
}

#[test]
fn issue_51_bad_topic_lists_are_configuration_errors_naming_the_topic() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[cluster]\nk = 4\n[[topic]]\nname = \"a\"\n[[topic]]\nseeds = [\"x\"]\n",
            "[[topic]] number 2 has no name",
        ),
        (
            "[cluster]\nk = 4\n[[topic]]\nname = \"Space\"\n[[topic]]\nname = \"space\"\n",
            "[[topic]] \"space\" is named twice",
        ),
        (
            "[cluster]\nk = 1\n[[topic]]\nname = \"a\"\n[[topic]]\nname = \"b\"\n",
            "2 named topics ([[topic]]) but cluster.k = 1",
        ),
        (
            "[cluster]\nk = 4\n[[topic]]\nname = \"a\"\nmin-similarity = 0.5\n",
            "[[topic]] \"a\": min-similarity needs the sentence vectors of a model",
        ),
        (
            "[cluster]\nk = 4\nmin-similarity = 0.4\n[[topic]]\nname = \"a\"\n",
            "cluster.min-similarity needs the sentence vectors of a model",
        ),
        (
            "[cluster]\nk = 4\n[[topic]]\nname = \"quantum chromodynamics\"\n",
            "named topic \"quantum chromodynamics\": the corpus has none of its words",
        ),
    ];
    for (extra, said) in cases {
        let p = corpus(tmp.path(), 4, 10, extra);
        let out = tmp.path().join("bad");
        let o = bin()
            .args(["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .args(["--exit-codes", "classes"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(3), "{extra}: {}", stderr(&o));
        assert!(stderr(&o).contains(said), "{said}: {}", stderr(&o));
        assert!(!out.exists(), "nothing written");
        // `check` reads the settings and the inputs but tokenizes nothing, so
        // it catches every case but the one about the corpus's vocabulary.
        if !said.contains("the corpus has none of its words") {
            let check = bin().args(["check", p.to_str().unwrap()]).output().unwrap();
            assert!(
                !check.status.success() && stderr(&check).contains(said),
                "check: {said}: {}",
                stderr(&check)
            );
        }
    }
}
