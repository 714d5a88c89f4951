"""Per (request alternative, device): would the allocator consider the device, and if not, why.

Why a status instead of a bool: the order of the allocator's checks decides what happens —
a pool that is incomplete is skipped before any selector runs; a selector error aborts; a
capacity or taint miss only skips the device.  The explanation of an unsatisfiable claim is
built from the same statuses.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from dataclasses import dataclass

from ..capacity import CapacityFit, evaluate, qualified_capacity_names
from ..cel import SelectorOrigin
from ..inventory import EMPTY_CLUSTER, DeviceRecord, Inventory
from ..k8s import DeviceTaint, DeviceToleration
from .plan import Alternative
from .selectors import SelectorError, SelectorSet, compile_selectors

__all__ = ["Candidates", "Entry", "Status", "blocking_taint", "candidates_for", "candidates_key"]

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
    """One device's verdict for one request: usable, or why not (selector, capacity, taint, error)."""

    dev: DeviceRecord
    status: Status
    fit: CapacityFit | None = None
    error: SelectorError | None = None
    taint: DeviceTaint | None = None
    rejected_by: tuple[SelectorOrigin, int, str] | None = None
    """For ``NO_MATCH``: the selector that said no (origin, index, expression)."""


_Verdict = tuple[Status, CapacityFit | None, SelectorError | None, DeviceTaint | None, tuple[SelectorOrigin, int, str] | None]


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
    """Entries of one alternative over the inventory's devices, decided once per device profile.

    The verdict for a device (pool skipped, selector error, no match, capacity, taint, ok) depends
    only on its profile under the alternative's selectors' attribute reads (see
    :mod:`app.inventory.profiles`), so it is computed on the first device of each profile and
    shared; :meth:`entry` pairs it with the device itself, which messages name.
    """

    def __init__(self, alt: Alternative, inventory: Inventory) -> None:
        self.alt = alt
        self.inventory = inventory
        cls = inventory.classes.get(alt.class_name)
        class_selectors = tuple(s.cel.expression if s.cel is not None else None for s in cls.spec.selectors) if cls else ()
        self.selectors: SelectorSet = compile_selectors(alt.class_name, class_selectors, alt.selectors)
        self.reads = self.selectors.attribute_reads()
        self.projection = inventory.profiles.project(self.reads)
        self._verdicts: dict[int, _Verdict] = {}
        self._reachable: list[tuple[Entry, int]] | None = None
        self._last_entries: tuple[Sequence[DeviceRecord], list[Entry]] | None = None

    def entries_of(self, devices: Sequence[DeviceRecord]) -> list[Entry]:
        """``entry(d)`` for each of ``devices``, kept for the last device list asked about: a
        replica replay searches one group once per pod it places, with the same device list
        (``check._prelude``), and the entries do not depend on what is held.  The list is shared:
        callers only read it.  One slot, replaced whole."""
        last = self._last_entries
        if last is not None and last[0] is devices:
            return last[1]
        got = [self.entry(d) for d in devices]
        self._last_entries = (devices, got)
        return got

    def entry(self, dev: DeviceRecord) -> Entry:
        return Entry(dev, *self._decided(dev))

    def status(self, dev: DeviceRecord) -> Status:
        """``entry(dev).status`` without making the :class:`Entry`: the searches' necessary
        conditions and the doubts count statuses over every device of a group or of the snapshot
        (tens of thousands on a fresh snapshot), and only the status is read there."""
        return self._decided(dev)[0]

    def _decided(self, dev: DeviceRecord) -> _Verdict:
        """The verdict of ``dev``'s profile, decided on the first device of it asked about."""
        pid = self.projection.ids[dev.index]
        verdict = self._verdicts.get(pid)
        if verdict is None:
            verdict = self._verdicts[pid] = self._verdict(dev)
        return verdict

    def reachable_entries(self) -> list[Entry]:
        """The entries of every device some node can reach (``Inventory.reachable``), in order."""
        devices = self.inventory.devices
        return [self.entry(devices[i]) for i in self.inventory.reachable]

    def reachable_profiles(self) -> list[tuple[Entry, int]]:
        """One entry per profile among the reachable devices (its first device, in allocator order)
        and how many reachable devices have that profile: what per-device loops over
        :meth:`reachable_entries` compute, at the cost of the distinct profiles."""
        if self._reachable is None:
            counts: dict[int, int] = {}
            first: dict[int, int] = {}
            ids = self.projection.ids
            for i in self.inventory.reachable:
                pid = ids[i]
                if pid in counts:
                    counts[pid] += 1
                else:
                    counts[pid] = 1
                    first[pid] = i
            devices = self.inventory.devices
            self._reachable = [(self.entry(devices[first[pid]]), n) for pid, n in counts.items()]
        return self._reachable

    def _verdict(self, dev: DeviceRecord) -> _Verdict:
        pool = self.inventory.pools[dev.pool_key]
        if not pool.usable and not self.alt.all_mode:
            return (Status.POOL, None, None, None, None)
        matched = self.selectors.match(dev)
        if isinstance(matched, SelectorError):
            return (Status.ERROR, None, matched, None, None)
        if not matched:
            return (Status.NO_MATCH, None, None, None, self.selectors.rejected_by.get(dev.profile))
        fit = evaluate(self.alt.capacity, dev.driver, dev.capacity)
        if not fit.ok:
            return (Status.CAPACITY, fit, None, None, None)
        taint = blocking_taint(dev, self.alt.tolerations)
        return (Status.TAINT, fit, None, taint, None) if taint is not None else (Status.OK, fit, None, None, None)


def candidates_key(alt: Alternative) -> tuple[object, ...]:
    tolerations = tuple((t.key, t.operator, t.value, t.effect) for t in alt.tolerations)
    capacity = tuple(sorted((k, v.nanos) for k, v in alt.capacity.items()))
    # how capacity names resolve (1.38: with the driver's domain) changes which devices fit
    return ("candidates", alt.class_name, alt.selectors, alt.all_mode, tolerations, capacity,
            qualified_capacity_names())


def _without_cluster(inventory: Inventory) -> Inventory:
    """``inventory`` without the claims it carries: what a cached :class:`Candidates` may hold.

    Why: the snapshots a watcher publishes as claims change share one cache
    (:func:`app.inventory.held.with_cluster`), so a :class:`Candidates` made against one of them
    outlives it there.  Holding that snapshot would keep its cluster state (every claim, the
    allocations, its held view) alive for as long as the entry lives — under allocation churn one
    stale copy of every claim per cached entry.  A :class:`Candidates` reads only the devices,
    their reachability and pools, which those snapshots share."""
    if inventory.cluster is EMPTY_CLUSTER and "_held" not in inventory.__dict__:
        return inventory
    return dataclasses.replace(inventory, cluster=EMPTY_CLUSTER)


def candidates_for(alt: Alternative, inventory: Inventory) -> Candidates:
    """The (shared, cached on the snapshot) candidates of every alternative with this content.

    Requests that differ only in name behave identically per device, so they share one
    object; the webhook's repeated checks against one snapshot reuse the evaluated entries.
    """
    key = candidates_key(alt)
    got = inventory.cache.get(key)
    if got is None:
        got = Candidates(alt, _without_cluster(inventory))
        inventory.cache.put(key, got, weight=len(got.projection.representatives))
    assert isinstance(got, Candidates)
    return got
