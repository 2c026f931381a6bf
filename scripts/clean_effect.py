#!/usr/bin/env python3
"""What the clean stage's boilerplate and link rules cost and change, side by side in one run.

For each bundled pipeline with a label column whose input exists (the scale pipelines need
scripts/make_scale_corpus.py's files and are skipped, listed as NOT RUN), topicmap runs twice per
repeat, alternating: with the rules off (`--set clean.boilerplate=false --set clean.links=false`,
which is markup cleaning only, as before the rules) and with the defaults. It reports the median
wall time of each, the median seconds of the `clean` stage (from run.json), the share of the wall
time the rules add, and the V-measure of both (metrics.json; the same for every repeat, as the
runs are deterministic), and what the rules found (run.json `clean`).

Usage: python3 scripts/clean_effect.py [--binary target/release/topicmap] [--repeats 3]
       [--only arxiv-2025 ...] [--work DIR]
Prints a Markdown table on stdout; progress on stderr.
"""
import argparse
import glob
import json
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OFF = ["--set", "clean.boilerplate=false", "--set", "clean.links=false"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def inputs_exist(pipeline):
    cfg = tomllib.loads(pipeline.read_text())
    ins = cfg.get("input", [])
    has_label = any("label" in i for i in ins)
    exist = all(glob.glob(str(pipeline.parent / i["path"])) for i in ins)
    return has_label, exist


def run(binary, pipeline, out, extra):
    t = time.perf_counter()
    subprocess.run([binary, "run", str(pipeline), "--quiet", "--out", str(out), *extra], check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    info = json.loads((out / "run.json").read_text())
    clean = dict(info.get("timings_seconds", [])).get("clean", 0.0)
    v = json.loads((out / "metrics.json").read_text())["v_measure"]
    return wall, clean, v, info.get("clean", {})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=str(ROOT / "target/release/topicmap"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--work")
    a = ap.parse_args()
    work = Path(a.work or tempfile.mkdtemp(prefix="clean-effect-"))
    rows = ["| pipeline | docs | wall off (s) | wall on (s) | clean stage off / on (s) | added | V off | V on | "
            "repeated segments | removed: repeated, rights, URLs, e-mails | left out |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for p in sorted((ROOT / "pipelines").glob("*.toml")):
        if a.only and p.stem not in a.only:
            continue
        has_label, exist = inputs_exist(p)
        if not has_label:
            continue
        if not exist:
            log(f"NOT RUN {p.stem}: its input is missing")
            continue
        res = {"off": [], "on": []}
        for r in range(a.repeats):
            for mode, extra in (("off", OFF), ("on", [])):
                log(f"{p.stem} repeat {r + 1} cleaning {mode}")
                res[mode].append(run(a.binary, p, work / f"{p.stem}-{mode}-{r}", extra))
        med = lambda m, i: statistics.median(x[i] for x in res[m])
        on = res["on"][0][3]
        rem = on.get("removed", {})
        docs = json.loads((work / f"{p.stem}-on-0" / "run.json").read_text())["counts"]["documents"]
        added = (med("on", 0) - med("off", 0)) / med("off", 0) * 100
        rows.append(
            f"| {p.stem} | {docs:,} | {med('off', 0):.2f} | {med('on', 0):.2f} | {med('off', 1):.3f} / {med('on', 1):.3f} | "
            f"{added:+.1f}% | {res['off'][0][2]:.4f} | {res['on'][0][2]:.4f} | {on.get('repeated_found', 0)} "
            f"(min-docs {on.get('min_docs')}) | {rem.get('repeated', 0):,}, {rem.get('rights_statements', 0):,}, "
            f"{rem.get('urls', 0):,}, {rem.get('emails', 0):,} | {rem.get('documents_left_out', 0):,} |")
        print("\n".join(rows), flush=True)
        rows = []


if __name__ == "__main__":
    main()
