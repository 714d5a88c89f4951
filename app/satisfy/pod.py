"""The per-pod question's vocabulary: what a caller tells the engine about a pod, and what it gets back.

Why a pod is not a list of claims: the scheduler asks whether *all* of a pod's claims can be
allocated together on *one* node the pod may use (``Allocate(node, claims)`` in one call: devices
taken by one claim are gone for the next, shared capacity adds up, counters are summed per pool).
The pod's own node constraints (``nodeName``, ``nodeSelector``, required node affinity, tolerations
against node taints) and its containers' extended-resource requests change which nodes count and
which claims exist, so they travel with the claims.

These types are plain frozen dataclasses: the workload layer builds them from Pods and pod
templates (it knows the field paths and which claim object a reference resolves to); the engine
never reads a Pod.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..k8s import AllocationResult, NodeSelector, Note, Path, Quantity, ResourceClaimSpec, Toleration

__all__ = ["ClassVerdict", "ContainerResources", "PodClaim", "PodPlacement", "PodRequest", "PodVerdict", "ReplicaCount"]


@dataclass(frozen=True, slots=True)
class PodClaim:
    """One claim of the pod as ``Allocate`` sees it.

    ``name`` is the pod's ``spec.resourceClaims[i].name``; ``origin`` a phrase for messages
    (``template "gpu"``, ``claim "shared-gpu"``); ``path`` the field path of the pod entry
    (``spec.resourceClaims[0]``, or template-prefixed for a workload).  ``shared`` marks a
    ``resourceClaimName`` (one object for every replica; ``key`` is its ``namespace/name``).
    ``allocation``, when the claim is already allocated, pins the pod to the allocation's node
    selector and its devices stay held — the engine does not allocate it again.
    """

    name: str
    spec: ResourceClaimSpec
    origin: str
    path: Path
    shared: bool = False
    allocation: AllocationResult | None = None
    key: str = ""


@dataclass(frozen=True, slots=True)
class ContainerResources:
    """A container's extended-resource requests, for the implicit claim of DRA-backed extended
    resources.  ``init`` with ``restart_always`` is a sidecar (long-lived, like a regular
    container); a plain init container runs before the others and its devices can be reused.
    ``path`` is the container's field path (``spec.containers[0]``), for messages."""

    name: str
    index: int
    requests: Mapping[str, Quantity]
    init: bool = False
    restart_always: bool = False
    path: Path | None = None


@dataclass(frozen=True, slots=True)
class PodPlacement:
    """The pod's own node constraints (scheduler filters NodeName, NodeAffinity, TaintToleration,
    NodeUnschedulable).  ``affinity`` is ``requiredDuringSchedulingIgnoredDuringExecution``."""

    node_name: str = ""
    node_selector: Mapping[str, str] = field(default_factory=dict)
    affinity: NodeSelector | None = None
    tolerations: tuple[Toleration, ...] = ()


@dataclass(frozen=True, slots=True)
class PodRequest:
    """Everything the engine needs of one pod: claims in ``spec.resourceClaims`` order,
    containers (for extended resources) and placement.  ``spec_path`` is the pod spec's own
    path (``spec``, ``spec.template.spec``), where messages about placement point."""

    claims: tuple[PodClaim, ...]
    containers: tuple[ContainerResources, ...] = ()
    placement: PodPlacement = field(default_factory=PodPlacement)
    spec_path: Path = field(default_factory=lambda: Path.root("spec"))


@dataclass(frozen=True, slots=True)
class ClassVerdict:
    """The answer on one class of alike nodes: ``ok`` True (all claims fit), False (proved not to),
    None (not decided); ``reason`` the first thing that fails there, in words (empty when ok)."""

    label: str
    nodes: tuple[str, ...]
    ok: bool | None
    reason: str = ""
    eligible: bool = True
    """False when the pod's own node filters (nodeName, nodeSelector, affinity, taints) exclude
    every node of the class: a DaemonSet controller makes no pod there."""


@dataclass(frozen=True, slots=True)
class PodVerdict:
    """``satisfiable``: True (some node takes every claim), False (proof that none does), None
    (unknown: doubts, deadline, missing classes).  ``notes`` are the findings-to-be;
    ``per_class`` the answer per class of alike nodes, for ``draguard explain``."""

    notes: list[Note]
    satisfiable: bool | None
    per_class: tuple[ClassVerdict, ...] = ()


@dataclass(frozen=True, slots=True)
class ReplicaCount:
    """How many replicas hold their claims at once as the scheduler places them.  ``exact``
    False means ``fit`` is an upper bound ("at most"); ``notes`` explain the count.  A count the
    budget cut short says so the one way every answer does — a note marked ``fail_open`` — and
    its ``fit`` (what was placed before) is no answer."""

    fit: int
    exact: bool
    notes: list[Note] = field(default_factory=list)
