//! The Spark driver (`distributed/spark/topicmap_spark.py`) end to end: four Parquet shards,
//! a seeded sample fitted on the driver, every partition piped through `topicmap assign --in
//! arrow --out arrow`, sums in Spark, `topicmap report` from them. Row for row the documents
//! and sums of one machine's `topicmap assign` (repeated and missing ids included, for two
//! partitionings and two file orders); once on a standalone cluster started here (a master
//! and a worker from pyspark's `spark-class`, on 127.0.0.1), with one executor's `topicmap
//! assign` killed mid-partition and retried; bad input ending with topicmap's message.
//!
//! Gated: it needs Java 17 and a Python with pyspark, pyarrow and pandas, and takes about
//! eight minutes. Run it with
//!     TOPICMAP_SPARK_IT=1 cargo test --release --test spark -- --ignored --test-threads=1
//! (`.ci/run` installs both and does). PYSPARK_PYTHON names the Python (default python3).
//!
//! The fixtures, the runners and the standalone cluster are in `tests/common/spark.rs`.

mod common;
use common::spark::*;
use common::*;
use polars::prelude::*;
use std::fs;
use std::path::PathBuf;

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

#[test]
#[ignore = "runs Spark in local[2]: TOPICMAP_SPARK_IT=1 cargo test --release --test spark -- --ignored"]
fn spark_names_and_places_every_row_as_one_machine_does_issue_23() {
    require_spark();
    let tmp = tempfile::tempdir().unwrap();
    let shards = repeating_shards(tmp.path());
    let (pipeline, model) = repeating_fit(tmp.path());

    // One machine: `topicmap assign` on the files (in file-name order), and one process
    // reading every row as an Arrow stream (for each row's row and period).
    let local = tmp.path().join("local");
    let o = bin()
        .current_dir(tmp.path().join("shards"))
        .args(["assign", "--model", model.to_str().unwrap()])
        .args([
            "shard-0.parquet",
            "shard-1.parquet",
            "shard-2.parquet",
            "shard-3.parquet",
        ])
        .args(["--aggregates", "--quiet", "--out", local.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let reference = one_process(&model, &shards);
    assert_eq!(
        csv_docs(&local),
        without_row(&reference),
        "assign on files = one stream"
    );
    assert_eq!(reference.len(), 1600, "the blank row is skipped");
    let ids: Vec<&str> = reference.iter().map(|r| r.2.as_str()).collect();
    for id in [
        "dup-a~2~2",
        "dup-a~3",
        "s7~2~2",
        "shard-2:10~2",
        "shard-0:4",
        "shard-0:55",
    ] {
        assert!(ids.contains(&id), "{id} among the ids");
    }
    let unique: std::collections::BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "every id once");

    // Spark: two partitionings, the files listed in two other orders; row for row the same.
    let orders = [[2, 0, 3, 1], [3, 1, 0, 2]];
    let settings: [&[&str]; 2] = [
        &["--master", "local[2]", "--partitions", "3"],
        &[
            "--master",
            "local[2]",
            "--conf",
            "spark.sql.files.maxPartitionBytes=8192",
        ],
    ];
    for (order, extra) in orders.iter().zip(settings) {
        let inputs: Vec<PathBuf> = order.iter().map(|&i| shards[i].clone()).collect();
        let out = tmp.path().join(format!("spark-{}", order[0]));
        let mut args = vec!["--model", model.to_str().unwrap()];
        args.extend(extra);
        let o = driver_on(&pipeline, &inputs, &out, &args);
        assert!(o.status.success(), "the driver failed:\n{}", stderr(&o));
        let log = stderr(&o);
        assert!(log.contains("rows in"), "{log}");
        let docs = parquet_dir(&out.join("documents"));
        assert_eq!(
            doc_rows(&docs),
            reference,
            "{extra:?}: documents row for row"
        );
        assert_eq!(
            counts(&out.join("aggregates/counts.parquet")),
            counts(&local.join("aggregates/counts.parquet")),
            "{extra:?}: the sums"
        );
    }
}

#[test]
#[ignore = "runs a standalone Spark cluster: TOPICMAP_SPARK_IT=1 cargo test --release --test spark -- --ignored"]
fn spark_on_a_standalone_cluster_retries_a_killed_assign_with_the_same_outputs() {
    require_spark();
    let tmp = tempfile::tempdir().unwrap();
    let shards = repeating_shards(tmp.path());
    let (pipeline, model) = repeating_fit(tmp.path());
    let reference = one_process(&model, &shards);
    let local = tmp.path().join("local");
    let model_arg = model.to_str().unwrap();
    let o = driver_on(
        &pipeline,
        &shards,
        &local,
        &["--model", model_arg, "--master", "local[2]"],
    );
    assert!(o.status.success(), "local[2]:\n{}", stderr(&o));

    let cluster = Cluster::start(tmp.path());
    let (binary, marker) = killer(tmp.path(), "kill-once", true);
    let out = tmp.path().join("cluster");
    let mut args = vec![
        "--model",
        model_arg,
        "--master",
        &cluster.url,
        "--partitions",
        "4",
    ];
    args.extend(["--conf", "spark.executor.memory=1g"]);
    with_binary(&mut args, &binary);
    let o = driver_on(&pipeline, &shards, &out, &args);
    let log = stderr(&o);
    drop(cluster);
    assert!(o.status.success(), "the cluster run failed:\n{log}");
    let killed = fs::read_to_string(marker.join("pids")).unwrap_or_default();
    assert_eq!(
        killed.lines().count(),
        1,
        "one assign was killed mid-partition"
    );
    let docs = parquet_dir(&out.join("documents"));
    assert_eq!(
        doc_rows(&docs),
        reference,
        "documents row for row after the retry"
    );
    assert_eq!(
        doc_rows(&parquet_dir(&local.join("documents"))),
        reference,
        "local[2] documents"
    );
    for table in ["counts", "terms", "representatives", "sources", "skipped"] {
        let path = format!("aggregates/{table}.parquet");
        let (a, b) = (parquet(&out.join(&path)), parquet(&local.join(&path)));
        let sorted = |df: DataFrame| {
            let cols: Vec<String> = df
                .get_column_names()
                .iter()
                .map(|c| c.to_string())
                .collect();
            df.sort(cols, Default::default()).unwrap()
        };
        assert!(sorted(a).equals(&sorted(b)), "{table} as in local[2]");
    }
    same_reports(&out.join("report"), &local.join("report"));
}

#[test]
#[ignore = "runs Spark in local[2]: TOPICMAP_SPARK_IT=1 cargo test --release --test spark -- --ignored"]
fn spark_refuses_bad_input_with_topicmaps_message_and_writes_nothing() {
    require_spark();
    let tmp = tempfile::tempdir().unwrap();
    let mut shards = repeating_shards(tmp.path());
    let (pipeline, model) = repeating_fit(tmp.path());
    let model_arg = model.to_str().unwrap();
    let local = ["--model", model_arg, "--master", "local[2]"];

    // A shard without the id column: Spark would read its rows with no id at all.
    let mut df = parquet(&shards[1]).drop("id").unwrap();
    let lacking = tmp.path().join("shard-9.parquet");
    ParquetWriter::new(fs::File::create(&lacking).unwrap())
        .finish(&mut df)
        .unwrap();
    shards.push(lacking);
    let out = tmp.path().join("no-id");
    let o = driver_on(&pipeline, &shards, &out, &local);
    assert!(!o.status.success());
    let log = stderr(&o);
    assert!(
        log.contains("input shard-9.parquet: column \"id\" not found"),
        "{log}"
    );
    nothing_written(&out);
    shards.pop();

    // A model whose pipeline read columns the shards lack (and a pipeline naming none).
    let other = tmp.path().join("other-model");
    fs::create_dir_all(&other).unwrap();
    let mut json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(model.join("model.json")).unwrap()).unwrap();
    json["fit_input"]["id"] = "arxiv_id".into();
    fs::write(other.join("model.json"), json.to_string()).unwrap();
    let bare = pipeline.with_file_name("bare.toml");
    fs::write(
        &bare,
        "name = \"bare\"\n[[input]]\npath = \"shards/*.parquet\"\n[cluster]\nk = 3\n",
    )
    .unwrap();
    let out = tmp.path().join("other-columns");
    let args = ["--model", other.to_str().unwrap(), "--master", "local[2]"];
    let o = driver_on(&bare, &shards, &out, &args);
    assert!(!o.status.success());
    let log = stderr(&o);
    assert!(
        log.contains("id = \"arxiv_id\" (from the model)")
            && log.contains("input shard-0.parquet: column \"arxiv_id\" not found"),
        "{log}"
    );
    nothing_written(&out);

    // An executor's topicmap assign that dies (every attempt): topicmap's message, no output.
    let (binary, marker) = killer(tmp.path(), "kill-always", false);
    let out = tmp.path().join("killed");
    let mut args = local.to_vec();
    with_binary(&mut args, &binary);
    let o = driver_on(&pipeline, &shards, &out, &args);
    assert!(!o.status.success());
    let log = stderr(&o);
    // The last word is topicmap's (Spark's Python workers may log a reset connection first,
    // as the job is cancelled).
    let last = log
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    assert!(
        last.starts_with("topicmap_spark: topicmap assign failed on partition")
            && last.contains("(killed by signal 9)"),
        "{log}"
    );
    assert!(marker.join("pids").is_file());
    nothing_written(&out);
}
