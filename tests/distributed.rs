//! Beyond one machine without Spark: `assign --in arrow --out arrow` (an engine's partition
//! operator), `assign --aggregates` + `topicmap report`, and the streaming run
//! (`[cluster] fit-sample`). The Spark driver itself is tested in `tests/spark.rs`.

mod common;
use common::*;
use polars::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};

/// Fits the fixture pipeline into `dir/fit`.
fn fit(dir: &Path) -> PathBuf {
    let p = csv_pipeline(dir, "");
    let fit = dir.join("fit");
    let o = run(&["run", p.to_str().unwrap(), "--out", fit.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    fit
}

/// The fixture CSV as an Arrow IPC stream (every column a string), optionally changed first.
fn arrow_of(csv: &Path, change: impl FnOnce(DataFrame) -> DataFrame) -> Vec<u8> {
    let df = CsvReadOptions::default()
        .with_has_header(true)
        .with_infer_schema_length(Some(0))
        .try_into_reader_with_file_path(Some(csv.to_path_buf()))
        .unwrap()
        .finish()
        .unwrap();
    let mut df = change(df);
    let mut out = Vec::new();
    IpcStreamWriter::new(&mut out).finish(&mut df).unwrap();
    out
}

fn read_stream(bytes: &[u8]) -> DataFrame {
    IpcStreamReader::new(std::io::Cursor::new(bytes))
        .finish()
        .unwrap()
}

const COLUMNS: [&str; 8] = [
    "--text",
    "title,abstract",
    "--id",
    "id",
    "--time",
    "year",
    "--label",
    "label",
];

#[test]
fn an_arrow_stream_assigns_exactly_as_the_file_does() {
    let tmp = tempfile::tempdir().unwrap();
    let fit = fit(tmp.path());
    let csv = fixture("papers.csv");
    let csv_arg = csv.to_str().unwrap();
    let from_file = tmp.path().join("file");
    let mut args = vec!["assign", "--model", fit.to_str().unwrap(), csv_arg];
    args.extend(COLUMNS);
    args.extend(["--out", from_file.to_str().unwrap()]);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));

    let stream = arrow_of(&csv, |df| df);
    let mut args = vec!["assign", "--model", fit.to_str().unwrap(), "--in", "arrow"];
    args.extend(["--source-name", csv_arg, "--out", "arrow"]);
    args.extend(COLUMNS);
    let (ok, out, err) = piped(&args, &stream);
    assert!(ok, "{err}");
    // The same table, written by the same CSV writer: the same bytes as documents.csv.
    let df = read_stream(&out);
    let again = tmp.path().join("again.csv");
    topicmap::tables::csv::write_csv(&again, &df).unwrap();
    assert_eq!(
        fs::read(&again).unwrap(),
        fs::read(from_file.join("documents.csv")).unwrap(),
        "arrow out is documents.csv, byte for byte"
    );

    // --emit-terms adds what an engine sums; the units summed per (topic, feature) are the
    // aggregates `assign --aggregates` writes.
    args.push("--emit-terms");
    let (ok, out, err) = piped(&args, &stream);
    assert!(ok, "{err}");
    let rows = read_stream(&out);
    for c in ["period", "row", "snippet", "features", "units", "skipped"] {
        assert!(rows.column(c).is_ok(), "column {c}");
    }
    assert_eq!(rows.height(), df.height());
    let summed = summed_units(&rows);
    let agg_dir = tmp.path().join("agg");
    let mut args = vec!["assign", "--model", fit.to_str().unwrap(), csv_arg];
    args.extend(COLUMNS);
    args.extend(["--aggregates", "--out", agg_dir.to_str().unwrap()]);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let terms = parquet(&agg_dir.join("aggregates/terms.parquet"));
    let mut from_agg = Vec::new();
    for i in 0..terms.height() {
        let get = |c: &str| {
            terms
                .column(c)
                .unwrap()
                .get(i)
                .unwrap()
                .try_extract::<i64>()
                .unwrap()
        };
        from_agg.push((get("topic_id"), get("feature"), get("units")));
    }
    from_agg.sort();
    assert_eq!(summed, from_agg);
    assert!(!summed.is_empty());
}

/// (topic, feature, units) summed over emitted rows, sorted.
fn summed_units(rows: &DataFrame) -> Vec<(i64, i64, i64)> {
    let mut sums = std::collections::BTreeMap::<(i64, i64), i64>::new();
    let topics = rows.column("topic_id").unwrap().u32().unwrap().clone();
    let features = rows.column("features").unwrap().list().unwrap().clone();
    let units = rows.column("units").unwrap().list().unwrap().clone();
    for i in 0..rows.height() {
        let (Some(t), Some(f), Some(u)) = (
            topics.get(i),
            features.get_as_series(i),
            units.get_as_series(i),
        ) else {
            continue;
        };
        let f: Vec<u32> = f.u32().unwrap().into_no_null_iter().collect();
        let u: Vec<u64> = u.u64().unwrap().into_no_null_iter().collect();
        assert_eq!(f.len(), u.len());
        for (f, u) in f.into_iter().zip(u) {
            *sums.entry((t as i64, f as i64)).or_default() += u as i64;
        }
    }
    sums.into_iter().map(|((t, f), u)| (t, f, u)).collect()
}

#[test]
fn a_broken_row_in_a_partition_is_skipped_and_listed_or_stops_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let fit = fit(tmp.path());
    // Row 5 loses its text.
    let stream = arrow_of(&fixture("papers.csv"), |mut df| {
        for c in ["title", "abstract"] {
            let col = df.column(c).unwrap().str().unwrap().clone();
            let blanked: StringChunked = (0..col.len())
                .map(|i| if i == 4 { Some("") } else { col.get(i) })
                .collect();
            df.with_column(blanked.with_name(c.into()).into_column())
                .unwrap();
        }
        df
    });
    let mut args = vec!["assign", "--model", fit.to_str().unwrap(), "--in", "arrow"];
    args.extend(["--source-name", "part-7", "--out", "arrow", "--emit-terms"]);
    args.extend(COLUMNS);
    let (ok, out, err) = piped(&args, &stream);
    assert!(ok, "{err}");
    let rows = read_stream(&out);
    assert_eq!(rows.height(), 18, "17 assigned + 1 skipped");
    let skipped = rows.column("skipped").unwrap().str().unwrap().clone();
    let bad: Vec<usize> = (0..rows.height())
        .filter(|&i| skipped.get(i).is_some())
        .collect();
    assert_eq!(bad.len(), 1);
    let i = bad[0];
    assert_eq!(
        rows.column("row")
            .unwrap()
            .get(i)
            .unwrap()
            .try_extract::<i64>()
            .unwrap(),
        5
    );
    assert_eq!(
        rows.column("source").unwrap().str().unwrap().get(i),
        Some("part-7")
    );
    assert!(rows.column("topic_id").unwrap().get(i).unwrap().is_null());

    args.extend(["--on-bad-document", "fail"]);
    let (ok, out, err) = piped(&args, &stream);
    assert!(!ok);
    assert!(out.is_empty(), "nothing half-written on stdout");
    assert!(err.contains("part-7") && err.contains("row 5"), "{err}");
}

#[test]
fn rows_given_by_the_engine_name_documents_skips_and_errors_issue_23() {
    let tmp = tempfile::tempdir().unwrap();
    let fit = fit(tmp.path());
    // The rows of two files, out of order (as a partition of a split file may hold them):
    // file row r of papers.csv travels as `_row` = r + 100 in "big.parquet", with no ids,
    // and row 105 has lost its text.
    let order: Vec<usize> = (0..18).map(|i| (i * 7) % 18).collect();
    let stream = arrow_of(&fixture("papers.csv"), |df| {
        let mut df = df.drop("id").unwrap();
        let blank = |c: &str, df: &DataFrame| -> Column {
            let col = df.column(c).unwrap().str().unwrap().clone();
            let v: StringChunked = (0..col.len())
                .map(|i| if i == 4 { Some("") } else { col.get(i) })
                .collect();
            v.with_name(c.into()).into_column()
        };
        for c in ["title", "abstract"] {
            let col = blank(c, &df);
            df.with_column(col).unwrap();
        }
        let rows: Vec<i64> = (0..df.height() as i64).map(|i| i + 101).collect();
        df.with_column(Column::new("_row".into(), rows)).unwrap();
        df.with_column(Column::new("_source".into(), vec!["big.parquet"; 18]))
            .unwrap();
        let idx: Vec<IdxSize> = order.iter().map(|&i| i as IdxSize).collect();
        df.take(&IdxCa::new("i".into(), idx)).unwrap()
    });
    let mut args = vec!["assign", "--model", fit.to_str().unwrap(), "--in", "arrow"];
    args.extend(["--source-column", "_source", "--row-column", "_row"]);
    args.extend([
        "--out",
        "arrow",
        "--emit-terms",
        "--time",
        "year",
        "--id",
        "",
    ]);
    let (ok, out, err) = piped(&args, &stream);
    assert!(ok, "{err}");
    let rows = read_stream(&out);
    assert_eq!(rows.height(), 18);
    let ids = rows.column("doc_id").unwrap().str().unwrap().clone();
    let at = rows.column("row").unwrap().cast(&DataType::Int64).unwrap();
    let skipped = rows.column("skipped").unwrap().str().unwrap().clone();
    let mut seen = Vec::new();
    for i in 0..rows.height() {
        let row = at.i64().unwrap().get(i).unwrap();
        seen.push(row);
        if skipped.get(i).is_some() {
            assert_eq!(row, 105, "the blank row, by its own row");
        } else {
            assert_eq!(ids.get(i), Some(format!("big:{row}").as_str()));
        }
    }
    seen.sort();
    assert_eq!(seen, (101..=118).collect::<Vec<i64>>());

    args.extend(["--on-bad-document", "fail"]);
    let (ok, out, err) = piped(&args, &stream);
    assert!(!ok && out.is_empty());
    assert!(err.contains("big.parquet: row 105"), "{err}");

    // A row column that is missing is named.
    let mut args = vec!["assign", "--model", fit.to_str().unwrap(), "--in", "arrow"];
    args.extend(["--row-column", "_line", "--out", "arrow"]);
    let (ok, _, err) = piped(&args, &stream);
    assert!(!ok);
    assert!(err.contains("column \"_line\" not found"), "{err}");
}

#[test]
fn a_model_of_another_version_is_refused_with_a_clear_message() {
    let tmp = tempfile::tempdir().unwrap();
    let fit = fit(tmp.path());
    let path = fit.join("model.json");
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.replacen("\"version\":2", "\"version\":99", 1)).unwrap();
    let stream = arrow_of(&fixture("papers.csv"), |df| df);
    let mut args = vec!["assign", "--model", fit.to_str().unwrap(), "--in", "arrow"];
    args.extend(["--out", "arrow"]);
    args.extend(COLUMNS);
    let (ok, out, err) = piped(&args, &stream);
    assert!(!ok);
    assert!(out.is_empty());
    assert!(err.contains("version 99"), "{err}");
}

/// Files of a report that differ between runs only by their run date.
#[test]
fn a_report_from_aggregates_has_every_document_and_refuses_another_models_sums() {
    let tmp = tempfile::tempdir().unwrap();
    let fit = fit(tmp.path());
    let p = csv_pipeline(tmp.path(), "");
    let agg = tmp.path().join("agg");
    let csv = fixture("papers.csv");
    let mut args = vec![
        "assign",
        "--model",
        fit.to_str().unwrap(),
        csv.to_str().unwrap(),
    ];
    args.extend(COLUMNS);
    args.extend(["--aggregates", "--out", agg.to_str().unwrap()]);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "report",
            p.to_str().unwrap(),
            "--model",
            fit.to_str().unwrap(),
        ];
        let sums = agg.join("aggregates");
        args.extend([
            "--aggregates",
            sums.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        args.extend(extra);
        let o = run(&args);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    let (r1, r2) = (tmp.path().join("r1"), tmp.path().join("r2"));
    report(&r1, &[]);
    report(&r2, &[]);
    same_reports(&r1, &r2);
    // The fit's own sizes and labels (single words: the fixture's topics are clear).
    let (h, rows) = read_csv(&r1.join("topics.csv"));
    let (hf, fit_rows) = read_csv(&fit.join("topics.csv"));
    assert_eq!(column(&h, &rows, "size"), column(&hf, &fit_rows, "size"));
    assert_eq!(
        column(&h, &rows, "topic_id"),
        column(&hf, &fit_rows, "topic_id")
    );
    assert!(
        !r1.join("documents.csv").exists(),
        "no per-document table from sums"
    );
    assert_eq!(
        fs::read(r1.join("model.json")).unwrap(),
        fs::read(fit.join("model.json")).unwrap(),
        "the model as it was"
    );
    let metrics: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(r1.join("metrics.json")).unwrap()).unwrap();
    assert_eq!(metrics["documents"], 18);
    assert_eq!(metrics["v_measure"], 1.0);

    // A coarser report from the same sums: two topics merged along the tree, every document
    // still counted.
    let coarse = tmp.path().join("coarse");
    report(&coarse, &["--set", "describe.merge-to=2"]);
    let (h, rows) = read_csv(&coarse.join("topics.csv"));
    assert_eq!(rows.len(), 2);
    let sizes: usize = column(&h, &rows, "size")
        .iter()
        .map(|s| s.parse::<usize>().unwrap())
        .sum();
    assert_eq!(sizes, 18);

    // Sums made with another model are refused.
    let other = tmp.path().join("other");
    let p2 = csv_pipeline(tmp.path(), "seed = 7\n");
    let o = run(&[
        "run",
        p2.to_str().unwrap(),
        "--set",
        "cluster.k=2",
        "--out",
        other.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "report",
        p.to_str().unwrap(),
        "--model",
        other.to_str().unwrap(),
        "--aggregates",
        agg.join("aggregates").to_str().unwrap(),
        "--out",
        tmp.path().join("r3").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(4));
    assert!(stderr(&o).contains("another model"), "{}", stderr(&o));
    assert!(!tmp.path().join("r3").exists(), "nothing half-written");
}

#[test]
fn a_streaming_run_assigns_every_document_and_reports_from_all_of_them() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    fs::create_dir_all(&data).unwrap();
    synthetic(&data, 3000, 3);
    let body = format!(
        // Every sentence of this synthetic corpus recurs in a hundred documents or more: the
        // repetition rule would rightly take it all for boilerplate (see the next test).
        "name = \"stream\"\ntitle = \"Streamed\"\n[[input]]\npath = {:?}\nid = \"id\"\ntime = \"year\"\nlabel = \"label\"\n[clean]\nboilerplate = false\n[tokenize]\nmin-df = 2\n[cluster]\nk = 3\nfit-sample = 1000\n[output]\nworkbook-documents = 1000\n",
        data.join("part-*.csv").display().to_string()
    );
    let p = pipeline(tmp.path(), "stream.toml", &body);
    let out = |name: &str| tmp.path().join(name);
    let o = bin()
        .args([
            "run",
            p.to_str().unwrap(),
            "--out",
            out("s1").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let log = stderr(&o);
    assert!(log.contains("1,000 of 3,000 documents"), "{log}");

    // Every document once, labelled with its topic's label.
    let (h, docs) = read_csv(&out("s1").join("documents.csv"));
    let mut ids: Vec<&str> = column(&h, &docs, "doc_id");
    assert_eq!(ids.len(), 3000);
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3000, "each id once");
    let (th, topics) = read_csv(&out("s1").join("topics.csv"));
    let label_of: std::collections::HashMap<&str, &str> = column(&th, &topics, "topic_id")
        .into_iter()
        .zip(column(&th, &topics, "label"))
        .collect();
    for (t, l) in column(&h, &docs, "topic_id")
        .into_iter()
        .zip(column(&h, &docs, "topic_label"))
    {
        assert_eq!(label_of[t], l);
    }
    let sizes: usize = column(&th, &topics, "size")
        .iter()
        .map(|s| s.parse::<usize>().unwrap())
        .sum();
    assert_eq!(sizes, 3000, "sizes count every document, not the sample");
    let metrics: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out("s1").join("metrics.json")).unwrap()).unwrap();
    assert_eq!(metrics["documents"], 3000);
    assert!(metrics["v_measure"].as_f64().unwrap() > 0.9, "{metrics}");

    // The workbook's Documents sheet holds the first rows of documents.csv, as a normal run's.
    use calamine::{open_workbook, Reader, Xlsx};
    let mut wb: Xlsx<_> = open_workbook(out("s1").join("report.xlsx")).unwrap();
    let sheet = wb.worksheet_range("Documents").expect("a Documents sheet");
    let rows: Vec<Vec<String>> = sheet
        .rows()
        .map(|r| r.iter().map(|c| c.to_string()).collect())
        .collect();
    assert_eq!(rows[0], h, "the documents.csv columns");
    assert_eq!(
        rows.len(),
        1001,
        "the first 1,000 (output.workbook-documents)"
    );
    let first: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(first, column(&h, &docs, "doc_id")[..1000]);
    assert!(
        log.contains("report.xlsx holds the first 1000 of 3000 documents"),
        "{log}"
    );

    // The same inputs and seed: the same report.
    let o = run(&[
        "run",
        p.to_str().unwrap(),
        "--out",
        out("s2").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    same_reports(&out("s1"), &out("s2"));

    // The streamed report is the report of its model over all documents' sums.
    let (s1, a) = (out("s1"), out("a"));
    let mut args = vec!["assign", "--model", s1.to_str().unwrap()];
    let files: Vec<String> = (0..3)
        .map(|f| data.join(format!("part-{f}.csv")).display().to_string())
        .collect();
    args.extend(files.iter().map(|s| s.as_str()));
    args.extend(COLUMNS);
    args.extend(["--aggregates", "--out", a.to_str().unwrap()]);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "report",
        p.to_str().unwrap(),
        "--model",
        out("s1").to_str().unwrap(),
        "--aggregates",
        out("a").join("aggregates").to_str().unwrap(),
        "--out",
        out("r").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Both draw the model's landmarks as their document map, and say so.
    for dir in [out("s1"), out("r")] {
        let run: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
        assert_eq!(run["map"]["method"], "umap", "{}", run["map"]);
        assert!(
            run["map"]["note"].as_str().unwrap().contains("landmarks"),
            "{}",
            run["map"]["note"]
        );
    }
    for f in [
        "topics.csv",
        "terms.csv",
        "topic_trends.csv",
        "trends.csv",
        "topic_tree.csv",
        "charts/document_map.svg",
    ] {
        assert_eq!(
            fs::read(out("s1").join(f)).unwrap(),
            fs::read(out("r").join(f)).unwrap(),
            "{f}"
        );
    }
    assert!(!fs::read(out("s1").join("documents.csv"))
        .unwrap()
        .is_empty());
}

#[test]
fn a_broken_row_deep_in_a_streamed_file_is_named_by_file_and_row() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    fs::create_dir_all(&data).unwrap();
    let files = synthetic(&data, 2000, 2);
    // A ragged row in the second file.
    let text = fs::read_to_string(&files[1]).unwrap();
    fs::write(
        &files[1],
        text.replacen("\r\ns1500,", "\r\ns1500,extra,", 1),
    )
    .unwrap();
    let body = format!(
        "name = \"stream\"\n[[input]]\npath = {:?}\nid = \"id\"\n[tokenize]\nmin-df = 2\n[cluster]\nk = 3\nfit-sample = 1000\n[output]\nworkbook-documents = 1000\n",
        data.join("part-*.csv").display().to_string()
    );
    let p = pipeline(tmp.path(), "stream.toml", &body);
    let dir = tmp.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("part-1.csv") && err.contains("row 501"),
        "{err}"
    );
    assert!(!dir.exists(), "nothing half-written");
}

/// A streaming run finds the boilerplate on its sample and removes it from every document of
/// every chunk: run.json counts each removal, and no topic term comes from it.
#[test]
fn a_streaming_run_cleans_every_chunk_with_the_rules_of_its_sample() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    fs::create_dir_all(&data).unwrap();
    let note = "This work was presented at the Workshop on Synthetic Corpora.";
    for part in synthetic(&data, 3000, 3) {
        let mut body = fs::read_to_string(&part).unwrap();
        for i in (0..3000).filter(|i| i % 3 != 0) {
            body = body.replace(
                &format!("(variant {i})\""),
                &format!("(variant {i}). {note}\""),
            );
        }
        fs::write(&part, body).unwrap();
    }
    // The synthetic sentences recur in about 110 of the sample's 1,000 documents; the note in
    // about 670.
    let body = format!(
        "name = \"clean\"\n[[input]]\npath = {:?}\nid = \"id\"\nlabel = \"label\"\n[clean]\nboilerplate-min-docs = 400\n[tokenize]\nmin-df = 2\n[cluster]\nk = 3\nfit-sample = 1000\n",
        data.join("part-*.csv").display().to_string()
    );
    let p = pipeline(tmp.path(), "clean.toml", &body);
    let out = tmp.path().join("out");
    let o = bin()
        .args(["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let run: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let clean = &run["clean"];
    assert_eq!(clean["repeated"][0]["text"], note, "{clean}");
    assert_eq!(clean["repeated_found"], 1, "{clean}");
    assert_eq!(clean["removed"]["repeated"], 2000, "{clean}");
    let (h, topics) = read_csv(&out.join("topics.csv"));
    for terms in column(&h, &topics, "top_terms") {
        for junk in ["workshop", "synthetic", "corpora", "presented"] {
            assert!(!terms.contains(junk), "{junk} in {terms}");
        }
    }
    // The model keeps the rules, so `assign` cleans as the fit did.
    let model: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("model.json")).unwrap()).unwrap();
    assert_eq!(
        model["clean"]["boilerplate"]["repeated"][0]["documents"],
        clean["repeated"][0]["documents"]
    );
}
