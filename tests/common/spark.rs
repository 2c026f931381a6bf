//! The Spark driver's test fixtures (`tests/spark.rs`): the Parquet shards (plain, and with
//! repeating, missing and renamed ids), the driver run on them, one machine's `topicmap
//! assign` as the reference, readers of the outputs, a standalone cluster on 127.0.0.1 and a
//! stand-in binary that kills `topicmap assign` mid-partition.
//!
//! Why here rather than in the test file: they are three quarters of it, and the four tests
//! read better without them in between.

use super::*;
use polars::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn python() -> String {
    std::env::var("PYSPARK_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Fails plainly (never skips) when the gate is open but Spark cannot run.
pub fn require_spark() {
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
pub fn shards(dir: &Path) -> Vec<PathBuf> {
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
pub fn parquet_dir(dir: &Path) -> DataFrame {
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
pub fn counts(path: &Path) -> Vec<(String, i64, i64, i64)> {
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
pub fn driver(pipeline: &Path, dir: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
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

/// Four Parquet shards (small row groups, so Spark may split a file over partitions) whose ids
/// repeat within and across shards, are missing or blank in some rows, take the form of a
/// renamed id (`dup-a~2`) or of a row's default name (`shard-2:10`), and a blank row whose id
/// repeats (it is skipped, so it renames nothing).
pub fn repeating_shards(dir: &Path) -> Vec<PathBuf> {
    let csv = dir.join("csv");
    fs::create_dir_all(&csv).unwrap();
    let shards = dir.join("shards");
    fs::create_dir_all(&shards).unwrap();
    synthetic(&csv, 1600, 4)
        .iter()
        .enumerate()
        .map(|(f, path)| {
            let mut df = CsvReadOptions::default()
                .with_has_header(true)
                .with_infer_schema_length(Some(0))
                .try_into_reader_with_file_path(Some(path.clone()))
                .unwrap()
                .finish()
                .unwrap();
            let ids: Vec<Option<String>> = (0..df.height())
                .map(|r| {
                    let i = f * 400 + r;
                    Some(match (f, r) {
                        (0, 1) => "shard-2:10".into(),
                        (3, 5) => "dup-a~2".into(),
                        (3, 6) => "s7~2".into(),
                        (2, 9) => return None,
                        _ if i % 97 == 5 => "dup-a".into(),
                        _ if f > 0 && i % 50 == 7 => format!("s{}", i - 400),
                        _ if i % 41 == 3 => return None,
                        _ if i % 53 == 1 => "  ".into(),
                        _ => format!("s{i}"),
                    })
                })
                .collect();
            df.with_column(Column::new("id".into(), ids)).unwrap();
            if f == 1 {
                let blank = df!(
                    "id" => ["dup-a"], "year" => ["2020"], "title" => [""],
                    "abstract" => [" "], "label" => ["none"],
                )
                .unwrap();
                df = df
                    .slice(0, 200)
                    .vstack(&blank)
                    .unwrap()
                    .vstack(&df.slice(200, 200))
                    .unwrap();
            }
            let out = shards.join(format!("shard-{f}.parquet"));
            ParquetWriter::new(fs::File::create(&out).unwrap())
                .with_row_group_size(Some(64))
                .finish(&mut df)
                .unwrap();
            out
        })
        .collect()
}

/// Each document as (source, row, doc_id, topic_id, period), sorted.
pub type DocRow = (String, i64, String, i64, String);

pub fn doc_rows(df: &DataFrame) -> Vec<DocRow> {
    let text = |name: &str| -> Vec<String> {
        let c = df.column(name).unwrap().cast(&DataType::String).unwrap();
        c.str()
            .unwrap()
            .iter()
            .map(|v| v.unwrap_or_default().to_string())
            .collect()
    };
    let int = |name: &str| -> Vec<i64> {
        let c = df.column(name).unwrap().cast(&DataType::Int64).unwrap();
        c.i64().unwrap().into_no_null_iter().collect()
    };
    let (source, row, id) = (text("source"), int("row"), text("doc_id"));
    let (topic, period) = (int("topic_id"), text("period"));
    let mut rows: Vec<DocRow> = (0..df.height())
        .map(|i| {
            let s = source[i].clone();
            (s, row[i], id[i].clone(), topic[i], period[i].clone())
        })
        .collect();
    rows.sort();
    rows
}

/// One machine, one process: every shard's rows in file-name order through `topicmap assign
/// --in arrow --out arrow` (rows numbered within their file in stream order, so by the file's
/// own rows), as (source, row, doc_id, topic_id, period).
pub fn one_process(model: &Path, shards: &[PathBuf]) -> Vec<DocRow> {
    let mut sorted = shards.to_vec();
    sorted.sort();
    let mut all: Option<DataFrame> = None;
    for p in &sorted {
        let mut df = parquet(p);
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let n = df.height();
        df.with_column(Column::new("_source".into(), vec![name; n]))
            .unwrap();
        match &mut all {
            None => all = Some(df),
            Some(a) => {
                a.vstack_mut(&df).unwrap();
            }
        }
    }
    let mut df = all.unwrap();
    let mut stream = Vec::new();
    IpcStreamWriter::new(&mut stream).finish(&mut df).unwrap();
    let model = model.to_str().unwrap();
    let mut args = vec![
        "assign",
        "--model",
        model,
        "--in",
        "arrow",
        "--source-column",
    ];
    args.extend(["_source", "--out", "arrow", "--emit-terms"]);
    args.extend(["--id", "id", "--time", "year", "--label", "label"]);
    let (ok, out, err) = piped(&args, &stream);
    assert!(ok, "{err}");
    let out = IpcStreamReader::new(std::io::Cursor::new(out))
        .finish()
        .unwrap();
    let kept = out.column("skipped").unwrap().is_null();
    doc_rows(&out.filter(&kept).unwrap())
}

/// Runs the Spark driver on `inputs` (in that order) with the model in `model`.
pub fn driver_on(
    pipeline: &Path,
    inputs: &[PathBuf],
    out: &Path,
    extra: &[&str],
) -> std::process::Output {
    let mut c = Command::new(python());
    c.arg(repo().join("distributed/spark/topicmap_spark.py"))
        .args(["--pipeline", pipeline.to_str().unwrap()])
        .args(["--out", out.to_str().unwrap()])
        .args(["--binary", env!("CARGO_BIN_EXE_topicmap")])
        .env("SPARK_LOCAL_IP", "127.0.0.1");
    for i in inputs {
        c.args(["--input", i.to_str().unwrap()]);
    }
    c.args(extra).output().unwrap()
}

/// The fixture pipeline of the repeating shards, and a model fitted on them by `topicmap run`.
pub fn repeating_fit(dir: &Path) -> (PathBuf, PathBuf) {
    let pipeline = pipeline(
        dir,
        "ids.toml",
        &format!(
            "name = \"ids\"\n[[input]]\npath = {:?}\nid = \"id\"\ntime = \"year\"\nlabel = \"label\"\n[clean]\nboilerplate = false\n[tokenize]\nmin-df = 2\n[cluster]\nk = 3\n",
            dir.join("shards/*.parquet").display().to_string()
        ),
    );
    let model = dir.join("fit");
    let o = run(&[
        "run",
        pipeline.to_str().unwrap(),
        "--out",
        model.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    (pipeline, model)
}

/// documents.csv of a `topicmap assign` folder as sorted (source, doc_id, topic_id) rows.
pub fn csv_docs(dir: &Path) -> Vec<(String, String, i64)> {
    let (h, rows) = read_csv(&dir.join("documents.csv"));
    let (s, d, t) = (
        column(&h, &rows, "source"),
        column(&h, &rows, "doc_id"),
        column(&h, &rows, "topic_id"),
    );
    let mut out: Vec<_> = (0..rows.len())
        .map(|i| (s[i].to_string(), d[i].to_string(), t[i].parse().unwrap()))
        .collect();
    out.sort();
    out
}

pub fn without_row(rows: &[DocRow]) -> Vec<(String, String, i64)> {
    let mut out: Vec<_> = rows
        .iter()
        .map(|(s, _, d, t, _)| (s.clone(), d.clone(), *t))
        .collect();
    out.sort();
    out
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The body of `GET path` from 127.0.0.1:`port`, or "" while nothing answers.
pub fn http_get(port: u16, path: &str) -> String {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    let mut body = String::new();
    if s.write_all(request.as_bytes()).is_ok() {
        let _ = s.read_to_string(&mut body);
    }
    body
}

/// A standalone Spark cluster on this machine: a master and one worker (2 cores, 4 GB), from
/// pyspark's own `spark-class`, every address and web UI bound to 127.0.0.1 on free ports.
/// Stopped when dropped, so also when the test fails.
pub struct Cluster {
    children: Vec<std::process::Child>,
    /// The master's URL, `spark://127.0.0.1:PORT`.
    pub url: String,
}

impl Cluster {
    /// Starts the master and the worker with their logs in `dir`; returns once the worker is
    /// registered (panics after two minutes).
    pub fn start(dir: &Path) -> Cluster {
        let o = Command::new(python())
            .args([
                "-c",
                "import os, pyspark; print(os.path.dirname(pyspark.__file__))",
            ])
            .output()
            .unwrap();
        let home = String::from_utf8_lossy(&o.stdout).trim().to_string();
        let class = Path::new(&home).join("bin/spark-class");
        assert!(class.is_file(), "no spark-class in {home}");
        let (port, ui, worker_ui) = (free_port(), free_port(), free_port());
        let url = format!("spark://127.0.0.1:{port}");
        let spawn = |log: &str, args: &[String]| {
            let log = fs::File::create(dir.join(log)).unwrap();
            Command::new(&class)
                .args(args)
                .env("SPARK_HOME", &home)
                .env("SPARK_LOCAL_IP", "127.0.0.1")
                .env("SPARK_PUBLIC_DNS", "127.0.0.1")
                .env("PYSPARK_PYTHON", python())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .unwrap()
        };
        let s = |v: &str| v.to_string();
        let mut cluster = Cluster {
            children: Vec::new(),
            url: url.clone(),
        };
        cluster.children.push(spawn(
            "master.log",
            &[
                s("org.apache.spark.deploy.master.Master"),
                s("--host"),
                s("127.0.0.1"),
                s("--port"),
                port.to_string(),
                s("--webui-port"),
                ui.to_string(),
            ],
        ));
        let work = dir.join("work");
        cluster.children.push(spawn(
            "worker.log",
            &[
                s("org.apache.spark.deploy.worker.Worker"),
                url,
                s("--host"),
                s("127.0.0.1"),
                s("--cores"),
                s("2"),
                s("--memory"),
                s("4g"),
                s("--webui-port"),
                worker_ui.to_string(),
                s("--work-dir"),
                work.display().to_string(),
            ],
        ));
        // Ready once the master's UI lists the worker as alive (at most two minutes).
        for _ in 0..240 {
            if http_get(ui, "/json/").contains("\"aliveworkers\" : 1") {
                return cluster;
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        panic!(
            "the cluster did not come up:\n{}\n{}",
            fs::read_to_string(dir.join("master.log")).unwrap_or_default(),
            fs::read_to_string(dir.join("worker.log")).unwrap_or_default()
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // The worker first (it stops its executors on SIGTERM), then the master; SIGKILL after
        // ten seconds.
        for child in self.children.iter_mut().rev() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            for _ in 0..100 {
                if child.try_wait().is_ok_and(|s| s.is_some()) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A stand-in for the topicmap binary that runs the real one, except that a `topicmap
/// assign` it starts is fed part of its partition and then killed with SIGKILL (and the
/// stand-in kills itself the same way): the first only (`once`, recorded by the folder
/// `marker`), or every one.
pub fn killer(dir: &Path, name: &str, once: bool) -> (PathBuf, PathBuf) {
    let marker = dir.join(format!("{name}.killed"));
    let script = dir.join(name);
    let guard = if once {
        format!("mkdir {:?} 2>/dev/null", marker.display().to_string())
    } else {
        format!("mkdir -p {:?}", marker.display().to_string())
    };
    fs::write(
        &script,
        format!(
            "#!/bin/sh\nreal={:?}\ncase \" $* \" in *\" assign \"*)\n  if {guard}; then\n    fifo=\"$(mktemp -u)\"; mkfifo \"$fifo\"\n    \"$real\" \"$@\" <\"$fifo\" >/dev/null 2>&1 &\n    pid=$!\n    exec 3>\"$fifo\"\n    head -c 4096 >&3\n    kill -KILL \"$pid\"\n    wait \"$pid\"\n    echo \"$pid\" >>{:?}\n    rm -f \"$fifo\"\n    kill -KILL $$\n  fi;;\nesac\nexec \"$real\" \"$@\"\n",
            env!("CARGO_BIN_EXE_topicmap"),
            marker.join("pids").display().to_string()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    (script, marker)
}

/// The driver's binary swapped for `binary`.
pub fn with_binary<'a>(args: &mut Vec<&'a str>, binary: &'a Path) {
    args.extend(["--binary", binary.to_str().unwrap()]);
}

/// Nothing but what was there before under a failed job's --out.
pub fn nothing_written(out: &Path) {
    let left: Vec<_> = fs::read_dir(out)
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left under {}: {left:?}", out.display());
}
