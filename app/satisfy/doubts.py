"""Why a failed search is not yet a proof: the parts of the inventory known to be missing.

Why this exists: ``Unsatisfiable`` denies a claim at the webhook, so it must hold for *every*
state the cluster can reach without an operator changing the claim (README "What denies, what warns, and why").  A search
that found no allocation over today's inventory proves that only when nothing the claim could
use is known to be on its way:

* a pool that is **incomplete** (a driver mid-update has published 1 of 2 slices) or
  **invalid** — Kubernetes only skips it *for now*; its missing slices may hold any device of
  its driver, on any node;
* a **class with no device at all** in the inventory — a driver still rolling out, a GPU node
  pool scaled to zero, or a GitOps apply that created the class before the slices;
* devices of the class that **no node can reach** yet — their node is not registered (yet).

Each doubt is a sentence saying what is missing; the caller turns the would-be denial into a
``SatisfiabilityUnknown`` warning that leads with it.  When in doubt the answer is "unknown":
a false denial blocks a workload, a missed one only costs a Pending pod.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..inventory import DeviceRecord, Inventory, PoolRecord
from .candidates import Candidates, Status, candidates_for
from .plan import Alternative, RequestPlan

__all__ = ["find_doubts"]

_CLASS_MATCHED = (Status.OK, Status.CAPACITY, Status.TAINT, Status.ERROR)


def _class_only(alt: Alternative, inventory: Inventory) -> Candidates:
    """Candidates of the bare class: no request selectors, capacity, tolerations or count (All
    mode, so devices of unusable pools are evaluated too rather than skipped)."""
    bare = dataclasses.replace(alt, selectors=(), capacity={}, tolerations=(), mode="All", count=1, admin=False)
    return candidates_for(bare, inventory)


def _pool_problem(pool: PoolRecord) -> str:
    if pool.invalid is not None:
        return f"pool {pool.name} (driver {pool.driver}) is invalid ({pool.invalid}) and skipped for now"
    seen = f": {pool.slices} of {pool.expected} slices published" if pool.expected else ""
    return f"pool {pool.name} (driver {pool.driver}) is incomplete{seen}"


def _pool_doubts(alternatives: Sequence[Alternative], inventory: Inventory) -> list[str]:
    """Unusable pools whose driver one of the alternatives could use."""
    broken = _broken_pools(inventory)
    if not broken:
        return []
    drivers: set[str] = set()
    anything = False
    for alt in alternatives:
        pinned, driver = candidates_for(alt, inventory).selectors.required_driver()
        if not pinned:
            anything = True
        elif driver is not None:
            drivers.add(driver)
    return [_pool_problem(p) for p in broken if anything or p.driver in drivers]


def _broken_pools(inventory: Inventory) -> tuple[PoolRecord, ...]:
    """The snapshot's incomplete or invalid pools in key order, found once per snapshot: every
    unsatisfiable pod asks, and a pass over a thousand pools per pod is the audit's cost."""
    hit = inventory.cache.get(("broken-pools",))
    if isinstance(hit, tuple):
        return hit
    broken = tuple(sorted((p for p in inventory.pools.values() if not p.usable), key=lambda p: p.key))
    inventory.cache.put(("broken-pools",), broken, weight=1 + len(broken) // 16)
    return broken


def _class_doubts(alternatives: Sequence[Alternative], inventory: Inventory) -> list[str]:
    """Classes no usable, reachable device matches, and class devices no node reaches."""
    out: list[str] = []
    seen: set[str] = set()
    for alt in alternatives:
        if alt.class_name in seen or alt.class_name not in inventory.classes:
            continue
        seen.add(alt.class_name)
        key = ("class-doubt", alt.class_name)
        hit = inventory.cache.get(key)
        if not isinstance(hit, tuple):
            # a fact of the class and the snapshot, not of the claim: once per snapshot (it walks
            # every device, which the rare unsatisfiable claim should not pay each time)
            hit = (_one_class_doubt(alt, inventory),)
            inventory.cache.put(key, hit)
        if hit[0] is not None:
            out.append(hit[0])
    return out


def _one_class_doubt(alt: Alternative, inventory: Inventory) -> str | None:
    """Why devices of ``alt``'s class may still appear (None: the class's devices are known)."""
    # One pass over the devices, stopping at the first usable one some node reaches (the common
    # case: then there is no doubt), rather than listing every matched and usable device first —
    # on a fresh snapshot each class's first unsatisfiable claim pays this walk.
    reachable = set(inventory.reachable)
    bare = _class_only(alt, inventory)
    pools = inventory.pools
    matched = False
    first_usable: DeviceRecord | None = None
    for d in inventory.devices:
        if bare.status(d) not in _CLASS_MATCHED:
            continue
        matched = True
        if not pools[d.pool_key].usable:
            continue
        if d.index in reachable:
            return None
        if first_usable is None:
            first_usable = d
    if first_usable is not None:
        return (f"the devices of class {alt.class_name} ({first_usable.where}…) are reachable from no known node "
                "(node not registered yet?)")
    if matched:
        return None  # only in incomplete or invalid pools: the pool doubt says so
    return (f"no device of class {alt.class_name} is in the inventory yet (driver rolling out, or a node "
            "pool scaled to zero?)")


def find_doubts(plans: Sequence[RequestPlan], inventory: Inventory) -> list[str]:
    """What is known to be missing that could still make the claim allocatable (empty: none)."""
    alternatives = [alt for plan in plans for alt in plan.alternatives]
    doubts = _pool_doubts(alternatives, inventory) + _class_doubts(alternatives, inventory)
    if not inventory.groups and not doubts:
        doubts.append("no node can reach any device in the inventory yet")
    return doubts
