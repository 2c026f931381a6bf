#!/usr/bin/env python3
"""Topic quality of topicmap over seeds, next to scikit-learn's k-means.

For each pipeline it runs topicmap once per seed (`--set cluster.seed=S`) and
reads DIR/metrics.json; then it runs the scikit-learn peer
(../shared/bench/sklearn_baseline.py) on the same corpus, text columns, label,
filter (as --only-labels) and k, once on raw TF-IDF (--lsa 0) and once with
LSA 100 (--lsa 100), for each seed (--seed S), with the peer's defaults
otherwise (n_init 1, as in scikit-learn's gallery example). topicmap keeps its
pipeline settings (including its k-means restarts, cluster.runs, default 10).

The output is one Markdown pipe table per pipeline (rows: topicmap, sklearn raw,
sklearn LSA-100; columns: V-measure, ARI, homogeneity, completeness, NMI as
mean ± population std over the seeds, and the number of documents scored),
ready to paste into the README.

Needs ../shared/ (corpora and bench/) beside the checkout, scikit-learn for the
peer (python3 -m pip install scikit-learn) and a built binary
(cargo build --release).

Examples (from the repo root):
  python3 scripts/bench_quality.py                     # 20ng-4 and 20ng-all, seeds 0..4
  python3 scripts/bench_quality.py --pipelines pipelines/20ng-4.toml --seeds 0

Progress goes to stderr, the tables to stdout.
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from benchlib import (DEFAULT_BASELINE, DEFAULT_BINARY, ROOT, SHARED, die, log, need_file,
                      read_first_input, resolve_arg_path)
METRICS = [("v_measure", "V-measure"), ("ari", "ARI"), ("homogeneity", "Homogeneity"),
           ("completeness", "Completeness"), ("nmi", "NMI")]


def read_pipeline(path):
    """The pipeline's single input as the peer mirrors it; quality needs a label and a fixed k."""
    cfg, inputs, p = read_first_input(path)
    if len(inputs) != 1:
        die(f"{path.name} has {len(inputs)} inputs; the peer can only mirror a single CSV input")
    if not p["label"]:
        die(f"{path.name} names no label column; quality needs one")
    if not isinstance(p["k"], int):
        die(f"{path.name}: [cluster] k is {p['k']!r}; a fixed integer k is needed to mirror it")
    return p


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        die(f"command failed (exit {proc.returncode}): {' '.join(map(str, cmd))}\n{tail}")
    return proc.stdout


def topicmap_scores(a, p, seed, tmp):
    out = Path(tmp) / f"{p['name']}-seed{seed}"
    cmd = [str(a.binary), "run", str(p["path"]), "--out", str(out), "--quiet",
           "--set", f"cluster.seed={seed}"]
    if a.limit:
        cmd += ["--set", f"input.0.limit={a.limit}"]
    if a.threads:
        cmd += ["--threads", str(a.threads)]
    run(cmd)
    mfile = out / "metrics.json"
    if not mfile.is_file():
        die(f"topicmap wrote no {mfile} (does the pipeline name a label column?)")
    m = json.loads(mfile.read_text())
    return {**{key: m[key] for key, _ in METRICS}, "documents": m.get("documents")}


def sklearn_scores(a, p, seed, lsa):
    cmd = [sys.executable, str(a.baseline), "--csv", str(p["csv"]), "--text", ",".join(p["text"]),
           "--label", p["label"], "--k", str(p["k"]), "--lsa", str(lsa), "--seed", str(seed)]
    if p["only_labels"]:
        cmd += ["--only-labels", p["only_labels"]]
    if a.limit:
        cmd += ["--limit", str(a.limit)]
    stdout = run(cmd)
    try:
        out = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        die(f"sklearn_baseline.py printed no JSON:\n{stdout[-2000:]}")
    return {**{key: out["scores"][key] for key, _ in METRICS}, "documents": out.get("docs"),
            "peer": out.get("peer")}


def mean_std(xs):
    return f"{statistics.fmean(xs):.3f} ± {statistics.pstdev(xs):.3f}"


def docs_cell(rows):
    ds = sorted({r["documents"] for r in rows if r.get("documents") is not None})
    return "/".join(f"{d:,}" for d in ds) or "n/a"


def main():
    ap = argparse.ArgumentParser(
        description="Topic quality (V-measure, ARI, homogeneity, completeness, NMI) of topicmap over "
                    "seeds vs scikit-learn k-means on raw TF-IDF and on LSA 100.",
        epilog="Needs ../shared/ beside the checkout. Progress on stderr, Markdown tables on stdout.")
    ap.add_argument("--pipelines", nargs="+",
                    default=["pipelines/20ng-4.toml", "pipelines/20ng-all.toml"],
                    help="pipeline files with a label column and a fixed k "
                         "(default: %(default)s, relative to the cwd or the repo root)")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4],
                    help="topicmap cluster.seed values (default: %(default)s)")
    ap.add_argument("--sklearn-seeds", nargs="+", type=int, default=None,
                    help="the peer's --seed values (default: the same as --seeds)")
    ap.add_argument("--limit", type=int, default=0, help="first N documents only (after the filter), for quick checks")
    ap.add_argument("--threads", type=int, default=0, help="topicmap --threads N (default: all cores)")
    ap.add_argument("--binary", default=DEFAULT_BINARY, help="topicmap binary (default: %(default)s)")
    ap.add_argument("--baseline", default=DEFAULT_BASELINE, help="the peer (default: %(default)s)")
    ap.add_argument("--json", metavar="OUT", help="also write every per-seed score as JSON to OUT")
    a = ap.parse_args()
    sk_seeds = a.sklearn_seeds if a.sklearn_seeds is not None else a.seeds
    a.binary = resolve_arg_path(a.binary)
    a.baseline = resolve_arg_path(a.baseline)
    need_file(a.binary, "topicmap binary (build it with cargo build --release)")
    need_file(a.baseline, "scikit-learn peer", shared=True)
    pipelines = [read_pipeline(resolve_arg_path(p)) for p in a.pipelines]  # check all before running

    raw = {}
    peer = "scikit-learn"
    with tempfile.TemporaryDirectory(prefix="topicmap-quality-") as tmp:
        for p in pipelines:
            rows = {"topicmap": [], "sklearn raw": [], "sklearn LSA-100": []}
            for s in a.seeds:
                log(f"{p['name']}: topicmap seed {s} ...")
                rows["topicmap"].append(topicmap_scores(a, p, s, tmp))
            for s in sk_seeds:
                for lsa, name in ((0, "sklearn raw"), (100, "sklearn LSA-100")):
                    log(f"{p['name']}: {name} seed {s} ...")
                    r = sklearn_scores(a, p, s, lsa)
                    peer = r.pop("peer") or peer
                    rows[name].append(r)
            raw[p["name"]] = rows

            filt = f", labels {p['only_labels'].replace(',', ', ')}" if p["only_labels"] else ""
            print(f"### {p['name']}: k={p['k']}{filt}{f', limit {a.limit}' if a.limit else ''}")
            print()
            print(f"topicmap seeds {a.seeds}; {peer} seeds {sk_seeds}, n_init 1. Mean ± std (population) over seeds.")
            print()
            print("| | " + " | ".join(h for _, h in METRICS) + " | Documents |")
            print("|---|" + "---:|" * (len(METRICS) + 1))
            for name, rs in rows.items():
                cells = [mean_std([r[key] for r in rs]) for key, _ in METRICS]
                print(f"| {name} | " + " | ".join(cells) + f" | {docs_cell(rs)} |")
            tm = {r["documents"] for r in rows["topicmap"]}
            sk = {r["documents"] for r in rows["sklearn raw"] + rows["sklearn LSA-100"]}
            if len(tm) == 1 and len(sk) == 1 and tm != sk:
                print()
                print(f"topicmap scores {tm.pop():,} documents, the peer {sk.pop():,}: topicmap leaves out rows "
                      "with empty text or no words left after cleaning and the vocabulary bounds "
                      "(listed in its run.json); the peer scores every row.")
            print(flush=True)

    if a.json:
        Path(a.json).write_text(json.dumps({"seeds": a.seeds, "sklearn_seeds": sk_seeds, "peer": peer,
                                            "limit": a.limit, "results": raw}, indent=2) + "\n")
        log(f"per-seed scores written to {a.json}")


if __name__ == "__main__":
    main()
