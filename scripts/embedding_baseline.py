#!/usr/bin/env python3
"""Issue 37's comparison: MiniLM sentence embeddings + k-means vs TF-IDF + LSA-100 + k-means.

For each `<set>.csv` (`id,text,label`, as written by scripts/short_text_sets.py) in a folder:
  (a) all-MiniLM-L6-v2 embeddings + scikit-learn KMeans;
  (b) TfidfVectorizer(stop_words="english", min_df=2, max_df=0.5), as in scikit-learn's
      "Clustering text documents using k-means" example, + TruncatedSVD(100) + Normalizer + KMeans.
Each runs with seeds 0, 1, 2 (KMeans n_init=10, and the SVD's random_state, take the seed); it
reports the V-measure and ARI against the labels, per seed and their means.

The embeddings come from a float32 numpy forward pass of the sentence-transformers folder (BERT,
6 layers, max 256 tokens, mean pooling over the attention mask, L2-normalised): weights read
with `safetensors.numpy`, text split by the `tokenizers` package from tokenizer.json. No torch.
Before the sets it checks the pass on sentence-transformers' published example (cosines 0.6660,
0.1046, 0.1411) and warns if it is off by more than 0.001. Throughput is measured in batches of
64 with the texts sorted by token count (the whole set), and on the first 512 texts both
sorted and in file order (unsorted: padding to each batch's longest). Embeddings and timings are
cached in `<folder>/.emb-cache/` under the SHA-256 of the texts, so reruns skip the pass (delete
it to time again). Timings are wall and CPU seconds; `--threads N` caps the BLAS threads.

k comes from `<folder>/sets.json` (else the number of labels); `--k name=N` overrides it.
JSON goes to stdout, a markdown table to stderr. numpy, scikit-learn, scipy, safetensors and
tokenizers are for this comparison only, never topicmap dependencies:

    python3 -m venv /tmp/venv-emb
    /tmp/venv-emb/bin/pip install numpy scikit-learn safetensors tokenizers threadpoolctl
    nice -n 19 /tmp/venv-emb/bin/python scripts/embedding_baseline.py data/short-text --threads 1 > emb.json
"""
import argparse
import csv
import hashlib
import json
import os
import sys
import time

import numpy as np
from safetensors.numpy import load_file
from scipy.special import erf
from sklearn.cluster import KMeans
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import adjusted_rand_score, v_measure_score
from sklearn.preprocessing import Normalizer
from tokenizers import Tokenizer

MODEL = "/tmp/minilm/all_minilm_l6_v2"
EXAMPLE = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
EXPECTED = {"0-1": 0.6660, "0-2": 0.1046, "1-2": 0.1411}


class MiniLM:
    """BERT encoder + mean pooling + L2 normalisation, in float32 numpy."""

    def __init__(self, folder, max_len=256):
        self.tok = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        self.tok.enable_truncation(max_len)
        self.tok.no_padding()
        w = load_file(os.path.join(folder, "model.safetensors"))
        cfg = json.load(open(os.path.join(folder, "config.json")))
        self.heads, self.eps = cfg["num_attention_heads"], cfg["layer_norm_eps"]
        e = "embeddings."
        self.word, self.pos = w[e + "word_embeddings.weight"], w[e + "position_embeddings.weight"]
        self.type0 = w[e + "token_type_embeddings.weight"][0]
        self.ln0 = (w[e + "LayerNorm.weight"], w[e + "LayerNorm.bias"])
        self.layers = []
        for i in range(cfg["num_hidden_layers"]):
            p = lambda n: w[f"encoder.layer.{i}.{n}"]  # noqa: E731
            a = "attention.self."
            self.layers.append({
                "qkv": np.ascontiguousarray(np.concatenate(
                    [p(a + n + ".weight") for n in ("query", "key", "value")]).T),
                "qkv_b": np.concatenate([p(a + n + ".bias") for n in ("query", "key", "value")]),
                "o": np.ascontiguousarray(p("attention.output.dense.weight").T),
                "o_b": p("attention.output.dense.bias"),
                "ln1": (p("attention.output.LayerNorm.weight"), p("attention.output.LayerNorm.bias")),
                "i": np.ascontiguousarray(p("intermediate.dense.weight").T),
                "i_b": p("intermediate.dense.bias"),
                "f": np.ascontiguousarray(p("output.dense.weight").T),
                "f_b": p("output.dense.bias"),
                "ln2": (p("output.LayerNorm.weight"), p("output.LayerNorm.bias")),
            })

    def norm(self, x, ln):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * ln[0] + ln[1]

    def forward(self, ids, mask):
        # Dense layers on a 2-D (tokens, features) array, attention one (document, head) at a
        # time on contiguous arrays: numpy's stacked or strided matmul is 5-40x slower here.
        b, n = ids.shape
        h, d = self.heads, self.word.shape[1] // self.heads
        x = self.norm((self.word[ids] + self.pos[:n] + self.type0).reshape(b * n, h * d), self.ln0)
        bias = np.where(mask[:, None, None, :] > 0, 0.0, -1e9).astype(np.float32)
        for L in self.layers:
            qkv = (x @ L["qkv"] + L["qkv_b"]).reshape(b, n, 3, h, d)
            q, k, v = (np.ascontiguousarray(qkv[:, :, j].transpose(0, 2, 1, 3)).reshape(b * h, n, d)
                       for j in range(3))
            q *= np.float32(1 / np.sqrt(d))
            s = np.empty((b * h, n, n), np.float32)
            for i in range(b * h):
                np.matmul(q[i], k[i].T, out=s[i])
            s4 = s.reshape(b, h, n, n)  # softmax in place
            s4 += bias
            s4 -= s4.max(-1, keepdims=True)
            np.exp(s4, out=s4)
            s4 /= s4.sum(-1, keepdims=True)
            ctx = np.empty((b * h, n, d), np.float32)
            for i in range(b * h):
                np.matmul(s[i], v[i], out=ctx[i])
            ctx = ctx.reshape(b, h, n, d).transpose(0, 2, 1, 3).reshape(b * n, h * d)
            x = self.norm(x + ctx @ L["o"] + L["o_b"], L["ln1"])
            u = x @ L["i"] + L["i_b"]
            u = 0.5 * u * (1.0 + erf(u / np.float32(np.sqrt(2.0))))  # exact GELU, as BERT's "gelu"
            x = self.norm(x + u.astype(np.float32) @ L["f"] + L["f_b"], L["ln2"])
        m = mask.reshape(b, n, 1).astype(np.float32)
        v = (x.reshape(b, n, h * d) * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

    def encode(self, texts, batch=64, sort=True):
        """Embeddings in input order, (wall, CPU) seconds (tokenizing included), real and padded tokens."""
        t0, c0 = time.perf_counter(), time.process_time()
        ids = [e.ids for e in self.tok.encode_batch(list(texts))]
        order = np.argsort([len(i) for i in ids], kind="stable") if sort else np.arange(len(ids))
        out = np.zeros((len(ids), self.word.shape[1]), np.float32)
        padded = 0
        for s in range(0, len(ids), batch):
            idx = order[s:s + batch]
            n = max(len(ids[i]) for i in idx)
            arr = np.zeros((len(idx), n), np.int64)
            mask = np.zeros((len(idx), n), np.int64)
            for r, i in enumerate(idx):
                arr[r, :len(ids[i])], mask[r, :len(ids[i])] = ids[i], 1
            out[idx] = self.forward(arr, mask)
            padded += arr.size
        return out, (time.perf_counter() - t0, time.process_time() - c0), sum(map(len, ids)), padded


def check(model):
    e, _, _, _ = model.encode(EXAMPLE)
    got = {f"{i}-{j}": round(float(e[i] @ e[j]), 4) for i, j in ((0, 1), (0, 2), (1, 2))}
    ok = all(abs(got[k] - EXPECTED[k]) <= 1e-3 for k in got)
    if not ok:
        print(f"WARNING: example cosines {got}, expected {EXPECTED}", file=sys.stderr)
    return {"cosines": got, "expected": EXPECTED, "ok": ok}


def timing(docs, secs):
    wall, cpu = secs
    return {"seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
            "docs_per_s": round(docs / wall, 1), "docs_per_cpu_s": round(docs / cpu, 1)}


def embed(model, name, texts, cache_dir, batch, sample):
    key = hashlib.sha256("\0".join(texts).encode("utf-8")).hexdigest()
    base = os.path.join(cache_dir, f"{name}-{key[:16]}")
    if os.path.exists(base + ".json"):
        return np.load(base + ".npy"), dict(json.load(open(base + ".json")), cached=True)
    info = {"sha256": key, "batch": batch, "sorted": None}
    if os.path.exists(base + ".npy"):  # an earlier run stopped during the timing below
        emb = np.load(base + ".npy")
    else:
        print(f"  embedding {len(texts)} texts", file=sys.stderr, flush=True)
        emb, secs, real, padded = model.encode(texts, batch, sort=True)
        info["sorted"] = dict(timing(len(texts), secs), docs=len(texts), tokens=real, padded_tokens=padded)
        os.makedirs(cache_dir, exist_ok=True)
        np.save(base + ".npy", emb)
    head = texts[:sample]
    for mode in ("sorted", "unsorted"):
        _, secs, r, p = model.encode(head, batch, sort=mode == "sorted")
        info[f"first_{len(head)}_{mode}"] = dict(timing(len(head), secs), tokens=r, padded_tokens=p)
    with open(base + ".json", "w") as f:
        json.dump(info, f, indent=1)
    return emb, dict(info, cached=False)


def scores(features_for_seed, labels, k, seeds, n_init):
    v, ari = [], []
    for seed in seeds:
        x = features_for_seed(seed)
        pred = KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit_predict(x)
        v.append(round(v_measure_score(labels, pred), 4))
        ari.append(round(adjusted_rand_score(labels, pred), 4))
    return {"v_mean": round(float(np.mean(v)), 4), "ari_mean": round(float(np.mean(ari)), 4),
            "v": v, "ari": ari}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--model", default=MODEL)
    ap.add_argument("--sets", help="comma-separated set names (default: every CSV in the folder)")
    ap.add_argument("--k", action="append", default=[], metavar="NAME=N")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--sample", type=int, default=512, help="texts for the sorted/unsorted timing")
    ap.add_argument("--n-init", type=int, default=10)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--threads", type=int, help="BLAS threads (default: the library's)")
    args = ap.parse_args()
    if args.threads:
        from threadpoolctl import threadpool_limits
        threadpool_limits(args.threads)
    seeds = [int(s) for s in args.seeds.split(",")]
    manifest_path = os.path.join(args.folder, "sets.json")
    manifest = json.load(open(manifest_path)) if os.path.exists(manifest_path) else {}
    ks = {n: int(v) for n, v in (kv.split("=") for kv in args.k)}
    names = args.sets.split(",") if args.sets else sorted(
        f[:-4] for f in os.listdir(args.folder) if f.endswith(".csv"))
    model = MiniLM(args.model)
    result = {"model": args.model, "check": check(model), "n_init": args.n_init, "seeds": seeds,
              "threads": args.threads, "sets": {}}
    csv.field_size_limit(sys.maxsize)
    for name in names:
        path = os.path.join(args.folder, name + ".csv")
        if not os.path.exists(path):
            print(f"{path} is missing, skipped", file=sys.stderr)
            continue
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        texts, labels = [r["text"] for r in rows], [r["label"] for r in rows]
        k = ks.get(name) or manifest.get(name, {}).get("k") or len(set(labels))
        print(f"{name}: {len(texts)} docs, k={k}", file=sys.stderr)
        emb, info = embed(model, name, texts, os.path.join(args.folder, ".emb-cache"), args.batch, args.sample)
        minilm = scores(lambda s: emb, labels, k, seeds, args.n_init)
        tfidf = TfidfVectorizer(stop_words="english", min_df=2, max_df=0.5).fit_transform(texts)
        lsa = scores(lambda s: Normalizer(copy=False).fit_transform(
            TruncatedSVD(100, random_state=s).fit_transform(tfidf)), labels, k, seeds, args.n_init)
        result["sets"][name] = {"docs": len(texts), "k": k, "labels": len(set(labels)),
                                "minilm_kmeans": minilm, "tfidf_lsa100_kmeans": lsa, "embedding": info}
    json.dump(result, sys.stdout, indent=1)
    print(file=sys.stdout)
    c = result["check"]["cosines"]
    print(f"\nexample cosines {c['0-1']} / {c['0-2']} / {c['1-2']} (expected 0.6660 / 0.1046 / 0.1411); "
          f"docs/s as wall / CPU\n\n| set | docs | k | MiniLM V | MiniLM ARI | LSA-100 V | LSA-100 ARI "
          f"| docs/s sorted, all | docs/s sorted, first {args.sample} | docs/s unsorted, first {args.sample} |"
          "\n|---|---|---|---|---|---|---|---|---|---|", file=sys.stderr)
    rate = lambda t: f"{t['docs_per_s']} / {t['docs_per_cpu_s']}" if t else "-"  # noqa: E731
    for name, s in result["sets"].items():
        e, m, lsa = s["embedding"], s["minilm_kmeans"], s["tfidf_lsa100_kmeans"]
        head = [v for key, v in e.items() if key.startswith("first_")]
        print(f"| {name} | {s['docs']} | {s['k']} | {m['v_mean']:.3f} | {m['ari_mean']:.3f} | "
              f"{lsa['v_mean']:.3f} | {lsa['ari_mean']:.3f} | {rate(e['sorted'])} | {rate(head[0])} | "
              f"{rate(head[1])} |", file=sys.stderr)


if __name__ == "__main__":
    main()
