#!/usr/bin/env python3
"""How good topicmap's topic labels and top terms are, measured on the corpus itself.

A label is only useful when it tells its topic apart from the others. A label such as
"model, learning, data" on NeurIPS abstracts names words found in half of the papers, so it says
nothing about the topic. For each pipeline this script runs topicmap once (at a fixed k, with no
comparison to an earlier run), reads DIR/topics.csv and measures:

- generic labels: the share of topic labels holding at least one generic term. A term is generic
  when it is found in more than 20% of the corpus's documents: a single word by the document
  frequency (df) of its stem; a phrase ("chain of thought") only when every one of its words,
  stop words ("of", "the") left out, has such a df. The offending labels go to stderr.
- generic top terms: the same rule over all top-10 terms of all topics, a second indicator.
- NPMI: gensim's c_npmi coherence (sliding window of 10 tokens, gensim's default) of each
  topic's top 10 stems, with the corpus as the reference texts; the mean over topics. In [-1, 1],
  higher is better: the top terms of a topic turn up together.
- TD@10, topic diversity: unique stems among all topics' top-10 stem lists divided by
  10 x the number of topics. 1 means no two topics share a top stem.
- V-measure against the corpus's label column, from DIR/metrics.json (only when the pipeline
  names a label column).

The target for a change to labelling: at most 1 label in 10 holding a term found in over 20% of
the corpus's documents, NPMI not lower than before, V-measure unchanged (labelling must not move
the clustering).

Document frequency and NPMI use one tokenization, independent of topicmap's own: the pipeline's
first [[input]] is read as topicmap reads it (the CSV, its text columns joined by a space, the
optional `filter` and `limit`; rows whose text is empty are skipped), each document is
lowercased and split into Unicode word runs (regex \\w+), pure numbers are dropped and each word
is stemmed with NLTK's English Snowball stemmer. Terms of topics.csv (surface forms, possibly
phrases) are split into words the same way; stop words are gensim's list less "computer". The
tokenized corpus and its gensim Dictionary are cached as a pickle in the temp folder
(label_quality-*.pickle, keyed by the corpus path, size, mtime and reading settings).

Needs ../shared/corpora/ beside the checkout, a built binary (cargo build --release), and
gensim and nltk (python3 -m pip install -q gensim nltk; the stemmer needs no NLTK data).

Examples (from the repo root):
  python3 scripts/label_quality.py        # nips-1987-2018 at k=12, arxiv-2025 at k=20
  python3 scripts/label_quality.py --pipelines pipelines/nips-1987-2018.toml:12 \\
      pipelines/arxiv-2025.toml:20 pipelines/20ng-all.toml:20 --json /tmp/label_quality.json

A pipeline is PATH[:K]; without K the pipeline's own [cluster] k is used (it must be a number).
Progress and the labels go to stderr, the Markdown table to stdout.
"""
import argparse
import csv
import hashlib
import json
import math
import pickle
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import DEFAULT_BINARY, SHARED, die, log, need_file, pipeline_inputs, resolve_arg_path

try:
    from gensim.corpora import Dictionary
    from gensim.models.coherencemodel import CoherenceModel
    from gensim.parsing.preprocessing import STOPWORDS
    from nltk.stem.snowball import SnowballStemmer
except ImportError as e:
    die(f"{e.name} is not installed: python3 -m pip install -q gensim nltk")

DEFAULT_PIPELINES = ["pipelines/nips-1987-2018.toml:12", "pipelines/arxiv-2025.toml:20"]
GENERIC_DF = 0.20   # a term found in more than this share of the documents is generic
TOPN = 10           # top terms per topic for NPMI, TD and the generic-term share
# gensim's list is scikit-learn's (the one topicmap uses) plus a few verbs and "computer", which
# is a content word in these corpora (computer vision, computer graphics).
STOP_WORDS = frozenset(STOPWORDS) - {"computer"}
WORD = re.compile(r"\w+")
# Bump when the tokenization changes, so old caches are not reused.
TOKENIZER_VERSION = 1


class Tokenizer:
    """Lowercase, Unicode word runs, no pure numbers, Snowball stems (memoized per word)."""

    def __init__(self):
        self._stemmer = SnowballStemmer("english")
        self._stems = {}

    @staticmethod
    def words(text):
        return [w for w in WORD.findall(text.lower()) if not w.isdigit()]

    def stem(self, word):
        s = self._stems.get(word)
        if s is None:
            # One string object per stem keeps 15M tokens' lists (and their pickle) small.
            s = self._stems[word] = sys.intern(self._stemmer.stem(word))
        return s

    def stems(self, text):
        return [self.stem(w) for w in self.words(text)]


# --- the pipeline's corpus -------------------------------------------------------------------

def parse_pipeline_arg(arg):
    """PATH[:K] -> (resolved path, K or None)."""
    path, sep, k = arg.rpartition(":")
    if sep and k.isdigit():
        return resolve_arg_path(path), int(k)
    return resolve_arg_path(arg), None


def read_input_spec(path):
    """The first [[input]] of a pipeline file, as this script mirrors it."""
    cfg, inputs = pipeline_inputs(path)
    if len(inputs) > 1:
        log(f"  note: {path.name} has {len(inputs)} inputs; only the first is read for df and NPMI")
    inp = inputs[0]
    fmt = inp.get("format", "csv")
    if fmt not in ("csv", "table") or any(c in inp["path"] for c in "*?["):
        die(f"the first input of {path.name} is not a single CSV file ({inp['path']!r}, format {fmt!r})")
    csv_path = (path.parent / inp["path"]).resolve()
    if not csv_path.is_file():
        die(f"corpus of {path.name} not found: {csv_path}. The shared corpora live in "
            f"../shared/corpora/, which must sit beside the checkout ({SHARED})")
    text = inp.get("text")
    if isinstance(text, str):
        text = [text]
    flt = inp.get("filter")
    return {
        "name": cfg.get("name", path.stem), "path": path, "csv": csv_path, "text": text,
        "time": inp.get("time"),
        "filter": (flt["column"], list(flt.get("values") or [])) if flt else None,
        "limit": inp.get("limit"), "k": cfg.get("cluster", {}).get("k"),
    }


def read_documents(spec):
    """The documents' texts as topicmap ingests them: the filter, then rows with empty text (or an
    empty time cell, when the input has a time column) skipped, then the limit."""
    csv.field_size_limit(sys.maxsize)
    with open(spec["csv"], newline="", encoding="utf-8-sig") as f:
        rows = csv.reader(f)
        header = next(rows, None) or []
        cols = {name: i for i, name in enumerate(header)}
        text_cols = spec["text"]
        if not text_cols:   # topicmap's default
            text_cols = (["title", "abstract"] if {"title", "abstract"} <= cols.keys()
                         else ["abstract"] if "abstract" in cols else ["text"])
        named = text_cols + [c for c in [spec["time"], spec["filter"] and spec["filter"][0]] if c]
        missing = [c for c in named if c not in cols]
        if missing:
            die(f"{spec['csv']} has no column {', '.join(missing)} (it has {', '.join(header)})")
        text_idx = [cols[c] for c in text_cols]
        time_idx = cols[spec["time"]] if spec["time"] else None
        flt_idx, flt_values = (cols[spec["filter"][0]], set(spec["filter"][1])) if spec["filter"] else (None, None)

        def cell(row, i):
            return row[i].strip() if i < len(row) else ""

        texts = []
        for row in rows:
            if flt_idx is not None and cell(row, flt_idx) not in flt_values:
                continue
            if spec["limit"] is not None and len(texts) >= spec["limit"]:
                break
            parts = [p for p in (cell(row, i) for i in text_idx) if p]
            if not parts or (time_idx is not None and not cell(row, time_idx)):
                continue
            texts.append(" ".join(parts))
    return texts


def tokenized_corpus(spec, tokenizer):
    """(stemmed token lists, gensim Dictionary) of the corpus, from the pickle cache when fresh."""
    st = spec["csv"].stat()
    key = json.dumps([str(spec["csv"]), st.st_size, st.st_mtime_ns, spec["text"], spec["time"],
                      spec["filter"], spec["limit"], TOKENIZER_VERSION])
    cache = Path(tempfile.gettempdir()) / f"label_quality-{hashlib.sha1(key.encode()).hexdigest()[:16]}.pickle"
    if cache.is_file():
        t = time.perf_counter()
        try:
            with open(cache, "rb") as f:
                texts, dictionary = pickle.load(f)
            log(f"  corpus: {len(texts):,} documents from the cache {cache} ({time.perf_counter() - t:.1f} s)")
            return texts, dictionary
        except (OSError, pickle.UnpicklingError, EOFError, ValueError) as e:
            log(f"  cache {cache} unreadable ({e}); tokenizing again")
    t = time.perf_counter()
    texts = [tokenizer.stems(d) for d in read_documents(spec)]
    if not texts:
        die(f"{spec['csv']}: no documents left after the filter and skipping empty rows")
    dictionary = Dictionary(texts)
    log(f"  corpus: {len(texts):,} documents, {len(dictionary):,} stems, tokenized in "
        f"{time.perf_counter() - t:.1f} s; cached to {cache}")
    tmp = cache.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        pickle.dump((texts, dictionary), f, protocol=pickle.HIGHEST_PROTOCOL)
    tmp.replace(cache)
    return texts, dictionary


# --- topicmap's report ---------------------------------------------------------------------

def run_topicmap(binary, spec, k, out, sets=()):
    cmd = [str(binary), "run", str(spec["path"]), "--out", str(out),
           "--set", "output.previous=none", "--set", f"cluster.k={k}", "--quiet"]
    for s in sets:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        die(f"topicmap failed (exit {proc.returncode}): {' '.join(cmd)}\n{tail}")
    return cmd


def unescape(cell):
    """topicmap's CSVs put a ' before text cells starting with = + - @ (formula injection)."""
    return cell[1:] if len(cell) > 1 and cell[0] == "'" and cell[1] in "=+-@" else cell


def read_topics(out):
    need_file(out / "topics.csv", "topicmap's topics.csv")
    with open(out / "topics.csv", newline="", encoding="utf-8-sig") as f:
        topics = [{"id": int(r["topic_id"]), "size": int(r["size"]),
                   "label": unescape(r["label"]),
                   "top_terms": [t for t in unescape(r["top_terms"]).split("; ") if t][:TOPN]}
                  for r in csv.DictReader(f)]
    if not topics:
        die(f"{out / 'topics.csv'} has no topics")
    return topics


def read_json(path):
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


# --- the measures ----------------------------------------------------------------------------

def term_df(term, tokenizer, df):
    """(is the term generic, [(word, df share)] of the words that decide it)."""
    words = tokenizer.words(term)
    if len(words) > 1:
        words = [w for w in words if w not in STOP_WORDS]
    shares = [(w, df(tokenizer.stem(w))) for w in words]
    return bool(shares) and all(s > GENERIC_DF for _, s in shares), shares


def topic_stems(terms, tokenizer, dictionary):
    """The top terms as NPMI and TD see them: words, stop words dropped, stemmed, in the corpus'
    dictionary, deduplicated in order, the first TOPN."""
    stems = []
    for term in terms:
        for w in tokenizer.words(term):
            s = tokenizer.stem(w)
            if w not in STOP_WORDS and s in dictionary.token2id and s not in stems:
                stems.append(s)
    return stems[:TOPN]


def npmi_per_topic(stem_lists, texts, dictionary, processes):
    """gensim's c_npmi of each stem list (NaN for a list of fewer than 2 stems)."""
    scored = [i for i, s in enumerate(stem_lists) if len(s) >= 2]
    values = [math.nan] * len(stem_lists)
    if scored:
        cm = CoherenceModel(topics=[stem_lists[i] for i in scored], texts=texts,
                            dictionary=dictionary, coherence="c_npmi", topn=TOPN,
                            processes=processes)
        for i, v in zip(scored, cm.get_coherence_per_topic()):
            values[i] = float(v)
    return values


def measure(spec, k, binary, tokenizer, processes, workdir, sets=()):
    log(f"{spec['name']} (k={k}):")
    texts, dictionary = tokenized_corpus(spec, tokenizer)
    n_docs = dictionary.num_docs

    def df(stem):
        i = dictionary.token2id.get(stem)
        return dictionary.dfs.get(i, 0) / n_docs if i is not None else 0.0

    out = Path(workdir) / spec["name"]
    t = time.perf_counter()
    cmd = run_topicmap(binary, spec, k, out, sets)
    log(f"  topicmap: {time.perf_counter() - t:.1f} s")
    topics = read_topics(out)
    run_info = read_json(out / "run.json")
    ingested = (run_info.get("inputs") or [{}])[0].get("documents")
    if ingested is not None and ingested != n_docs:
        log(f"  warning: topicmap read {ingested:,} documents from the first input, this script "
            f"{n_docs:,}; the df shares are over this script's documents")
    if len(topics) != k:
        log(f"  note: topics.csv has {len(topics)} topics for k={k}")

    for tp in topics:
        tp["generic_label_terms"] = []
        for term in tp["label"].split(", "):
            generic, shares = term_df(term, tokenizer, df)
            if generic:
                tp["generic_label_terms"].append({"term": term, "df": dict(shares)})
        tp["generic_top_terms"] = [t for t in tp["top_terms"] if term_df(t, tokenizer, df)[0]]
        tp["stems"] = topic_stems(tp["top_terms"], tokenizer, dictionary)

    t = time.perf_counter()
    scores = npmi_per_topic([tp["stems"] for tp in topics], texts, dictionary, processes)
    log(f"  NPMI: {time.perf_counter() - t:.1f} s")
    for tp, v in zip(topics, scores):
        tp["npmi"] = None if math.isnan(v) else v
        if tp["npmi"] is None:
            log(f"  warning: topic {tp['id']} has fewer than 2 stems in the corpus; left out of NPMI")
    valid = [tp["npmi"] for tp in topics if tp["npmi"] is not None]

    n = len(topics)
    generic_labels = [tp for tp in topics if tp["generic_label_terms"]]
    all_terms = sum(len(tp["top_terms"]) for tp in topics)
    generic_terms = sum(len(tp["generic_top_terms"]) for tp in topics)
    unique_stems = len({s for tp in topics for s in tp["stems"]})
    v = read_json(out / "metrics.json").get("v_measure")

    show_labels(topics)
    if generic_labels:
        log(f"  generic labels ({len(generic_labels)}/{n}; term: df of its words):")
        for tp in generic_labels:
            why = "; ".join(f"{g['term']}: " + ", ".join(f"{w} {s:.0%}" for w, s in g["df"].items())
                            for g in tp["generic_label_terms"])
            log(f"    {tp['id']:>3}  {tp['label']}  ({why})")
    return {
        "pipeline": spec["name"], "path": str(spec["path"]), "corpus": str(spec["csv"]),
        "command": cmd, "k": k, "topics": n, "documents": n_docs,
        "documents_topicmap_read": ingested,
        "generic_df": GENERIC_DF,
        "generic_labels": len(generic_labels), "generic_labels_share": len(generic_labels) / n,
        "generic_top_terms": generic_terms, "top_terms": all_terms,
        "generic_top_terms_share": generic_terms / all_terms if all_terms else None,
        "npmi": sum(valid) / len(valid) if valid else None,
        "td10": unique_stems / (TOPN * n),
        "v_measure": v,
        "topic_list": [{key: tp[key] for key in ("id", "size", "label", "top_terms", "stems", "npmi",
                                                 "generic_label_terms", "generic_top_terms")}
                       for tp in topics],
    }


# --- output ----------------------------------------------------------------------------------

def show_labels(topics):
    log("  labels (* = holds a generic term):")
    for tp in topics:
        mark = "*" if tp["generic_label_terms"] else " "
        npmi = f"{tp['npmi']:+.3f}" if tp["npmi"] is not None else "  n/a "
        log(f"  {mark} {tp['id']:>3}  {tp['size']:>6,}  NPMI {npmi}  {tp['label']:<45}  "
            f"| {'; '.join(tp['top_terms'])}")


def table(results):
    head = ["pipeline", "k", "documents", "generic labels", "generic top terms",
            "NPMI (c_npmi, top 10)", "TD@10", "V-measure"]
    lines = ["| " + " | ".join(head) + " |", "|:--|--:|--:|--:|--:|--:|--:|--:|"]
    for r in results:
        cells = [
            r["pipeline"], str(r["k"]), f"{r['documents']:,}",
            f"{r['generic_labels']}/{r['topics']} ({r['generic_labels_share']:.0%})",
            f"{r['generic_top_terms_share']:.1%}" if r["generic_top_terms_share"] is not None else "",
            f"{r['npmi']:.4f}" if r["npmi"] is not None else "",
            f"{r['td10']:.3f}",
            f"{r['v_measure']:.4f}" if r["v_measure"] is not None else "",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Run from the repo root; see the module docstring for what is measured.")
    ap.add_argument("--pipelines", nargs="+", default=DEFAULT_PIPELINES, metavar="PATH[:K]",
                    help="pipeline files, each with the k to run it at (default: "
                         f"{' '.join(DEFAULT_PIPELINES)})")
    ap.add_argument("--binary", default=DEFAULT_BINARY, help="topicmap binary (default: %(default)s)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write every number and label as JSON")
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="passed on to topicmap run (repeatable), to compare settings, "
                         "e.g. --set describe.diversity=0")
    ap.add_argument("--processes", type=int, default=1, choices=[1, 2],
                    help="gensim worker processes for NPMI (default: %(default)s)")
    a = ap.parse_args()

    if not SHARED.is_dir():
        die(f"../shared/ not found: the corpora live in {SHARED}, which must sit beside the checkout")
    binary = resolve_arg_path(a.binary)
    need_file(binary, "topicmap binary (cargo build --release)")
    runs = []
    for arg in a.pipelines:
        path, k = parse_pipeline_arg(arg)
        spec = read_input_spec(path)
        k = k if k is not None else spec["k"]
        if not isinstance(k, int) or k < 1:
            die(f"{path.name}: [cluster] k is {spec['k']!r}; give a fixed k as {arg}:K")
        runs.append((spec, k))

    started = time.perf_counter()
    tokenizer = Tokenizer()
    with tempfile.TemporaryDirectory(prefix="label_quality-") as workdir:
        results = [measure(spec, k, binary, tokenizer, a.processes, workdir, a.set) for spec, k in runs]
    elapsed = time.perf_counter() - started
    log(f"done in {elapsed:.0f} s")

    print(table(results))
    if a.json:
        a.json.write_text(json.dumps({"generic_df": GENERIC_DF, "topn": TOPN, "binary": str(binary),
                                      "seconds": round(elapsed, 1), "pipelines": results},
                                     indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        log(f"wrote {a.json}")


if __name__ == "__main__":
    main()
