//! Topics per class (`[describe] per-class`, issue 51), on the committed multi-venue fixture
//! `tests/fixtures/venues.csv`: the counts match the documents' own classes and topics, each
//! class's shares add up to 1, a named topic shows named, the chart is drawn at the charts'
//! size, and a missing column is a data error naming the file and the column.

mod common;
use common::*;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

fn venues_pipeline(dir: &Path, column: &str) -> std::path::PathBuf {
    let body = format!(
        "name = \"venues\"\n[[input]]\npath = {:?}\nid = \"id\"\n[tokenize]\nmin-df = 2\n[cluster]\nk = 3\n[describe]\nper-class = \"{column}\"\n[[topic]]\nname = \"Diffusion models\"\nseeds = [\"diffusion\", \"denoising\"]\n",
        fixture("venues.csv").display().to_string()
    );
    pipeline(dir, "venues.toml", &body)
}

/// The PNG's width and height, from its header.
fn png_size(path: &Path) -> (u32, u32) {
    let b = std::fs::read(path).unwrap();
    let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (be(16), be(20))
}

#[test]
fn issue_51_topics_per_class_add_up_and_match_the_documents() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let p = venues_pipeline(dir.path(), "venue");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));

    // Each document's venue, read from the fixture; its topic, from documents.csv.
    let (fh, frows) = read_csv(&fixture("venues.csv"));
    let venue: HashMap<&str, &str> = column(&fh, &frows, "id")
        .into_iter()
        .zip(column(&fh, &frows, "venue"))
        .map(|(id, v)| (id, if v.is_empty() { "(none)" } else { v }))
        .collect();
    let (dh, drows) = read_csv(&out.join("documents.csv"));
    let mut want: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut sizes: HashMap<String, usize> = HashMap::new();
    for (id, topic) in column(&dh, &drows, "doc_id")
        .into_iter()
        .zip(column(&dh, &drows, "topic_id"))
    {
        let v = venue[id].to_string();
        *want.entry((v.clone(), topic.to_string())).or_default() += 1;
        *sizes.entry(v).or_default() += 1;
    }
    assert_eq!(sizes.len(), 4, "three venues and the documents without one");

    let (h, rows) = read_csv(&out.join("topics_per_class.csv"));
    assert_eq!(
        h,
        [
            "class",
            "topic_id",
            "topic_label",
            "named",
            "count",
            "share",
            "terms"
        ]
    );
    let k = 3;
    assert_eq!(rows.len(), sizes.len() * k, "every class with every topic");
    let mut counts: HashMap<&str, usize> = HashMap::new();
    let mut shares: HashMap<&str, f64> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for r in &rows {
        let (class, topic, count) = (&r[0], &r[1], r[4].parse::<usize>().unwrap());
        let share: f64 = r[5].parse().unwrap();
        let expected = want
            .get(&(class.clone(), topic.clone()))
            .copied()
            .unwrap_or(0);
        assert_eq!(count, expected, "{class} topic {topic}");
        // Six decimals, rounded so that a class's shares add up to exactly 1.
        assert!((share - count as f64 / sizes[class] as f64).abs() <= 1e-6);
        assert_eq!(
            r[6].is_empty(),
            count == 0,
            "terms where the class has documents: {r:?}"
        );
        *counts.entry(class).or_default() += count;
        *shares.entry(class).or_default() += share;
        if order.last() != Some(&class.as_str()) {
            order.push(class);
        }
    }
    for (class, size) in &sizes {
        assert_eq!(counts[class.as_str()], *size, "{class}");
        assert!((shares[class.as_str()] - 1.0).abs() < 1e-9, "{class}");
    }
    // Classes largest first.
    let by_size: Vec<usize> = order.iter().map(|c| sizes[*c]).collect();
    assert!(by_size.windows(2).all(|w| w[0] >= w[1]), "{order:?}");
    assert_eq!(order[0], "NeurIPS");
    // The named topic is named on every row of its topic, and no other is.
    let named: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[2].as_str(), r[3].as_str()))
        .collect();
    assert!(named.contains(&("Diffusion models", "true")), "{named:?}");
    assert!(named
        .iter()
        .all(|&(l, n)| (l == "Diffusion models") == (n == "true")));

    let charts = out.join("charts");
    assert!(charts.join("topics_per_class.svg").is_file());
    assert_eq!(png_size(&charts.join("topics_per_class.png")), (1920, 1080));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("id=\"per-class\"") && html.contains("★ Diffusion models"));
}

#[test]
fn issue_51_a_missing_class_column_names_the_file_and_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let p = venues_pipeline(dir.path(), "track");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(4), "a data error: {}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("venues.csv") && e.contains("\"track\""), "{e}");
    assert!(!out.exists(), "nothing written");
}
