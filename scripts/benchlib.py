"""Shared helpers of the benchmark scripts: repo paths, errors and reading a pipeline's input.

The benchmarks mirror a topicmap pipeline with scikit-learn's baseline, so both scripts need the
same reading of the pipeline's first [[input]]: the CSV path, its text columns, the label column
and a label filter (as --only-labels).
"""
import csv
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent          # the checkout (scripts/..)
SHARED = ROOT.parent / "shared"                        # ../shared beside the checkout
# Defaults are written relative to the checkout (see resolve_arg_path), so --help shows the same
# text on every machine.
DEFAULT_BINARY = "target/release/topicmap"
DEFAULT_BASELINE = "../shared/bench/sklearn_baseline.py"


def die(msg):
    print(f"{Path(sys.argv[0]).name}: error: {msg}", file=sys.stderr)
    sys.exit(2)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def need_file(path, what, shared=False):
    if not Path(path).is_file():
        hint = (" The shared corpora and the peer live in ../shared/, which must sit beside the "
                f"checkout ({SHARED})." if shared else "")
        die(f"{what} not found: {path}.{hint}")


def resolve_arg_path(p):
    """A path given on the command line (or a default): as given (relative to the cwd) when it
    exists there, else relative to the checkout."""
    p = Path(p)
    if p.is_absolute() or p.exists():
        return p.resolve()
    return (ROOT / p).resolve()


def pipeline_inputs(path):
    """A pipeline file's config and its [[input]] tables (at least one, else the script stops)."""
    need_file(path, "pipeline file")
    with open(path, "rb") as f:
        cfg = tomllib.load(f)
    inputs = cfg.get("input") or []
    if not inputs:
        die(f"{path} has no [[input]]")
    return cfg, inputs


def read_first_input(path):
    """The pipeline's config, its inputs, and its first input as a dict the peer can mirror:
    name, csv, text, label, only_labels, k."""
    cfg, inputs = pipeline_inputs(path)
    inp = inputs[0]
    if inp.get("format", "csv") not in ("csv", "table"):
        die(f"the first input of {path.name} is format {inp.get('format')!r}; only CSV inputs can be mirrored")
    csv_path = (path.parent / inp["path"]).resolve()
    need_file(csv_path, f"corpus of {path.name}", shared=True)
    text = inp.get("text")
    if isinstance(text, str):
        text = [text]
    if not text:
        with open(csv_path, newline="", encoding="utf-8") as f:
            header = next(csv.reader(f))
        text = ["title", "abstract"] if {"title", "abstract"} <= set(header) else ["text"]
    label = inp.get("label")
    only = None
    flt = inp.get("filter")
    if flt:
        if flt.get("column") != label:
            die(f"{path.name} filters on column {flt.get('column')!r}, not on the label column "
                f"{label!r}; sklearn_baseline.py can only filter on the label (--only-labels), "
                "so the filter can't be mirrored")
        values = flt.get("values") or []
        if any("," in v for v in values):
            die("a filter value contains a comma; --only-labels can't express it")
        only = ",".join(values)
    first = {"name": cfg.get("name", path.stem), "path": path, "csv": csv_path, "text": text,
             "label": label, "only_labels": only, "k": cfg.get("cluster", {}).get("k")}
    return cfg, inputs, first
