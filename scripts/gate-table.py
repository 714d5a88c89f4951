#!/usr/bin/env python3
"""A Kubernetes version's DRA feature gates, read from its own source, against draguard's table.

    scripts/gate-table.py v1.37.2 [--against v1.36.3]

Reads ``pkg/features/kube_features.go`` of ``k8s.io/kubernetes@VERSION`` from the Go module cache
(``go mod download`` fetches it when missing) and prints, for the version's minor, each DRA gate's
stage, default and lock as that binary applies them at its own version; then every difference
from ``app/k8s/features.py``'s column for that minor (a gate missing, another stage, default or
lock, a dependency) — the recipe's check (docs/guides/versions.md "Adding a Kubernetes version"). With
``--against`` it also prints which gates changed between the two versions.

Exit status: 0 when draguard's column agrees (or ``--print-only``), 1 when it differs, 2 when the
source cannot be had.  Facts only are read: no upstream code is copied.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
_SPEC = re.compile(
    r'Version: version\.MustParse\("(?P<v>[\d.]+)"\), Default: (?P<d>true|false), PreRelease: featuregate\.(?P<s>\w+)(?P<rest>.*)'
)
_BLOCK = re.compile(r"\n\t(\w+): \{\n(.*?)\n\t\},", re.S)
_DEPS = re.compile(r"\n\t(\w+): \{([\w, ]*)\},")
_STAGES = {"Alpha": "alpha", "Beta": "beta", "GA": "GA", "Deprecated": "deprecated"}


def _features_go(version: str) -> Path:
    env = dict(os.environ, GOFLAGS="-mod=mod")
    out = subprocess.run(["go", "mod", "download", "-json", f"k8s.io/kubernetes@{version}"], capture_output=True,
                         text=True, env=env, cwd="/tmp", check=False, timeout=600)
    try:
        directory = json.loads(out.stdout).get("Dir", "")
    except ValueError:
        directory = ""
    if not directory:  # a version needing a newer Go still lands in the cache: look there
        cache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=False).stdout.strip()
        directory = f"{cache}/k8s.io/kubernetes@{version}"
    path = Path(directory) / "pkg" / "features" / "kube_features.go"
    if not path.is_file():
        raise FileNotFoundError(f"k8s.io/kubernetes@{version}: no {path} ({out.stderr.strip()[-300:]})")
    return path


def _minor(version: str) -> tuple[int, int]:
    parts = version.lstrip("v").split(".")
    return int(parts[0]), int(parts[1])


def gates_at(source: str, minor: tuple[int, int]) -> dict[str, tuple[str, bool, bool]]:
    """gate → (stage, default, locked) at ``minor``, for DRA gates and the gates they depend on.
    A spec with ``MinCompatibilityVersion`` is skipped: a binary runs with compatibility version
    one below its own by default."""
    wanted = re.compile(r"^(DRA\w+|DynamicResourceAllocation|GenericWorkload|NodeDeclaredFeatures)$")
    out: dict[str, tuple[str, bool, bool]] = {}
    for match in _BLOCK.finditer(source):
        name = match.group(1)
        if not wanted.match(name):
            continue
        best: tuple[str, bool, bool] | None = None
        for line in match.group(2).splitlines():
            line = line.split("//", 1)[0]  # "LockToDefault: true in 1.39" in a comment is no lock
            spec = _SPEC.search(line)
            if spec is None or "MinCompatibilityVersion" in spec.group("rest"):
                continue
            if _minor(spec.group("v")) <= minor:
                best = (_STAGES.get(spec.group("s"), spec.group("s")), spec.group("d") == "true",
                        "LockToDefault: true" in spec.group("rest"))
        if best is not None:
            out[name] = best
    return out


def dependencies(source: str) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for match in _DEPS.finditer(source):
        if match.group(1).startswith("DRA") or match.group(1) == "DynamicResourceAllocation":
            out[match.group(1)] = tuple(d.strip() for d in match.group(2).split(",") if d.strip())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("version", help="k8s.io/kubernetes version, e.g. v1.37.2")
    parser.add_argument("--against", help="an earlier version to compare with")
    parser.add_argument("--print-only", action="store_true", help="do not compare with draguard's table")
    args = parser.parse_args(argv)
    try:
        source = _features_go(args.version).read_text()
    except (FileNotFoundError, subprocess.SubprocessError, OSError) as exc:
        print(f"gate-table: {exc}", file=sys.stderr)
        return 2
    minor = _minor(args.version)
    column = f"{minor[0]}.{minor[1]}"
    gates = gates_at(source, minor)
    deps = dependencies(source)
    print(f"# DRA gates of Kubernetes {args.version} at {column}")
    for name, (stage, default, locked) in sorted(gates.items()):
        print(f"{name:48} {stage:10} {'on ' if default else 'off'} {'locked' if locked else ''}".rstrip())
    if args.against:
        try:
            before = gates_at(_features_go(args.against).read_text(), _minor(args.against))
        except (FileNotFoundError, subprocess.SubprocessError, OSError) as exc:
            print(f"gate-table: {exc}", file=sys.stderr)
            return 2
        print(f"\n# changed since {args.against}")
        for name in sorted(set(gates) | set(before)):
            if gates.get(name) != before.get(name):
                print(f"{name}: {before.get(name)} -> {gates.get(name)}")
    if args.print_only:
        return 0
    sys.path.insert(0, str(PROJECT))
    from app.k8s import features

    differences = []
    for name, (stage, default, locked) in sorted(gates.items()):
        state = features._TABLE.get(name, {}).get(column)
        if state is None:
            differences.append(f"{name}: missing from draguard's {column} column ({stage}, default {default})")
        elif (state.stage, state.default, state.locked) != (stage, default, locked):
            differences.append(f"{name}: draguard has {(state.stage, state.default, state.locked)}, "
                               f"{args.version} has {(stage, default, locked)}")
    for name, versions in sorted(features._TABLE.items()):
        if column in versions and name not in gates:
            differences.append(f"{name}: in draguard's {column} column, not in {args.version}")
    for name, needed in sorted(deps.items()):
        ours = set(features._DEPENDENCIES.get(name, ())) - {"DynamicResourceAllocation"}
        theirs = set(needed) - {"DynamicResourceAllocation"}
        if name in gates and ours != theirs:
            differences.append(f"{name}: depends on {sorted(theirs)} in {args.version}, draguard says {sorted(ours)}")
    print(f"\n# draguard's {column} column: " + ("agrees" if not differences else f"{len(differences)} differences"))
    for line in differences:
        print(f"  {line}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
