//! End-to-end tests of the `topicmap` binary on committed fixtures, in temporary folders.

mod common;
use common::*;
use std::fs;

#[test]
fn bundled_pipeline_writes_every_file_with_its_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report");
    let p = repo().join("pipelines/neurips-2026.toml");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        out.to_str().unwrap(),
        "stdout names the report"
    );

    let (h, docs) = read_csv(&out.join("documents.csv"));
    for c in [
        "doc_id",
        "source",
        "title",
        "topic_id",
        "topic_label",
        "distance",
    ] {
        assert!(h.contains(&c.to_string()), "documents.csv lacks {c}: {h:?}");
    }
    assert_eq!(docs.len(), 26);
    let ids = column(&h, &docs, "doc_id");
    assert!(ids.contains(&"000_9fada30fd42eec01:1") && ids.contains(&"003_998b42f2b74ff69f:19"));

    let (th, topics) = read_csv(&out.join("topics.csv"));
    for c in [
        "topic_id",
        "label",
        "size",
        "share",
        "top_terms",
        "representative_doc_ids",
    ] {
        assert!(th.contains(&c.to_string()), "topics.csv lacks {c}");
    }
    assert_eq!(topics.len(), 5);
    let sizes: usize = column(&th, &topics, "size")
        .iter()
        .map(|s| s.parse::<usize>().unwrap())
        .sum();
    assert_eq!(sizes, 26);
    for label in column(&th, &topics, "label") {
        assert!(
            !label.is_empty() && !label.starts_with("topic "),
            "label {label:?}"
        );
    }

    let (mh, terms) = read_csv(&out.join("terms.csv"));
    assert_eq!(mh, ["topic_id", "rank", "term", "weight"]);
    assert!(terms.len() >= 5);

    let run_json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run_json["settings"]["cluster"]["seed"], 42);
    assert_eq!(run_json["counts"]["documents"], 26);
    assert_eq!(run_json["inputs"].as_array().unwrap().len(), 2);
    assert_eq!(run_json["inputs"][0]["sha256"].as_str().unwrap().len(), 64);
    assert!(run_json["timings_seconds"].as_array().unwrap().len() >= 6);

    for chart in ["topic_sizes", "top_terms"] {
        let png = fs::read(out.join("charts").join(format!("{chart}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 1920);
        assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()), 1080);
        let svg = fs::read_to_string(out.join("charts").join(format!("{chart}.svg"))).unwrap();
        assert!(
            svg.contains("<svg") && svg.contains("论文列表"),
            "the CJK title is in the SVG"
        );
    }
}

#[test]
fn same_seed_gives_byte_identical_csvs() {
    let tmp = tempfile::tempdir().unwrap();
    let p = csv_pipeline(tmp.path(), "");
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    for (out, threads) in [(&a, "1"), (&b, "2")] {
        let o = run(&[
            "run",
            p.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--threads",
            threads,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    for f in ["documents.csv", "topics.csv", "terms.csv", "metrics.json"] {
        assert_eq!(
            fs::read(a.join(f)).unwrap(),
            fs::read(b.join(f)).unwrap(),
            "{f} differs"
        );
    }
}

#[test]
fn set_overrides_keys_and_history_layout_is_dated() {
    let tmp = tempfile::tempdir().unwrap();
    let p = csv_pipeline(
        tmp.path(),
        &format!(
            "[output]\ndir = {:?}\n",
            tmp.path().join("hist").display().to_string()
        ),
    );
    let o = run(&[
        "run",
        p.to_str().unwrap(),
        "--set",
        "cluster.k=2",
        "--set",
        "cluster.seed=7",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let latest = tmp.path().join("hist/latest");
    let (_, topics) = read_csv(&latest.join("topics.csv"));
    assert_eq!(topics.len(), 2);
    let run_json = fs::read_to_string(latest.join("run.json")).unwrap();
    assert!(run_json.contains("\"seed\": 7"));
    let runs: Vec<_> = fs::read_dir(tmp.path().join("hist/runs"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(runs.len(), 1);
    let name = runs[0].file_name().to_string_lossy().to_string();
    assert!(
        name.len() == 16 && name.ends_with('Z'),
        "dated run folder {name}"
    );
}

#[test]
fn labelled_tables_in_every_format_give_metrics() {
    let tmp = tempfile::tempdir().unwrap();
    for (file, fmt) in [
        ("papers.tsv", "tsv"),
        ("papers.json", "json"),
        ("papers.ndjson", "ndjson"),
    ] {
        let body = format!(
            "name = \"t\"\n[[input]]\npath = {:?}\nformat = \"{fmt}\"\nid = \"id\"\ntime = \"year\"\nlabel = \"label\"\n[tokenize]\nmin-df = 2\n[cluster]\nk = 3\n",
            fixture(file).display().to_string()
        );
        let p = pipeline(tmp.path(), &format!("{fmt}.toml"), &body);
        let out = tmp.path().join(fmt);
        let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{fmt}: {}", stderr(&o));
        let m: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(out.join("metrics.json")).unwrap()).unwrap();
        for key in [
            "homogeneity",
            "completeness",
            "v_measure",
            "ari",
            "nmi",
            "silhouette",
            "inertia",
        ] {
            assert!(m[key].is_number(), "{fmt}: metrics.json lacks {key}");
        }
        assert!(
            m["v_measure"].as_f64().unwrap() > 0.8,
            "{fmt}: three clear topics should be found: {m}"
        );
        let (h, rows) = read_csv(&out.join("documents.csv"));
        assert!(column(&h, &rows, "time").contains(&"2019"));
        assert!(column(&h, &rows, "label").contains(&"vision"));
    }
}

/// Column `i` of the fixture's rows (header first) as a polars string column called `name`.
fn text_column(rows: &[Vec<String>], i: usize, name: &str) -> polars::prelude::Column {
    polars::prelude::Column::new(
        name.into(),
        rows[1..].iter().map(|r| r[i].clone()).collect::<Vec<_>>(),
    )
}

#[test]
fn parquet_input_is_read_through_polars() {
    use polars::prelude::*;
    let tmp = tempfile::tempdir().unwrap();
    let rows = parse_csv(&fs::read_to_string(fixture("papers.csv")).unwrap());
    let col = |i: usize, name: &str| text_column(&rows, i, name);
    let years: Vec<i64> = rows[1..].iter().map(|r| r[1].parse().unwrap()).collect();
    let mut df = DataFrame::new(
        rows.len() - 1,
        vec![
            col(0, "id"),
            Column::new("year".into(), years),
            col(2, "title"),
            col(3, "abstract"),
            col(4, "label"),
        ],
    )
    .unwrap();
    let pq = tmp.path().join("papers.parquet");
    ParquetWriter::new(fs::File::create(&pq).unwrap())
        .finish(&mut df)
        .unwrap();
    let body = "name = \"pq\"\n[[input]]\npath = \"papers.parquet\"\nid = \"id\"\ntime = \"year\"\nlabel = \"label\"\n[tokenize]\nmin-df = 2\n[cluster]\nk = 3\n";
    let p = pipeline(tmp.path(), "pq.toml", body);
    let out = tmp.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (h, docs) = read_csv(&out.join("documents.csv"));
    assert_eq!(docs.len(), 18);
    assert!(
        column(&h, &docs, "time").contains(&"2021"),
        "an integer year column is read as text"
    );
}

#[test]
fn parquet_date_and_timestamp_columns_are_dates() {
    use polars::prelude::*;
    let tmp = tempfile::tempdir().unwrap();
    let rows = parse_csv(&fs::read_to_string(fixture("papers.csv")).unwrap());
    let col = |i: usize, name: &str| text_column(&rows, i, name);
    // Days since 1970-01-01 of 15 March of each row's year (Parquet DATE, as OpenAlex has).
    let days: Vec<i32> = rows[1..]
        .iter()
        .map(|r| {
            let d = chrono::NaiveDate::from_ymd_opt(r[1].parse().unwrap(), 3, 15).unwrap();
            (d - chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()).num_days() as i32
        })
        .collect();
    let published = Column::new("published".into(), days.clone())
        .cast(&DataType::Date)
        .unwrap();
    let millis: Vec<i64> = days
        .iter()
        .map(|&d| d as i64 * 86_400_000 + 3_600_000)
        .collect();
    let updated = Column::new("updated".into(), millis)
        .cast(&DataType::Datetime(TimeUnit::Milliseconds, None))
        .unwrap();
    let mut df = DataFrame::new(
        rows.len() - 1,
        vec![
            col(0, "id"),
            published,
            updated,
            col(2, "title"),
            col(3, "abstract"),
        ],
    )
    .unwrap();
    let pq = tmp.path().join("dated.parquet");
    ParquetWriter::new(fs::File::create(&pq).unwrap())
        .finish(&mut df)
        .unwrap();
    for (column_name, period) in [("published", "month"), ("updated", "quarter")] {
        let body = format!(
            "name = \"pq\"\n[[input]]\npath = \"dated.parquet\"\nid = \"id\"\ntime = \"{column_name}\"\n[tokenize]\nmin-df = 2\n[cluster]\nk = 3\n[trends]\nperiod = \"{period}\"\n"
        );
        let p = pipeline(tmp.path(), "dated.toml", &body);
        let out = tmp.path().join(format!("out-{column_name}"));
        let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{column_name}: {}", stderr(&o));
        let (h, docs) = read_csv(&out.join("documents.csv"));
        assert_eq!(docs.len(), 18);
        let times = column(&h, &docs, "time");
        assert!(
            times
                .iter()
                .all(|t| t.starts_with("20") && t.contains("-03-15")),
            "{times:?}"
        );
        let (h, trends) = read_csv(&out.join("topic_trends.csv"));
        let periods = column(&h, &trends, "period");
        let want = if period == "month" {
            "2021-03"
        } else {
            "2021-Q1"
        };
        assert!(periods.contains(&want), "{column_name}: {periods:?}");
    }
}

#[test]
fn formula_injection_is_neutralised_in_csv() {
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        "name = \"h\"\n[[input]]\npath = {:?}\nid = \"id\"\n[tokenize]\nmin-df = 2\n[cluster]\nk = 3\n",
        fixture("hostile.csv").display().to_string()
    );
    let p = pipeline(tmp.path(), "h.toml", &body);
    let out = tmp.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["documents.csv", "topics.csv", "terms.csv"] {
        let (_, rows) = read_csv(&out.join(f));
        for cell in rows.iter().flatten() {
            if let Some(c) = cell.chars().next() {
                let numeric = cell.parse::<f64>().is_ok();
                assert!(
                    numeric || !"=+-@\t\r".contains(c),
                    "{f}: unescaped cell {cell:?}"
                );
            }
        }
    }
    let (h, rows) = read_csv(&out.join("documents.csv"));
    let titles = column(&h, &rows, "title");
    assert!(
        titles.contains(&"'=HYPERLINK(\"http://example.invalid\",\"click\")"),
        "{titles:?}"
    );
    assert!(titles.contains(&"'+1 graph networks"));
    assert!(titles.contains(&"'@SUM(A1) residual"));
}

#[test]
fn check_validates_without_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let p = csv_pipeline(tmp.path(), "");
    let o = run(&["check", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("ok: 18 documents"));
    assert!(!repo().join("output/papers").exists());

    let bad = pipeline(
        tmp.path(),
        "bad.toml",
        "name = \"x\"\nbogus-key = 1\n[[input]]\npath = \"a.txt\"\n",
    );
    let o = run(&["check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "a configuration error");
    let e = stderr(&o);
    assert!(e.contains("bogus-key") && e.contains("bad.toml"), "{e}");
}

#[test]
fn help_is_available_on_every_command() {
    for args in [
        vec!["--help"],
        vec!["run", "--help"],
        vec!["check", "--help"],
    ] {
        let o = bin().args(&args).output().unwrap();
        assert!(o.status.success());
        let s = String::from_utf8_lossy(&o.stdout);
        assert!(s.contains("Usage"), "{s}");
    }
    let o = bin().args(["run", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("--set"));
}
