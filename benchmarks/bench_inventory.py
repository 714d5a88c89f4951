"""Inventory at cluster scale: decode, build, incremental rebuild, memory, per-claim check (issue #11).

Plain script (``python benchmarks/bench_inventory.py [--sizes 1000,10000,100000]``).  For each
size the seeded generator (:mod:`workload`) writes the inventory as YAML; then, in a fresh
process per size (so RSS is that size's alone):

* decode: the YAML file → documents (fast path);
* build: documents → snapshot (what start-up and a full relist cost);
* rebuild after one slice changed, with the watch's :class:`InventoryBuilder`;
* RSS after the build;
* the twelve claims of the mix, cold (first check on the snapshot) and warm (answers cached),
  and a stream of distinct claims (nothing cached).

Medians of ``--repeat`` runs; the machine is a shared 2-core VM (other work runs on it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def measure(size: int, repeat: int, tmp: Path) -> dict[str, float]:
    import copy
    import resource

    from draguard.inventory import load_paths
    from draguard.inventory.build import InventoryBuilder
    from draguard.k8s.field import Path as FieldPath
    from draguard.k8s.models import ResourceClaimSpec
    from draguard.satisfy import check_claim_spec
    from workload import CLAIMS, distinct_claims, make_inventory, write_inventory

    objects = make_inventory(size)
    path = tmp / f"inventory-{size}"
    write_inventory(objects, path)
    decode, build, rebuild, cold, warm, distinct = [], [], [], [], [], []
    specs = [ResourceClaimSpec.model_validate(c["spec"]) for c in CLAIMS]
    others = [ResourceClaimSpec.model_validate(c["spec"]) for c in distinct_claims(40)]
    base = FieldPath.root("spec")
    for r in range(repeat):
        t0 = time.perf_counter()
        docs = [d.obj for d in load_paths([str(path)]).documents]
        decode.append(time.perf_counter() - t0)
        for i, obj in enumerate(docs):
            obj["metadata"]["uid"] = f"u{i}"
            obj["metadata"]["resourceVersion"] = "1"
        builder = InventoryBuilder()
        t0 = time.perf_counter()
        inv = builder.build(docs)
        build.append(time.perf_counter() - t0)
        changed = copy.deepcopy(next(o for o in docs if o["kind"] == "ResourceSlice"))
        changed["metadata"]["resourceVersion"] = str(2 + r)
        changed["spec"]["devices"][0]["name"] = "renamed"
        docs2 = [changed if o["metadata"]["name"] == changed["metadata"]["name"] else o for o in docs]
        t0 = time.perf_counter()
        builder.build(docs2)
        rebuild.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for s in specs:
            check_claim_spec(s, inv, base=base)
        cold.append((time.perf_counter() - t0) / len(specs))
        t0 = time.perf_counter()
        for s in specs:
            check_claim_spec(s, inv, base=base)
        warm.append((time.perf_counter() - t0) / len(specs))
        t0 = time.perf_counter()
        for s in others:
            check_claim_spec(s, inv, base=base)
        distinct.append((time.perf_counter() - t0) / len(others))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ms = 1000.0
    return {
        "devices": len(inv.devices), "profiles": inv.profiles.base_count,
        "yaml_mb": round(sum(p.stat().st_size for p in path.iterdir()) / 2**20, 1),
        "decode_s": round(statistics.median(decode), 3), "build_s": round(statistics.median(build), 3),
        "rebuild_one_slice_s": round(statistics.median(rebuild), 3), "max_rss_mb": round(rss),
        "claim_cold_ms": round(statistics.median(cold) * ms, 2), "claim_warm_ms": round(statistics.median(warm) * ms, 3),
        "distinct_claim_ms": round(statistics.median(distinct) * ms, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")  # 100k: bench_memory.py (start-up, RSS, peak)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.one:
            print(json.dumps(measure(args.one, args.repeat, Path(tmp))))
            return 0
        for size in (int(s) for s in args.sizes.split(",")):
            repeat = args.repeat if size <= 10_000 else 1
            out = subprocess.run([sys.executable, __file__, "--one", str(size), "--repeat", str(repeat)],
                                 capture_output=True, text=True, check=True)
            print(f"{size:>7} GPUs: {out.stdout.strip()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
