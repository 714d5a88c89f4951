"""Tiny builders for DRA objects in tests: raw dicts exactly as a user would write them."""

from __future__ import annotations

from typing import Any

from draguard.inventory import Inventory, build_inventory
from draguard.k8s.field import Path
from draguard.k8s.finding import Note
from draguard.k8s.models import ResourceClaimSpec
from draguard.satisfy import check_claim_spec

DRIVER = "gpu.example.com"


def cap(value: str, default: str | None = None, *, min: str | None = None, max: str | None = None,
        step: str | None = None, values: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"value": value}
    policy: dict[str, Any] = {}
    if default is not None:
        policy["default"] = default
    rng = {k: v for k, v in (("min", min), ("max", max), ("step", step)) if v is not None}
    if rng:
        policy["validRange"] = rng
    if values is not None:
        policy["validValues"] = values
    if policy:
        out["requestPolicy"] = policy
    return out


def device(name: str, *, multi: bool = False, attrs: dict[str, Any] | None = None,
           capacity: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if multi:
        out["allowMultipleAllocations"] = True
    if attrs:
        out["attributes"] = {k: ({"int": v} if isinstance(v, int) and not isinstance(v, bool) else
                                 {"bool": v} if isinstance(v, bool) else {"string": v}) for k, v in attrs.items()}
    if capacity:
        out["capacity"] = capacity
    out.update(extra)
    return out


def rslice(node: str | None, devices: list[dict[str, Any]], *, pool: str | None = None, driver: str = DRIVER,
           generation: int = 1, count: int = 1, name: str | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool or node or "pool", "generation": generation, "resourceSliceCount": count},
    }
    if node is not None:
        body["nodeName"] = node
    if devices:
        body["devices"] = devices
    body.update(spec)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name or f"{pool or node}-{driver}-{generation}"}, "spec": body}


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def dclass(name: str = DRIVER, expr: str | None = None) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expr or f'device.driver == "{DRIVER}"'}}]}}


def req(name: str, *, cls: str = DRIVER, count: int | None = None, mode: str | None = None,
        selectors: tuple[str, ...] = (), capacity: dict[str, str] | None = None,
        tolerations: list[dict[str, Any]] | None = None, admin: bool | None = None) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": cls}
    if count is not None:
        exactly["count"] = count
    if mode is not None:
        exactly["allocationMode"] = mode
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    if capacity is not None:
        exactly["capacity"] = {"requests": capacity}
    if tolerations is not None:
        exactly["tolerations"] = tolerations
    if admin is not None:
        exactly["adminAccess"] = admin
    return {"name": name, "exactly": exactly}


def first(name: str, *subs: dict[str, Any]) -> dict[str, Any]:
    alts = []
    for s in subs:
        sub = dict(s["exactly"])
        sub.pop("adminAccess", None)
        alts.append({"name": s["name"], **sub})
    return {"name": name, "firstAvailable": alts}


def claim(*requests: dict[str, Any], constraints: list[dict[str, Any]] | None = None) -> ResourceClaimSpec:
    devices: dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return ResourceClaimSpec.model_validate({"devices": devices})


def inventory(*objects: dict[str, Any], with_class: bool = True) -> Inventory:
    objs = list(objects)
    if with_class:
        objs.insert(0, dclass())
    return build_inventory(objs)


def check(spec: ResourceClaimSpec, inv: Inventory, **kw: Any) -> list[Note]:
    return check_claim_spec(spec, inv, base=Path.root("spec"), **kw)


def verdict(notes: list[Note]) -> str:
    """``unsat`` | ``error`` (selector runtime) | ``unknown`` | ``sat``."""
    reasons = {(n.reason, n.severity.value) for n in notes}
    if ("Unsatisfiable", "error") in reasons:
        return "unsat"
    if ("SelectorRuntimeError", "error") in reasons:
        return "error"
    if any(r == "SatisfiabilityUnknown" for r, _ in reasons):
        return "unknown"
    assert not any(s == "error" for _, s in reasons), notes
    return "sat"


def message(notes: list[Note], reason: str = "Unsatisfiable") -> str:
    return next(n.message for n in notes if n.reason == reason)
