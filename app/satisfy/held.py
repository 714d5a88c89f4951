"""What is already held before a pod's search starts, as the search's :class:`~.search.Held`.

Why two sources: "ever" starts from an empty cluster except for the pod's *own* allocated claims
(their devices stay allocated to the pod — they are not free for its other claims); "now" starts
from every allocation the cluster holds (``Inventory.cluster.allocations``), the way the
scheduler's allocator subtracts allocated devices, consumed capacity and counters first.
Results with ``adminAccess`` hold nothing (upstream ignores them when computing what is in use).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..inventory import Inventory, PoolKey
from ..k8s import AllocationResult, Quantity
from .search import NOTHING_HELD, Held

__all__ = ["device_index", "held_by"]

_INDEX_KEY = ("device-index",)


def device_index(inventory: Inventory) -> Mapping[tuple[str, str, str], int]:
    """(driver, pool, device) → index into ``Inventory.devices``; built once per snapshot."""
    got = inventory.cache.get(_INDEX_KEY)
    if isinstance(got, dict):
        return got
    index = {(d.driver, d.pool, d.name): d.index for d in inventory.devices}
    inventory.cache.put(_INDEX_KEY, index, weight=1 + len(index) // 256)
    return index


def _add(acc: dict[str, Quantity], amounts: Mapping[str, Quantity]) -> None:
    for name, q in amounts.items():
        prior = acc.get(name)
        acc[name] = q if prior is None else prior.add(q)


def held_by(inventory: Inventory, own: Iterable[AllocationResult], *, now: bool) -> Held:
    """The start state: the pod's own allocations, plus everything allocated when ``now``."""
    used: set[int] = set()
    consumed: dict[int, dict[str, Quantity]] = {}
    counters: dict[tuple[PoolKey, str, str], Quantity] = {}
    allocs = inventory.cluster.allocations
    if now:
        used.update(allocs.dedicated)
        for i, caps in allocs.consumed.items():
            _add(consumed.setdefault(i, {}), caps)
        for pool, per in allocs.counters.items():
            for (cset, cname), q in per.items():
                counters[(pool, cset, cname)] = q
    index = device_index(inventory)
    for allocation in own:
        for result in allocation.devices.results:
            found = index.get((result.driver, result.pool, result.device))
            if found is None or result.admin_access:
                continue
            i = found
            dev = inventory.devices[i]
            if now and (i in allocs.dedicated or i in allocs.consumed):
                continue  # already counted among the cluster's allocations
            if dev.multi:
                _add(consumed.setdefault(i, {}), result.consumed_capacity)
            else:
                used.add(i)
            for (cset, cname), q in dev.counters.items():
                key = (dev.pool_key, cset, cname)
                prior = counters.get(key)
                counters[key] = q if prior is None else prior.add(q)
    if not (used or consumed or counters):
        return NOTHING_HELD
    return Held(frozenset(used), consumed, counters)
