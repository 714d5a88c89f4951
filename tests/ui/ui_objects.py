"""Objects for the ui tests: a small cluster (whole GPUs, a shareable GPU, a partitioned GPU),
claims that hold them across two namespaces, a pending claim and a pending pod."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

DRIVER = "gpu.example.com"
RG = "resource.k8s.io/v1"


def dclass(name: str = DRIVER) -> dict[str, Any]:
    return {"apiVersion": RG, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}


def rslice(node_name: str, devices: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": RG, "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1}, "devices": devices, **spec}}


def claim(name: str, ns: str, *, count: int = 1, memory: str | None = None, model: str | None = None) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": DRIVER, "count": count}
    if memory is not None:
        exactly["capacity"] = {"requests": {"memory": memory}}
    if model is not None:
        exactly["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "{model}"'}}]
    return {"apiVersion": RG, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}


def allocation(*results: dict[str, Any]) -> dict[str, Any]:
    return {"devices": {"results": [{"request": "gpu", "driver": DRIVER, **r} for r in results]}}


def allocated(name: str, ns: str, *results: dict[str, Any], **spec: Any) -> dict[str, Any]:
    obj = claim(name, ns, **spec)
    obj["status"] = {"allocation": allocation(*results)}
    return obj


def pod(name: str, ns: str, claim_name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": claim_name}]},
            "status": {"phase": "Pending"}}


def inventory_objects(*, partitions: bool = True) -> list[dict[str, Any]]:
    """node-1: two whole H100s and a shareable 40Gi A100; node-2 (``partitions``): two 20Gi
    partitions of one 40Gi counter set."""
    whole = [{"name": f"gpu-{i}", "attributes": {"model": {"string": "H100"}}} for i in range(2)]
    shared = {"name": "shared-0", "allowMultipleAllocations": True, "attributes": {"model": {"string": "A100"}},
              "capacity": {"memory": {"value": "40Gi"}}}
    out = [dclass(), node("node-1"), rslice("node-1", [*whole, shared])]
    if partitions:
        parts = [{"name": f"part-{i}", "attributes": {"model": {"string": "A100-half"}},
                  "consumesCounters": [{"counterSet": "gpu", "counters": {"memory": {"value": "20Gi"}}}]}
                 for i in range(2)]
        out += [node("node-2"), rslice("node-2", parts, sharedCounters=[{"name": "gpu", "counters": {"memory": {"value": "40Gi"}}}])]
    return out


def claim_objects(*, partitions: bool = True) -> list[dict[str, Any]]:
    """team-a: one H100 held whole, a 10Gi share; team-b (another tenant): a 25Gi share and, with
    ``partitions``, a partition; team-a's ``wait-h100`` asks for 2 H100s (ever yes, now no) and
    its pod ``trainer`` waits on it."""
    out = [
        allocated("train-1", "team-a", {"pool": "node-1", "device": "gpu-0"}, model="H100"),
        allocated("infer-1", "team-a", {"pool": "node-1", "device": "shared-0", "shareID": "0a6f5c1e-0000-4000-8000-000000000001",
                                        "consumedCapacity": {"memory": "10Gi"}}, memory="10Gi"),
        allocated("secret-share", "team-b", {"pool": "node-1", "device": "shared-0", "shareID": "0a6f5c1e-0000-4000-8000-000000000002",
                                             "consumedCapacity": {"memory": "25Gi"}}, memory="25Gi"),
        claim("wait-h100", "team-a", count=2, model="H100"),
    ]
    if partitions:
        out.append(allocated("secret-part", "team-b", {"pool": "node-2", "device": "part-0"}, model="A100-half"))
    return out


def write(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return path
