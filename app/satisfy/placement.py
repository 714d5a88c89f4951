"""The scheduler's node filters for a pod, before DRA: which nodes may the pod use at all?

Why here and exact: a pod whose ``nodeSelector`` excludes every node with the device is as
unschedulable as a claim that asks for 50Gi of 40Gi GPUs, and draguard denies only on proofs —
so the filters follow kube-scheduler 1.36 to the letter, in its order (NodeUnschedulable,
NodeName, TaintToleration, NodeAffinity), and say which one turned a node away.  A node known only
from a slice (no Node object) or an inventory without Node objects has no labels or taints to
read: it passes every filter but the name, so nothing is ever denied for what is not known.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from ..inventory import NodeInfo, match_node_selector
from ..k8s import AllocationResult, Taint, Toleration
from .pod import PodPlacement

__all__ = ["TRANSIENT_TAINTS", "Filter", "PlacementFilter", "tolerates"]

TRANSIENT_TAINTS = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/")
"""Taints controllers add and remove with the node's condition: an exclusion by them is "not now"."""

_UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", value="", effect="NoSchedule")


class Filter(enum.Enum):
    """Which filter rejected a node; the value is the scheduler's own wording."""

    UNSCHEDULABLE = "node(s) were unschedulable"
    NODE_NAME = "node(s) didn't match the requested node name"
    TAINT = "node(s) had untolerated taint(s)"
    AFFINITY = "node(s) didn't match Pod's node affinity/selector"
    CLAIM_NODE = "resourceclaim not available on the node"


def tolerates(tol: Toleration, taint: Taint) -> bool:
    """core/v1 ``ToleratesTaint``: effect and key match unless empty; ``Exists`` any value, ``Equal``
    (or empty) the exact value; ``Lt``/``Gt`` need an alpha gate that is off, so they never match."""
    if tol.effect and tol.effect != taint.effect:
        return False
    if tol.key and tol.key != taint.key:
        return False
    if tol.operator == "Exists":
        return True
    if tol.operator in ("", "Equal"):
        return tol.value == taint.value
    return False


def _untolerated(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> Taint | None:
    for taint in taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


class PlacementFilter:
    """The pod's filters, decided once per distinct :class:`NodeInfo` (alike nodes share one) unless
    the pod names nodes (``nodeName``, ``matchFields``), then per node."""

    def __init__(self, placement: PodPlacement, pins: Sequence[AllocationResult] = ()) -> None:
        self.placement = placement
        self.pins = [a.node_selector for a in pins if a.node_selector is not None]
        affinity = placement.affinity
        by_name = bool(placement.node_name) or any(
            t.match_fields for t in (affinity.node_selector_terms if affinity else ())
        ) or any(t.match_fields for sel in self.pins for t in sel.node_selector_terms)
        self.by_name = by_name
        """True when a decision depends on the node's name, not only on what its :class:`NodeInfo` holds."""
        keys = set(placement.node_selector)
        for sel in ([affinity] if affinity else []) + self.pins:
            for t in sel.node_selector_terms:
                keys.update(r.key for r in t.match_expressions)
        self._keys = tuple(sorted(keys))
        """The label keys the filters read: nodes equal on these (and on taints, cordon) are alike."""
        self._memo: dict[object, tuple[Filter, str] | None] = {}

    def miss(self, name: str, info: NodeInfo | None, *, lenient: bool = False) -> tuple[Filter, str] | None:
        """Why the pod may not use node ``name`` (the filter and a detail), or None if it may.
        ``lenient`` ignores what is only "for now": a cordon and the node lifecycle controller's
        taints (``node.kubernetes.io/…``: not-ready, unreachable, pressure) — nodes come back."""
        seen: object = None if info is None else (
            tuple(info.labels.get(k) for k in self._keys), id(info.taints), info.unschedulable)
        key: object = ((name, seen) if self.by_name else seen, lenient)
        if key in self._memo:
            return self._memo[key]
        got = self._decide(name, info, lenient)
        if len(self._memo) < 100_000:
            self._memo[key] = got
        return got

    def _decide(self, name: str, info: NodeInfo | None, lenient: bool) -> tuple[Filter, str] | None:
        p = self.placement
        if not lenient and info is not None and info.unschedulable and _untolerated((_UNSCHEDULABLE_TAINT,), p.tolerations):
            return (Filter.UNSCHEDULABLE, "cordoned (spec.unschedulable)")
        if p.node_name and name and p.node_name != name:
            return (Filter.NODE_NAME, f"the pod's nodeName is {p.node_name}")
        if info is None:
            return None
        taints = [t for t in info.taints if not t.key.startswith(TRANSIENT_TAINTS)] if lenient else info.taints
        taint = _untolerated(taints, p.tolerations)
        if taint is not None:
            return (Filter.TAINT, f"taint {taint.key}={taint.value}:{taint.effect} is not tolerated")
        for key, value in p.node_selector.items():
            if info.labels.get(key) != value:
                return (Filter.AFFINITY, f"excluded by the pod's nodeSelector ({key}={value})")
        if p.affinity is not None and match_node_selector(p.affinity, name, info.labels) is not True:
            return (Filter.AFFINITY, "excluded by the pod's required node affinity")
        for sel in self.pins:
            if match_node_selector(sel, name, info.labels) is False:
                return (Filter.CLAIM_NODE, "an allocated claim of the pod is pinned to other nodes")
        return None
