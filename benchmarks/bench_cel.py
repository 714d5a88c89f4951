"""Benchmark of the DRA CEL environment (plain script; prints a table).

10,000 devices: 90% drawn from 20 attribute profiles, 10% random, every device with a unique
``uuid`` and ``index``.  Four typical selectors.  "cold" = a freshly compiled selector (empty
result caches) over all devices; "warm" = the same pass again.  Devices are converted once
(outside the timings, reported separately); the cel-python engine's lazy ``celtypes``
conversion is *inside* the cold timing (fresh devices every run), since that is where it
happens in production.  Production's cel-python engine and the test oracle (the closure
compiler under tests/cel/oracle.py) side by side (ratio celpy/compiled), median of several
runs.  Targets with the cel-python engine: cold ≤ 300 ms, warm ≤ 20 ms per selector.

Run: .venv/bin/python benchmarks/bench_cel.py
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

from draguard.cel import CompiledSelector, make_device
from draguard.cel.device import CelDevice
from draguard.cel.engines import Engine
from draguard.cel.selector import _compile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test oracle, for comparison
from draguard.k8s.quantity import parse_quantity

from tests.cel.oracle import ENGINES

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


def _bench(engine: Engine, expr: str) -> dict[str, float]:
    """Median compile / cold / warm / projection-only times (seconds) and result counts."""
    compiles, colds, warms, projs = [], [], [], []
    trues = errors = evals = 0
    for _ in range(RUNS):
        devices = build_devices()  # fresh devices: empty memos and no cached engine conversion
        t = time.perf_counter()
        sel = _compile(expr, True, engine)
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
        for d in devices:  # projection-cache hits only (per-device memo cleared)
            d.memo.clear()
        t = time.perf_counter()
        for d in devices:
            sel.evaluate(d)
        projs.append(time.perf_counter() - t)
        trues = sum(r is True for r in results)
        errors = sum(not isinstance(r, bool) for r in results)
    med = statistics.median
    return {"compile": med(compiles), "cold": med(colds), "warm": med(warms), "proj": med(projs),
            "true": trues, "errors": errors, "evals": evals}


def main() -> None:
    t0 = time.perf_counter()
    devices = build_devices()
    convert_ms = (time.perf_counter() - t0) * 1000
    print(f"devices: {len(devices)}, conversion {convert_ms:.0f} ms ({convert_ms * 1000 / len(devices):.1f} µs per device)")
    print(f"median of {RUNS} runs; ms per pass over all devices; ratio = celpy / compiled\n")
    names = ["celpy", "compiled"]
    head = f"{'selector':28} {'metric':8}" + "".join(f"{n:>10}" for n in names) + f"{'ratio':>8}"
    print(head)
    print("-" * len(head))
    for name, expr in SELECTORS.items():
        res = {n: _bench(ENGINES[n], expr) for n in names}
        for metric in ("compile", "cold", "warm", "proj"):
            vals = [res[n][metric] * 1000 for n in names]
            ratio = vals[0] / vals[1] if vals[1] else float("nan")
            print(f"{name if metric == 'compile' else '':28} {metric:8}" + "".join(f"{v:10.2f}" for v in vals)
                  + f"{ratio:8.1f}")
        r = res["celpy"]
        agree = all(res[n]["true"] == r["true"] and res[n]["errors"] == r["errors"] for n in names)
        print(f"{'':28} true={r['true']} errors={r['errors']} evaluations={r['evals']} engines agree={agree}")
    # per-evaluation cost without any cache: one device, many fresh evaluations
    print("\nuncached evaluation, µs per (selector, device):")
    dev = build_devices(1)[0]
    for name, expr in SELECTORS.items():
        row = []
        for n in names:
            sel = _compile(expr, True, ENGINES[n])
            assert isinstance(sel, CompiledSelector)
            times = []
            for _ in range(RUNS):
                t = time.perf_counter()
                for _ in range(200):
                    sel._run(dev)
                times.append((time.perf_counter() - t) / 200)
            row.append(statistics.median(times) * 1e6)
        print(f"{name:28} {'':8}" + "".join(f"{v:10.1f}" for v in row) + f"{row[0] / row[1]:8.1f}")
    # RE2: catastrophic-backtracking pattern
    for n in names:
        sel = _compile('device.attributes["gpu.example.com"].s.matches("(a+)+$")', True, ENGINES[n])
        assert isinstance(sel, CompiledSelector)
        d = make_device("gpu.example.com", False, {"s": ("string", "a" * 30 + "b")}, {})
        t = time.perf_counter()
        r = sel.evaluate(d)
        print(f"\n[{n}] (a+)+$ on 30 a's + b: {r} in {(time.perf_counter() - t) * 1000:.3f} ms", end="")
    print()


if __name__ == "__main__":
    main()
