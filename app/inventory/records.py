"""The immutable records an :class:`~app.inventory.Inventory` is made of.

Why plain frozen dataclasses: the snapshot is shared between concurrent webhook requests and
rebuilt, never mutated, when the watch delivers changes; the search reads these fields in its
inner loop, so they are precomputed (fully qualified attributes, CEL device, profile ids).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..k8s import DeviceCapacity, DeviceTaint, Quantity, Taint
from .celdevice import build_cel_device

__all__ = ["AttrValue", "DeviceRecord", "NodeGroup", "NodeInfo", "PoolKey", "PoolRecord"]

PoolKey = tuple[str, str]
"""(driver, pool name)."""

AttrValue = tuple[str, object]
"""(kind, value) of a device attribute: ``("string", "a100")``, ``("int", 3)``…"""


@dataclass(frozen=True, slots=True, eq=False)
class DeviceRecord:
    """One device of the newest generation of its pool, with everything the search needs.

    Devices alike (the same bare profile) share their ``capacity``, ``taints`` and ``counters`` objects,
    and attribute names and string values are interned: a record holds no pydantic ``Device``,
    whose memory would grow with every device of a 100,000-device inventory."""

    index: int
    driver: str
    pool: str
    slice_name: str
    name: str
    multi: bool
    attributes: Mapping[str, AttrValue]
    """Attributes by fully qualified name (unqualified names get the driver's domain)."""
    broken_attribute: str | None
    """The name of an attribute with no value set: every selector fails on such a device."""
    capacity: Mapping[str, DeviceCapacity]
    taints: tuple[DeviceTaint, ...]
    counters: Mapping[tuple[str, str], Quantity]
    """(counter set, counter) → amount consumed from the pool's shared counters."""
    node_label: str
    """Where the device lives, for messages: the node name, or "pool <name>"."""
    profile: int
    """The device's full profile id: its content apart from name and location (equal: alike for every claim)."""
    bare_profile: int
    """The profile id without attributes: capacities and policies, taints, counters, sharing."""
    own_raw_attributes: Mapping[str, AttrValue] | None = None
    """Attributes as the slice names them, when some name is qualified; ``None`` when every name
    is unqualified: they are then ``attributes`` with the driver's domain taken off (one dict
    per device fewer, see :attr:`raw_attributes`)."""
    cel_error: str | None = None
    """Why selectors cannot be evaluated on the device (the CEL device's ``error``), if so."""
    published: Mapping[str, DeviceCapacity] | None = None
    """The capacity the slice publishes, where ``capacity`` is what is left of it (a snapshot with
    today's allocations applied, :mod:`.held`): CEL selectors read the published value."""
    _cel: Any = field(default=None, init=False, repr=False, compare=False)

    @property
    def cel(self) -> Any:
        """The CEL ``device`` value, built on first use and kept (see :mod:`.celdevice`); two
        threads racing build two equal values and one is kept."""
        got = self._cel
        if got is None:
            source = self.published if self.published is not None else self.capacity
            caps = {n: (c.value if c.value is not None else Quantity(0)) for n, c in source.items()}
            got = build_cel_device(self.driver, self.multi, self.raw_attributes, caps)
            object.__setattr__(self, "_cel", got)
        return got

    @property
    def raw_attributes(self) -> Mapping[str, AttrValue]:
        """Attributes as the slice names them (what the CEL device is built from)."""
        own = self.own_raw_attributes
        if own is not None:
            return own
        cut = len(self.driver) + 1
        return {name[cut:]: value for name, value in self.attributes.items()}

    @property
    def pool_key(self) -> PoolKey:
        return (self.driver, self.pool)

    @property
    def where(self) -> str:
        """``node-1/gpu-0, pool node-1`` — enough for a human to find the device."""
        return f"{self.node_label}/{self.name}, pool {self.pool}"


@dataclass(frozen=True, slots=True)
class PoolRecord:
    """The newest generation of one pool."""

    driver: str
    name: str
    generation: int
    complete: bool
    invalid: str | None
    counter_sets: Mapping[str, Mapping[str, Quantity]] = field(default_factory=dict)
    slices: int = 0
    """Slices of the newest generation present."""
    expected: int = 0
    """``resourceSliceCount`` of the newest generation (0 when unknown)."""

    @property
    def key(self) -> PoolKey:
        return (self.driver, self.name)

    @property
    def usable(self) -> bool:
        return self.complete and self.invalid is None

    @property
    def counter_signature(self) -> tuple[tuple[str, tuple[tuple[str, int], ...]], ...]:
        """The pool's shared counters and their limits, comparable between pools."""
        return tuple(sorted((s, tuple(sorted((c, q.nanos) for c, q in cs.items()))) for s, cs in self.counter_sets.items()))


@dataclass(frozen=True, slots=True)
class NodeGroup:
    """Nodes that reach exactly the same devices, so one search answers for all of them.

    ``devices`` are indices into :attr:`Inventory.devices` in the order the allocator visits
    them (pool, slice, position in slice).  Groups whose devices have the same profiles in the
    same pool layout form a node class (``Projection.group_classes``): their answers are equal.
    """

    nodes: tuple[str, ...]
    """Empty when the group stands for "some node": no Node objects are known."""
    devices: tuple[int, ...]
    potential: bool = False
    """True for a node an autoscaler can create (a node-group template, ``draguard.io/potential``),
    or a node reaching devices only a template publishes: it counts for proofs, never as "now"."""

    @property
    def label(self) -> str:
        if self.potential and self.nodes:
            return f"{self.nodes[0]} (potential)" if len(self.nodes) == 1 else f"{self.nodes[0]} (+{len(self.nodes) - 1} alike, potential)"
        if not self.nodes:
            return "(some node)"
        if len(self.nodes) == 1:
            return self.nodes[0]
        return f"{self.nodes[0]} (+{len(self.nodes) - 1} alike)"



@dataclass(frozen=True, slots=True)
class NodeInfo:
    """What the scheduler's node filters read of one Node, shared by every node alike.

    Why interned: a thousand nodes of one node pool carry the same labels apart from their
    hostname, the same taints and the same device plugins; equal infos are one object, so a
    pod's filters are decided once per distinct info, not once per node (see
    :mod:`app.satisfy.placement`)."""

    labels: Mapping[str, str]
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    device_plugin: frozenset[str] = frozenset()
    """Extended resources with allocatable > 0 on the node: served by a device plugin there, so
    DRA does not back them on this node (scheduler NodeResourcesFit/DRA split)."""
