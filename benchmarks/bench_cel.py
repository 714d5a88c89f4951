"""Benchmark of the DRA CEL environment (plain script; prints a table).

10,000 devices: 90% drawn from 20 attribute profiles, 10% random, every device with a unique
``uuid`` and ``index``.  Four typical selectors.  "cold" = a freshly compiled selector (empty
result caches) over all devices; "warm" = the same pass again.  Devices are converted once
(outside the timings, reported separately).  Median of several runs.

Run: .venv/bin/python benchmarks/bench_cel.py
"""

from __future__ import annotations

import random
import statistics
import time

from app.cel import CompiledSelector, make_device
from app.cel.device import CelDevice
from app.cel.selector import _compile
from app.k8s.quantity import parse_quantity

SELECTORS = {
    "E1 driver ==": 'device.driver == "gpu.example.com"',
    "E2 in + attr ==": '"model" in device.attributes["gpu.example.com"] && '
                       'device.attributes["gpu.example.com"].model == "a100"',
    "E3 quantity compareTo": 'device.capacity["gpu.example.com"].memory.compareTo(quantity("10Gi")) >= 0',
    "E4 bool || semver && regex": 'device.allowMultipleAllocations == true || '
                                  '(device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.3")) && '
                                  'device.attributes["x.example.com"].name.matches("^a.*"))',
}
MODELS = ["a100", "h100", "l4", "t4", "v100", "b200"]
VERSIONS = ["1.0.0", "1.2.3", "1.3.0", "2.0.0", "1.2.4-rc.1", "0.9.9"]
MEMORY = ["8Gi", "10G", "16Gi", "24Gi", "40Gi", "80Gi", "141Gi"]
RUNS = 5


def _profile(rng: random.Random) -> tuple[str, bool, dict[str, tuple[str | None, object]], dict[str, str]]:
    driver = "gpu.example.com" if rng.random() < 0.9 else "other.example.com"
    attrs: dict[str, tuple[str | None, object]] = {
        "model": ("string", rng.choice(MODELS)),
        "driverVersion": ("version", rng.choice(VERSIONS)),
        "healthy": ("bool", rng.random() < 0.9),
        "x.example.com/name": ("string", rng.choice(["alpha", "beta", "atlas", "zeta"])),
    }
    return driver, rng.random() < 0.2, attrs, {"memory": rng.choice(MEMORY), "cores": f"{rng.randint(1, 64) * 500}m"}


def build_devices(n: int = 10_000) -> list[CelDevice]:
    rng = random.Random(42)
    profiles = [_profile(rng) for _ in range(20)]
    devices = []
    for i in range(n):
        driver, multi, attrs, caps = profiles[rng.randrange(20)] if rng.random() < 0.9 else _profile(rng)
        a = dict(attrs)
        a["uuid"] = ("string", f"GPU-{rng.getrandbits(64):016x}")
        a["index"] = ("int", i)
        devices.append(make_device(driver, multi, a, {k: parse_quantity(v) for k, v in caps.items()}))
    return devices


def main() -> None:
    t0 = time.perf_counter()
    devices = build_devices()
    convert_ms = (time.perf_counter() - t0) * 1000
    print(f"devices: {len(devices)}, conversion {convert_ms:.0f} ms ({convert_ms * 1000 / len(devices):.1f} µs per device)\n")
    print(f"{'selector':32} {'compile ms':>10} {'cold ms':>9} {'warm ms':>9} {'true':>6} {'errors':>6} {'evals':>6}")
    for name, expr in SELECTORS.items():
        compiles, colds, warms = [], [], []
        trues = errors = evals = 0
        for _ in range(RUNS):
            for d in devices:
                d.memo.clear()
            t = time.perf_counter()
            sel = _compile(expr, True)
            compiles.append(time.perf_counter() - t)
            assert isinstance(sel, CompiledSelector)
            t = time.perf_counter()
            results = [sel.evaluate(d) for d in devices]
            colds.append(time.perf_counter() - t)
            evals = len(sel._cache)
            t = time.perf_counter()
            again = [sel.evaluate(d) for d in devices]
            warms.append(time.perf_counter() - t)
            assert again == results
            trues = sum(r is True for r in results)
            errors = sum(not isinstance(r, bool) for r in results)
        print(f"{name:32} {statistics.median(compiles) * 1000:10.2f} {statistics.median(colds) * 1000:9.1f} "
              f"{statistics.median(warms) * 1000:9.1f} {trues:6} {errors:6} {evals:6}")
    # warm without the per-device memo: projection-cache hits only
    print("\nprojection-cache only (per-device memo cleared before each pass):")
    for name, expr in SELECTORS.items():
        sel = _compile(expr, True)
        assert isinstance(sel, CompiledSelector)
        for d in devices:
            sel.evaluate(d)
        times = []
        for _ in range(RUNS):
            for d in devices:
                d.memo.clear()
            t = time.perf_counter()
            for d in devices:
                sel.evaluate(d)
            times.append(time.perf_counter() - t)
        print(f"{name:32} {statistics.median(times) * 1000:9.1f} ms")
    # RE2: catastrophic-backtracking pattern
    sel = _compile('device.attributes["gpu.example.com"].s.matches("(a+)+$")', True)
    assert isinstance(sel, CompiledSelector)
    d = make_device("gpu.example.com", False, {"s": ("string", "a" * 30 + "b")}, {})
    t = time.perf_counter()
    r = sel.evaluate(d)
    print(f"\n(a+)+$ on 30 a's + b: {r} in {(time.perf_counter() - t) * 1000:.3f} ms")


if __name__ == "__main__":
    main()
