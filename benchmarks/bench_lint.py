"""Benchmark: linting the validation part of the conformance sample (issue #4: under 1 s of work).

Plain script (``python benchmarks/bench_lint.py``).  Decodes the sample's validation cases and the
gpu-shared inventory once, then times the whole lint pipeline (structural decoding, validation,
CEL compilation from a cold cache on the first run, satisfiability, rendering to JSON) in-process,
after start-up.  Prints the first (cold) run and the median of the warm runs.  Also times the
``draguard lint`` command end to end, start-up included, for comparison.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from draguard.cel.selector import clear_caches  # noqa: E402
from draguard.inventory import build_inventory, load_paths  # noqa: E402
from draguard.k8s.decode import INVENTORY_KINDS  # noqa: E402
from draguard.report.render import render  # noqa: E402
from draguard.review.pipeline import review_documents  # noqa: E402

SAMPLE = ROOT / "tests" / "data" / "conformance"  # the repository's copy of the sample
RUNS = 7
TARGET_MS = 1000.0


def main() -> int:
    cases = sorted(str(p) for p in (SAMPLE / "cases" / "validation").glob("*.yaml"))
    inventory_dir = str(SAMPLE / "inventories" / "gpu-shared")
    if not cases:
        print(f"conformance sample not found under {SAMPLE}; nothing to measure")
        return 0
    decoded = load_paths(cases)
    inv_docs = load_paths([inventory_dir]).documents
    inventory_objects = [d.obj for d in inv_docs if d.kind in INVENTORY_KINDS]

    def once() -> float:
        started = time.perf_counter()
        inventory = build_inventory(inventory_objects)
        review = review_documents(decoded.documents, inventory=inventory, inventory_objects=inventory_objects,
                                  decode_findings=decoded.findings)
        render(review, "json")
        return (time.perf_counter() - started) * 1000

    clear_caches()
    cold = once()
    warm = [once() for _ in range(RUNS)]
    objects = len(decoded.documents)

    cli_runs = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "draguard", "lint", *cases, "--inventory", inventory_dir, "--format", "json"],
                       capture_output=True, check=False, cwd=ROOT)
        cli_runs.append((time.perf_counter() - started) * 1000)

    print(f"lint of the conformance validation cases ({objects} objects, {len(cases)} files)")
    print(f"  in-process, cold CEL cache : {cold:8.1f} ms")
    print(f"  in-process, warm (median {RUNS}): {statistics.median(warm):8.1f} ms  (min {min(warm):.1f}, max {max(warm):.1f})")
    print(f"  draguard lint command, start-up included (median 3): {statistics.median(cli_runs):8.1f} ms")
    ok = cold < TARGET_MS
    print(f"  target: under {TARGET_MS:.0f} ms of work after start-up -> {'OK' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
