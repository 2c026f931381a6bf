#!/usr/bin/env python3
"""How well the document map keeps neighbours and topics: trustworthiness@10 and 2-D silhouette.

Reads a run's documents.csv (doc_id, topic_id, map_x, map_y) and the corpus it came from, builds
scikit-learn's LSA of the same texts (TF-IDF max_df 0.5, min_df 2, sublinear, English stop
words; TruncatedSVD 100, normalised), and prints, for the map:

  trustworthiness@10  the share of each document's 10 nearest map neighbours that are near it
                      in the LSA space too (sklearn.manifold.trustworthiness, on a seeded sample
                      of 3,000 documents);
  silhouette          the 2-D silhouette of the map coordinates by topic (5,000-document sample).

These are the figures issue 21 asks for (at least 0.90 and 0.02 on nips-1987-2018, k = 12).
With --umap it also lays out the same LSA with umap-learn (pip install umap-learn) for
comparison. Needs scikit-learn (python3 -m pip install scikit-learn).

Example (from the repo root):
  target/release/topicmap run pipelines/nips-1987-2018.toml --quiet --out /tmp/n --set cluster.k=12
  python3 scripts/map_quality.py --run /tmp/n \\
      --corpus ../shared/corpora/neurips/nips_1987_2018.csv --text title,abstract --id id
"""
import argparse
import csv
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", required=True, help="the run's output folder (has documents.csv)")
    p.add_argument("--corpus", required=True, help="the corpus CSV the run read")
    p.add_argument("--text", default="title,abstract", help="text columns, comma-separated")
    p.add_argument("--id", default="id", help="the id column")
    p.add_argument("--sample", type=int, default=3000, help="documents for trustworthiness")
    p.add_argument("--umap", action="store_true", help="also score umap-learn on the same LSA")
    a = p.parse_args()
    import numpy as np
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.manifold import trustworthiness
    from sklearn.metrics import silhouette_score
    from sklearn.preprocessing import normalize

    cols = a.text.split(",")
    csv.field_size_limit(sys.maxsize)  # 20 Newsgroups has posts over csv's 128 KiB default
    docs = {}
    with open(a.corpus, encoding="utf-8-sig", newline="") as f:
        for r in csv.DictReader(f):
            docs[r[a.id]] = " ".join(r[c] or "" for c in cols)
    with open(f"{a.run}/documents.csv", encoding="utf-8-sig", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["doc_id"] in docs and r["map_x"] != ""]
    if len(rows) < 20:
        sys.exit(f"map_quality: only {len(rows)} documents of {a.run} have a place and a text")
    y = np.array([int(r["topic_id"]) for r in rows])
    emb = np.array([[float(r["map_x"]), float(r["map_y"])] for r in rows])
    x = TfidfVectorizer(max_df=0.5, min_df=2, sublinear_tf=True, stop_words="english").fit_transform(
        [docs[r["doc_id"]] for r in rows])
    z = normalize(TruncatedSVD(100, random_state=0).fit_transform(x))
    idx = np.random.RandomState(0).choice(len(z), min(a.sample, len(z)), replace=False)

    def score(name, e):
        tw = trustworthiness(z[idx], e[idx], n_neighbors=10)
        s = silhouette_score(e, y, sample_size=min(5000, len(e)), random_state=0)
        print(f"{name:<22} documents {len(e):>7}  trustworthiness@10 {tw:.3f}  silhouette {s:.3f}")

    score("topicmap map", emb)
    if a.umap:
        import umap
        score("umap-learn (same LSA)", umap.UMAP(n_neighbors=15, min_dist=0.1, metric="cosine",
                                                  random_state=0).fit_transform(z))


if __name__ == "__main__":
    main()
