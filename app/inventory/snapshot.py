"""The :class:`Inventory` snapshot type.

Why immutable: the webhook answers concurrent requests against the snapshot while the watch
builds the next one; swapping a reference is the only synchronisation needed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from ..k8s import DeviceClass
from .cache import BoundedCache
from .cluster import EMPTY_CLUSTER, ClusterState
from .profiles import ProfileIndex
from .records import DeviceRecord, NodeGroup, NodeInfo, PoolKey, PoolRecord

__all__ = ["Inventory"]


@dataclass(frozen=True, eq=False)
class Inventory:
    """DeviceClasses, the newest generation of every pool, Nodes, and node groups."""

    classes: Mapping[str, DeviceClass] = field(default_factory=dict)
    pools: Mapping[PoolKey, PoolRecord] = field(default_factory=dict)
    devices: tuple[DeviceRecord, ...] = ()
    nodes: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Node name → labels."""
    node_info: Mapping[str, NodeInfo] = field(default_factory=dict)
    """Node name → what the pod's node filters read (labels, taints, cordon, device plugins);
    alike nodes share one object."""
    groups: tuple[NodeGroup, ...] = ()
    reachable: tuple[int, ...] = ()
    """Indices of the devices at least one node (group) can reach, in allocator order."""
    profiles: ProfileIndex = field(default_factory=lambda: ProfileIndex((), ()), repr=False, compare=False)
    """Devices by profile (what a claim can see of them), per read-set; see :mod:`.profiles`."""
    cluster: ClusterState = field(default=EMPTY_CLUSTER, repr=False, compare=False)
    """Claims (with allocations) and templates the cluster holds; see :mod:`.cluster`."""
    cache: BoundedCache = field(default_factory=BoundedCache, repr=False, compare=False)
    """Derived data keyed by its inputs (compiled candidate sets).  Only ever *added* to, so
    readers sharing the snapshot see either nothing or a complete value."""

    @property
    def device_count(self) -> int:
        return len(self.devices)

    @property
    def pool_count(self) -> int:
        return len(self.pools)

    @cached_property
    def node_count(self) -> int:
        """Counted once per snapshot: every pod check with a selector error asks (``error_blocks``)."""
        return len({n for g in self.groups for n in g.nodes})

    def held_view(self) -> Inventory:
        """This snapshot with what allocated claims hold taken away: the inventory "now" (see
        :mod:`.held`).  Built on first use and kept with the snapshot (two threads racing build
        two equal views and one is kept)."""
        got = self.__dict__.get("_held")
        if not isinstance(got, Inventory):
            from .held import held_view

            got = held_view(self)
            object.__setattr__(self, "_held", got)
        return got

    def reachable_devices(self) -> list[DeviceRecord]:
        return [self.devices[i] for i in self.reachable]
