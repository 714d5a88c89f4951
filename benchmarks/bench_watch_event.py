"""What one ResourceClaim watch event costs the event loop (issue #21, figure 4b).

Plain script (``python benchmarks/bench_watch_event.py [--claims 50000] [--events 2000] [--repeat 5]``).
Why: every claim event of the watch is read and applied on the event loop that also answers the
reviews; a review that arrives while an event is applied waits behind it, so the per-event
cost is what moves the review p99 of ``bench_state.py`` under churn.  This measures that cost in
process, without HTTP: a :class:`~app.inventory.kube.KubeInventory` holding the 10k-device
inventory and ``--claims`` allocated claims (``bench_state.py``'s), fully built, then the churn
events of ``bench_state.py`` as the fake API server writes them (one JSON line each) — each line
decoded as the watch stream does and applied as the watch does.  Reported per event (median of
``--repeat`` runs): the whole (line → applied), and its parts — JSON decode, the claim's
reduction, the live claims' update.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_state import allocated_claim, shareable_devices  # noqa: E402
from workload import make_inventory  # noqa: E402

from app.inventory import reflector  # noqa: E402
from app.inventory.kube import KubeInventory, _Stream  # noqa: E402
from app.inventory.kubeconfig import KubeConfig  # noqa: E402


def filled(devices: int, claims: list[dict[str, Any]]) -> KubeInventory:
    """A watcher that has listed ``make_inventory(devices)`` and ``claims`` and built its snapshot."""
    kube = KubeInventory(KubeConfig(server="https://127.0.0.1:1"))
    streams: dict[str, _Stream] = kube._streams
    for obj in make_inventory(devices):
        stream = next(s for s in streams.values() if s.resource.kind == obj["kind"])
        kube._keep(stream, obj["metadata"]["name"], obj)
    for stream in streams.values():
        stream.listed = True
    claim_stream = streams["resourceclaims"]
    for raw in claims:
        reduced = kube._reducer.claim(raw)
        assert reduced is not None
        claim_stream.objects[f"{reduced.namespace}/{reduced.name}"] = reduced
    kube._dirty = asyncio.Event()
    snapshot = asyncio.run(kube._full_build())
    assert kube._live is not None and snapshot.cluster.allocations.claims == len(claims)
    return kube


def event_lines(claims: list[dict[str, Any]], devices: list[Any], count: int, seed: int) -> list[str]:
    """``count`` re-allocations as ``bench_state.py``'s churn makes them, as watch lines."""
    rng = random.Random(seed)
    lines = []
    for n in range(count):
        i = rng.randrange(len(claims))
        obj = allocated_claim(i, devices[rng.randrange(len(devices))])
        obj["metadata"]["resourceVersion"] = str(10_000_000 + seed * count + n)
        lines.append(json.dumps({"type": "MODIFIED", "object": obj}) + "\n")
    return lines


_BYTES = hasattr(reflector, "_decode_line")
"""Whether the watch reads bytes (this checkout) or httpx's text lines (before: the script also
runs against an older checkout, for A/B)."""
decode_line: Callable[[Any], Any] = getattr(reflector, "_decode_line", json.loads)


async def _aiter(lines: list[str]) -> AsyncIterator[Any]:
    for line in lines:
        yield line.encode() if _BYTES else line


def per_event_us(run: Callable[[], None], count: int) -> float:
    t0 = time.perf_counter()
    run()
    return (time.perf_counter() - t0) / count * 1e6


def measure_parts(lines: list[str], kube: KubeInventory, live: Any) -> dict[str, float]:
    """Microseconds per event of each part of the path, one part after the other over ``lines``."""
    raw = [x.encode() for x in lines] if _BYTES else lines
    decoded: list[dict[str, Any]] = []
    reduced: list[Any] = []
    return {
        "json": per_event_us(lambda: decoded.extend(decode_line(x) for x in raw), len(lines)),
        "reduce": per_event_us(lambda: reduced.extend(kube._reducer.claim(e["object"]) for e in decoded), len(lines)),
        "live": per_event_us(lambda: [live.put((c.namespace, c.name), c) for c in reduced], len(lines)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=10_000)
    parser.add_argument("--claims", type=int, default=50_000)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one run of the whole path")
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    objects = make_inventory(args.devices)
    devices = shareable_devices(objects)
    claims = [allocated_claim(i, devices[i % len(devices)]) for i in range(args.claims)]
    kube = filled(args.devices, claims)
    stream = kube._streams["resourceclaims"]
    live = kube._live
    assert live is not None

    def whole(lines: list[str]) -> Callable[[], None]:
        async def go() -> None:
            async for event in reflector._events(_aiter(lines)):
                kube._apply(stream, event)

        return lambda: asyncio.run(go())

    results: dict[str, list[float]] = {"whole": [], "json": [], "reduce": [], "live": []}
    for r in range(args.repeat):
        lines = event_lines(claims, devices, args.events, seed=2 * r)
        results["whole"].append(per_event_us(whole(lines), args.events))
        for part, took in measure_parts(event_lines(claims, devices, args.events, seed=2 * r + 1), kube, live).items():
            results[part].append(took)
    if args.profile:
        import cProfile
        import pstats

        lines = event_lines(claims, devices, args.events, seed=99)
        prof = cProfile.Profile()
        prof.runcall(whole(lines))
        pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
    parts = ", ".join(f"{k} {statistics.median(v):.0f} us" for k, v in results.items() if k != "whole")
    print(f"claim watch event, {args.claims:,} claims over {args.devices} GPUs (+NICs): "
          f"{statistics.median(results['whole']):.0f} us per event line applied (median of {args.repeat} runs of "
          f"{args.events}: {', '.join(f'{v:.0f}' for v in results['whole'])}); parts: {parts}; "
          f"load average {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
