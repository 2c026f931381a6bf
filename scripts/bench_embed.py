#!/usr/bin/env python3
"""Issue 37's benchmark: topicmap's three feature spaces on labelled short-text sets, and the
transformer's speed, side by side with a numpy forward pass of the same model in one run.

For every `NAME.csv` (columns id, text, label) in --sets (what scripts/short_text_sets.py
writes), k is the number of labels. topicmap runs with `[cluster] features` = tfidf, embedding
and both (and `[embed] method = "static"` for embedding), one run per seed, and the V-measure
and ARI come from metrics.json. On the first --speed-docs texts of each set, the embed stage's
seconds (vector cache off) give topicmap's docs/s, and the stage's detail its rate without
loading the model (what the numpy timing covers); with --numpy, scripts/embedding_baseline.py's
numpy pass is timed on the same texts right after. Prints a markdown table on stderr and JSON
on stdout.

    python3 scripts/bench_embed.py --sets data/short-text --seeds 0 1 2 [--numpy]
"""
from pathlib import Path
import argparse
import csv
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import DEFAULT_BINARY, ROOT, die, log, need_file, resolve_arg_path

MODES = {
    "default": [],
    "tfidf": ["cluster.features=tfidf"],
    "embedding": ["cluster.features=embedding"],
    "both": ["cluster.features=both"],
    "both-0.75": ["cluster.features=both", "embed.weight=0.75"],
    "both-0.9": ["cluster.features=both", "embed.weight=0.9"],
    "static": ["cluster.features=embedding", "embed.method=static"],
}


def labels(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return len(rows), len({r["label"] for r in rows})


def pipeline(tmp, name, csv_path, k, model):
    p = Path(tmp) / f"{name}.toml"
    p.write_text(
        f'name = "{name}"\n[[input]]\npath = {json.dumps(str(csv_path))}\ntext = ["text"]\n'
        f'id = "id"\nlabel = "label"\n[cluster]\nk = {k}\n[embed]\nmodel = {json.dumps(str(model))}\n'
        f'[map]\nmethod = "linear"\n[charts]\nenabled = false\n'
        f'[output]\ndir = {json.dumps(str(Path(tmp) / "root"))}\nformats = ["csv"]\n')
    return p


def run_topicmap(binary, p, out, sets):
    cmd = [str(binary), "run", str(p), "--out", str(out), "--log-format", "json"]
    for s in sets:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        die(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    m = json.loads((out / "metrics.json").read_text())
    events = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
    embed = [e for e in events if e.get("event") == "stage" and e.get("stage") == "embed"]
    return m["v_measure"], m["ari"], embed[0] if embed else None


def speed(a, binary, model, f, k, tmp):
    """Docs/s of topicmap's transformer (the embed stage, no vector cache) and, with --numpy,
    of scripts/embedding_baseline.py's numpy pass (sorted by length, batches of 64, its own
    fresh cache), on the first --speed-docs texts of `f`, one after the other."""
    folder = tmp / f"speed-{f.stem}"
    folder.mkdir()
    with open(f, newline="", encoding="utf-8") as src:
        rows = list(csv.reader(src))[: a.speed_docs + 1]
    with open(folder / f.name, "w", newline="", encoding="utf-8") as dst:
        csv.writer(dst).writerows(rows)
    n = len(rows) - 1
    p = pipeline(tmp, f"{f.stem}-speed", folder / f.name, min(k, n), model)
    log(f"{f.stem}: topicmap speed on {n} texts")
    _, _, stage = run_topicmap(binary, p, tmp / f"{f.stem}-speed-out",
                               MODES["embedding"] + ["embed.cache=false"])
    # The stage's seconds include loading the model; its detail gives the rate of tokenizing
    # and encoding alone, which is what the numpy pass's timing covers.
    rate = re.search(r" at ([0-9.]+) texts/s", stage["detail"])
    if not rate:
        die(f"the embed stage's line gives no rate (a build before 1602b51?): {stage['detail']!r}")
    out = {"speed_docs": n, "topicmap_docs_per_s": n / stage["seconds"],
           "topicmap_encode_docs_per_s": float(rate.group(1))}
    if a.numpy:
        log(f"{f.stem}: numpy speed on {n} texts")
        cmd = [a.python, str(ROOT / "scripts/embedding_baseline.py"), str(folder), "--model", str(model),
               "--seeds", "0", "--k", f"{f.stem}={min(k, n)}", "--threads", str(a.threads)]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            die(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
        out["numpy_docs_per_s"] = json.loads(proc.stdout)["sets"][f.stem]["embedding"]["sorted"]["docs_per_s"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="data/short-text")
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    ap.add_argument("--model", default=str(Path.home() / ".cache/topicmap/models/all-MiniLM-L6-v2"))
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    ap.add_argument("--speed-docs", type=int, default=1000,
                    help="texts per set for the speed runs (0: no speed runs)")
    ap.add_argument("--numpy", action="store_true",
                    help="also time scripts/embedding_baseline.py's numpy forward pass")
    ap.add_argument("--python", default="/tmp/venv-emb/bin/python",
                    help="a python with numpy, scikit-learn, safetensors and tokenizers")
    ap.add_argument("--threads", type=int, default=2, help="numpy's BLAS threads")
    a = ap.parse_args()
    binary, model, sets = (resolve_arg_path(x) for x in (a.binary, a.model, a.sets))
    need_file(binary, "topicmap binary (cargo build --release)")
    need_file(model / "model.safetensors", "sentence model (topicmap models fetch all-MiniLM-L6-v2)")
    files = sorted(sets.glob("*.csv"))
    if not files:
        die(f"no CSV in {sets} (python3 scripts/short_text_sets.py writes them)")
    # k per set from sets.json when it gives one, else the number of labels.
    meta = json.loads((sets / "sets.json").read_text()) if (sets / "sets.json").is_file() else {}
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            n, k = labels(f)
            k = meta.get(f.stem, {}).get("k", k)
            p = pipeline(tmp, f.stem, f, k, model)
            row = {"set": f.stem, "docs": n, "k": k}
            if a.speed_docs:
                row.update(speed(a, binary, model, f, k, Path(tmp)))
            for mode in a.modes:
                scores = []
                for seed in a.seeds:
                    out = Path(tmp) / f"{f.stem}-{mode}-{seed}"
                    log(f"{f.stem}: {mode}, seed {seed}")
                    scores.append(run_topicmap(binary, p, out, MODES[mode] + [f"cluster.seed={seed}"]))
                row[mode] = {
                    "v": statistics.fmean(s[0] for s in scores),
                    "ari": statistics.fmean(s[1] for s in scores),
                    "v_by_seed": [s[0] for s in scores],
                }
            results.append(row)
    cols = [m for m in a.modes]
    log("| set | docs | k | " + " | ".join(f"{m} V / ARI" for m in cols) + " | topicmap docs/s (stage) | topicmap docs/s (encode) | numpy docs/s |")
    log("|---|---|---|" + "---|" * len(cols) + "---|---|---|")
    for r in results:
        cells = " | ".join(f"{r[m]['v']:.3f} / {r[m]['ari']:.3f}" for m in cols)
        tm = f"{r['topicmap_docs_per_s']:.0f}" if r.get("topicmap_docs_per_s") else "n/a"
        enc = f"{r['topicmap_encode_docs_per_s']:.0f}" if r.get("topicmap_encode_docs_per_s") else "n/a"
        npy = f"{r['numpy_docs_per_s']:.0f}" if r.get("numpy_docs_per_s") else "n/a"
        log(f"| {r['set']} | {r['docs']:,} | {r['k']} | {cells} | {tm} | {enc} | {npy} |")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
