"""Small builders for valid DRA objects; tests change one thing and expect one error."""

from __future__ import annotations

import copy
from typing import Any

API = "resource.k8s.io/v1"


def device(name: str = "dev-0", **fields: Any) -> dict[str, Any]:
    return {"name": name, **fields}


def multi_device(capacity: dict[str, Any], name: str = "dev-0", **fields: Any) -> dict[str, Any]:
    return {"name": name, "allowMultipleAllocations": True, "capacity": capacity, **fields}


def rslice(devices: list[dict[str, Any]] | None = None, name: str = "s1", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "driver": "gpu.example.com",
        "nodeName": "node-1",
        "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
    }
    if devices is not None:
        body["devices"] = devices
    for key, value in spec.items():
        if value is None:
            body.pop(key, None)
        else:
            body[key] = value
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}


def policy_slice(policy: dict[str, Any], value: str = "10Gi") -> dict[str, Any]:
    return rslice([multi_device({"memory": {"value": value, "requestPolicy": policy}})])


def exact(name: str = "gpu", **fields: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": "gpu.example.com", **fields}}


def claim(
    requests: list[dict[str, Any]] | None = None,
    name: str = "c1",
    namespace: str | None = None,
    **devices: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {
        "apiVersion": API,
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": {"requests": requests if requests is not None else [exact()], **devices}},
    }


def template(
    requests: list[dict[str, Any]] | None = None, name: str = "t1", **devices: Any
) -> dict[str, Any]:
    c = claim(requests, **devices)
    return {
        "apiVersion": API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name},
        "spec": {"spec": c["spec"]},
    }


def dclass(name: str = "gpu.example.com", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def with_(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of ``obj`` with the dotted ``path`` (list indices as numbers) set to ``value``."""
    out = copy.deepcopy(obj)
    target: Any = out
    parts = path.split(".")
    for part in parts[:-1]:
        target = target[int(part)] if isinstance(target, list) else target.setdefault(part, {})
    last = parts[-1]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return out
