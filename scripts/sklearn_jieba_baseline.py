#!/usr/bin/env python3
"""Chinese peer: scikit-learn's TF-IDF on Python jieba's words + LSA + k-means, on a CSV corpus.

The recipe BERTopic's FAQ gives for Chinese (a TF-IDF vectorizer whose tokenizer is jieba.lcut),
with the LSA and k-means of scikit-learn's gallery example "Clustering text documents using
k-means". It takes the options of ../shared/bench/sklearn_baseline.py and prints the same JSON
object (stage timings, peak memory, external scores), so scripts/bench.py can run it side by
side with topicmap:

  python3 -m pip install jieba scikit-learn
  python3 scripts/bench.py --pipeline pipelines/thucnews.toml \
      --baseline scripts/sklearn_jieba_baseline.py --lsa 100 --repeats 5
"""
import argparse
import csv
import json
import resource
import sys
import time


def read_corpus(path, text_cols, label_col, only_labels, limit):
    csv.field_size_limit(sys.maxsize)
    docs, labels = [], []
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if only_labels and row[label_col] not in only_labels:
                continue
            docs.append(" ".join(row[c] or "" for c in text_cols))
            if label_col:
                labels.append(row[label_col])
            if limit and len(docs) >= limit:
                break
    return docs, labels


def scores(labels, pred):
    from sklearn import metrics
    return {
        "homogeneity": round(metrics.homogeneity_score(labels, pred), 4),
        "completeness": round(metrics.completeness_score(labels, pred), 4),
        "v_measure": round(metrics.v_measure_score(labels, pred), 4),
        "ari": round(metrics.adjusted_rand_score(labels, pred), 4),
        "nmi": round(metrics.normalized_mutual_info_score(labels, pred), 4),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--csv", required=True)
    p.add_argument("--text", default="text", help="text column(s), comma-separated")
    p.add_argument("--label", default=None, help="label column for external scores")
    p.add_argument("--only-labels", default=None, help="keep rows whose label is in this comma list")
    p.add_argument("--limit", type=int, default=0, help="first N rows only")
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--lsa", type=int, default=100, help="TruncatedSVD dimensions (0 = none)")
    p.add_argument("--min-df", type=float, default=5)
    p.add_argument("--max-df", type=float, default=0.5)
    p.add_argument("--n-init", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()

    import jieba
    from sklearn.cluster import KMeans
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer

    jieba.setLogLevel(60)
    t0 = time.perf_counter()
    only = set(a.only_labels.split(",")) if a.only_labels else None
    docs, labels = read_corpus(a.csv, a.text.split(","), a.label, only, a.limit)
    jieba.initialize()  # loads the dictionary: counted with reading
    t_read = time.perf_counter() - t0

    min_df = int(a.min_df) if a.min_df >= 1 else a.min_df
    max_df = int(a.max_df) if a.max_df > 1 else a.max_df
    t0 = time.perf_counter()
    vec = TfidfVectorizer(tokenizer=jieba.lcut, token_pattern=None, min_df=min_df, max_df=max_df)
    X = vec.fit_transform(docs)
    t_tfidf = time.perf_counter() - t0

    t_lsa = 0.0
    if a.lsa:
        t0 = time.perf_counter()
        X = make_pipeline(TruncatedSVD(n_components=a.lsa, random_state=a.seed),
                          Normalizer(copy=False)).fit_transform(X)
        t_lsa = time.perf_counter() - t0

    t0 = time.perf_counter()
    pred = KMeans(n_clusters=a.k, n_init=a.n_init, random_state=a.seed).fit_predict(X)
    t_kmeans = time.perf_counter() - t0

    out = {
        "peer": f"scikit-learn {__import__('sklearn').__version__} + jieba {jieba.__version__}",
        "docs": len(docs), "features": int(len(vec.vocabulary_)), "k": a.k, "lsa": a.lsa,
        "seconds": {"read": round(t_read, 3), "tfidf": round(t_tfidf, 3), "lsa": round(t_lsa, 3),
                    "kmeans": round(t_kmeans, 3),
                    "total": round(t_read + t_tfidf + t_lsa + t_kmeans, 3)},
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    if labels:
        out["scores"] = scores(labels, pred)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
