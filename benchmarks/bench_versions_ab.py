"""Benchmark (issue #34: "performance unchanged within noise"): this checkout against an earlier
commit, measured in the same run, pair by pair.

    python benchmarks/bench_versions_ab.py [--base COMMIT] [--pairs N]

The base (default ``ac2cec9``, main before the versions work) is checked out into a temporary git
worktree and run as ``python -m app`` from there, with this checkout's interpreter and packages;
this checkout runs the same way.  Each pair runs both, in alternating order (ABBA), on the same
inputs, whole process (start-up included):

* ``lint-sample``: ``lint`` of the conformance sample's GPU and validation case files against its
  GPU inventory;
* ``lint-workloads``: ``lint`` of the workload scenarios (pods and workloads: the pod checks);
* ``capacity``: ``capacity`` of the demo inventory (the inventory build and class usage).

It prints, per input, the median wall time of each side and the median of the pairs' ratios
(new / base; 1.00 = unchanged; the machine has 2 noisy cores: only the paired median means much).
Both sides answer at their own default target (1.36 for the base, 1.37 here).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "conformance"
WORKLOADS = ROOT / "tests" / "data" / "workloads" / "oracle"


def _inputs() -> dict[str, list[str]]:
    cases = sorted(str(p) for p in (SAMPLE / "cases" / "gpu-shared").glob("*.yaml"))
    cases += sorted(str(p) for p in (SAMPLE / "cases" / "validation").glob("*.yaml"))
    return {
        "lint-sample": ["lint", *cases, "--inventory", str(SAMPLE / "inventories" / "gpu-shared"), "--format", "json",
                        "--fail-on", "never", "--no-cache"],
        "lint-workloads": ["lint", *sorted(str(p) for p in (WORKLOADS / "cases").glob("*.yaml")), "--inventory",
                           str(WORKLOADS / "inventory"), "--format", "json", "--fail-on", "never", "--no-cache"],
        "capacity": ["capacity", "--inventory", str(ROOT / "examples" / "inventory"), "--format", "json"],
    }


def _run(cwd: Path, argv: list[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "app", *argv], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(cwd)}, timeout=600, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cwd.name}: exit {proc.returncode}: {' '.join(argv[:3])}…\n{proc.stderr[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="ac2cec9")
    parser.add_argument("--pairs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="draguard-ab-") as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(base), args.base], cwd=ROOT, check=True,
                       capture_output=True, timeout=120)
        try:
            print(f"base {args.base} vs this checkout, {args.pairs} ABBA pairs per input, whole process")
            for name, argv in _inputs().items():
                _run(base, argv), _run(ROOT, argv)  # warm the file cache and .pyc of both
                olds, news, ratios = [], [], []
                for i in range(args.pairs):
                    if i % 2 == 0:
                        old, new = _run(base, argv), _run(ROOT, argv)
                    else:
                        new, old = _run(ROOT, argv), _run(base, argv)
                    olds.append(old)
                    news.append(new)
                    ratios.append(new / old)
                print(f"{name:15} base {statistics.median(olds):6.3f} s  new {statistics.median(news):6.3f} s  "
                      f"ratio (median of pairs) {statistics.median(ratios):.2f}x  "
                      f"[{min(ratios):.2f}–{max(ratios):.2f}]")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, check=False,
                           capture_output=True, timeout=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
