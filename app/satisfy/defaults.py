"""Which omitted capacity requests can be filled with the request policy's default.

Why so cautious: a mutating webhook that changes what a claim matches or consumes would be a
silent behaviour change.  A capacity request is filled in only when every device the request
could be allocated is multi-allocatable, publishes that capacity with a policy default, and all
agree on the value — and only when re-checking the filled request yields exactly the same
candidate devices with exactly the same consumption.  The fill then only makes explicit what
the allocator would do anyway (and what ``consumedCapacity`` will record).

This is satisfiability knowledge (candidates, capacity fits), so it lives here; turning the
answer into a JSONPatch is :mod:`app.review`'s job.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from ..inventory import Inventory
from ..k8s import Path, Quantity, ResourceClaimSpec
from .candidates import Entry, Status, candidates_for
from .plan import Alternative, plan_claim

__all__ = ["DefaultFill", "policy_defaults"]


@dataclass(frozen=True)
class DefaultFill:
    """Capacity requests to fill in one request (or subrequest) with the policy default."""

    path: Path
    """The request's ``exactly`` (or subrequest) object, where ``capacity.requests`` lives."""
    request: str
    """The request's name as messages show it (``gpu`` or ``gpu/small``)."""
    values: Mapping[str, Quantity]
    """Capacity name → the default every device the request can land on agrees on."""


def _reachable_or_none(alt: Alternative, inventory: Inventory) -> list[Entry] | None:
    """One entry per profile of the reachable devices, or ``None`` when a selector fails on one of them."""
    entries = [e for e, _ in candidates_for(alt, inventory).reachable_profiles()]
    if any(e.status is Status.ERROR for e in entries):
        return None
    return entries


def _signature(entries: list[Entry]) -> dict[int, tuple[tuple[str, int], ...]]:
    out: dict[int, tuple[tuple[str, int], ...]] = {}
    for e in entries:
        if e.status is Status.OK and e.fit is not None:
            out[e.dev.index] = tuple(sorted((k, v.nanos) for k, v in e.fit.consumed.items()))
    return out


def _agreed_defaults(ok: list[Entry], names: set[str]) -> dict[str, Quantity]:
    """For each name, the default all ``ok`` devices publish — when they all publish the same one."""
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
    return fill


def _fillable(alt: Alternative, inventory: Inventory) -> dict[str, Quantity]:
    """Capacity names to fill for ``alt`` and their default, after proving nothing changes."""
    if alt.class_name not in inventory.classes:
        return {}
    if candidates_for(alt, inventory).selectors.compile_problem() is not None:
        return {}
    entries = _reachable_or_none(alt, inventory)
    if not entries:
        return {}
    ok = [e for e in entries if e.status is Status.OK]
    if not ok or not all(e.dev.multi for e in ok):
        return {}
    names: set[str] = set(ok[0].dev.capacity)
    for e in ok[1:]:
        names &= set(e.dev.capacity)
    fill = _agreed_defaults(ok, names - set(alt.capacity))
    if not fill:
        return {}
    filled = dataclasses.replace(alt, capacity={**alt.capacity, **fill})
    after = _reachable_or_none(filled, inventory)
    if after is None or _signature(after) != _signature(entries):
        return {}
    return fill


def policy_defaults(spec: ResourceClaimSpec, inventory: Inventory) -> list[DefaultFill]:
    """Every request alternative whose omitted capacity requests can be filled, and with what."""
    fills: list[DefaultFill] = []
    for plan in plan_claim(spec, Path.root("spec")):
        for alt in plan.alternatives:
            values = _fillable(alt, inventory)
            if values:
                fills.append(DefaultFill(alt.path, alt.display, values))
    return fills
