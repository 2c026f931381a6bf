//! The Spark driver (`distributed/spark/topicmap_spark.py`) end to end in `local[2]`: four
//! Parquet shards, a seeded sample fitted on the driver, every partition piped through
//! `topicmap assign --in arrow --out arrow`, sums in Spark, `topicmap report` from them.
//!
//! Gated: it needs Java 17 and a Python with pyspark, pyarrow and pandas, and takes about a
//! minute. Run it with
//!     TOPICMAP_SPARK_IT=1 cargo test --release --test spark -- --ignored
//! (`.ci/run` installs both and does). PYSPARK_PYTHON names the Python (default python3).

mod common;
use common::*;
use polars::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn python() -> String {
    std::env::var("PYSPARK_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Fails plainly (never skips) when the gate is open but Spark cannot run.
fn require_spark() {
    assert_eq!(
        std::env::var("TOPICMAP_SPARK_IT").as_deref(),
        Ok("1"),
        "this test runs Spark; set TOPICMAP_SPARK_IT=1 (and have Java 17 and pyspark) to run it"
    );
    let py = python();
    let o = Command::new(&py)
        .args([
            "-c",
            "import pyspark, pyarrow, pandas; print(pyspark.__version__)",
        ])
        .output()
        .unwrap_or_else(|e| panic!("cannot start {py}: {e}"));
    assert!(
        o.status.success(),
        "{py} cannot import pyspark, pyarrow and pandas (set PYSPARK_PYTHON): {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let java = Command::new("java").arg("-version").output();
    assert!(
        java.is_ok_and(|o| o.status.success()),
        "no java on PATH (Spark 4 needs Java 17)"
    );
}

/// The synthetic corpus as four Parquet shards; shard 2 gains a row with no text at all.
fn shards(dir: &Path) -> Vec<PathBuf> {
    let csv = dir.join("csv");
    fs::create_dir_all(&csv).unwrap();
    let shards = dir.join("shards");
    fs::create_dir_all(&shards).unwrap();
    synthetic(&csv, 1600, 4)
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let mut df = CsvReadOptions::default()
                .with_has_header(true)
                .with_infer_schema_length(Some(0))
                .try_into_reader_with_file_path(Some(path.clone()))
                .unwrap()
                .finish()
                .unwrap();
            if i == 2 {
                let blank = df!(
                    "id" => ["blank-1"],
                    "year" => ["2020"],
                    "title" => [""],
                    "abstract" => [""],
                    "label" => ["none"],
                )
                .unwrap();
                df = df.vstack(&blank).unwrap();
            }
            let out = shards.join(format!("shard-{i}.parquet"));
            ParquetWriter::new(fs::File::create(&out).unwrap())
                .finish(&mut df)
                .unwrap();
            out
        })
        .collect()
}

/// A Parquet folder as Spark writes it (part files) in one frame.
fn parquet_dir(dir: &Path) -> DataFrame {
    let mut parts: Vec<PathBuf> = walk(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    parts.sort();
    assert!(!parts.is_empty(), "no part files in {}", dir.display());
    let mut all = parquet(&parts[0]);
    for p in &parts[1..] {
        all.vstack_mut(&parquet(p)).unwrap();
    }
    all
}

/// counts.parquet as sorted (period, topic, documents, outliers) rows, whatever the
/// integer widths and row order.
fn counts(path: &Path) -> Vec<(String, i64, i64, i64)> {
    let df = parquet(path);
    let col = |name: &str| -> Vec<i64> {
        let c = df.column(name).unwrap().cast(&DataType::Int64).unwrap();
        c.i64().unwrap().into_no_null_iter().collect()
    };
    let periods: Vec<String> = df
        .column("period")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|v| v.unwrap_or_default().to_string())
        .collect();
    let (t, d, o) = (col("topic_id"), col("documents"), col("outliers"));
    let mut rows: Vec<_> = (0..df.height())
        .map(|i| (periods[i].clone(), t[i], d[i], o[i]))
        .collect();
    rows.sort();
    rows
}

/// Runs the Spark driver on the shards under `dir` into `out`.
fn driver(pipeline: &Path, dir: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(python())
        .arg(repo().join("distributed/spark/topicmap_spark.py"))
        .args(["--pipeline", pipeline.to_str().unwrap()])
        .args(["--input", dir.join("shards").to_str().unwrap()])
        .args(["--out", out.to_str().unwrap()])
        .args(["--binary", env!("CARGO_BIN_EXE_topicmap")])
        .args(["--master", "local[2]"])
        .args(extra)
        .env("SPARK_LOCAL_IP", "127.0.0.1")
        .output()
        .unwrap()
}

#[test]
#[ignore = "runs Spark in local[2]: TOPICMAP_SPARK_IT=1 cargo test --release --test spark -- --ignored"]
fn spark_assigns_every_row_once_and_reports_as_topicmap_does_locally() {
    require_spark();
    let tmp = tempfile::tempdir().unwrap();
    let shard_paths = shards(tmp.path());
    let pipeline = pipeline(
        tmp.path(),
        "spark.toml",
        &format!(
            // Every sentence of the synthetic corpus recurs in a hundred documents or more: the
            // repetition rule would rightly take it all for boilerplate.
            "name = \"spark\"\ntitle = \"Spark fixture\"\n[[input]]\npath = {:?}\nid = \"id\"\ntime = \"year\"\nlabel = \"label\"\n[clean]\nboilerplate = false\n[tokenize]\nmin-df = 2\n[cluster]\nk = 3\n",
            tmp.path().join("shards/*.parquet").display().to_string()
        ),
    );
    let out = tmp.path().join("spark-out");
    let o = driver(&pipeline, tmp.path(), &out, &["--sample", "1000"]);
    let log = stderr(&o);
    assert!(o.status.success(), "the driver failed:\n{log}");
    let report = out.join("report");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        report.display().to_string(),
        "stdout holds only the report folder"
    );
    // The driver surfaces the row it skipped, by file and row.
    assert!(
        log.contains("skipped shard-2.parquet row 401"),
        "the blank row is reported:\n{log}"
    );

    // Every row once: 1,600 documents, the blank one skipped and listed.
    let docs = parquet_dir(&out.join("documents"));
    assert_eq!(docs.height(), 1600);
    let ids = docs
        .column("doc_id")
        .unwrap()
        .as_materialized_series()
        .clone();
    assert_eq!(ids.n_unique().unwrap(), 1600, "no document twice");
    let skipped = parquet(&out.join("aggregates/skipped.parquet"));
    assert_eq!(skipped.height(), 1);
    let sources = parquet(&out.join("aggregates/sources.parquet"));
    let per_source = sources
        .column("documents")
        .unwrap()
        .cast(&DataType::Int64)
        .unwrap();
    assert_eq!(per_source.i64().unwrap().sum(), Some(1600));
    assert_eq!(sources.height(), 4);

    // The same shards through topicmap assign directly, with the model Spark's driver fitted.
    let model = out.join("model");
    assert!(model.join("model.json").is_file());
    let local = tmp.path().join("local");
    let names: Vec<String> = shard_paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    let mut assign = bin();
    assign
        .current_dir(tmp.path().join("shards"))
        .args(["assign", "--model", model.to_str().unwrap()])
        .args(&names)
        .args(["--id", "id", "--time", "year", "--label", "label"])
        .args(["--aggregates", "--quiet", "--out", local.to_str().unwrap()]);
    let o = assign.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let spark_counts = counts(&out.join("aggregates/counts.parquet"));
    let local_counts = counts(&local.join("aggregates/counts.parquet"));
    assert_eq!(spark_counts, local_counts, "per-(period, topic) counts");
    assert_eq!(spark_counts.iter().map(|r| r.2).sum::<i64>(), 1600);
    assert!(
        spark_counts
            .iter()
            .map(|r| r.1)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
            == 3
    );

    // The report from Spark's sums equals the one from the local sums.
    let local_report = tmp.path().join("local-report");
    let o = run(&[
        "report",
        pipeline.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--aggregates",
        local.join("aggregates").to_str().unwrap(),
        "--out",
        local_report.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    same_reports(&report, &local_report);
    let metrics: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(report.join("metrics.json")).unwrap()).unwrap();
    assert_eq!(metrics["documents"], 1600);

    // With on-bad-document = "fail" the blank row stops the job, named by file and row.
    let strict = pipeline.with_file_name("strict.toml");
    fs::write(
        &strict,
        fs::read_to_string(&pipeline).unwrap() + "[output]\non-bad-document = \"fail\"\n",
    )
    .unwrap();
    let failed = tmp.path().join("strict-out");
    let model_arg = model.to_str().unwrap();
    let o = driver(&strict, tmp.path(), &failed, &["--model", model_arg]);
    assert!(!o.status.success());
    let log = stderr(&o);
    assert!(
        log.contains("shard-2.parquet") && log.contains("row 401"),
        "{log}"
    );
    assert!(
        !failed.join("report").exists(),
        "no report from a failed job"
    );

    // A model of another version is refused on the executors, and the job says so.
    let old = tmp.path().join("old-model");
    fs::create_dir_all(&old).unwrap();
    let text = fs::read_to_string(model.join("model.json")).unwrap();
    assert!(text.contains("\"version\":2"));
    fs::write(
        old.join("model.json"),
        text.replacen("\"version\":2", "\"version\":99", 1),
    )
    .unwrap();
    let o = driver(
        &pipeline,
        tmp.path(),
        &tmp.path().join("old-out"),
        &["--model", old.to_str().unwrap()],
    );
    assert!(!o.status.success());
    let log = stderr(&o);
    assert!(log.contains("version 99"), "{log}");
}
