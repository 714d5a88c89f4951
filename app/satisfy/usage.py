"""What is free where: per DeviceClass, pool and node — devices free, shared, dedicated, and
consumable capacity used of total (``draguard capacity``).

Why per class: users ask for "a GPU of class X", not for a pool; a device counts for every class
whose selectors it matches (classes may overlap), evaluated as the allocator would (class
selectors in CEL).  Only devices of existing nodes count (potential nodes of an autoscaler are
not there now).  Held state is the snapshot's :class:`~app.inventory.Allocations`: a device held
whole is *dedicated* (all of its capacity used); a shareable device with shares is *shared* (its
consumed capacity used); anything else is *free*.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..inventory import DeviceRecord, Inventory
from ..k8s import Path, Quantity
from .candidates import Status, candidates_for
from .plan import Alternative

__all__ = ["CapacityUse", "ClassUsage", "UsageRow", "class_usage", "real_devices"]

_IN_CLASS = frozenset({Status.OK, Status.TAINT, Status.CAPACITY})


@dataclass
class CapacityUse:
    """How much of one capacity (or of the devices) is held and how much there is."""

    used: Quantity = field(default_factory=lambda: Quantity(0))
    total: Quantity = field(default_factory=lambda: Quantity(0))

    def add(self, used: Quantity, total: Quantity) -> None:
        self.used = self.used.add(used)
        self.total = self.total.add(total)

    @property
    def fraction(self) -> float:
        return 0.0 if self.total.nanos <= 0 else min(1.0, self.used.nanos / self.total.nanos)

    def as_json(self) -> dict[str, Any]:
        return {"used": str(self.used), "total": str(self.total), "fraction": round(self.fraction, 4)}


@dataclass
class UsageRow:
    """Devices of one class in one pool on one node (or the whole pool for network devices)."""

    driver: str
    pool: str
    node: str
    devices: int = 0
    free: int = 0
    shared: int = 0
    dedicated: int = 0
    capacity: dict[str, CapacityUse] = field(default_factory=dict)

    def count(self, dev: DeviceRecord, state: str, consumed: dict[str, Quantity] | None) -> None:
        self.devices += 1
        if state == "dedicated":
            self.dedicated += 1
        elif state == "shared":
            self.shared += 1
        else:
            self.free += 1
        for name, cap in dev.capacity.items():
            total = cap.value if cap.value is not None else Quantity(0)
            if state == "dedicated":
                used = total
            elif consumed is not None:
                used = consumed.get(name, Quantity(0))
            else:
                used = Quantity(0)
            self.capacity.setdefault(name, CapacityUse()).add(used, total)

    def as_json(self) -> dict[str, Any]:
        return {"driver": self.driver, "pool": self.pool, "node": self.node, "devices": self.devices, "free": self.free,
                "shared": self.shared, "dedicated": self.dedicated,
                "capacity": {k: v.as_json() for k, v in sorted(self.capacity.items())}}


@dataclass
class ClassUsage:
    """The use of one device class: in all, and per pool or node row."""

    name: str
    total: UsageRow
    rows: list[UsageRow]

    def as_json(self) -> dict[str, Any]:
        out = self.total.as_json()
        for k in ("driver", "pool", "node"):
            out.pop(k)
        return {"class": self.name, **out, "pools": [r.as_json() for r in self.rows]}


def real_devices(inventory: Inventory) -> list[int]:
    """Indices of the devices existing nodes reach (potential nodes left out), in allocator order."""
    return sorted({i for g in inventory.groups if not g.potential for i in g.devices})


def _state(i: int, inventory: Inventory) -> tuple[str, dict[str, Quantity] | None]:
    alloc = inventory.cluster.allocations
    if i in alloc.dedicated:
        return "dedicated", None
    consumed = alloc.consumed.get(i)
    if consumed is not None or (inventory.devices[i].multi and i in alloc.holders):
        return "shared", dict(consumed or {})
    return "free", None


def class_usage(inventory: Inventory, classes: Iterable[str] | None = None) -> list[ClassUsage]:
    """Usage per DeviceClass (all of the snapshot's classes by default), rows per pool and node."""
    names = sorted(inventory.classes) if classes is None else list(classes)
    devices = real_devices(inventory)
    out: list[ClassUsage] = []
    for name in names:
        alt = Alternative(request="", sub=None, path=Path.root("spec"), class_name=name, selectors=(),
                          mode="ExactCount", count=1, admin=False, tolerations=())
        cand = candidates_for(alt, inventory)
        total = UsageRow("", "", "")
        rows: dict[tuple[str, str, str], UsageRow] = {}
        for i in devices:
            dev = inventory.devices[i]
            if cand.status(dev) not in _IN_CLASS:
                continue
            state, consumed = _state(i, inventory)
            key = (dev.driver, dev.pool, dev.node_label)
            row = rows.get(key)
            if row is None:
                row = rows[key] = UsageRow(*key)
            row.count(dev, state, consumed)
            total.count(dev, state, consumed)
        out.append(ClassUsage(name, total, [rows[k] for k in sorted(rows)]))
    return out
