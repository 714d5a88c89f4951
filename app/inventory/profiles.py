"""Device profiles: devices that look the same to a claim, interned once per snapshot.

Why: a real inventory is thousands of copies of a handful of devices that differ only in what no
selector reads (``uuid``, ``index``, the node they sit on).  The allocator's per-device work for
a claim — selectors, capacity fit, taints, grouping nodes that can be searched once — depends
only on what the claim can *see* of a device: its body (driver, capacities and their policies,
taints, counters, ``allowMultipleAllocations``), whether its pool is usable, and the attribute
values the claim's selectors and constraints read.  Projecting every device onto that view
gives a small number of *profiles*; per-claim work runs once per profile, and a node group
becomes a sequence of profile ids, so groups of the same hardware are recognised without
looking at their devices again.

A projection is computed once per snapshot and read-set (touching every device once, with cheap
look-ups) and kept in a small LRU, so claims that read the same attributes — the common case:
``model``, ``driverVersion`` — share it.  Identity still matters where the claim says so: a
``distinctAttribute`` on ``uuid`` puts ``uuid`` in the read-set, and every device is then its own
profile, exactly as before.
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from .records import DeviceRecord, NodeGroup

__all__ = ["AttributeReads", "ProfileIndex", "Projection"]

AttributeReads = tuple[tuple[str, str], ...] | None
"""CEL attribute reads ``(domain, id)``, sorted; ``None`` when the reads cannot be bounded."""

_MAX_PROJECTIONS = 32
_MISSING = object()


@dataclass(eq=False)
class Projection:
    """Every device's profile id under one view, and one representative device per profile."""

    ids: array[int]
    """Profile id per device index (``Inventory.devices`` order)."""
    representatives: list[int]
    """Device index of the first device (in inventory order) with each profile id."""
    _group_classes: tuple[array[int], list[int]] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def group_classes(self, devices: Sequence[DeviceRecord], groups: Sequence[NodeGroup]) -> tuple[array[int], list[int]]:
        """Per node group, a class id (equal ids: the same profiles in the same pool layout), and the
        first group of each class.  Computed once per projection."""
        with self._lock:
            if self._group_classes is None:
                interned: dict[tuple[int, ...], int] = {}
                classes = array("i")
                first: list[int] = []
                ids = self.ids
                for gi, group in enumerate(groups):
                    local: dict[tuple[str, str], int] = {}
                    sig: list[int] = []
                    for i in group.devices:
                        sig.append(local.setdefault(devices[i].pool_key, len(local)))
                        sig.append(ids[i])
                    key = tuple(sig)
                    cls = interned.get(key)
                    if cls is None:
                        cls = interned[key] = len(first)
                        first.append(gi)
                    classes.append(cls)
                self._group_classes = (classes, first)
            return self._group_classes


class ProfileIndex:
    """The per-snapshot index of device profiles (see the module docstring)."""

    def __init__(self, devices: Sequence[DeviceRecord], base: Sequence[int]) -> None:
        self._devices = devices
        self._base = base
        """Per device: the id of everything a claim can see apart from attribute values."""
        self._projections: OrderedDict[tuple[AttributeReads, tuple[str, ...]], Projection] = OrderedDict()
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[type[ProfileIndex], tuple[Sequence[DeviceRecord], Sequence[int]]]:
        """Pickled without its projections (derived on use; see :mod:`.filecache`)."""
        return (ProfileIndex, (self._devices, self._base))

    def fresh(self) -> ProfileIndex:
        """The same index without its projections (they remember node-group classes): for a
        snapshot with other node groups over the same devices."""
        return ProfileIndex(self._devices, self._base)

    @property
    def base_count(self) -> int:
        return len(set(self._base))

    def project(self, reads: AttributeReads, qualified: Sequence[str] = ()) -> Projection:
        """Devices by profile under ``reads`` (CEL attribute reads) and ``qualified`` (fully qualified
        attribute names a constraint compares).  ``reads=None`` keeps every distinct device content apart."""
        key = (reads, tuple(qualified))
        with self._lock:
            got = self._projections.get(key)
            if got is not None:
                self._projections.move_to_end(key)
                return got
        got = self._compute(reads, tuple(qualified))
        with self._lock:
            self._projections[key] = got
            while len(self._projections) > _MAX_PROJECTIONS:
                self._projections.popitem(last=False)
        return got

    def _compute(self, reads: AttributeReads, qualified: tuple[str, ...]) -> Projection:
        interned: dict[object, int] = {}
        ids = array("i")
        reps: list[int] = []
        for dev, base in zip(self._devices, self._base, strict=True):
            view: object
            if reads is None:
                view = (base, dev.profile)
            elif not reads and not qualified:
                view = base
            else:
                # The attribute as published: equal (kind, value) pairs convert to equal CEL values,
                # so reading them here keeps devices apart exactly where a selector could, without
                # building every device's CEL value (``device.attributes[dom].id`` is ``dom/id``).
                parts: list[object] = [base]
                attrs = dev.attributes
                for dom, ident in reads:
                    parts.append(attrs.get(f"{dom}/{ident}", _MISSING))
                for name in qualified:
                    parts.append(attrs.get(name))
                view = tuple(parts)
            pid = interned.get(view)
            if pid is None:
                pid = interned[view] = len(reps)
                reps.append(dev.index)
            ids.append(pid)
        return Projection(ids, reps)

