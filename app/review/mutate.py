"""Default filling for ResourceClaims: write the policy default into omitted capacity requests.

Why so cautious: a mutating webhook that changes what a claim matches or consumes would be a
silent behaviour change.  A capacity request is filled in only when every device the request
could be allocated is multi-allocatable, publishes that capacity with a policy default, and all
agree on the value — and only when re-checking the filled request yields exactly the same
candidate devices with exactly the same consumption.  The patch then only makes explicit what
the allocator would do anyway (and what ``consumedCapacity`` will record).

Operations are RFC 6902 ``add`` only; the ``capacity`` / ``requests`` objects are created when
absent; map keys are escaped per RFC 6901 (``~`` → ``~0``, ``/`` → ``~1``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from app.inventory import Inventory
from app.k8s.field import Path
from app.k8s.models import ResourceClaimSpec
from app.k8s.quantity import Quantity
from app.satisfy.candidates import Candidates, Entry, Status, candidates_for
from app.satisfy.plan import Alternative, plan_claim

__all__ = ["default_fill_patch", "escape_pointer"]


def escape_pointer(token: str) -> str:
    """One RFC 6901 reference token."""
    return token.replace("~", "~0").replace("/", "~1")


def _reachable_entries(cand: Candidates, inventory: Inventory) -> list[Entry] | None:
    seen: set[int] = set()
    for g in inventory.groups:
        seen.update(g.devices)
    entries = [cand.entry(inventory.devices[i]) for i in sorted(seen)]
    if any(e.status is Status.ERROR for e in entries):
        return None
    return entries


def _signature(entries: list[Entry]) -> dict[int, tuple[tuple[str, int], ...]]:
    out: dict[int, tuple[tuple[str, int], ...]] = {}
    for e in entries:
        if e.status is Status.OK and e.fit is not None:
            out[e.dev.index] = tuple(sorted((k, v.nanos) for k, v in e.fit.consumed.items()))
    return out


def _fillable(alt: Alternative, inventory: Inventory) -> dict[str, Quantity]:
    """Capacity names to fill for ``alt`` and their default, after proving nothing changes."""
    if alt.class_name not in inventory.classes:
        return {}
    cand = candidates_for(alt, inventory)
    if cand.selectors.compile_problem() is not None:
        return {}
    entries = _reachable_entries(cand, inventory)
    if not entries:
        return {}
    ok = [e for e in entries if e.status is Status.OK]
    if not ok or not all(e.dev.multi for e in ok):
        return {}
    names: set[str] = set(ok[0].dev.capacity)
    for e in ok[1:]:
        names &= set(e.dev.capacity)
    names -= set(alt.capacity)
    fill: dict[str, Quantity] = {}
    for name in sorted(names):
        defaults: list[Quantity] = []
        for e in ok:
            policy = e.dev.capacity[name].request_policy
            if policy is None or policy.default is None:
                break
            defaults.append(policy.default)
        else:
            if all(d == defaults[0] for d in defaults):
                fill[name] = defaults[0]
    if not fill:
        return {}
    before = _signature(entries)
    filled = dataclasses.replace(alt, capacity={**alt.capacity, **fill})
    after_entries = _reachable_entries(candidates_for(filled, inventory), inventory)
    if after_entries is None or _signature(after_entries) != before:
        return {}
    return fill


def _node(raw: Any, parts: list[str | int]) -> Any:
    cur = raw
    for p in parts:
        if isinstance(p, int):
            if not isinstance(cur, list) or p >= len(cur):
                return None
            cur = cur[p]
        else:
            if not isinstance(cur, Mapping):
                return None
            cur = cur.get(p)
    return cur


def _pointer(parts: list[str | int]) -> str:
    return "".join("/" + escape_pointer(str(p)) for p in parts)


def _ops_for(alt: Alternative, fill: Mapping[str, Quantity], raw_obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    parts = alt.path.json_pointer_parts()
    target = _node(raw_obj, parts)
    if not isinstance(target, Mapping):
        return []
    values = {name: str(q) for name, q in fill.items()}
    capacity = target.get("capacity")
    if not isinstance(capacity, Mapping):
        return [{"op": "add", "path": _pointer([*parts, "capacity"]), "value": {"requests": values}}]
    requests = capacity.get("requests")
    if not isinstance(requests, Mapping):
        return [{"op": "add", "path": _pointer([*parts, "capacity", "requests"]), "value": values}]
    return [
        {"op": "add", "path": _pointer([*parts, "capacity", "requests", name]), "value": value}
        for name, value in values.items()
        if name not in requests
    ]


def default_fill_patch(
    spec: ResourceClaimSpec, raw_obj: dict[str, Any], inventory: Inventory
) -> tuple[list[dict[str, Any]], list[str]]:
    """(RFC 6902 ``add`` operations, one human-readable line per filled request)."""
    ops: list[dict[str, Any]] = []
    descriptions: list[str] = []
    for plan in plan_claim(spec, Path.root("spec")):
        for alt in plan.alternatives:
            fill = _fillable(alt, inventory)
            if not fill:
                continue
            new_ops = _ops_for(alt, fill, raw_obj)
            if not new_ops:
                continue
            ops.extend(new_ops)
            shown = ", ".join(f"capacity.requests[{n}]={q}" for n, q in fill.items())
            descriptions.append(
                f'request "{alt.display}": set {shown}, the request policy default of every device it can be allocated'
            )
    return ops, descriptions
