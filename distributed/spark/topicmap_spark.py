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

Row for row what one machine gives: each row carries its file's name and its 1-based row in
that file (Parquet: Spark's `_metadata.row_index`, so a file split over partitions keeps its
rows; CSV: read whole per file, rows in file order). A row without an id is named
`<file-stem>:<row>`, as topicmap names it. Repeated ids are numbered in one global order
(file name, then row) before any partition sees them: the ids that repeat (a group-by count,
exact, over the rows topicmap would use), and those that look like a renamed one (`x~2`),
are collected with their file and row on the driver and renamed by topicmap's own rule (the
first keeps its id, each later one the first unused `id~n`, n = 2, 3, ...), then joined
back. So documents/ and the sums equal `topicmap assign --model M` on the same files (given
in file-name order), whatever the partitioning and the order the files are listed in.

Usage (PySpark 4.x, Java 17; PYSPARK_PYTHON must be a Python with pyarrow and pandas):

    python3 distributed/spark/topicmap_spark.py \\
        --pipeline pipelines/arxiv-2025.toml --input 'shards/*.parquet' --out /tmp/spark-run \\
        --binary target/release/topicmap --master 'local[2]'

(--input may be given several times, or name several paths; --partitions N repartitions the
rows before they are assigned.)

or on a cluster, `spark-submit --master yarn distributed/spark/topicmap_spark.py ...` (the
binary is shipped to the executors, so it must run on them: same OS and CPU family; --out
and the pipeline's report are on the driver's file system).

The pipeline file gives the columns (its first [[input]]: text, id, time, label; with
--model, a column the pipeline does not name is the model's, as `topicmap assign` takes it),
the period (`[trends] period`), the sample size (`[cluster] fit-sample`, default 200,000) and
every report setting. `--model RUN_DIR` skips the fit and assigns with that model.

Writes under --out: model/ (the fit, unless --model), documents/ (every assigned document,
Parquet, as documents.csv has them, plus its period and its row in its file), aggregates/ (the sums `topicmap report` reads; see
src/export/aggregates.rs) and report/ (the report). Prints the report folder on stdout.

Bad rows: with `[output] on-bad-document = "skip"` (the default) a row that cannot be used is
left out, counted and listed (aggregates/skipped.parquet, the report, stderr); with "fail" the
first one stops the job with topicmap's message naming the input and row. A model of another
version is refused by topicmap on every executor, and the job fails with its message.
Every input file's columns are checked on the driver before any job starts (a file lacking
a column the pipeline or the model names is refused, naming the file and the column); a
task whose `topicmap assign` dies is retried by Spark (spark.task.maxFailures), and a job
that still fails ends with topicmap's message (or Spark's first line). Nothing is left
under --out from a failed job but what was there before.
"""

import argparse
import csv
import hashlib
import json
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
    p.add_argument("--input", required=True, nargs="+", action="extend",
                   help="input files: paths or globs of Parquet or CSV files (repeatable)")
    p.add_argument("--out", required=True, help="the folder to write into (created)")
    p.add_argument("--binary", default="target/release/topicmap", help="the topicmap binary")
    p.add_argument("--model", help="assign with this report folder's model.json instead of fitting")
    p.add_argument("--master", help="Spark master (default: spark-submit's --master, else local[2])")
    p.add_argument("--format", choices=["parquet", "csv"], help="input format (default: from the extension)")
    p.add_argument("--sample", type=int, help="documents to fit on (default: [cluster] fit-sample, else 200,000)")
    p.add_argument("--partitions", type=int, help="repartition the rows into N partitions before assigning")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting (repeatable), e.g. spark.sql.files.maxPartitionBytes=8m")
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
           "--row-column", "_row", "--id", "_id", "--out", "arrow", "--emit-terms",
           "--period", s["period"], "--on-bad-document", s["on_bad"]]
    if s["text"]:
        cmd += ["--text", ",".join(s["text"])]
    for flag in ("time", "label"):
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
                code = done.returncode
                how = f"killed by signal {-code}" if code < 0 else f"exit {code}"
                raise RuntimeError(f"{FAILED} {part} ({how}): {message}{END}")
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


# Whitespace as Rust's str::trim sees it (Unicode White_Space): Java's \s under (?U).
EDGE_SPACE = r"(?U)\A\s+|\s+\z"
# The form of a renamed id (`<id>~<n>`): an id of this form may collide with a new name.
RENAMED_FORM = r"~[0-9]+\z"


def model_columns(model_dir, s):
    """Fills the columns the pipeline does not name from the model's `fit_input`, as
    `topicmap assign` takes them (a column the pipeline names wins)."""
    with open(os.path.join(model_dir, "model.json"), "rb") as f:
        fit = json.load(f).get("fit_input") or {}
    for key in ("text", "id", "time", "label"):
        if not s[key] and fit.get(key):
            s[key] = fit[key]
            log(f"{key} = {json.dumps(fit[key])} (from the model)")


def text_columns(s, names):
    """The columns joined into the text, as topicmap picks them (src/ingest/table.rs)."""
    if s["text"]:
        return s["text"]
    if "title" in names and "abstract" in names:
        return ["title", "abstract"]
    for c in ("abstract", "text"):
        if c in names:
            return [c]
    return []


def file_columns(uri, fmt):
    """The column names of one input file (its Parquet schema or CSV header), read on the driver."""
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq
    fs, path = pafs.FileSystem.from_uri(uri)
    if fmt == "parquet":
        with fs.open_input_file(path) as f:
            return pq.read_schema(f).names
    with fs.open_input_stream(path) as f:
        head = f.read(1 << 20).decode("utf-8-sig", "replace")
    return next(csv.reader(head.splitlines()), [])


def check_files(docs, fmt, s):
    """Refuses, before any job, an input file that lacks a column the settings name (Spark
    would read its rows with nulls there), with topicmap's message naming file and column."""
    from urllib.parse import unquote
    files = sorted(docs.inputFiles())
    for uri in files:
        names = file_columns(uri, fmt)
        name = unquote(uri.rsplit("/", 1)[-1])
        wanted = text_columns(s, names) + [s[k] for k in ("id", "time", "label") if s[k]]
        if not text_columns(s, names):
            raise SystemExit(f"topicmap_spark: input {name}: no text column (give text = [...]; "
                             f"columns: {', '.join(names)})")
        for col in wanted:
            if col not in names:
                raise SystemExit(f"topicmap_spark: input {name}: column {json.dumps(col)} not found "
                                 f"(columns: {', '.join(names)})")
    return files


def with_file_rows(docs, fmt):
    """Adds each row's input file name (_source) and its 1-based row in that file (_row)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    docs = docs.withColumn("_source", F.col("_metadata.file_name"))
    if fmt == "parquet":
        # A Parquet file may be split over partitions: its row index travels with each row.
        return docs.withColumn("_row", F.col("_metadata.row_index") + 1)
    # A multi-line CSV is not splittable: each file is read whole, in order, by one task.
    docs = docs.withColumn("_order", F.monotonically_increasing_id())
    rows = Window.partitionBy("_source").orderBy("_order")
    return docs.withColumn("_row", F.row_number().over(rows)).drop("_order")


def blank(col):
    from pyspark.sql import functions as F
    c = F.col(f"`{col}`").cast("string")
    return c.isNull() | (F.regexp_replace(c, EDGE_SPACE, "") == "")


def with_ids(docs, s):
    """Adds each row's id as topicmap names it (_id: the id cell trimmed, else
    `<file-stem>:<row>`) and whether topicmap would use the row (_usable: some text, and a time
    when there is a time column); only usable rows take part in the numbering of repeats."""
    from pyspark.sql import functions as F
    stem = F.regexp_extract(F.col("_source"), r"^(.+?)(\.[^.]*)?$", 1)
    by_row = F.concat(stem, F.lit(":"), F.col("_row").cast("string"))
    if s["id"]:
        cell = F.regexp_replace(F.col(f"`{s['id']}`").cast("string"), EDGE_SPACE, "")
        ident = F.when(blank(s["id"]), by_row).otherwise(cell)
    else:
        ident = by_row
    texts = text_columns(s, docs.columns)
    all_blank = blank(texts[0])
    for c in texts[1:]:
        all_blank = all_blank & blank(c)
    usable = ~all_blank
    if s["time"]:
        usable = usable & ~blank(s["time"])
    return docs.withColumn("_id", ident).withColumn("_usable", usable)


def renames(rows, on_bad):
    """topicmap's rule over rows (id, file, row) in (file, row) order (src/ingest/ids.rs): the
    first keeps its id, each later one the first unused `id~n`. Returns (file, row, id, new)."""
    seen, first, out = set(), {}, []
    for ident, source, row in rows:
        if ident not in seen:
            seen.add(ident)
            first[ident] = (source, row)
            continue
        if on_bad == "fail":
            f, r = first[ident]
            raise SystemExit(f"topicmap_spark: input {source}: row {row}: duplicate id {json.dumps(ident)} "
                             f"(first seen in {f} row {r}) (on-bad-document = \"fail\")")
        n = 2
        while f"{ident}~{n}" in seen:
            n += 1
        new = f"{ident}~{n}"
        seen.add(new)
        first.setdefault(new, (source, row))
        out.append((source, row, ident, new))
    return out


def unique_ids(spark, docs, on_bad):
    """Renames repeated ids in one global order (file name, then row), before partitions see
    them: only the rows whose id repeats, or has the form of a renamed one, go to the driver."""
    from pyspark.sql import functions as F
    usable = docs.filter(F.col("_usable"))
    repeated = (usable.groupBy("_id").agg(F.count(F.lit(1)).alias("_n")).filter(F.col("_n") > 1)
                .select("_id", F.lit(True).alias("_repeated")))
    suspects = (usable.select("_id", "_source", "_row").join(repeated, "_id", "left")
                .filter(F.col("_repeated").isNotNull() | F.col("_id").rlike(RENAMED_FORM))
                .select("_id", "_source", "_row").collect())
    rows = sorted((r["_id"], r["_source"], r["_row"]) for r in suspects)
    rows.sort(key=lambda r: (r[1], r[2]))
    renamed = renames(rows, on_bad)
    if not renamed:
        return docs, 0
    for source, row, ident, new in renamed[:5]:
        log(f"{source} row {row}: duplicate id {json.dumps(ident)} renamed {json.dumps(new)} (the document is kept)")
    log(f"{len(renamed):,} repeated ids renamed in all (file-name, then row order)")
    table = spark.createDataFrame([(a, b, d) for a, b, _, d in renamed], "_source string, _row long, _new string")
    docs = (docs.join(table, ["_source", "_row"], "left")
            .withColumn("_id", F.coalesce(F.col("_new"), F.col("_id"))).drop("_new"))
    return docs, len(renamed)


def write_table(df, path):
    """Writes a (small, aggregated) Spark DataFrame as one Parquet file."""
    import pyarrow.parquet as pq
    pq.write_table(df.toArrow(), path)


def session(args):
    """The Spark session: spark-submit's master (which hands the driver a gateway), else
    --master, else local[2]."""
    from pyspark.sql import SparkSession
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ
    master = args.master or (None if submitted else "local[2]")
    builder = (SparkSession.builder.appName("topicmap")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "8"))
    for setting in args.conf:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
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
    return spark


def read_input(spark, args):
    fmt = args.format or ("csv" if all(i.endswith(".csv") for i in args.input) else "parquet")
    if fmt == "csv":
        reader = spark.read.option("header", True).option("multiLine", True).option("escape", '"')
        return reader.csv(args.input), fmt
    return spark.read.parquet(*args.input), fmt


def fit(args, s, docs, total, binary, out):
    """Fits the topics on a seeded sample (driver); returns the model's folder."""
    n = args.sample or s["fit_sample"] or DEFAULT_SAMPLE
    sample_dir = os.path.join(out, "sample")
    shutil.rmtree(sample_dir, ignore_errors=True)
    sample = docs if n >= total else docs.sample(fraction=min(1.0, 1.2 * n / total), seed=s["seed"]).limit(n)
    sample.coalesce(1).write.parquet(sample_dir)
    model_dir = os.path.join(out, "model")
    run([binary, "-q", "run", args.pipeline, "--out", model_dir,
         "--set", f"input.0.path={sample_dir}/*.parquet", "--set", "input.0.format=parquet",
         "--set", "output.formats=[\"csv\"]"], "the fit on the sample")
    return model_dir


def write_sums(spark, s, rows, skipped, agg_dir, model_sha):
    """The sums (Spark), written as the tables topicmap report reads."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
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


def assign_all(spark, args, s, docs, binary, model_file, staging):
    """Assigns every partition (executors), writes the sums and the documents into `staging`."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import to_arrow_schema
    with open(model_file, "rb") as f:
        model_sha = hashlib.sha256(f.read()).hexdigest()
    docs = with_ids(docs, s)
    docs, _ = unique_ids(spark, docs, s["on_bad"])
    docs = docs.drop("_usable")
    if args.partitions:
        docs = docs.repartition(args.partitions)
    spark.sparkContext.addFile(binary)
    spark.sparkContext.addFile(model_file)
    schema = output_schema(s)
    fn = make_partition_fn(os.path.basename(binary), "model.json", model_file, s, to_arrow_schema(schema))
    assigned = docs.mapInArrow(fn, schema).persist()
    skipped = assigned.filter(F.col("skipped").isNotNull())
    rows = assigned.filter(F.col("skipped").isNull())
    write_sums(spark, s, rows, skipped, staging["aggregates"], model_sha)
    n_bad = skipped.count()
    for r in skipped.orderBy("source", "row").limit(5).collect():
        log(f"skipped {r['source']} row {r['row']}: {r['skipped']}")
    if n_bad:
        log(f"{n_bad:,} rows skipped in all (aggregates/skipped.parquet lists them)")
    # Every assigned document, as documents.csv would hold it, with its period and row.
    doc_cols = [c for c in schema.names if c not in ("snippet", "features", "units", "skipped")]
    rows.select(*doc_cols).write.mode("overwrite").parquet(staging["documents"])
    log(f"{rows.count():,} documents assigned")
    assigned.unpersist()


def spark_failure(error):
    """The message a failed Spark job ends with: topicmap's own, else Spark's first line."""
    message = executor_failure(error)
    if message is not None:
        return f"topicmap_spark: {message}"
    first = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
    return f"topicmap_spark: the Spark job failed: {first}"


def main(argv=None):
    args = parse_args(argv if argv is not None else sys.argv[1:])
    s = pipeline_settings(args.pipeline)
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        raise SystemExit(f"topicmap_spark: no topicmap binary at {binary} (cargo build --release)")
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    model_dir = os.path.abspath(args.model) if args.model else None
    if model_dir:
        model_columns(model_dir, s)

    spark = session(args)
    staging = {name: os.path.join(out, f".{name}.partial") for name in ("aggregates", "documents")}
    for path in staging.values():
        shutil.rmtree(path, ignore_errors=True)
    try:
        docs, fmt = read_input(spark, args)
        check_files(docs, fmt, s)
        total = docs.count()
        log(f"{total:,} rows in {docs.rdd.getNumPartitions()} partitions")
        # 1. Fit on a seeded sample (driver), unless a model is given.
        if not model_dir:
            model_dir = fit(args, s, docs, total, binary, out)
        # 2. Ship the binary and the model; assign every partition (executors); 3. the sums.
        assign_all(spark, args, s, with_file_rows(docs, fmt), binary,
                   os.path.join(model_dir, "model.json"), staging)
    except BaseException as error:  # a failed job: topicmap's message, not the JVM's
        spark.stop()
        for path in staging.values():
            shutil.rmtree(path, ignore_errors=True)
        if isinstance(error, (SystemExit, KeyboardInterrupt)):
            raise
        raise SystemExit(spark_failure(error)) from None
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
