"""Benchmark: satisfiability of unsatisfiable claims on 1,000 nodes × 8 GPUs.

Plain script (``python benchmarks/bench_satisfy.py``).  Every GPU carries a unique UUID, so no
two devices are identical and node groups cannot share a search; the claims are decided warm
(inventory built and CEL selectors compiled once, as in the webhook) and the median of several
runs is printed.  Target: ≤ 50 ms per unsatisfiable claim.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path as FsPath
from typing import Any

sys.path.insert(0, str(FsPath(__file__).resolve().parents[1]))

from draguard.inventory import Inventory, build_inventory
from draguard.k8s.field import Path
from draguard.k8s.models import ResourceClaimSpec
from draguard.satisfy import check_claim_spec

NODES = 1000
GPUS = 8
RUNS = 7


def make_inventory() -> Inventory:
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu.example.com"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        }
    ]
    for n in range(NODES):
        node = f"node-{n:04d}"
        objects.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": {"zone": f"z{n % 3}"}}})
        devices = []
        for g in range(GPUS):
            devices.append(
                {
                    "name": f"gpu-{g}",
                    "allowMultipleAllocations": True,
                    "attributes": {
                        "model": {"string": "a100"},
                        "index": {"int": g},
                        "uuid": {"string": f"GPU-{n:04d}-{g}"},
                    },
                    "capacity": {
                        "memory": {
                            "value": "40Gi",
                            "requestPolicy": {"default": "5Gi", "validRange": {"min": "5Gi", "step": "5Gi"}},
                        }
                    },
                }
            )
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{node}-gpu"},
                "spec": {
                    "driver": "gpu.example.com",
                    "nodeName": node,
                    "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                    "devices": devices,
                },
            }
        )
    return build_inventory(objects)


def request(name: str, **extra: Any) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}
    exactly.update(extra)
    return {"name": name, "exactly": exactly}


CLAIMS: dict[str, dict[str, Any]] = {
    "memory 50Gi (no device offers it)": {
        "devices": {"requests": [request("gpu", capacity={"requests": {"memory": "50Gi"}})]}
    },
    "count 9 of 8 per node": {"devices": {"requests": [request("gpu", count=9)]}},
    "9 requests x 40Gi over 8 shared GPUs": {
        "devices": {"requests": [request(f"r{i}", capacity={"requests": {"memory": "40Gi"}}) for i in range(9)]}
    },
    "distinct index over 9 requests": {
        "devices": {
            "requests": [request(f"r{i}") for i in range(9)],
            "constraints": [{"distinctAttribute": "gpu.example.com/index"}],
        }
    },
}


def main() -> None:
    t0 = time.perf_counter()
    inventory = make_inventory()
    print(f"inventory: {inventory.node_count} nodes, {inventory.device_count} devices, built in {time.perf_counter() - t0:.2f}s")
    for label, raw in CLAIMS.items():
        spec = ResourceClaimSpec.model_validate(raw)
        notes = check_claim_spec(spec, inventory, base=Path.root("spec"))  # warm-up (compiles, caches)
        times = []
        for _ in range(RUNS):
            t = time.perf_counter()
            notes = check_claim_spec(spec, inventory, base=Path.root("spec"))
            times.append((time.perf_counter() - t) * 1000)
        verdict = ", ".join(f"{n.reason}" for n in notes) or "satisfiable"
        print(f"{label:45s} median {statistics.median(times):7.2f} ms  (min {min(times):.2f}, max {max(times):.2f})  -> {verdict}")
        if notes:
            print(f"    {notes[0].message}")


if __name__ == "__main__":
    main()
