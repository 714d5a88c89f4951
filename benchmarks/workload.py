"""Seeded workload generator for the benchmarks: inventories of 1k–100k devices and claims.

Why generated and seeded: the figures in RESULTS.md must be reproducible by a reader on their
own machine, and the inventory must look like a real DRA cluster rather than 10,000 copies of
one device — several GPU models with different request policies, a unique ``uuid`` on every
device (so no two devices are byte-identical), partitionable GPUs whose partitions consume
shared counters, and NICs on different subnets for ``distinctAttribute`` claims.

Used as a module (``make_inventory(devices=10_000)``) or as a script that writes YAML:
``python benchmarks/workload.py --nodes 1000 --gpus 8 --out /tmp/inventory-1000.yaml``.
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
from typing import Any

import yaml

__all__ = ["CLAIMS", "claim", "distinct_claims", "make_inventory", "node_count_for", "write_inventory"]

API = "resource.k8s.io/v1"
# (model, memory, request policy) — like the examples: shareable A100s on a 5Gi grid, A40s capped at
# 16Gi per share, dedicated H100s, L4s with a list of valid values.
MODELS: list[tuple[str, str, dict[str, Any] | None, bool]] = [
    ("A100", "40Gi", {"default": "5Gi", "validRange": {"min": "5Gi", "step": "5Gi"}}, True),
    ("A40", "48Gi", {"default": "4Gi", "validRange": {"min": "4Gi", "max": "16Gi", "step": "4Gi"}}, True),
    ("H100", "80Gi", None, False),
    ("L4", "24Gi", {"default": "6Gi", "validValues": ["6Gi", "12Gi", "24Gi"]}, True),
]
PARTITIONED_EVERY = 10  # every tenth node has partitionable GPUs (counters) instead of whole ones
NICS_PER_NODE = 2


def node_count_for(devices: int, gpus: int = 8) -> int:
    return max(1, devices // gpus)


def _classes() -> list[dict[str, Any]]:
    def cls(name: str, expr: str) -> dict[str, Any]:
        return {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": name},
                "spec": {"selectors": [{"cel": {"expression": expr}}]}}

    return [
        cls("gpu.example.com", 'device.driver == "gpu.example.com"'),
        cls("shared-gpu.example.com", 'device.driver == "gpu.example.com" && device.allowMultipleAllocations'),
        cls("nic.example.com", 'device.driver == "nic.example.com"'),
    ]


def _gpu(rng: random.Random, node: int, g: int, model: tuple[str, str, dict[str, Any] | None, bool]) -> dict[str, Any]:
    name, memory, policy, shared = model
    capacity: dict[str, Any] = {"value": memory}
    if policy is not None:
        capacity["requestPolicy"] = copy.deepcopy(policy)  # no YAML anchors in the output
    dev: dict[str, Any] = {
        "name": f"gpu-{g}",
        "attributes": {
            "model": {"string": name},
            "index": {"int": g},
            "driverVersion": {"version": "550.54.15"},
            "uuid": {"string": f"GPU-{rng.getrandbits(64):016x}-{node:06d}-{g}"},
        },
        "capacity": {"memory": capacity},
    }
    if shared:
        dev["allowMultipleAllocations"] = True
    return dev


def _partitioned_slices(rng: random.Random, node: str, n: int, gpus: int) -> list[dict[str, Any]]:
    """One physical 80Gi GPU per two device slots: a whole device and a half, sharing counters.

    Two slices of one pool, as Kubernetes 1.35+ requires (a slice holds either ``sharedCounters``
    or ``devices``, never both): the counter sets in one, the devices that consume them in the other.
    """
    counters = []
    devices = []
    for g in range(0, gpus, 2):
        cset = f"gpu-{g // 2}-counters"
        counters.append({"name": cset, "counters": {"memory": {"value": "80Gi"}}})
        for part, size in (("whole", "80Gi"), ("half", "40Gi")):
            devices.append({
                "name": f"gpu-{g // 2}-{part}",
                "attributes": {"model": {"string": "H100"}, "partition": {"string": part},
                               "uuid": {"string": f"MIG-{rng.getrandbits(64):016x}-{n:06d}-{g}-{part}"}},
                "capacity": {"memory": {"value": size}},
                "consumesCounters": [{"counterSet": cset, "counters": {"memory": {"value": size}}}],
            })
    pool = {"name": node, "generation": 1, "resourceSliceCount": 2}
    return [
        {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpu-counters"},
         "spec": {"driver": "gpu.example.com", "nodeName": node, "pool": dict(pool), "sharedCounters": counters}},
        {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpu"},
         "spec": {"driver": "gpu.example.com", "nodeName": node, "pool": dict(pool), "devices": devices}},
    ]


def make_inventory(devices: int = 10_000, *, gpus: int = 8, seed: int = 1, nics: bool = True,
                   partitioned: bool = True) -> list[dict[str, Any]]:
    """Raw inventory objects: classes, Nodes, one GPU slice and (optionally) one NIC slice per node.

    ``devices`` counts GPUs (NICs come on top: two per node).  The same seed gives the same objects.
    """
    rng = random.Random(seed)
    objects: list[dict[str, Any]] = _classes()
    for n in range(node_count_for(devices, gpus)):
        node = f"node-{n:06d}"
        zone = f"zone-{n % 4}"
        objects.append({"apiVersion": "v1", "kind": "Node",
                        "metadata": {"name": node, "labels": {"topology.kubernetes.io/zone": zone}}})
        if partitioned and n % PARTITIONED_EVERY == PARTITIONED_EVERY - 1:
            objects.extend(_partitioned_slices(rng, node, n, gpus))
        else:
            model = MODELS[n % len(MODELS)]
            objects.append({
                "apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpu"},
                "spec": {"driver": "gpu.example.com", "nodeName": node,
                         "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                         "devices": [_gpu(rng, n, g, model) for g in range(gpus)]},
            })
        if nics:
            objects.append({
                "apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": f"{node}-nic"},
                "spec": {"driver": "nic.example.com", "nodeName": node,
                         "pool": {"name": f"{node}-nic", "generation": 1, "resourceSliceCount": 1},
                         "devices": [{"name": f"eth{i}", "allowMultipleAllocations": True,
                                      "attributes": {"subnet": {"string": f"10.{n % 200}.{i}.0/24"},
                                                     "mac": {"string": f"02:00:{rng.getrandbits(32):08x}"}},
                                      "capacity": {"bandwidth": {"value": "10G", "requestPolicy": {
                                          "default": "1G", "validRange": {"min": "100M", "step": "100M"}}}}}
                                     for i in range(NICS_PER_NODE)]},
            })
    return objects


def write_inventory(objects: list[dict[str, Any]], folder: Any, per_file: int = 2000) -> None:
    """Write ``objects`` as YAML files of ``per_file`` objects into ``folder`` (a 100k-device
    inventory is ~50 MB, more than draguard reads from one file)."""
    from pathlib import Path

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for i in range(0, len(objects), per_file):
        (out / f"inventory-{i // per_file:04d}.yaml").write_text(yaml.safe_dump_all(objects[i:i + per_file], sort_keys=False))


def claim(name: str, requests: list[dict[str, Any]], constraints: list[dict[str, Any]] | None = None,
          namespace: str = "default") -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {"apiVersion": API, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": namespace},
            "spec": {"devices": devices}}


def _req(name: str, cls: str = "shared-gpu.example.com", *, selector: str | None = None,
         memory: str | None = None, count: int = 1) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": cls}
    if count != 1:
        exactly["count"] = count
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    if memory:
        exactly["capacity"] = {"requests": {"memory": memory}}
    return {"name": name, "exactly": exactly}


MODEL = 'device.attributes["gpu.example.com"].model == "{}"'

CLAIMS: list[dict[str, Any]] = [
    claim("a100-10gi", [_req("gpu", memory="10Gi", selector=MODEL.format("A100"))]),
    claim("a100-7gi-rounds", [_req("gpu", memory="7Gi", selector=MODEL.format("A100"))]),
    claim("any-gpu", [_req("gpu", "gpu.example.com")]),
    claim("two-h100", [_req("gpu", "gpu.example.com", selector=MODEL.format("H100"), count=2)]),
    claim("a40-17gi-too-big", [_req("gpu", memory="17Gi", selector=MODEL.format("A40"))]),
    claim("l4-12gi", [_req("gpu", memory="12Gi", selector=MODEL.format("L4"))]),
    claim("b200-none", [_req("gpu", "gpu.example.com", selector=MODEL.format("B200"))]),
    claim("50gi-none", [_req("gpu", memory="50Gi")]),
    claim("gpu-and-nic", [_req("gpu", memory="5Gi"), _req("nic", "nic.example.com")]),
    claim("two-nics-distinct", [_req("a", "nic.example.com"), _req("b", "nic.example.com")],
          [{"requests": ["a", "b"], "distinctAttribute": "nic.example.com/subnet"}]),
    claim("three-nics-distinct", [_req("a", "nic.example.com"), _req("b", "nic.example.com"), _req("c", "nic.example.com")],
          [{"requests": ["a", "b", "c"], "distinctAttribute": "nic.example.com/subnet"}]),
    claim("partition-whole", [_req("gpu", "gpu.example.com",
                                   selector='device.attributes["gpu.example.com"].partition == "whole"')]),
]
"""A mix of twelve claims: satisfiable, rounded, unsatisfiable by capacity, selector and constraint."""


def distinct_claims(n: int, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` claims that all differ (selector text and memory), as an adversary would send them."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        gi = 5 * (1 + rng.randrange(8))
        sel = f'device.attributes["gpu.example.com"].index >= {rng.randrange(8)} && "{i}" != "x"'
        out.append(claim(f"distinct-{i}", [_req("gpu", memory=f"{gi}Gi", selector=sel)]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-nics", action="store_true")
    parser.add_argument("--no-partitioned", action="store_true")
    parser.add_argument("--claims", help="also write the claim mix to this file")
    parser.add_argument("--out", default="-")
    args = parser.parse_args(argv)
    objects = make_inventory(args.nodes * args.gpus, gpus=args.gpus, seed=args.seed, nics=not args.no_nics,
                             partitioned=not args.no_partitioned)
    text = yaml.safe_dump_all(objects, sort_keys=False)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w") as fh:
            fh.write(text)
    if args.claims:
        with open(args.claims, "w") as fh:
            fh.write(yaml.safe_dump_all(CLAIMS[:10], sort_keys=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
