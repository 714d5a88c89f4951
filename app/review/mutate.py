"""Default filling for ResourceClaims as a JSONPatch.

Which omitted capacity requests are filled, and with what, is decided next to satisfiability
(:func:`app.satisfy.policy_defaults`, with the reasons it is cautious); this module only turns
that answer into patch operations against the object as it was sent.

Operations are RFC 6902 ``add`` only; the ``capacity`` / ``requests`` objects are created when
absent; map keys are escaped per RFC 6901 (``~`` → ``~0``, ``/`` → ``~1``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..inventory import Inventory
from ..k8s import ResourceClaimSpec
from ..satisfy import DefaultFill, policy_defaults

__all__ = ["default_fill_patch", "escape_pointer"]


def escape_pointer(token: str) -> str:
    """One RFC 6901 reference token."""
    return token.replace("~", "~0").replace("/", "~1")


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


def _ops_for(fill: DefaultFill, raw_obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    parts = fill.path.json_pointer_parts()
    target = _node(raw_obj, parts)
    if not isinstance(target, Mapping):
        return []
    values = {name: str(q) for name, q in fill.values.items()}
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


def _describe(fill: DefaultFill) -> str:
    """Figure first: the description is also the AdmissionReview warning, cut at 120 characters."""
    shown = ", ".join(f"{q} {n}" for n, q in fill.values.items())
    return f'{shown} filled in for request "{fill.request}": the policy default of every device it can get'


def default_fill_patch(
    spec: ResourceClaimSpec, raw_obj: dict[str, Any], inventory: Inventory
) -> tuple[list[dict[str, Any]], list[str]]:
    """(RFC 6902 ``add`` operations, one human-readable line per filled request)."""
    ops: list[dict[str, Any]] = []
    descriptions: list[str] = []
    for fill in policy_defaults(spec, inventory):
        new_ops = _ops_for(fill, raw_obj)
        if new_ops:
            ops.extend(new_ops)
            descriptions.append(_describe(fill))
    return ops, descriptions
