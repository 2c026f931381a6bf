#!/usr/bin/env python3
"""A database-export-like corpus for the cleaning rules: nips 1987-2018 with, per abstract, a 50%
chance of a code URL, an author e-mail, a landing page or a project page, and a 60% chance of one of
eight publisher lines (Springer, Elsevier, CC BY, PMLR, AAAI, Wiley, ...), seeded.

Usage: python3 scripts/make_export_corpus.py --out /tmp/adv/export.csv
then run it (k = 12, seed 42) and judge with ../shared/checks/junk_terms.py RUN_DIR.
"""
import argparse
import csv
import random
from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
PUBS = ["© {y} Springer Nature Switzerland AG.", "Published by Elsevier Ltd.",
        "This is an open access article under the CC BY license (http://creativecommons.org/licenses/by/4.0/).",
        "Copyright {y} by the author(s).", "(c) {y} Wiley Periodicals LLC.", "© {y} The Authors. Published by Elsevier B.V.",
        "Proceedings of Machine Learning Research, PMLR {v}, {y}.",
        "Copyright © {y}, Association for the Advancement of Artificial Intelligence (www.aaai.org). All rights reserved."]
EXTRAS = ["Code is available at https://github.com/{u}/{r}.", "Corresponding author: {u}@cs.{r}.edu",
          "Available at papers.example.org/abs/{n}.", "See https://papers.example.org/paper/{n} for details.",
          "Project page: {u}.github.io/{r}"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    random.seed(a.seed)
    src = SHARED / "corpora/neurips/nips_1987_2018.csv"
    w = csv.writer(open(a.out, "w", newline=""))
    w.writerow(["id", "year", "title", "abstract"])
    for r in csv.DictReader(open(src, encoding="utf-8-sig")):
        text = r["abstract"]
        if random.random() < 0.5:
            extra = random.choice(EXTRAS)
            u = random.choice(["alice", "bob", "lab", "team"]) + str(random.randint(1, 999))
            text += " " + extra.format(u=u, r=random.choice(["kern", "graph", "nets", "mit"]),
                                       n=random.randint(1000, 9999))
        if random.random() < 0.6:
            text += " " + random.choice(PUBS).format(y=r["year"], v=random.randint(1, 200))
        w.writerow([r["id"], r["year"], r["title"], text])


if __name__ == "__main__":
    main()
