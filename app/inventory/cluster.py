"""What the cluster already holds besides devices: ResourceClaims (with their allocations) and
ResourceClaimTemplates.

Why in the inventory: two questions read them.  *References* — a pod names a claim or a
template; whether it exists is a fact about the cluster (or about the files that describe it).
*Now* — an allocated claim holds devices, capacity and counters; "would it fit today?" starts the
allocator from that state, while "could it ever fit?" starts from an empty cluster and only
uses an allocated claim of the pod itself (it pins the pod to its allocation's node selector).

Only what allocation and references need is kept per claim (no raw objects): 50,000 allocated
claims of a busy cluster must fit in a bounded, measured amount of memory.

``known`` separates "absent" from "not known": without a source of claims (lint with no claim
files in the inventory, serve without ``--kube``) a reference that resolves nowhere is not a
finding of the cluster, only of the files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..k8s import AllocationResult, Quantity, ResourceClaimSpec

__all__ = ["EMPTY_CLUSTER", "Allocations", "ClusterState", "HeldClaim", "ObjectKey"]

ObjectKey = tuple[str, str]
"""(namespace, name) of a namespaced object."""


@dataclass(frozen=True, slots=True)
class HeldClaim:
    """One ResourceClaim as the cluster holds it: its spec (immutable), allocation, consumers."""

    namespace: str
    name: str
    uid: str = ""
    spec: ResourceClaimSpec | None = None
    """None when the claim's spec could not be read (the claim still exists for references)."""
    allocation: AllocationResult | None = None
    reserved_for: tuple[str, ...] = ()
    """Names of the pods (same namespace) in ``status.reservedFor``."""
    deleting: bool = False


@dataclass(frozen=True, slots=True)
class Allocations:
    """What allocated claims hold, per device of the snapshot (indices into ``Inventory.devices``).

    Upstream's allocator subtracts exactly this before it searches: a device of a non-shareable
    kind allocated to any claim is held whole; a shareable device (``allowMultipleAllocations``)
    has the capacity of its shares consumed; a partitionable device consumes its pool's shared
    counters.  ``holders`` names who holds a device — shown only to the holder's own namespace
    (no leak across tenants: other namespaces see counts).
    """

    dedicated: frozenset[int] = frozenset()
    consumed: Mapping[int, Mapping[str, Quantity]] = field(default_factory=dict)
    """Device index → capacity name (fully qualified, as the device publishes it) → consumed."""
    counters: Mapping[tuple[str, str], Mapping[tuple[str, str], Quantity]] = field(default_factory=dict)
    """Pool (driver, pool) → (counter set, counter) → consumed by allocated devices."""
    holders: Mapping[int, tuple[ObjectKey, ...]] = field(default_factory=dict)
    """Device index → the claims that hold (a share of) it, each once and sorted: an order that
    does not depend on the order the claims arrived in, so allocations kept up to date event by
    event (:mod:`.ledger`) equal allocations summed from scratch."""
    unknown: int = 0
    """Allocation results naming a device the snapshot does not have (an older pool generation,
    a slice already gone): they hold nothing the search could use."""
    claims: int = 0
    """Allocated claims counted (``status.allocation`` set)."""

    @property
    def empty(self) -> bool:
        return not (self.dedicated or self.consumed or self.counters)


@dataclass(frozen=True, slots=True)
class ClusterState:
    """Claims and templates of the cluster (or of the inventory files), and what they hold."""

    claims: Mapping[ObjectKey, HeldClaim] = field(default_factory=dict)
    templates: Mapping[ObjectKey, ResourceClaimSpec | None] = field(default_factory=dict)
    """ResourceClaimTemplate (namespace, name) → its ``spec.spec`` (None when unreadable)."""
    known: bool = False
    """True when a source of claims and templates was given and has been read completely."""
    allocations: Allocations = field(default_factory=Allocations)
    sharing_pods: tuple[Mapping[str, Any], ...] = ()
    """For one admission review only: the pods of the request's namespace that already use a claim
    the reviewed object names while the picture holds it unallocated (``app.server.sharing``
    lists them); the pipeline warns when one of them and the reviewed pod cannot share a node.
    Empty everywhere else."""


EMPTY_CLUSTER = ClusterState()
"""No claims, no templates, nothing known about them: every inventory without a claim source."""
