#!/usr/bin/env python3
"""Run topicmap on Apache Spark: fit on a sample, assign every partition, sum in Spark, report.

    sample -> topicmap run             (driver: fit the topics on a seeded sample)
           -> --files topicmap, model.json to every executor
           -> mapInArrow: each partition piped through
              `topicmap assign --in arrow --out arrow --emit-terms` (executors)
           -> groupBy sums: counts per (period, topic), c-TF-IDF units per (topic, feature),
              representatives, label x topic, documents per source (Spark)
           -> topicmap report          (driver: the usual CSVs, charts, report.html)

Topic ids live in the model, so they are the same on every executor and in the report.

Usage (PySpark 4.x, Java 17; PYSPARK_PYTHON must be a Python with pyarrow and pandas):

    python3 distributed/spark/topicmap_spark.py \\
        --pipeline pipelines/arxiv-2025.toml --input 'shards/*.parquet' --out /tmp/spark-run \\
        --binary target/release/topicmap --master 'local[2]'

or on a cluster, `spark-submit --master yarn distributed/spark/topicmap_spark.py ...` (the
binary is shipped to the executors, so it must run on them: same OS and CPU family; --out
and the pipeline's report are on the driver's file system).

The pipeline file gives the columns (its first [[input]]: text, id, time, label), the
period (`[trends] period`), the sample size (`[cluster] fit-sample`, default 200,000) and
every report setting. `--model RUN_DIR` skips the fit and assigns with that model.

Writes under --out: model/ (the fit, unless --model), documents/ (every assigned document,
Parquet, as documents.csv has them), aggregates/ (the sums `topicmap report` reads; see
src/export/aggregates.rs) and report/ (the report). Prints the report folder on stdout.

Bad rows: with `[output] on-bad-document = "skip"` (the default) a row that cannot be used is
left out, counted and listed (aggregates/skipped.parquet, the report, stderr); with "fail" the
first one stops the job with topicmap's message naming the input and row. A model of another
version is refused by topicmap on every executor, and the job fails with its message.
"""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib

REPRESENTATIVES = 10
# Marks an executor's failure message, so the driver can show it without Spark's stack traces.
FAILED = "topicmap assign failed on partition"
END = " [end of topicmap message]"
DEFAULT_SAMPLE = 200_000


def log(msg):
    print(f"spark     {msg}", file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pipeline", required=True, help="the pipeline file (TOML)")
    p.add_argument("--input", required=True, help="input files: a path or glob of Parquet or CSV files")
    p.add_argument("--out", required=True, help="the folder to write into (created)")
    p.add_argument("--binary", default="target/release/topicmap", help="the topicmap binary")
    p.add_argument("--model", help="assign with this report folder's model.json instead of fitting")
    p.add_argument("--master", help="Spark master (default: spark-submit's --master, else local[2])")
    p.add_argument("--format", choices=["parquet", "csv"], help="input format (default: from the extension)")
    p.add_argument("--sample", type=int, help="documents to fit on (default: [cluster] fit-sample, else 200,000)")
    return p.parse_args(argv)


def pipeline_settings(path):
    with open(path, "rb") as f:
        cfg = tomllib.load(f)
    inputs = cfg.get("input") or [{}]
    first = inputs[0]
    text = first.get("text")
    if isinstance(text, str):
        text = [text]
    return {
        "text": text,
        "id": first.get("id"),
        "time": first.get("time"),
        "label": first.get("label"),
        "title": first.get("title"),
        "period": cfg.get("trends", {}).get("period", "year"),
        "fit_sample": cfg.get("cluster", {}).get("fit-sample"),
        "seed": cfg.get("cluster", {}).get("seed", 42),
        "on_bad": cfg.get("output", {}).get("on-bad-document", "skip"),
    }


def run(cmd, what):
    log(" ".join(cmd))
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"topicmap_spark: {what} failed (exit {done.returncode})")
    return done.stdout.strip()


def assign_command(binary, model, s):
    """The per-partition command: Arrow in, Arrow out, every row's terms."""
    cmd = [binary, "-q", "assign", "--model", model, "--in", "arrow", "--source-column", "_source",
           "--out", "arrow", "--emit-terms", "--period", s["period"], "--on-bad-document", s["on_bad"]]
    if s["text"]:
        cmd += ["--text", ",".join(s["text"])]
    for flag in ("id", "time", "label"):
        if s[flag]:
            cmd += [f"--{flag}", s[flag]]
    return cmd


def output_schema(s):
    from pyspark.sql import types as T
    fields = [
        T.StructField("doc_id", T.StringType()),
        T.StructField("source", T.StringType()),
        T.StructField("title", T.StringType()),
        T.StructField("topic_id", T.LongType()),
        T.StructField("topic_label", T.StringType()),
        T.StructField("distance", T.FloatType()),
        T.StructField("confidence", T.FloatType()),
        T.StructField("outlier", T.BooleanType()),
    ]
    if s["time"]:
        fields.append(T.StructField("time", T.StringType()))
    if s["label"]:
        fields.append(T.StructField("label", T.StringType()))
    fields += [
        T.StructField("batch", T.StringType()),
        T.StructField("period", T.StringType()),
        T.StructField("row", T.LongType()),
        T.StructField("snippet", T.StringType()),
        T.StructField("features", T.ArrayType(T.LongType())),
        T.StructField("units", T.ArrayType(T.LongType())),
        T.StructField("skipped", T.StringType()),
    ]
    return T.StructType(fields)


def make_partition_fn(binary_name, model_name, model_shown, s, arrow_schema):
    """Builds the mapInArrow function (it runs on the executors). Errors name the model as
    `model_shown` (the driver's path), not the executor's copy."""

    def assign_partition(batches):
        import pyarrow as pa
        from pyspark import SparkFiles, TaskContext

        binary = SparkFiles.get(binary_name)
        model = SparkFiles.get(model_name)
        os.chmod(binary, 0o755)
        part = TaskContext.get().partitionId()
        with tempfile.TemporaryDirectory(prefix="topicmap-part-") as tmp:
            path = os.path.join(tmp, "in.arrows")
            writer = None
            rows = 0
            with pa.OSFile(path, "wb") as sink:
                for batch in batches:
                    if writer is None:
                        writer = pa.ipc.new_stream(sink, batch.schema)
                    writer.write_batch(batch)
                    rows += batch.num_rows
                if writer is not None:
                    writer.close()
            if rows == 0:
                return
            with open(path, "rb") as stdin:
                done = subprocess.run(assign_command(binary, model, s), stdin=stdin,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            if done.returncode != 0:
                message = done.stderr.decode("utf-8", "replace").strip().replace(model, model_shown)
                raise RuntimeError(f"{FAILED} {part} (exit {done.returncode}): {message}{END}")
            table = pa.ipc.open_stream(done.stdout).read_all()
            table = table.select(arrow_schema.names).cast(arrow_schema)
            for batch in table.to_batches(max_chunksize=10_000):
                yield batch

    return assign_partition


def executor_failure(error):
    """topicmap's own message inside a failed Spark job's error, or None."""
    text = str(error)
    start = text.find(FAILED)
    if start < 0:
        return None
    end = text.find(END, start)
    return text[start:end if end >= 0 else len(text)]


def write_table(df, path):
    """Writes a (small, aggregated) Spark DataFrame as one Parquet file."""
    import pyarrow.parquet as pq
    pq.write_table(df.toArrow(), path)


def main(argv=None):
    args = parse_args(argv if argv is not None else sys.argv[1:])
    s = pipeline_settings(args.pipeline)
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        raise SystemExit(f"topicmap_spark: no topicmap binary at {binary} (cargo build --release)")
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)

    from pyspark.sql import SparkSession, Window
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import to_arrow_schema

    # Under spark-submit (which hands the driver a gateway), its --master stands; run directly,
    # local[2].
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ
    master = args.master or (None if submitted else "local[2]")
    builder = (SparkSession.builder.appName("topicmap")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "8"))
    if master:
        builder = builder.master(master)
    if master and master.startswith("local"):
        # One machine: bind to the loopback address (no network lookups, no open ports). On a
        # cluster the executors must reach the driver, so Spark's own settings stand.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = (builder.config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.driver.host", "127.0.0.1"))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("FATAL")  # task failures are shown as topicmap words them
    fmt = args.format or ("csv" if args.input.endswith(".csv") else "parquet")
    if fmt == "csv":
        docs = spark.read.option("header", True).option("multiLine", True).option("escape", '"').csv(args.input)
    else:
        docs = spark.read.parquet(args.input)
    # Each row's input file, by name: what documents show as their source.
    docs = docs.withColumn("_source", F.element_at(F.split(F.input_file_name(), "/"), -1))
    total = docs.count()
    log(f"{total:,} rows in {docs.rdd.getNumPartitions()} partitions")

    # 1. Fit on a seeded sample (driver), unless a model is given.
    if args.model:
        model_dir = os.path.abspath(args.model)
    else:
        n = args.sample or s["fit_sample"] or DEFAULT_SAMPLE
        sample_dir = os.path.join(out, "sample")
        shutil.rmtree(sample_dir, ignore_errors=True)
        sample = docs if n >= total else docs.sample(fraction=min(1.0, 1.2 * n / total), seed=s["seed"]).limit(n)
        sample.drop("_source").coalesce(1).write.parquet(sample_dir)
        model_dir = os.path.join(out, "model")
        run([binary, "-q", "run", args.pipeline, "--out", model_dir,
             "--set", f"input.0.path={sample_dir}/*.parquet", "--set", "input.0.format=parquet",
             "--set", "output.formats=[\"csv\"]"], "the fit on the sample")
    model_file = os.path.join(model_dir, "model.json")
    with open(model_file, "rb") as f:
        model_sha = hashlib.sha256(f.read()).hexdigest()

    # 2. Ship the binary and the model; assign every partition (executors).
    spark.sparkContext.addFile(binary)
    spark.sparkContext.addFile(model_file)
    schema = output_schema(s)
    fn = make_partition_fn(os.path.basename(binary), "model.json", model_file, s, to_arrow_schema(schema))
    assigned = docs.mapInArrow(fn, schema).persist()
    staging = {name: os.path.join(out, f".{name}.partial") for name in ("aggregates", "documents")}
    for path in staging.values():
        shutil.rmtree(path, ignore_errors=True)
    try:
        skipped = assigned.filter(F.col("skipped").isNotNull())
        rows = assigned.filter(F.col("skipped").isNull())

        # 3. The sums (Spark), written as the tables topicmap report reads.
        # Written into staging folders, renamed into place once whole (a failed job leaves none).
        agg_dir = staging["aggregates"]
        os.makedirs(agg_dir)
        counts = rows.groupBy("period", "topic_id").agg(
            F.count(F.lit(1)).alias("documents"),
            F.sum(F.col("outlier").cast("long")).alias("outliers"))
        write_table(counts, os.path.join(agg_dir, "counts.parquet"))
        terms = (rows.select("topic_id", F.explode(F.arrays_zip("features", "units")).alias("t"))
                 .groupBy("topic_id", F.col("t.features").alias("feature"))
                 .agg(F.sum("t.units").alias("units"), F.count(F.lit(1)).alias("documents")))
        write_table(terms, os.path.join(agg_dir, "terms.parquet"))
        order = Window.partitionBy("topic_id").orderBy(F.col("distance").asc(), F.col("doc_id").asc())
        reps = (rows.withColumn("_rank", F.row_number().over(order)).filter(F.col("_rank") <= REPRESENTATIVES)
                .select("topic_id", "doc_id", "title", "snippet", "distance"))
        write_table(reps, os.path.join(agg_dir, "representatives.parquet"))
        if s["label"]:
            labels = rows.filter(F.col("label").isNotNull()).groupBy("label", "topic_id").agg(
                F.count(F.lit(1)).alias("documents"))
        else:
            labels = spark.createDataFrame([], "label string, topic_id long, documents long")
        write_table(labels, os.path.join(agg_dir, "labels.parquet"))
        sources = rows.groupBy("source").agg(F.count(F.lit(1)).alias("documents"))
        write_table(sources, os.path.join(agg_dir, "sources.parquet"))
        bad = skipped.select(F.col("source").alias("file"), "row", F.col("skipped").alias("reason"))
        write_table(bad, os.path.join(agg_dir, "skipped.parquet"))
        with open(os.path.join(agg_dir, "aggregates.json"), "w") as f:
            f.write('{\n  "format": "topicmap-aggregates",\n  "version": 1,\n'
                    f'  "model_sha256": "{model_sha}",\n  "representatives": {REPRESENTATIVES}\n}}\n')
        n_bad = skipped.count()
        for r in skipped.limit(5).collect():
            log(f"skipped {r['source']} row {r['row']}: {r['skipped']}")
        if n_bad:
            log(f"{n_bad:,} rows skipped in all (aggregates/skipped.parquet lists them)")

        # Every assigned document, as documents.csv would hold it.
        doc_cols = [c for c in schema.names if c not in ("period", "row", "snippet", "features", "units", "skipped")]
        rows.select(*doc_cols).write.mode("overwrite").parquet(staging["documents"])
        log(f"{rows.count():,} documents assigned")
    except Exception as error:  # a failed Spark job: show topicmap's message, not the JVM's
        message = executor_failure(error)
        spark.stop()
        for path in staging.values():
            shutil.rmtree(path, ignore_errors=True)
        if message is None:
            raise
        raise SystemExit(f"topicmap_spark: {message}")
    assigned.unpersist()
    spark.stop()
    for name, path in staging.items():
        shutil.rmtree(os.path.join(out, name), ignore_errors=True)
        os.rename(path, os.path.join(out, name))
    agg_dir = os.path.join(out, "aggregates")

    # 4. The report (driver).
    report_dir = os.path.join(out, "report")
    print(run([binary, "-q", "report", args.pipeline, "--model", model_dir, "--aggregates", agg_dir,
               "--out", report_dir], "the report"))


if __name__ == "__main__":
    main()
