"""What allocated claims hold, and the snapshot with it applied ("now").

Why a *view* and not a second search: "could it ever fit?" and "does it fit today?" are the same
allocator question asked of two inventories — every device free, or the devices, capacity and
counters that allocated claims hold taken away.  Upstream's scheduler does exactly that: it
gathers the allocated state once (``GatherAllocatedState``) and the allocator skips what is in
it.  So :func:`held_view` builds that second inventory once per snapshot and any search — the
claim check, the per-pod search, the replica count — answers "now" by running on it.

Semantics (the 1.36 scheduler's ``GatherAllocatedState`` and the allocator's use of it):

- results with ``adminAccess: true`` count for nothing;
- a result with a ``shareID`` adds its ``consumedCapacity`` to the device's consumption;
- a result without one takes the device whole (even a shareable device: a dedicated
  allocation made before it became shareable stays dedicated);
- a pool's shared counters are reduced by what its *dedicated* devices consume (upstream does
  not subtract persisted shares from counters either).

The view keeps device indices: a device held whole is taken out of every node group (it stays
in ``reachable``: it exists, it is just taken); a shared
device stays, with the capacity left as its capacity (CEL selectors still read the published
value); pools carry the counters left.  Potential nodes (an autoscaler's templates) do not exist
now, so their groups are left out.  Two approximations, both only ever missing a "not now"
warning and never denying: ``allocationMode: All`` on the view sees the free devices only
(upstream fails a node where one of them is held), and a share that omits a capacity without a
request policy is taken to consume what is left rather than the whole published value.

This module is the definition, computed from scratch (files, one-shot commands, and the oracle
of the tests); the live inventory keeps the same allocations and view up to date one claim
event at a time (:mod:`.live`, :mod:`.ledger`, :mod:`.heldview`), equal to what is computed here.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Mapping

from ..k8s import Quantity
from .build import _base_ids
from .cache import BoundedCache
from .cluster import Allocations, ClusterState, HeldClaim, ObjectKey
from .profiles import ProfileIndex
from .records import DeviceRecord, NodeGroup, PoolKey, PoolRecord
from .snapshot import Inventory

__all__ = [
    "capacity_left", "carry_cluster", "compute_allocations", "consumed_signature", "device_index", "held_view", "only_groups", "pool_left",
    "shared_device", "with_cluster",
]


def device_index(inventory: Inventory) -> Mapping[tuple[str, str, str], int]:
    """(driver, pool, device name) → index, for the newest generation of every pool."""
    got = inventory.cache.get(("device-index",))
    if isinstance(got, dict):
        return got
    index = {(d.driver, d.pool, d.name): d.index for d in inventory.devices}
    inventory.cache.put(("device-index",), index, weight=1 + len(index) // 64)
    return index


def compute_allocations(claims: Iterable[HeldClaim], inventory: Inventory) -> Allocations:
    """What the allocated ``claims`` hold of ``inventory``'s devices (see the module docstring)."""
    index = device_index(inventory)
    dedicated: set[int] = set()
    consumed: dict[int, dict[str, Quantity]] = {}
    holders: dict[int, set[ObjectKey]] = defaultdict(set)
    unknown = 0
    allocated = 0
    for claim in claims:
        if claim.allocation is None:
            continue
        allocated += 1
        key = (claim.namespace, claim.name)
        for result in claim.allocation.devices.results:
            if result.admin_access:
                continue
            i = index.get((result.driver, result.pool, result.device))
            if i is None:
                unknown += 1
                continue
            holders[i].add(key)
            if result.share_id is None:
                dedicated.add(i)
                continue
            used = consumed.setdefault(i, {})
            for name, amount in result.consumed_capacity.items():
                prior = used.get(name)
                used[name] = amount if prior is None else prior.add(amount)
    counters: dict[PoolKey, dict[tuple[str, str], Quantity]] = {}
    for i in dedicated:
        dev = inventory.devices[i]
        if not dev.counters:
            continue
        pool = counters.setdefault(dev.pool_key, {})
        for ck, amount in dev.counters.items():
            prior = pool.get(ck)
            pool[ck] = amount if prior is None else prior.add(amount)
    return Allocations(
        dedicated=frozenset(dedicated), consumed=consumed, counters=counters,
        holders={i: tuple(sorted(v)) for i, v in holders.items()}, unknown=unknown, claims=allocated,
    )


def with_cluster(
    inventory: Inventory,
    claims: Mapping[ObjectKey, HeldClaim],
    templates: Mapping[ObjectKey, object],
    *,
    known: bool,
) -> Inventory:
    """``inventory`` with these claims and templates as its :class:`ClusterState`, allocations
    computed against its devices.  The snapshot's cache is shared: nothing in it depends on the
    claims (the held view has its own)."""
    state = ClusterState(
        claims=claims, templates=templates,  # type: ignore[arg-type]
        known=known, allocations=compute_allocations(claims.values(), inventory),
    )
    return dataclasses.replace(inventory, cluster=state)


def carry_cluster(rebuilt: Inventory, old: Inventory) -> Inventory:
    """``rebuilt`` (a snapshot built again from more objects: a lint run's own slices, potential
    inventory) with ``old``'s claims and templates, allocations computed against its devices."""
    state = old.cluster
    if not (state.known or state.claims or state.templates):
        return rebuilt
    return with_cluster(rebuilt, state.claims, state.templates, known=state.known)


def only_groups(inventory: Inventory, groups: tuple[NodeGroup, ...]) -> Inventory:
    """``inventory`` as if ``groups`` were its only node classes — devices, pools and
    reachability unchanged (nothing is "missing"), caches of its own — so a search answers for
    those nodes alone (``draguard explain``'s per-class rows)."""
    return dataclasses.replace(inventory, groups=groups, profiles=inventory.profiles.fresh(), cache=BoundedCache())


def _left(capacity: Mapping[str, object], used: Mapping[str, Quantity]) -> dict[str, object]:
    """Capacity left per name (``consumedCapacity`` keys are the names the device publishes)."""
    out: dict[str, object] = {}
    for name, cap in capacity.items():
        amount = used.get(name)
        value = getattr(cap, "value", None)
        if amount is None or value is None:
            out[name] = cap
            continue
        left = value.sub(amount)
        if left.nanos < 0:
            left = Quantity(0)
        out[name] = cap.model_copy(update={"value": left})  # type: ignore[attr-defined]
    return out


def consumed_signature(used: Mapping[str, Quantity]) -> tuple[tuple[str, int], ...]:
    """What a share's consumption looks like to a claim: devices of one profile with equal
    signatures stay alike in the held view (one new profile id per profile and signature)."""
    return tuple(sorted((k, q.nanos) for k, q in used.items()))


def shared_device(
    dev: DeviceRecord, used: Mapping[str, Quantity], body: int, shape: int, left: Mapping[str, object] | None = None,
) -> DeviceRecord:
    """``dev`` in the held view when shares consume ``used`` of it: the capacity left (``left``
    when the caller has it already: devices of one body and consumption share it), the published
    capacity kept for CEL, and the new profile ids ``body`` / ``shape``."""
    return dataclasses.replace(
        dev, capacity=left if left is not None else _left(dev.capacity, used), published=dev.capacity,  # type: ignore[arg-type]
        bare_profile=body, profile=shape,
    )


def capacity_left(dev: DeviceRecord, used: Mapping[str, Quantity]) -> Mapping[str, object]:
    """The capacity ``dev`` has left when shares consume ``used`` of it."""
    return _left(dev.capacity, used)


def pool_left(pool: PoolRecord, used_counters: Mapping[tuple[str, str], Quantity]) -> PoolRecord:
    """``pool`` in the held view: its shared counters less what its dedicated devices consume."""
    sets: dict[str, dict[str, Quantity]] = {}
    for set_name, counters in pool.counter_sets.items():
        sets[set_name] = {}
        for cname, total in counters.items():
            used_q = used_counters.get((set_name, cname))
            left = total if used_q is None else total.sub(used_q)
            sets[set_name][cname] = left if left.nanos >= 0 else Quantity(0)
    return dataclasses.replace(pool, counter_sets=sets)


def held_view(inventory: Inventory) -> Inventory:
    """The snapshot as the allocator sees it today (see the module docstring); ``inventory``
    itself when nothing is held and no potential node would have to be left out."""
    alloc = inventory.cluster.allocations
    if alloc.empty and not any(g.potential for g in inventory.groups):
        return inventory
    devices: list[DeviceRecord] = list(inventory.devices)
    next_body = 1 + max((d.bare_profile for d in devices), default=0)
    next_shape = 1 + max((d.profile for d in devices), default=0)
    bodies: dict[tuple[int, tuple[tuple[str, int], ...]], int] = {}
    shapes: dict[tuple[int, tuple[tuple[str, int], ...]], int] = {}
    for i, used in alloc.consumed.items():
        dev = devices[i]
        if not used or i in alloc.dedicated:
            continue
        sig = consumed_signature(used)
        body = bodies.setdefault((dev.bare_profile, sig), next_body + len(bodies))
        shape = shapes.setdefault((dev.profile, sig), next_shape + len(shapes))
        devices[i] = shared_device(dev, used, body, shape)
    pools: dict[PoolKey, PoolRecord] = dict(inventory.pools)
    for key, used_counters in alloc.counters.items():
        pool = pools.get(key)
        if pool is None:
            continue
        pools[key] = pool_left(pool, used_counters)
    groups: list[NodeGroup] = []
    reached: set[int] = set()
    for group in inventory.groups:
        if group.potential:
            continue
        reached.update(group.devices)
        free = tuple(i for i in group.devices if i not in alloc.dedicated)
        groups.append(NodeGroup(group.nodes, free))
    # ``reachable`` stays "devices an existing node reaches": a held device is not missing from
    # the cluster (no doubt about registration), it is taken — the groups say that
    reachable = tuple(sorted(reached))
    return dataclasses.replace(
        inventory, pools=pools, devices=tuple(devices), groups=tuple(groups), reachable=reachable,
        profiles=ProfileIndex(devices, _base_ids(devices, pools)), cache=BoundedCache(),
    )
