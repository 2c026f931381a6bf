#!/usr/bin/env python3
"""A reproducible large corpus, built from the real arXiv abstracts, for scale tests.

Reads ../shared/corpora/arxiv/arxiv_daily_2025_2026.csv (74,728 real abstracts),
splits every abstract into sentences, and writes N documents. Document i is
built with random.Random(seed), in order:
  1. a primary category, drawn with the corpus's category frequencies;
  2. a random real document of that category, which gives the title,
     listing_date and year;
  3. 3 to 8 whole sentences, each from a random document of the same category,
     joined into the abstract.
So the text is real and topical, the label (primary_category) is meaningful, and
no two documents are alike. The same source, --n and --seed give the same file,
byte for byte (the script prints its SHA-256).

Output: RFC 4180 CSV (CRLF), header id,listing_date,year,primary_category,title,abstract,
ids scale-000000001, scale-000000002, ... It is streamed (memory is the source,
not N) and written to OUT.part, then renamed. It refuses to write inside the git
work tree: these files are large and derived from data that must not be
republished with the project.

Make the four standard sizes (from the repo root; about 1.2 KB per document):
  python3 scripts/make_scale_corpus.py --n 10000   --seed 42 --out /tmp/topicmap-scale/arxiv_scale_10k.csv
  python3 scripts/make_scale_corpus.py --n 100000  --seed 42 --out /tmp/topicmap-scale/arxiv_scale_100k.csv
  python3 scripts/make_scale_corpus.py --n 300000  --seed 42 --out /tmp/topicmap-scale/arxiv_scale_300k.csv
  python3 scripts/make_scale_corpus.py --n 1000000 --seed 42 --out /tmp/topicmap-scale/arxiv_scale_1M.csv

A matching pipeline (this is pipelines/arxiv-scale.toml; for another size pass
--set input.0.path=/tmp/topicmap-scale/arxiv_scale_100k.csv):
  name = "arxiv-scale"
  title = "arXiv scale test (recombined sentences)"

  [[input]]
  path = "/tmp/topicmap-scale/arxiv_scale_1M.csv"
  text = ["title", "abstract"]
  id = "id"
  label = "primary_category"
  time = "listing_date"

  [cluster]
  k = 50

  [output]
  dir = "../output/arxiv-scale"

Scaling mode: run the release binary on the sizes made above, one after the
other, under /usr/bin/time, and fit the growth exponents (least-squares slope of
log(wall time) and of log(peak RSS) on log(n), over 100k..1M and over all sizes):
  python3 scripts/make_scale_corpus.py --scaling --sizes 10k,100k,300k,1M
  python3 scripts/make_scale_corpus.py --scaling --sizes 10k,100k --dir /tmp/topicmap-scale --threads 2

Progress goes to stderr, results to stdout.
"""
import argparse
import bisect
import csv
import hashlib
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent          # the checkout (scripts/..)
SHARED = ROOT.parent / "shared"                        # ../shared beside the checkout
# Defaults relative to the checkout (see in_repo), so --help reads the same on every machine.
DEFAULT_SOURCE = "../shared/corpora/arxiv/arxiv_daily_2025_2026.csv"
DEFAULT_BINARY = "target/release/topicmap"
DEFAULT_PIPELINE = "pipelines/arxiv-scale.toml"
DEFAULT_DIR = Path("/tmp/topicmap-scale")
TIME = "/usr/bin/time"
HEADER = ["id", "listing_date", "year", "primary_category", "title", "abstract"]

# Words ending in a period that do not end a sentence (compared lower-cased).
ABBREVIATIONS = {
    "e.g.", "i.e.", "al.", "etc.", "cf.", "vs.", "viz.", "resp.", "approx.", "fig.", "figs.",
    "eq.", "eqs.", "sec.", "secs.", "ref.", "refs.", "tab.", "no.", "nos.", "dr.", "mr.", "ms.",
    "prof.", "st.", "vol.", "pp.", "ch.", "app.", "thm.", "def.", "lem.", "prop.", "cor.", "alg.",
}
# A candidate boundary: . ? or ! (maybe followed by a closing quote or bracket), then
# whitespace, then an uppercase letter or a digit.
BOUNDARY = re.compile(r"(?<=[.?!])([\"')\]]?)\s+(?=[A-Z0-9])")
SPACE = re.compile(r"\s+")


def die(msg):
    print(f"make_scale_corpus.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def split_sentences(text):
    """Split after . ? ! followed by space and an uppercase letter or digit; not after
    abbreviations (e.g., i.e., et al., Fig., ...) or single-letter initials."""
    text = SPACE.sub(" ", text).strip()
    if not text:
        return []
    out, start = [], 0
    for m in BOUNDARY.finditer(text):
        end = m.start() + len(m.group(1))               # keep the closing quote/bracket
        words = text[start:m.start()].rsplit(" ", 1)
        last = words[-1].lower()
        if last in ABBREVIATIONS or re.fullmatch(r"\(?[a-z]\.", last) or last.endswith("e.g.") \
                or last.endswith("i.e."):
            continue
        out.append(text[start:end])
        start = m.end()
    out.append(text[start:])
    return [s for s in out if s]


def load_source(path):
    """Per category: the real documents (listing_date, year, title) and their sentence lists."""
    csv.field_size_limit(sys.maxsize)
    by_cat = {}
    rows = 0
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = {"listing_date", "year", "primary_category", "title", "abstract"} - set(reader.fieldnames or [])
        if missing:
            die(f"{path} lacks column(s) {sorted(missing)}")
        for row in reader:
            rows += 1
            sents = split_sentences(row["abstract"] or "")
            if not sents:
                continue
            cat = row["primary_category"].strip()
            by_cat.setdefault(cat, []).append(
                (row["listing_date"], row["year"], SPACE.sub(" ", row["title"] or "").strip(), tuple(sents)))
            if rows % 20000 == 0:
                log(f"read {rows:,} source rows")
    return rows, by_cat


class HashingWriter:
    """A text sink for csv.writer that encodes to UTF-8, hashes and counts the bytes."""

    def __init__(self, f):
        self.f, self.sha, self.bytes = f, hashlib.sha256(), 0

    def write(self, s):
        b = s.encode("utf-8")
        self.sha.update(b)
        self.bytes += len(b)
        return self.f.write(b)


def inside(path, root):
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def in_repo(p):
    """A path from the command line (or a default): relative to the cwd when it exists there,
    else relative to the checkout."""
    p = Path(p)
    if p.is_absolute() or p.exists():
        return p.resolve()
    return (ROOT / p).resolve()


def make(a):
    source = in_repo(a.source)
    if not source.is_file():
        die(f"source corpus not found: {source}. The shared corpora live in ../shared/corpora/, "
            f"which must sit beside the checkout ({SHARED}).")
    out = Path(a.out).expanduser()
    out = (out.parent.resolve() if out.parent.exists() else Path(os.path.abspath(out.parent))) / out.name
    if inside(out, ROOT.resolve()):
        die(f"refusing to write {out}: it is inside the git work tree ({ROOT.resolve()}). "
            "Write it outside the checkout, e.g. /tmp/topicmap-scale/.")
    if a.n < 1:
        die("--n must be at least 1")

    t0 = time.perf_counter()
    log(f"reading {source}")
    rows, by_cat = load_source(source)
    cats = sorted(by_cat)
    if not cats:
        die(f"{source} has no abstracts")
    cum, total = [], 0
    for c in cats:
        total += len(by_cat[c])
        cum.append(total)
    nsent = sum(len(d[3]) for c in cats for d in by_cat[c])
    log(f"{rows:,} rows, {total:,} with an abstract, {len(cats)} categories, {nsent:,} sentences "
        f"({time.perf_counter() - t0:.1f} s)")

    rng = random.Random(a.seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(out.name + ".part")
    with open(part, "wb") as fb:
        sink = HashingWriter(fb)
        w = csv.writer(sink, lineterminator="\r\n")     # RFC 4180: CRLF, minimal quoting
        w.writerow(HEADER)
        for i in range(1, a.n + 1):
            cat = cats[bisect.bisect_right(cum, rng.random() * total)] if len(cats) > 1 else cats[0]
            docs = by_cat[cat]
            date, year, title, _ = docs[rng.randrange(len(docs))]
            picked = []
            for _ in range(rng.randint(3, 8)):
                for _try in range(5):                    # avoid repeating a sentence in one document
                    sents = docs[rng.randrange(len(docs))][3]
                    s = sents[rng.randrange(len(sents))]
                    if s not in picked:
                        break
                picked.append(s)
            w.writerow([f"scale-{i:09d}", date, year, cat, title, " ".join(picked)])
            if i % 100_000 == 0:
                log(f"{i:,} / {a.n:,} documents, {sink.bytes / 2**20:,.0f} MiB, "
                    f"{time.perf_counter() - t0:.0f} s")
    os.replace(part, out)
    el = time.perf_counter() - t0
    print(f"wrote {out}")
    print(f"rows {a.n:,} (+ header), bytes {sink.bytes:,} ({sink.bytes / 2**20:,.1f} MiB), "
          f"elapsed {el:.1f} s, seed {a.seed}, sha256 {sink.sha.hexdigest()}")


def parse_size(s):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmM]?)", s.strip())
    if not m:
        die(f"bad size {s!r} (use e.g. 10k, 100k, 1M)")
    mult = {"": 1, "k": 1_000, "m": 1_000_000}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def slope(xs, ys):
    """Least-squares slope of log(y) on log(x); None with fewer than two distinct x."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y > 0]
    if len({p[0] for p in pts}) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)


def scaling(a):
    binary = in_repo(a.binary)
    pipeline = in_repo(a.pipeline)
    for path, what in ((TIME, "GNU time (apt-get install time)"),
                       (binary, "topicmap binary (build it with cargo build --release)"),
                       (pipeline, "pipeline file")):
        if not Path(path).is_file():
            die(f"{what} not found: {path}")
    labels = [s.strip() for s in a.sizes.split(",") if s.strip()]
    files = []
    for lab in labels:
        f = Path(a.dir) / f"arxiv_scale_{lab}.csv"
        if not f.is_file():
            die(f"corpus not found: {f}. Make it first: python3 scripts/make_scale_corpus.py "
                f"--n {parse_size(lab)} --seed 42 --out {f}  (the source, ../shared/corpora/, must sit "
                "beside the checkout)")
        files.append((lab, parse_size(lab), f))

    results = []
    with tempfile.TemporaryDirectory(prefix="topicmap-scaling-") as tmp:
        for lab, n, f in files:
            outdir, tfile = Path(tmp) / f"out-{lab}", Path(tmp) / f"time-{lab}.txt"
            cmd = [str(binary), "run", str(pipeline), "--set", f"input.0.path={f}",
                   "--set", f"cluster.k={a.k}", "--quiet", "--out", str(outdir)]
            if a.threads:
                cmd += ["--threads", str(a.threads)]
            log(f"{lab}: {' '.join(cmd)}")
            proc = subprocess.run([TIME, "-o", str(tfile), "-f", "%e %M", *cmd],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if proc.returncode != 0:
                tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
                die(f"topicmap failed on {f} (exit {proc.returncode}):\n{tail}")
            wall, kb = tfile.read_text().strip().splitlines()[-1].split()
            run = json.loads((outdir / "run.json").read_text())
            docs = run.get("counts", {}).get("documents") or n
            stages = {k: v for k, v in run.get("timings_seconds", [])}
            r = {"size": lab, "n": n, "documents": docs, "wall_s": float(wall),
                 "peak_rss_mib": int(kb) / 1024, "stages": stages}
            results.append(r)
            log(f"{lab}: {r['wall_s']:.1f} s, {r['peak_rss_mib']:.0f} MiB")
            import shutil
            shutil.rmtree(outdir, ignore_errors=True)    # the reports of big runs are big

    print(f"# topicmap scaling: {pipeline.name}, k={a.k}{f', --threads {a.threads}' if a.threads else ''}")
    print()
    print("| size | documents | wall s | peak RSS MiB | slowest stages |")
    print("|---|---:|---:|---:|---|")
    for r in results:
        top = sorted(r["stages"].items(), key=lambda kv: -kv[1])[:3]
        print(f"| {r['size']} | {r['documents']:,} | {r['wall_s']:.1f} | {r['peak_rss_mib']:.0f} | "
              + ", ".join(f"{k} {v:.1f}" for k, v in top) + " |")
    print()
    for name, sel in (("100k..1M", [r for r in results if 100_000 <= r["n"] <= 1_000_000]),
                      ("all sizes", results)):
        ns = [r["documents"] for r in sel]
        st = slope(ns, [r["wall_s"] for r in sel])
        sr = slope(ns, [r["peak_rss_mib"] for r in sel])
        if st is None:
            print(f"growth exponent over {name}: n/a ({len(sel)} size(s); needs 2)")
        else:
            print(f"growth exponent over {name} ({len(sel)} sizes): time ~ n^{st:.2f}, peak RSS ~ n^{sr:.2f}")
    if a.json:
        Path(a.json).write_text(json.dumps({"k": a.k, "threads": a.threads, "runs": results}, indent=2) + "\n")
        log(f"raw measurements written to {a.json}")


def main():
    ap = argparse.ArgumentParser(
        description="Make a reproducible large CSV corpus by recombining real arXiv sentences within "
                    "each category; or, with --scaling, time topicmap on the corpora made.",
        epilog="Needs ../shared/ beside the checkout. The exact commands for the 10k..1M corpora are in "
               "this script's docstring.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_argument_group("making a corpus")
    g.add_argument("--n", type=int, help="number of documents to write")
    g.add_argument("--seed", type=int, default=42, help="random seed (default: %(default)s)")
    g.add_argument("--out", help="output CSV, outside the git work tree")
    g.add_argument("--source", default=DEFAULT_SOURCE, help="the real arXiv CSV (default: %(default)s)")
    s = ap.add_argument_group("--scaling mode")
    s.add_argument("--scaling", action="store_true", help="time topicmap on the corpora instead of making one")
    s.add_argument("--sizes", default="10k,100k,300k,1M",
                   help="sizes to run, files DIR/arxiv_scale_SIZE.csv (default: %(default)s)")
    s.add_argument("--dir", default=str(DEFAULT_DIR), help="where the corpora are (default: %(default)s)")
    s.add_argument("--binary", default=DEFAULT_BINARY, help="topicmap binary (default: %(default)s)")
    s.add_argument("--pipeline", default=DEFAULT_PIPELINE, help="pipeline (default: %(default)s)")
    s.add_argument("--k", type=int, default=50, help="cluster.k (default: %(default)s)")
    s.add_argument("--threads", type=int, default=0, help="topicmap --threads N (default: all cores)")
    s.add_argument("--json", metavar="OUT", help="also write the raw measurements as JSON to OUT")
    a = ap.parse_args()
    if a.scaling:
        scaling(a)
    else:
        if a.n is None or a.out is None:
            ap.error("--n and --out are required (or use --scaling)")
        make(a)


if __name__ == "__main__":
    main()
