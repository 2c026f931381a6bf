#!/usr/bin/env python3
"""Speed and memory of topicmap next to scikit-learn, side by side, in one run.

Runs the release binary (target/release/topicmap) and the scikit-learn peer
(../shared/bench/sklearn_baseline.py) on the same corpus with the same k and
the same LSA dimensions, alternating topicmap, sklearn, topicmap, sklearn, ...
so that both see the same machine load. Every run is measured by
`/usr/bin/time -f '%e %M'` (wall seconds, peak RSS). The corpus, text columns,
label column and filter come from the pipeline's first [[input]].

Note: topicmap does more work than the peer: besides TF-IDF, LSA and k-means it
writes CSVs, charts and an HTML report, and its k-means keeps the best of
`cluster.runs` restarts (default 10, 3 above 10,000 documents; mini-batch above 50,000)
where the peer runs n_init=1.

Needs ../shared/ (corpora and bench/) beside the checkout, scikit-learn for the
peer (python3 -m pip install scikit-learn) and a built binary
(cargo build --release).

Examples (from the repo root):
  python3 scripts/bench.py                               # arXiv, 74,728 docs, k=20, LSA 100:
                                                         # cold run, 1 warm-up, 3 measured
  python3 scripts/bench.py --limit 3000 --repeats 1 --warmup 0 --no-cold   # quick check
  python3 scripts/bench.py --threads 2 --json /tmp/bench.json

Progress goes to stderr, the table to stdout.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from benchlib import (DEFAULT_BASELINE, DEFAULT_BINARY, ROOT, SHARED, die, log, need_file,
                      read_first_input, resolve_arg_path)
TIME = "/usr/bin/time"


def read_pipeline(path):
    """The pipeline's first [[input]] as the peer mirrors it, and its [cluster] runs."""
    cfg, inputs, p = read_first_input(path)
    if len(inputs) > 1:
        log(f"note: {path.name} has {len(inputs)} inputs; only the first is benchmarked")
    p["runs"] = cfg.get("cluster", {}).get("runs", "10 (3 above 10,000 docs; mini-batch above 50,000)")
    return p


def timed(cmd, workdir, env=None):
    """Run cmd under /usr/bin/time; return (wall_s, peak_rss_mib, stdout)."""
    tfile = Path(workdir) / "time.txt"
    proc = subprocess.run([TIME, "-o", str(tfile), "-f", "%e %M", *cmd],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        die(f"command failed (exit {proc.returncode}): {' '.join(map(str, cmd))}\n{tail}")
    last = tfile.read_text().strip().splitlines()[-1].split()
    return float(last[0]), int(last[1]) / 1024.0, proc.stdout


def run_topicmap(a, p, workdir):
    out = Path(workdir) / "out"
    cmd = [str(a.binary), "run", str(a.pipeline), "--out", str(out), "--quiet",
           "--set", f"cluster.k={a.k}", "--set", f"reduce.dims={a.lsa}"]
    if a.limit:
        cmd += ["--set", f"input.0.limit={a.limit}"]
    if a.threads:
        cmd += ["--threads", str(a.threads)]
    wall, rss, _ = timed(cmd, workdir)
    run = json.loads((out / "run.json").read_text())
    stages = {name: float(sec) for name, sec in run.get("timings_seconds", [])}
    rec = {"wall_s": wall, "peak_rss_mib": rss, "stages": stages,
           "documents": run.get("counts", {}).get("documents")}
    mfile = out / "metrics.json"
    if mfile.is_file():
        m = json.loads(mfile.read_text())
        rec["v_measure"], rec["ari"] = m.get("v_measure"), m.get("ari")
        rec["documents"] = m.get("documents", rec["documents"])
    return rec


def run_sklearn(a, p, workdir):
    cmd = [sys.executable, str(a.baseline), "--csv", str(p["csv"]), "--text", ",".join(p["text"]),
           "--k", str(a.k), "--lsa", str(a.lsa)]
    if p["label"]:
        cmd += ["--label", p["label"]]
    if p["only_labels"]:
        cmd += ["--only-labels", p["only_labels"]]
    if a.limit:
        cmd += ["--limit", str(a.limit)]
    env = dict(os.environ)
    if a.threads:  # the same thread budget for the BLAS / OpenMP pools
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(a.threads)
    wall, rss, stdout = timed(cmd, workdir, env)
    try:
        out = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        die(f"sklearn_baseline.py printed no JSON:\n{stdout[-2000:]}")
    scores = out.get("scores", {})
    return {"wall_s": wall, "peak_rss_mib": rss, "stages": out.get("seconds", {}),
            "documents": out.get("docs"), "v_measure": scores.get("v_measure"),
            "ari": scores.get("ari"), "peer": out.get("peer")}


def drop_page_cache():
    """Writes back and drops the page cache, so the next run reads every file from disk.
    False when this user may not (not root, or a container that forbids it)."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, nd=2):
    return "n/a" if x is None else f"{x:.{nd}f}"


def summarize(runs):
    walls = [r["wall_s"] for r in runs]
    rsss = [r["peak_rss_mib"] for r in runs]
    stage_names = []
    for r in runs:
        stage_names += [s for s in r["stages"] if s not in stage_names]
    return {"wall": (med(walls), min(walls), max(walls)),
            "rss": (med(rsss), min(rsss), max(rsss)),
            "stages": {s: med([r["stages"].get(s) for r in runs]) for s in stage_names},
            "v": med([r.get("v_measure") for r in runs]), "ari": med([r.get("ari") for r in runs]),
            "docs": runs[-1].get("documents")}


def main():
    ap = argparse.ArgumentParser(
        description="Speed and peak memory of topicmap vs scikit-learn (TF-IDF + LSA + k-means), "
                    "alternating runs under /usr/bin/time.",
        epilog="Needs ../shared/ beside the checkout. Progress on stderr, table on stdout.")
    ap.add_argument("--pipeline", default="pipelines/arxiv-2025.toml",
                    help="pipeline file; corpus, text, label and filter come from its first [[input]] "
                         "(default: %(default)s, relative to the cwd or the repo root)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="measured runs of each tool, alternating (default: %(default)s)")
    ap.add_argument("--warmup", type=int, default=1,
                    help="unmeasured runs of each tool first, to warm the page cache (default: %(default)s)")
    ap.add_argument("--cold", action=argparse.BooleanOptionalAction, default=True,
                    help="first run each tool once from a cold page cache (drops it; needs root), "
                         "reported on its own line (default: on)")
    ap.add_argument("--k", type=int, default=None, help="clusters (default: the pipeline's [cluster] k, else 20)")
    ap.add_argument("--lsa", type=int, default=100, help="LSA dimensions for both (default: %(default)s)")
    ap.add_argument("--limit", type=int, default=0, help="first N documents only (after the filter)")
    ap.add_argument("--threads", type=int, default=0,
                    help="topicmap --threads N; also OMP/OPENBLAS/MKL_NUM_THREADS=N for sklearn "
                         "(default: all cores)")
    ap.add_argument("--binary", default=DEFAULT_BINARY, help="topicmap binary (default: %(default)s)")
    ap.add_argument("--baseline", default=DEFAULT_BASELINE, help="the peer (default: %(default)s)")
    ap.add_argument("--json", metavar="OUT", help="also write the raw measurements as JSON to OUT")
    a = ap.parse_args()
    if a.repeats < 1 or a.warmup < 0:
        die("--repeats must be at least 1 and --warmup at least 0")

    a.pipeline = resolve_arg_path(a.pipeline)
    a.binary = resolve_arg_path(a.binary)
    a.baseline = resolve_arg_path(a.baseline)
    need_file(TIME, "GNU time (apt-get install time)")
    need_file(a.binary, "topicmap binary (build it with cargo build --release)")
    need_file(a.baseline, "scikit-learn peer", shared=True)
    p = read_pipeline(a.pipeline)
    if a.k is None:
        a.k = p["k"] if isinstance(p["k"], int) else 20

    runs = {"topicmap": [], "sklearn": []}
    cold = {}
    tools = (("topicmap", run_topicmap), ("sklearn", run_sklearn))
    with tempfile.TemporaryDirectory(prefix="topicmap-bench-") as tmp:
        def one(tool, fn, tag):
            work = Path(tmp) / f"{tool}-{tag}".replace("/", "-").replace(" ", "-")
            work.mkdir()
            log(f"[{tag}] {tool} ...")
            r = fn(a, p, work)
            log(f"[{tag}] {tool}: {r['wall_s']:.2f} s, {r['peak_rss_mib']:.0f} MiB, "
                f"V {fmt(r.get('v_measure'), 3)}")
            return r
        if a.cold:
            for tool, fn in tools:
                if not drop_page_cache():
                    die("--cold needs root to drop the page cache (/proc/sys/vm/drop_caches); "
                        "run with --no-cold to skip the cold runs")
                cold[tool] = one(tool, fn, "cold")
        for i in range(a.warmup):
            for tool, fn in tools:
                one(tool, fn, f"warm-up {i + 1}")
        for i in range(a.repeats):
            for tool, fn in tools:
                runs[tool].append(one(tool, fn, f"{i + 1}/{a.repeats}"))

    s = {t: summarize(rs) for t, rs in runs.items()}
    peer = runs["sklearn"][0].get("peer") or "scikit-learn"
    print(f"# topicmap vs {peer}: {p['name']} ({p['csv'].name}), k={a.k}, LSA {a.lsa}"
          f"{f', limit {a.limit}' if a.limit else ''}{f', {a.threads} threads' if a.threads else ''}, "
          f"{a.repeats} measured run(s) each, alternating, after {a.warmup} warm-up run(s) each")
    print("# Note: topicmap does more than the peer: it also writes CSVs, charts and an HTML report, "
          f"and keeps the best of {p['runs']} k-means restarts (cluster.runs) where the peer runs n_init=1.")
    print("# Wall time and peak RSS are of the whole process (for the peer: Python start-up and imports "
          "included); stage seconds are each tool's own timers.")
    print()
    print(f"{'tool':<10} {'docs':>7} {'wall s median (min..max)':>26} {'peak RSS MiB median (min..max)':>32}"
          f" {'V-measure':>9} {'ARI':>6}")
    for t in ("topicmap", "sklearn"):
        w, r = s[t]["wall"], s[t]["rss"]
        print(f"{t:<10} {s[t]['docs'] or 0:>7} {f'{w[0]:.2f} ({w[1]:.2f}..{w[2]:.2f})':>26} "
              f"{f'{r[0]:.0f} ({r[1]:.0f}..{r[2]:.0f})':>32} {fmt(s[t]['v'], 3):>9} {fmt(s[t]['ari'], 3):>6}")
    print()
    print("median seconds per stage (in-process timers):")
    for t in ("topicmap", "sklearn"):
        st = s[t]["stages"]
        parts = ", ".join(f"{k} {v:.2f}" for k, v in st.items() if v is not None and k != "total")
        total = st.get("total", sum(v for v in st.values() if v is not None))
        print(f"  {t:<9} {parts}  (sum {total:.2f})")
    if cold:
        ct, cs = cold["topicmap"], cold["sklearn"]
        print()
        print(f"cold page cache, one run each: topicmap {ct['wall_s']:.2f} s, {ct['peak_rss_mib']:.0f} MiB; "
              f"sklearn {cs['wall_s']:.2f} s, {cs['peak_rss_mib']:.0f} MiB; "
              f"wall {ct['wall_s'] / cs['wall_s']:.2f}x, peak RSS {ct['peak_rss_mib'] / cs['peak_rss_mib']:.2f}x")
    wr = s["topicmap"]["wall"][0] / s["sklearn"]["wall"][0]
    rr = s["topicmap"]["rss"][0] / s["sklearn"]["rss"][0]
    print()
    print(f"topicmap / sklearn (medians): wall {wr:.2f}x, peak RSS {rr:.2f}x")
    print(f"wall ratio {wr:.2f}, rss ratio {rr:.2f}, "
          f"V topicmap {fmt(s['topicmap']['v'], 3)} vs sklearn {fmt(s['sklearn']['v'], 3)}")

    if a.json:
        raw = {"pipeline": str(a.pipeline), "csv": str(p["csv"]), "k": a.k, "lsa": a.lsa,
               "limit": a.limit, "threads": a.threads, "repeats": a.repeats, "warmup": a.warmup,
               "peer": peer, "cold": cold, "runs": runs, "wall_ratio": wr, "rss_ratio": rr}
        Path(a.json).write_text(json.dumps(raw, indent=2) + "\n")
        log(f"raw measurements written to {a.json}")


if __name__ == "__main__":
    main()
