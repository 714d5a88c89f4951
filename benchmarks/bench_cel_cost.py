"""What cel-python really evaluates per second, in Kubernetes CEL cost units (``make bench``).

Why: the API server's 1,000,000 cost limit assumes cel-go; draguard evaluates with cel-python,
which is far slower, so a selector that is legal for the API server can take seconds per
device.  ``app.cel.selector.CELPY_COST_UNITS_PER_SECOND`` (the calibration a review's budget uses
to refuse an evaluation it cannot pay) should stay at or below the median printed here (the loop budget check still stops an
evaluation the calibration let start, so a high calibration costs time, never correctness).

    python benchmarks/bench_cel_cost.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from draguard.cel import CompiledSelector, compile_selector  # noqa: E402
from draguard.cel.selector import CELPY_COST_UNITS_PER_SECOND  # noqa: E402
from draguard.inventory import build_inventory  # noqa: E402

SLICE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
         "spec": {"driver": "d", "nodeName": "n", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "a", "attributes": {"x": {"int": 1}}}]}}


def main() -> int:
    device = build_inventory([SLICE]).devices[0].cel
    rates: list[float] = []
    for n in (10, 20, 30, 40):
        items = "[" + ",".join(str(i) for i in range(n)) + "]"
        for shape, expr in (("n^3", f"{items}.all(x, {items}.all(y, {items}.all(z, x + y + z >= 0)))"),
                            ("n^2 + device", f'{items}.all(x, {items}.all(y, x + y + device.attributes["d"].x >= 0))')):
            compiled = compile_selector(expr)
            assert isinstance(compiled, CompiledSelector), compiled
            runs = []
            for _ in range(3):
                t0 = time.perf_counter()
                compiled._run(device)  # uncached: the result caches are what a new selector text defeats
                runs.append(time.perf_counter() - t0)
            seconds = statistics.median(runs)
            rate = compiled.max_cost / seconds
            rates.append(rate)
            print(f"n={n:2d} {shape:13s} estimated cost {compiled.max_cost:>8,}  {seconds * 1000:8.1f} ms  "
                  f"{rate:>10,.0f} cost units/s")
    low = min(rates)
    print(f"cel-python: median {statistics.median(rates):,.0f}, lowest {low:,.0f} cost units/s; "
          f"calibration in use {CELPY_COST_UNITS_PER_SECOND:,} ({'ok' if low >= CELPY_COST_UNITS_PER_SECOND else 'TOO HIGH'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
