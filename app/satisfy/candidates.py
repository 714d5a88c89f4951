"""Per (request alternative, device): would the allocator consider the device, and if not, why.

Why a status instead of a bool: the order of the allocator's checks decides what happens —
a pool that is incomplete is skipped before any selector runs; a selector error aborts; a
capacity or taint miss only skips the device.  The explanation of an unsatisfiable claim is
built from the same statuses.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from app.capacity import CapacityFit, evaluate
from app.inventory import DeviceRecord, Inventory
from app.k8s import DeviceTaint, DeviceToleration
from app.satisfy.plan import Alternative
from app.satisfy.selectors import SelectorError, SelectorSet, compile_selectors

__all__ = ["Candidates", "Entry", "Status", "blocking_taint", "candidates_for", "content_key"]

_BLOCKING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


class Status(enum.IntEnum):
    OK = 0
    ERROR = 1
    NO_MATCH = 2
    CAPACITY = 3
    TAINT = 4
    POOL = 5


@dataclass(frozen=True, slots=True)
class Entry:
    dev: DeviceRecord
    status: Status
    fit: CapacityFit | None = None
    error: SelectorError | None = None
    taint: DeviceTaint | None = None


def _tolerates(tol: DeviceToleration, taint: DeviceTaint) -> bool:
    if tol.effect and tol.effect != taint.effect:
        return False
    if tol.key and tol.key != taint.key:
        return False
    if tol.operator == "Exists":
        return True
    return tol.value == taint.value


def blocking_taint(dev: DeviceRecord, tolerations: tuple[DeviceToleration, ...]) -> DeviceTaint | None:
    """The first NoSchedule/NoExecute taint no toleration covers (other effects never block)."""
    for taint in dev.taints:
        if taint.effect in _BLOCKING_EFFECTS and not any(_tolerates(t, taint) for t in tolerations):
            return taint
    return None


class Candidates:
    """Lazily computed entries of one alternative over the inventory's devices."""

    def __init__(self, alt: Alternative, inventory: Inventory) -> None:
        self.alt = alt
        self.inventory = inventory
        cls = inventory.classes.get(alt.class_name)
        class_selectors = tuple(s.cel.expression if s.cel is not None else None for s in cls.spec.selectors) if cls else ()
        self.selectors: SelectorSet = compile_selectors(alt.class_name, class_selectors, alt.selectors)
        self._by_shape: dict[int, tuple[Status, CapacityFit | None, SelectorError | None, DeviceTaint | None]] = {}
        self._entries: dict[int, Entry] = {}

    def entry(self, dev: DeviceRecord) -> Entry:
        got = self._entries.get(dev.index)
        if got is not None:
            return got
        pool = self.inventory.pools[dev.pool_key]
        if not pool.usable and not self.alt.all_mode:
            entry = Entry(dev, Status.POOL)
        else:
            status, fit, err, taint = self._shape_status(dev)
            entry = Entry(dev, status, fit, err, taint)
        self._entries[dev.index] = entry
        return entry

    def reachable_entries(self) -> list[Entry]:
        """The entries of every device some node can reach (``Inventory.reachable``), in order."""
        devices = self.inventory.devices
        return [self.entry(devices[i]) for i in self.inventory.reachable]

    def _shape_status(self, dev: DeviceRecord) -> tuple[Status, CapacityFit | None, SelectorError | None, DeviceTaint | None]:
        got = self._by_shape.get(dev.shape)
        if got is not None:
            return got
        matched = self.selectors.match(dev)
        result: tuple[Status, CapacityFit | None, SelectorError | None, DeviceTaint | None]
        if isinstance(matched, SelectorError):
            result = (Status.ERROR, None, matched, None)
        elif not matched:
            result = (Status.NO_MATCH, None, None, None)
        else:
            fit = evaluate(self.alt.capacity, dev.driver, dev.capacity)
            if not fit.ok:
                result = (Status.CAPACITY, fit, None, None)
            else:
                taint = blocking_taint(dev, self.alt.tolerations)
                result = (Status.TAINT, fit, None, taint) if taint is not None else (Status.OK, fit, None, None)
        self._by_shape[dev.shape] = result
        return result


def content_key(alt: Alternative) -> tuple[object, ...]:
    tolerations = tuple((t.key, t.operator, t.value, t.effect) for t in alt.tolerations)
    capacity = tuple(sorted((k, v.nanos) for k, v in alt.capacity.items()))
    return ("candidates", alt.class_name, alt.selectors, alt.all_mode, tolerations, capacity)


def candidates_for(alt: Alternative, inventory: Inventory) -> Candidates:
    """The (shared, cached on the snapshot) candidates of every alternative with this content.

    Requests that differ only in name behave identically per device, so they share one
    object; the webhook's repeated checks against one snapshot reuse the evaluated entries.
    """
    key = content_key(alt)
    got = inventory.cache.get(key)
    if got is None:
        got = Candidates(alt, inventory)
        inventory.cache[key] = got
    assert isinstance(got, Candidates)
    return got
