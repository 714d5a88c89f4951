"""The held view ("now", :func:`~.held.held_view`) kept up to date device by device.

Why: building the view from scratch touches every device — a new record for every shared
device with capacity consumed, a profile id per device, a node group per node class — about as
much CPU as summing the claims.  A claim's change touches the few devices its results name
(and, through shared counters, the devices of their pools), so only those are made again.

What the builder keeps, for one device snapshot (its ``base``): the view's devices, pools and
node groups as mutable working copies; per device the key of its base profile id; and interned
ids with use counts.  :meth:`HeldViewBuilder.view` copies the working lists into a new immutable
:class:`~.snapshot.Inventory` (C-level copies of a few references per device): readers of an
earlier view keep theirs unchanged, and the new view has caches of its own (fresh projections,
fresh candidates), so nothing derived from an earlier view's allocations is ever reused.

Equal to :func:`~.held.held_view` of the same allocations in every field, with one liberty:
profile ids are names, not values — two devices get one id exactly when a view built from
scratch gives them one, but the numbers may differ (a view from scratch numbers in iteration
order; here an id is handed out when first needed and freed when no device uses it any more, so
the tables stay bounded by the device count under any amount of churn).  Ids of shared devices
start above the base's ids, as from scratch, so they never meet a base profile.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping

from .cache import BoundedCache
from .cluster import Allocations
from .held import capacity_left, consumed_signature, pool_left, shared_device
from .profiles import ProfileIndex
from .records import DeviceRecord, NodeGroup, PoolKey, PoolRecord
from .snapshot import Inventory

__all__ = ["HeldViewBuilder"]


class _Ids:
    """Ids for keys in use, counted: an id no device uses any more is freed and handed out again."""

    def __init__(self, start: int) -> None:
        self._ids: dict[Hashable, int] = {}
        self._uses: dict[Hashable, int] = {}
        self._free: list[int] = []
        self._next = start

    def take(self, key: Hashable) -> int:
        got = self._ids.get(key)
        if got is not None:
            self._uses[key] += 1
            return got
        got = self._free.pop() if self._free else self._next
        if got == self._next:
            self._next += 1
        self._ids[key] = got
        self._uses[key] = 1
        return got

    def drop(self, key: Hashable) -> bool:
        """One use fewer; True when the key is gone (its id freed)."""
        n = self._uses[key] - 1
        if n:
            self._uses[key] = n
            return False
        del self._uses[key]
        self._free.append(self._ids.pop(key))
        return True

    def __len__(self) -> int:
        return len(self._ids)


class HeldViewBuilder:
    """The held view of one device snapshot under allocations that change a little at a time.

    :meth:`update` takes the new allocations and what changed (the ledger's ``touched_*`` sets);
    :meth:`view` makes the immutable view for a snapshot that carries those allocations.
    """

    def __init__(self, base: Inventory) -> None:
        self._base = base
        self._devices: list[DeviceRecord] = list(base.devices)
        self._pools: dict[PoolKey, PoolRecord] = dict(base.pools)
        self._potential = any(g.potential for g in base.groups)
        real = [g for g in base.groups if not g.potential]
        self._real = real
        self._groups: list[NodeGroup] = [NodeGroup(g.nodes, g.devices) for g in real]
        self._groups_of: dict[int, list[int]] = {}
        for pos, group in enumerate(real):
            for i in group.devices:
                self._groups_of.setdefault(i, []).append(pos)
        # ``reachable`` stays "devices an existing node reaches" (see held_view): no claim changes it
        self._reachable = tuple(sorted(self._groups_of))
        self._countered: dict[PoolKey, list[int]] = {}
        for dev in base.devices:
            if dev.counters:
                self._countered.setdefault(dev.pool_key, []).append(dev.index)
        self._bodies = _Ids(1 + max((d.bare_profile for d in base.devices), default=0))
        self._shapes = _Ids(1 + max((d.profile for d in base.devices), default=0))
        self._shared: dict[int, tuple[Hashable, Hashable]] = {}
        """Device → the (body, shape) keys of its ids, for devices with capacity consumed."""
        self._left: dict[Hashable, Mapping[str, object]] = {}
        """Body key → the capacity left, one mapping for every device of that body and consumption
        (as devices alike share their capacity in the snapshot); dropped with the body's id."""
        self._signatures: dict[PoolKey, object] = {}
        self._base_ids = _Ids(0)
        self._base_keys: list[Hashable] = []
        self._base_of: list[int] = []
        for dev in self._devices:
            key = self._base_key(dev)
            self._base_keys.append(key)
            self._base_of.append(self._base_ids.take(key))
        self._view: Inventory | None = None

    @property
    def table_sizes(self) -> int:
        """Ids in use (bounded by the device count: freed ids are handed out again)."""
        return len(self._bodies) + len(self._shapes) + len(self._base_ids) + len(self._left)

    def update(self, alloc: Allocations, devices: set[int], pools: set[PoolKey], flipped: set[int]) -> None:
        """Bring the view to ``alloc``, which differs from the last allocations at most in
        ``devices`` (held whole or consumed), ``pools`` (counters in use) and ``flipped``
        (held whole or not)."""
        if not (devices or pools or flipped):
            return
        self._view = None
        again: set[int] = set(devices)
        for i in devices:
            self._set_device(i, alloc)
        for key in pools:
            self._set_pool(key, alloc)
            again.update(self._countered.get(key, ()))
        for i in again:
            self._set_base_id(i)
        positions = {p for i in flipped for p in self._groups_of.get(i, ())}
        held = alloc.dedicated
        for p in positions:
            group = self._real[p]
            self._groups[p] = NodeGroup(group.nodes, tuple(i for i in group.devices if i not in held))

    def view(self, snapshot: Inventory) -> Inventory:
        """The held view of ``snapshot`` (the base with the allocations of the last
        :meth:`update` as its cluster state): ``snapshot`` itself when nothing is held and no
        potential node must be left out, as :func:`~.held.held_view` does."""
        if snapshot.cluster.allocations.empty and not self._potential:
            return snapshot
        made = self._view
        if made is None:
            devices = tuple(self._devices)
            made = self._view = dataclasses.replace(
                self._base, pools=dict(self._pools), devices=devices, groups=tuple(self._groups),
                reachable=self._reachable, profiles=ProfileIndex(devices, tuple(self._base_of)), cache=BoundedCache(),
            )
        # one view per snapshot: its caches (candidates, projections) belong to that snapshot
        return dataclasses.replace(made, cluster=snapshot.cluster, profiles=made.profiles.fresh(), cache=BoundedCache())

    # ---------------------------------------------------------------- per device and pool
    def _set_device(self, i: int, alloc: Allocations) -> None:
        old = self._shared.pop(i, None)
        if old is not None:
            if self._bodies.drop(old[0]):
                self._left.pop(old[0], None)
            self._shapes.drop(old[1])
        dev = self._base.devices[i]
        used = alloc.consumed.get(i)
        if not used or i in alloc.dedicated:
            self._devices[i] = dev
            return
        sig = consumed_signature(used)
        keys = ((dev.bare_profile, sig), (dev.profile, sig))
        self._shared[i] = keys
        left = self._left.get(keys[0])
        if left is None:
            left = self._left[keys[0]] = capacity_left(dev, used)
        self._devices[i] = shared_device(dev, used, self._bodies.take(keys[0]), self._shapes.take(keys[1]), left)

    def _set_pool(self, key: PoolKey, alloc: Allocations) -> None:
        pool = self._base.pools.get(key)
        if pool is None:
            return
        used = alloc.counters.get(key)
        self._pools[key] = pool if used is None else pool_left(pool, used)
        self._signatures.pop(key, None)

    def _base_key(self, dev: DeviceRecord) -> Hashable:
        """What :func:`~.build._base_ids` keys a device's base profile by, in this view."""
        pool = self._pools[dev.pool_key]
        signature: object = None
        if dev.counters:
            signature = self._signatures.get(dev.pool_key)
            if signature is None:
                signature = self._signatures[dev.pool_key] = pool.counter_signature
        return (dev.bare_profile, dev.broken_attribute, dev.cel_error, pool.usable, signature)

    def _set_base_id(self, i: int) -> None:
        key = self._base_key(self._devices[i])
        if key == self._base_keys[i]:
            return
        self._base_ids.drop(self._base_keys[i])
        self._base_keys[i] = key
        self._base_of[i] = self._base_ids.take(key)
