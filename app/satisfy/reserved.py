"""The 256-consumer limit of a shared ResourceClaim: ``status.reservedFor`` holds at most 256 entries.

Why it matters: a ``resourceClaimName`` in a pod template is one claim for every replica, and the
scheduler's PreBind adds each pod to the claim's ``status.reservedFor`` (one entry per pod, unique by
UID).  The API server refuses a status with more than ``ResourceClaimReservedForMaxSize`` entries
(``status.reservedFor: Too many: 257: must have at most 256 items``), so the 257th pod passes every
Filter and then fails in PreBind, again and again, while 256 pods hold the claim: a workload of
300 replicas on one claim runs at most 256 of them (``k8s.io/api`` ``resource/v1``: 256 in 1.34 to
1.38; ``resourceclaim.CanBeReserved`` sets no other limit).  It is a count, not a denial: the first
256 run.

With ``DRAWorkloadResourceClaims`` (beta, off by default in 1.37) a claim the pod's PodGroup lists
is reserved for the PodGroup — one entry for all its pods (``resourceclaim.BindTo``): a pod template
that names a scheduling group may then not count against the limit, and nothing is said.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..inventory import ClusterState
from ..k8s import DEFAULT_TARGET, Note, Reason, Severity, Target
from .pod import PodClaim, PodRequest, ReplicaCount

__all__ = ["RESERVED_FOR_MAX", "cap_by_reserved_for", "reserved_for_full", "reserved_for_limit"]

RESERVED_FOR_MAX = 256
"""``ResourceClaimReservedForMaxSize`` (``k8s.io/api/resource/v1``), unchanged from 1.34 to 1.38."""

_LIMITS: dict[str, int] = {}
"""Versions whose limit differs from :data:`RESERVED_FOR_MAX` (none so far): where a future version
changes it, its row goes here."""


def reserved_for_limit(target: Target = DEFAULT_TARGET) -> int:
    """The most entries ``status.reservedFor`` holds at ``target``'s version."""
    return _LIMITS.get(target.version, RESERVED_FOR_MAX)


def _shared(request: PodRequest) -> list[PodClaim]:
    return [c for c in request.claims if c.shared]


def cap_by_reserved_for(count: ReplicaCount, request: PodRequest, replicas: int, *,
                        target: Target = DEFAULT_TARGET, cluster: ClusterState | None = None) -> ReplicaCount:
    """``count`` capped at the reservedFor limit when every replica of ``request`` shares a claim
    (a ``resourceClaimName``) and more replicas than the limit would otherwise hold their devices.
    The cap is exact when the count was: 256 pods hold the claim, the rest stay Pending.

    ``cluster`` (a count from today's allocations): the pods the claim is reserved for already
    take their entries — the room left is what the limit leaves."""
    shared = _shared(request)
    if not shared or any(n.fail_open for n in count.notes):
        return count
    limit = reserved_for_limit(target)
    taken, claim = 0, shared[0]
    for c in shared if cluster is not None else ():
        ns, _, name = c.key.partition("/")
        held = cluster.claims.get((ns, name)) if cluster is not None and name else None
        if held is not None and len(held.reserved_for) > taken:
            taken, claim = len(held.reserved_for), c
    room = max(0, limit - taken)
    if replicas <= room or count.fit <= room:
        return count
    name = claim.key or claim.origin
    held_text = f", {taken} of them taken already" if taken else ""
    notes = [n for n in count.notes if n.reason != Reason.REPLICAS_EXCEED_CAPACITY]
    notes.append(Note(
        Reason.REPLICAS_EXCEED_CAPACITY,
        f"at most {room} of {replicas} pods can run at once: a ResourceClaim's reservedFor holds at most {limit} "
        f"consumers{held_text}, and every replica is a consumer of ResourceClaim {name} (pod claim \"{claim.name}\"): "
        f"{_rest(replicas - room)} Pending until one of the {limit} ends",
        claim.path, Severity.WARNING,
        details={"fit": room, "replicas": replicas, "exact": count.exact, "limit": "reservedFor"}))
    return dataclasses.replace(count, fit=room, notes=notes)


def reserved_for_full(request: PodRequest, cluster: ClusterState, pod_name: str, *,
                      target: Target = DEFAULT_TARGET) -> list[Note]:
    """``CapacityInUse`` (a warning: "not now") for a pod about to be created that names a shared
    claim whose ``status.reservedFor`` is full already: it passes the scheduler's filters and fails in
    PreBind until one of the claim's consumers ends.  Counted from the pods the cluster's reduced
    claim keeps (``HeldClaim.reserved_for``: pod entries only, so the count is never more than the
    claim has); the pod itself, if already listed, is not counted."""
    if not cluster.known:
        return []
    limit = reserved_for_limit(target)
    out: list[Note] = []
    for claim in _shared(request):
        ns, _, name = claim.key.partition("/")
        held = cluster.claims.get((ns, name)) if name else None
        if held is None:
            continue
        others = _others(held.reserved_for, pod_name)
        if others >= limit:
            out.append(Note(
                Reason.CAPACITY_IN_USE,
                f"ResourceClaim {claim.key} is reserved for {others} pods already, the most its status.reservedFor "
                f"holds ({limit}): the pod passes the scheduler's filters but cannot be added to the claim, and waits "
                "until one of them ends",
                claim.path, Severity.WARNING, details={"claim": claim.name, "reservedFor": others, "limit": limit}))
    return out


def _rest(n: int) -> str:
    return "the other one stays" if n == 1 else f"the other {n} stay"


def _others(reserved: Sequence[str], pod_name: str) -> int:
    return sum(1 for p in reserved if p != pod_name)
