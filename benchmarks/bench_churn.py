"""Memory under churn: RSS stays flat while a watch keeps changing slices (issue #11).

Plain script (``python benchmarks/bench_churn.py [--devices 10000] [--updates 200]``).  The
seeded inventory (:mod:`workload`) is handed to the watch's :class:`InventoryBuilder` as the API
server would (every object with a ``uid`` and a ``resourceVersion``); then ``--updates`` watch
events each change one slice (a new ``resourceVersion``, a new capacity and a new ``uuid`` on
every device) and the builder makes a new snapshot, the previous one dropped as the server drops
it.  RSS is printed after the first build and every quarter of the updates: what the builder
remembers follows the inventory, not its history, so the figures should stay flat.
"""

from __future__ import annotations

import argparse
import copy
import gc
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=10_000)
    parser.add_argument("--updates", type=int, default=200)
    args = parser.parse_args()

    from draguard.inventory.build import InventoryBuilder
    from workload import make_inventory

    objects = make_inventory(args.devices)
    for i, obj in enumerate(objects):
        obj.setdefault("metadata", {}).update(uid=f"uid-{i}", resourceVersion="1")
    slices = [o for o in objects if o["kind"] == "ResourceSlice"
              and o["spec"].get("devices") and o["spec"]["devices"][0].get("capacity")]  # not the counters-only slices
    builder = InventoryBuilder()
    snapshot = builder.build(objects)
    gc.collect()
    figures = [(0, rss_mb())]
    for update in range(1, args.updates + 1):
        sl = slices[update % len(slices)]
        changed = copy.deepcopy(sl)  # the watch delivers a new object; the old one is let go
        for n, dev in enumerate(changed["spec"]["devices"]):
            for cap in dev.get("capacity", {}).values():
                cap["value"] = f"{(update % 7) + 1}Gi"
            dev.setdefault("attributes", {})["uuid"] = {"string": f"churn-{update}-{n}"}
        changed["metadata"]["resourceVersion"] = str(update + 1)
        objects[objects.index(sl)] = changed
        slices[update % len(slices)] = changed
        snapshot = builder.build(objects)
        if update % max(1, args.updates // 4) == 0:
            gc.collect()
            figures.append((update, rss_mb()))
    print(f"{snapshot.device_count} devices, {args.updates} updates: RSS "
          + ", ".join(f"after {u}: {mb:.0f} MB" for u, mb in figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
