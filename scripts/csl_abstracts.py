#!/usr/bin/env python3
"""Chinese scientific abstracts with their discipline category, from the CSL benchmark.

CSL (Li et al., COLING 2022, github.com/ydli-ai/CSL) publishes, for the same papers in the same
order, `benchmark/ts/test.tsv` (`to title`, abstract, title) and `benchmark/cls_ctg/test.tsv`
(`to category`, title, one of 13 categories: 工学, 医学, 法学, ...). This joins the two by title
and writes `csl.csv` (id, title, abstract, category) and a pipeline, `csl.toml` (title and
abstract as the text, `language = "chinese"`, k = the number of categories), into `--out`.

The two files are read from `--raw` (the repository's files, or the first rows of each, as
`ts_test.tsv` and `cls_ctg_test.tsv`); missing ones are downloaded from the repository at the
commit below. `--limit N` keeps the first N abstracts. The data stays outside git.

    python3 scripts/csl_abstracts.py --raw /tmp/zh-data/raw --out /tmp/zh-data
    topicmap run /tmp/zh-data/csl.toml --out /tmp/csl-run
"""
import argparse
import csv
import hashlib
import os
import urllib.request

COMMIT = "7533806e5946f22d7a8bc601c15758632a21a9c3"
FILES = {"ts_test.tsv": "benchmark/ts/test.tsv", "cls_ctg_test.tsv": "benchmark/cls_ctg/test.tsv"}


def rows(raw, name):
    path = os.path.join(raw, name)
    if not os.path.exists(path):
        url = f"https://raw.githubusercontent.com/ydli-ai/CSL/{COMMIT}/{FILES[name]}"
        urllib.request.urlretrieve(url, path)
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw", required=True, help="folder of ts_test.tsv and cls_ctg_test.tsv")
    ap.add_argument("--out", required=True, help="folder for csl.csv and csl.toml")
    ap.add_argument("--limit", type=int, default=None, help="keep the first N abstracts")
    a = ap.parse_args()
    os.makedirs(a.raw, exist_ok=True)
    category = {}
    for _, title, cat in rows(a.raw, "cls_ctg_test.tsv"):
        category.setdefault(title, cat)
    docs = []
    for i, (_, abstract, title) in enumerate(rows(a.raw, "ts_test.tsv")):
        if title in category:
            docs.append((f"csl-{i}", title, abstract.strip(), category[title]))
    docs = docs[: a.limit]
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "csl.csv")
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "title", "abstract", "category"])
        w.writerows(docs)
    k = len({d[3] for d in docs})
    with open(os.path.join(a.out, "csl.toml"), "w", encoding="utf-8") as f:
        f.write(
            'name = "csl"\ntitle = "CSL abstracts"\n\n[[input]]\npath = "csl.csv"\n'
            'text = ["title", "abstract"]\nid = "id"\nlabel = "category"\n\n'
            f'[tokenize]\nlanguage = "chinese"\n\n[cluster]\nk = {k}\n'
        )
    sha = hashlib.sha256(open(path, "rb").read()).hexdigest()[:16]
    print(f"{path}: {len(docs)} abstracts, {k} categories, sha256 {sha}")


if __name__ == "__main__":
    main()
