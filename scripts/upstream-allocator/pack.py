#!/usr/bin/env python3
"""Pack convert.py's output (cases/<case>/..., manifest.json) into one compact file per version.

    .venv/bin/python scripts/upstream-allocator/pack.py --converted DIR --out tests/data/upstream-allocator/1.37

Why: ~300 cases of 4-5 YAML files each, many of them identical between cases (the same classes,
the same node), would be thousands of files and megabytes per recorded version. This writes
OUT/cases.json.gz: every distinct file once ("blobs", keyed by the SHA-256 of its canonical JSON,
as a list of documents) and per case its truth and which blob each of its files is. The test
(tests/upstream/test_upstream_allocator.py) reads it back with tests/upstream/cases.py.
Deterministic (sorted keys, gzip without a timestamp): packing twice writes the same bytes.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import sys

import yaml

FORMAT = 1


def _blob_key(docs: list) -> str:
    return hashlib.sha256(json.dumps(docs, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def pack(converted: str) -> dict:
    with open(os.path.join(converted, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    blobs: dict[str, list] = {}
    cases = []
    for truth in manifest["cases"]:
        case_dir = os.path.join(converted, truth["dir"])
        files = {}
        for root, _, names in os.walk(case_dir):
            for name in sorted(names):
                if not name.endswith(".yaml"):
                    continue
                path = os.path.join(root, name)
                with open(path, encoding="utf-8") as f:
                    docs = [d for d in yaml.safe_load_all(f) if d is not None]
                key = _blob_key(docs)
                blobs.setdefault(key, docs)
                files[os.path.relpath(path, case_dir)] = key
        cases.append({"truth": truth, "files": dict(sorted(files.items()))})
    cases.sort(key=lambda c: c["truth"]["case"])
    first = manifest["cases"][0] if manifest["cases"] else {}
    return {
        "format": FORMAT,
        "recordedVersion": first.get("recordedVersion", ""),
        "recordedFrom": first.get("recordedFrom", ""),
        "skipped": manifest["skipped"],
        "blobs": dict(sorted(blobs.items())),
        "cases": cases,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--converted", required=True, help="convert.py's --out")
    ap.add_argument("--out", required=True, help="writes OUT/cases.json.gz")
    args = ap.parse_args(argv)
    data = pack(args.converted)
    os.makedirs(args.out, exist_ok=True)
    raw = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    target = os.path.join(args.out, "cases.json.gz")
    with open(target, "wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0, compresslevel=9) as gz:
        gz.write(raw)
    print(f"{len(data['cases'])} cases, {len(data['blobs'])} distinct files, {os.path.getsize(target)} bytes -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
