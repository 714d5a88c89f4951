#!/usr/bin/env python3
"""The conformance sample's expectations made again by another Kubernetes version's own code.

    scripts/oracle-expectations.py v1.37.2 [--oracle PATH] [--out DIR]

``tests/data/conformance/expected/`` holds what Kubernetes 1.36.2's validation and allocator say
of every case of ``manifest.json`` (made by the team's oracle, ``scripts/oracle/main.go``).  For a later version this
runs that version's oracle (``.cache/kube/<version>/dra-oracle``, built by
``scripts/build-kubernetes.sh``) over the same cases and inventories and writes
``tests/data/conformance/expected-<minor>/`` with the same layout; then it prints, per object,
where the new version's verdict differs from 1.36.2's (validation errors, allocatable) — the
behaviour changes a new target must show.  ``scripts/conformance.py --expected expected-<minor>
--kubernetes-version <minor>`` scores draguard against them.

Exit 0 when the expectations were written (differences are information), 2 when the oracle is
missing or failed.  Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "conformance"


def _minor(version: str) -> str:
    parts = version.lstrip("v").split(".")
    return f"{parts[0]}.{parts[1]}"


def _key(record: dict[str, object]) -> tuple[object, ...]:
    return (record.get("kind"), record.get("namespace"), record.get("name"))


def _verdict(record: dict[str, object]) -> tuple[object, ...]:
    errors = record.get("validationErrors") or []
    return (tuple(sorted(str(e) for e in errors if isinstance(e, str))), record.get("allocatable"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("version", help="the Kubernetes version, e.g. v1.37.2")
    parser.add_argument("--oracle", help="the dra-oracle binary (default .cache/kube/<version>/dra-oracle)")
    parser.add_argument("--out", help="output folder (default tests/data/conformance/expected-<minor>)")
    args = parser.parse_args(argv)
    oracle = Path(args.oracle or ROOT / ".cache" / "kube" / args.version / "dra-oracle")
    if not oracle.is_file():
        print(f"oracle-expectations: no oracle at {oracle} (scripts/build-kubernetes.sh {args.version} oracle)",
              file=sys.stderr)
        return 2
    out = Path(args.out or CORPUS / f"expected-{_minor(args.version)}")
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    changed: list[str] = []
    for entry in manifest["files"]:
        # paths relative to the sample (the oracle runs there): its "source" fields read as expected/'s do
        argv_ = [str(oracle.resolve()), "-all-nodes", "-details", "-allocate-templates",
                 *entry["inventoryFiles"], entry["file"]]
        proc = subprocess.run(argv_, capture_output=True, text=True, timeout=600, check=False, cwd=CORPUS)
        if proc.returncode != 0:
            print(f"oracle-expectations: {entry['file']}: exit {proc.returncode}: {proc.stderr[-500:]}", file=sys.stderr)
            return 2
        target = out / Path(entry["expected"]).relative_to("expected")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(proc.stdout)
        before = {_key(r): r for r in map(json.loads, (CORPUS / entry["expected"]).read_text().splitlines()) if r}
        for record in (json.loads(line) for line in proc.stdout.splitlines() if line.strip()):
            old = before.get(_key(record))
            if old is not None and _verdict(old) != _verdict(record):
                changed.append(f"{entry['file']}: {record.get('kind')} {record.get('name')}: "
                               f"{_verdict(old)} -> {_verdict(record)}")
    shown = out.relative_to(ROOT) if out.resolve().is_relative_to(ROOT) else out
    print(f"oracle-expectations: wrote {shown} ({len(manifest['files'])} case files)")
    print(f"# verdicts that differ from 1.36.2's: {len(changed)}")
    for line in changed:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
