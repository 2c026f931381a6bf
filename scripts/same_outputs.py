#!/usr/bin/env python3
"""Byte-identity harness: run two topicmap binaries on every bundled pipeline and compare outputs.

For a refactor that must not change any output (issue 22), or a feature that must leave some
pipelines alone (English results under issue 20). Each case runs with binary A and binary B into
its own folder under --work; then every file of the two folders is compared byte for byte, except
the fields that carry the run's date or timings:

- run.json: `started_at`, `timings_seconds`, `peak_rss_mib_after_stage` (and `finished_at`) are
  dropped before comparing;
- report.xlsx: compared member by member, without `docProps/core.xml` (the workbook's creation
  date) and with the About sheet's run date line masked;
- report.html, summary.md: the lines holding the run date are masked (any 2026-style ISO stamp).

Cases: every pipelines/*.toml whose inputs exist (the scale pipelines need
scripts/make_scale_corpus.py's files; missing ones are listed as NOT RUN, never passed), a refit
of neurips-trends into a history folder (drift), a streaming run of arxiv-2025
(fit-sample), `check`, `assign` on the NeurIPS seeds with aggregates, and `topicmap report` from
those aggregates.

Usage: python3 scripts/same_outputs.py --a OLD_BINARY --b NEW_BINARY [--work DIR] [--only NAME ...]
Exit 0 when every case that ran is identical; 1 otherwise (the differing files are listed).
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATE = re.compile(rb"\d{4}-\d{2}-\d{2}(?:T|<small>| )\d{2}:\d{2}(?::\d{2})?(?:Z| UTC)?|\d{8}T\d{6}Z")
RUN_JSON_DROP = {"started_at", "finished_at", "timings_seconds", "peak_rss_mib_after_stage"}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def pipeline_inputs_exist(path):
    import tomllib
    cfg = tomllib.loads(path.read_text())
    for inp in cfg.get("input", []):
        p = Path(inp["path"])
        p = p if p.is_absolute() else path.parent / p
        if "*" not in str(p) and not p.exists():
            return False, str(p)
    return True, ""


def cases(with_10m):
    """(name, list of (argv, stdout_file or None), or None and why it is not run)."""
    out = []
    for toml in sorted((ROOT / "pipelines").glob("*.toml")):
        ok, missing = pipeline_inputs_exist(toml)
        name = toml.stem
        if name.endswith("-10M") and not with_10m:
            out.append((name, None, "a 10M-document run takes minutes: pass --with-10m"))
            continue
        if not ok:
            out.append((name, None, f"input {missing} missing"))
            continue
        out.append((name, [(["run", str(toml), "--quiet", "--out", "{d}/run"], None)], None))
    trends = ROOT / "pipelines/neurips-trends.toml"
    out.append(("refit-drift", [
        (["run", str(trends), "--quiet", "--set", "output.dir={d}/hist"], None),
        (["run", str(trends), "--quiet", "--set", "output.dir={d}/hist", "--set", "cluster.seed=7"], None),
    ], None))
    arxiv = ROOT / "pipelines/arxiv-2025.toml"
    ok, missing = pipeline_inputs_exist(arxiv)
    if ok:
        out.append(("stream-arxiv", [(["run", str(arxiv), "--quiet", "--out", "{d}/run",
                                       "--set", "cluster.fit-sample=20000"], None)], None))
    else:
        out.append(("stream-arxiv", None, f"input {missing} missing"))
    n26 = ROOT / "pipelines/neurips-2026.toml"
    seeds = sorted((ROOT / "pipelines/data/neurips-2026").glob("*.txt"))
    out.append(("check", [(["check", str(n26), "--quiet"], "check.out")], None))
    out.append(("assign-report", [
        (["run", str(n26), "--quiet", "--out", "{d}/fit"], None),
        (["assign", "--model", "{d}/fit", "--quiet", "--out", "{d}/assigned", "--aggregates"]
         + [str(s) for s in seeds], None),
        (["report", str(n26), "--quiet", "--model", "{d}/fit", "--aggregates",
          "{d}/assigned/aggregates", "--out", "{d}/report"], None),
    ], None))
    return out


def run_case(binary, steps, d):
    d.mkdir(parents=True, exist_ok=True)
    for argv, stdout_name in steps:
        argv = [a.replace("{d}", str(d)) for a in argv]
        res = subprocess.run([binary] + argv, capture_output=True, cwd=ROOT)
        if res.returncode != 0:
            raise RuntimeError(f"{binary} {' '.join(argv)} exited {res.returncode}: "
                               f"{res.stderr.decode(errors='replace')[-800:]}")
        if stdout_name:
            (d / stdout_name).write_bytes(res.stdout)


def drop_dated(j):
    if isinstance(j, dict):
        return {k: drop_dated(v) for k, v in j.items() if k not in RUN_JSON_DROP}
    if isinstance(j, list):
        return [drop_dated(v) for v in j]
    return j


def normalise(path, data, case_dir):
    # Paths to the case's own folder differ between A and B (a/NAME, b/NAME).
    data = data.replace(str(case_dir).encode(), b"<case>")
    name = path.name
    if name == "run.json":
        return DATE.sub(b"<date>", json.dumps(drop_dated(json.loads(data)), sort_keys=True).encode())
    if name in ("report.html", "summary.md"):
        return DATE.sub(b"<date>", data)
    return data


def xlsx_members(path, case_dir):
    with zipfile.ZipFile(path) as z:
        return {n: DATE.sub(b"<date>", z.read(n).replace(str(case_dir).encode(), b"<case>"))
                for n in z.namelist() if n != "docProps/core.xml"}


def files(d):
    # The history layout's run folders are named by their start time: compare them in order.
    out = {}
    for p in sorted(d.rglob("*")):
        if p.is_file() or (p.is_symlink() and not p.exists()):
            rel = str(p.relative_to(d))
            rel = re.sub(r"\d{8}T\d{6}Z(-\d+)?", "<stamp>", rel)
            while rel in out:
                rel += "'"
            out[rel] = p
    return out


def compare(da, db):
    fa, fb = files(da), files(db)
    diffs = sorted(set(fa) ^ set(fb))
    diffs = [f"only in one: {x}" for x in diffs]
    for rel in sorted(set(fa) & set(fb)):
        pa, pb = fa[rel], fb[rel]
        if pa.name.endswith(".xlsx"):
            same = xlsx_members(pa, da) == xlsx_members(pb, db)
        else:
            same = normalise(pa, pa.read_bytes(), da) == normalise(pb, pb.read_bytes(), db)
        if not same:
            diffs.append(f"differs: {rel}")
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", required=True, help="the reference binary")
    ap.add_argument("--b", default=str(ROOT / "target/release/topicmap"), help="the binary under test")
    ap.add_argument("--work", default="/tmp/topicmap-same-outputs")
    ap.add_argument("--only", nargs="*", help="run only these cases")
    ap.add_argument("--with-10m", action="store_true", help="also run the 10M streaming pipeline")
    args = ap.parse_args()
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    bad, not_run, same = [], [], []
    for name, steps, why in cases(args.with_10m):
        if args.only and name not in args.only:
            continue
        if steps is None:
            not_run.append(f"{name}: {why}")
            log(f"NOT RUN   {name}: {why}")
            continue
        da, db = work / "a" / name, work / "b" / name
        try:
            run_case(args.a, steps, da)
            run_case(args.b, steps, db)
        except RuntimeError as e:
            bad.append(f"{name}: {e}")
            log(f"FAILED    {name}: {e}")
            continue
        diffs = compare(da, db)
        if diffs:
            bad.append(f"{name}: " + "; ".join(diffs[:20]))
            log(f"DIFFERENT {name}: " + "; ".join(diffs[:20]))
        else:
            n = len(files(da))
            same.append(name)
            log(f"identical {name} ({n} files)")
    print(json.dumps({"identical": same, "different": bad, "not_run": not_run}, indent=1))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
