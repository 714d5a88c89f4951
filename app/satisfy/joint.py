"""Pods that share a claim, placed together: the first pod placed pins the claim for every other.

Why: a ResourceClaim named by several pods (``resourceClaimName``) is allocated once, for the first
of them the scheduler places, on a node that pod may use; the allocation's node selector then pins
every other pod that uses it (the scheduler's ``resourceclaim not available on the node``), and a
claim other pods hold (``reservedFor``) is never deallocated for a pod that cannot reach it.  Two
pods whose own filters (nodeSelector, affinity, taints) leave them no common place the claim's
devices reach: the second never runs, though each alone would.

What is a proof here, and only that denies:

* the order is known — the pinning pod comes first in the lint run and nothing can make it wait
  (the caller says so, :attr:`SharingPod.pins`: a bare Pod created in file order whose claims all
  exist before it, no scheduling gates, no nodeName, the same priority and scheduler as the other,
  and a pod that keeps running, so it never lets the claim go);
* for *every* node the pinning pod could run on (every node class where it fits, or may fit later)
  the nodes the claim's allocation can reach from there hold no node the later pod could run on
  (with the claim allocated fresh: a pod that runs with the pinned allocation also fits with every
  device free, so its feasible nodes are a superset of where it can run pinned).

The nodes an allocation made on node ``n`` can reach are over-approximated: for each request that
allocates at least one device (not ``allocationMode: All``, which may allocate none), the nodes
that reach any device of ``n`` the request could pick; the allocation's node selector is the
intersection of its devices' reach, so it lies within the intersection over such requests.  A
device on one node (``nodeName``) reaches that node alone; a network-attached one (``allNodes``,
a pool ``nodeSelector``) reaches many — and then disjoint node selectors prove nothing.  Anything
unknown (a node group without Node objects, a node the autoscaler may create, a class undecided,
a cut-short search) makes no proof.

Where only the order is unknown (a workload's pods, made by a controller), or only some choices of
the first pod shut the other out, the answer is a warning: one of these pods may wait.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..inventory import Inventory
from ..k8s import DEFAULT_TARGET, Budget, BudgetExceeded, Note, Reason, Severity, Target
from .candidates import Status, candidates_for
from .plan import plan_claim
from .pod import ClassVerdict, PodClaim, PodRequest, PodVerdict

__all__ = ["SharedClaims", "SharingPod"]

_NOT_PICKED = (Status.NO_MATCH, Status.CAPACITY)
"""Statuses under which the allocator never picks a device for the request (its selectors or
capacity say no); every other device might be picked (a pool being updated, a taint, a selector
error are "not now", not "never")."""


@dataclass(frozen=True, slots=True)
class SharingPod:
    """One pod (or a workload's pod template) of a lint run, as the joint check needs it."""

    label: str
    """How messages name it: ``Pod "first"``, ``Deployment "web"``."""
    request: PodRequest
    pins: bool = False
    """True when it is certainly placed before every pod that comes after it in the run (see the
    module docstring); only then is a later pod it shuts out denied."""
    order: str = ""
    """What must be equal between the pinning pod and a later one for the order to hold (their
    priority and scheduler, as text)."""
    complete: bool = True
    """False when some of its claims could not be read: its own feasibility is not decided."""


@dataclass
class _Pinned:
    """A claim's state in the run: the first pod that could be placed with it (None: not decided,
    then nothing is said about the claim)."""

    pod: SharingPod | None
    claim: PodClaim | None = None
    full: PodVerdict | None = None
    now: bool | None = None
    reach: dict[int, frozenset[str] | None] = field(default_factory=dict)


class SharedClaims:
    """The lint run's pods in file order, per unallocated shared claim: who pins it, who it shuts out.

    :meth:`observe` is called for every pod of the run in file order with its verdict (the pod
    engine's, every device free) and returns the notes for that pod."""

    def __init__(self, inventory: Inventory, *, target: Target = DEFAULT_TARGET) -> None:
        self.inventory = inventory
        self.target = target
        self._budget: Budget | None = None
        self._claims: dict[str, _Pinned] = {}
        self._groups_of: dict[int, list[int]] | None = None
        self._group_of_node: dict[str, int] | None = None
        self._versus: dict[tuple[int, str], tuple[SharingPod, _Pinned]] = {}
        self._fulls: dict[int, tuple[PodRequest, PodVerdict | None]] = {}

    def observe(self, pod: SharingPod, verdict: PodVerdict, *, budget: Budget | None = None) -> list[Note]:
        """Record ``pod`` (it may pin claims for later pods) and say what the pods before it mean for
        it; ``budget`` bounds this pod's share of the work (a check it cuts short proves nothing).

        What the pod is told first: a pod another claim shuts out never runs, so it pins nothing;
        one that may wait for another claim is not certain to be placed first."""
        self._budget = budget
        self._fulls.clear()  # kept for one pod at a time: a lint run of many pods holds no more
        notes: list[Note] = []
        fresh: list[PodClaim] = []
        for claim in _unallocated_shared(pod.request):
            state = self._claims.get(claim.key)
            if state is None:
                fresh.append(claim)
                continue
            if state.pod is None or state.pod is pod or verdict.satisfiable is not True:
                continue
            note = self._against(state, pod, claim)
            if note is not None:
                notes.append(note)
        placed = verdict.satisfiable
        if any(n.severity is Severity.ERROR for n in notes):
            placed = False
        elif notes:
            pod = dataclasses.replace(pod, pins=False)
        for claim in fresh:
            if claim.key in self._claims:
                continue  # the pod names the claim twice
            if placed is False:
                continue  # never placed (a proof even without claims it could not read): the next pod may pin it
            self._claims[claim.key] = _Pinned(pod if placed is True and pod.complete else None, claim)
        return notes

    def versus(self, other: SharingPod, pod: SharingPod, claim: PodClaim, *, budget: Budget | None = None) -> Note | None:
        """What ``other`` — a pod that already uses the unallocated ``claim`` (live: the webhook's
        namespace), whose place in the scheduler's queue is not known — means for ``pod`` (whose own
        verdict, every device free, is that it fits): a warning when one of the two may wait for
        the other, else None.  Never a denial: neither is known to be placed first."""
        self._budget = budget
        key = (id(other), claim.key)
        kept = self._versus.get(key)
        if kept is None or kept[0] is not other:
            kept = self._versus[key] = (other, _Pinned(dataclasses.replace(other, pins=False), claim))
        try:
            return self._against(kept[1], pod, claim)
        except BudgetExceeded:
            return None

    # ------------------------------------------------------------------ the check
    def _full(self, request: PodRequest) -> PodVerdict | None:
        """Every node class decided (not only the first that fits); None when that is not had.
        Kept per request object (a pod compared with several others is checked once)."""
        from .podcheck import check_pod  # the pod engine loads with the first pod (app/lazy.py)

        kept = self._fulls.get(id(request))
        if kept is not None and kept[0] is request:
            return kept[1]
        try:
            got = check_pod(request, self.inventory, budget=self._budget, target=self.target, every_class=True)
        except BudgetExceeded:
            return None  # not kept: with more time it may be had
        if any(n.fail_open for n in got.notes):
            return None  # not kept either
        kept_verdict = got if got.satisfiable is True else None
        self._fulls[id(request)] = (request, kept_verdict)
        return kept_verdict

    def _against(self, state: _Pinned, later: SharingPod, claim: PodClaim) -> Note | None:
        first = state.pod
        assert first is not None and state.claim is not None
        if state.full is None:
            state.full = self._full(first.request)
        mine = self._full(later.request)
        if state.full is None or mine is None:
            return None
        where_first = _possible(state.full.per_class)
        where_later = _possible(mine.per_class)
        if where_first is None or where_later is None:
            return None
        later_nodes = frozenset(n for c in where_later for n in c.nodes)
        first_nodes = list(dict.fromkeys(n for c in where_first for n in c.nodes))
        shut: list[str] = []
        for node in first_nodes:
            reach = self._reach_of_node(state, node)
            if reach is None:
                return None
            if reach.isdisjoint(later_nodes):
                shut.append(node)
        if not shut:
            return None
        first_text, later_text = _nodes(first_nodes), _nodes(sorted(later_nodes))
        what = f'ResourceClaim {claim.key} (pod claim "{claim.name}")'
        if len(shut) == len(first_nodes) and first.pins and first.order == later.order and self._fits_now(state):
            return Note(Reason.UNSATISFIABLE,
                        f"{later.label} can never run: {what} is shared with {first.label}, which comes first and gets "
                        f"the claim allocated on a node it may use ({first_text}); from there the claim's devices reach "
                        f"none of the nodes {later.label} may use ({later_text}); a claim stays allocated where it is "
                        f"for as long as a pod holds it (it is released only when {first.label} is gone)", claim.path, Severity.ERROR,
                        details={"claim": claim.key, "pinnedBy": first.label})
        name = claim.key.partition("/")[2]
        if len(shut) == len(first_nodes):
            why = (f"the two may use no common node the claim's devices reach ({first_text} / {later_text}), so "
                   "whichever the scheduler places first pins the claim where the other cannot run")
            brief = f'one of these pods may wait: {first.label} also uses claim "{name}" and no node suits both'
        else:
            why = (f"if {first.label} is placed on {_nodes(shut)}, the claim's devices reach none of the nodes "
                   f"{later.label} may use ({later_text})")
            brief = f'one of these pods may wait: {first.label} also uses claim "{name}" and may pin it out of reach'
        # brief: an AdmissionReview warning is cut at 120 characters; the claim and the other pod come first
        return Note(Reason.SATISFIABILITY_UNKNOWN,
                    f"one of these pods may wait: {what} is shared by {first.label} and {later.label}; {why}",
                    claim.path, Severity.WARNING, details={"claim": claim.key, "sharedWith": first.label}, brief=brief)

    def _fits_now(self, state: _Pinned) -> bool:
        """Whether the pinning pod can be placed at once with what the cluster holds: a pod that
        waits for devices lets the pods after it go first."""
        if self.inventory.cluster.allocations.empty:
            return True
        if state.now is None:
            from .podcheck import check_pod

            assert state.pod is not None
            try:
                got = check_pod(state.pod.request, self.inventory, budget=self._budget, target=self.target, now=True)
            except BudgetExceeded:
                return False
            state.now = got.satisfiable is True and not any(n.fail_open for n in got.notes)
        return state.now

    def _reach_of_node(self, state: _Pinned, node: str) -> frozenset[str] | None:
        """The nodes an allocation of the claim made on ``node`` can reach (None: not known)."""
        position = self._node_groups().get(node)
        if position is None or self.inventory.groups[position].potential:
            return None  # a node without devices of the claim's, or one an autoscaler may add
        if position not in state.reach:
            assert state.claim is not None
            state.reach[position] = self._reach(state.claim, position)
        return state.reach[position]

    def _reach(self, claim: PodClaim, position: int) -> frozenset[str] | None:
        """See the module docstring: the intersection over the claim's requests that allocate a
        device of the nodes reaching a device of group ``position`` the request could pick."""
        inventory = self.inventory
        group = inventory.groups[position]
        result: frozenset[str] | None = None
        for plan in plan_claim(claim.spec, claim.path):
            if not plan.alternatives or any(a.all_mode or a.count < 1 for a in plan.alternatives):
                continue
            nodes: set[str] = set()
            for alt in plan.alternatives:
                if alt.class_name not in inventory.classes:
                    return None
                cands = candidates_for(alt, inventory)
                for index in group.devices:
                    if cands.status(inventory.devices[index]) in _NOT_PICKED:
                        continue
                    reached = self._device_reach(index)
                    if reached is None:
                        return None
                    nodes |= reached
            result = frozenset(nodes) if result is None else result & nodes
        return result  # None: no request surely allocates a device — the allocation may reach any node

    def _device_reach(self, index: int) -> frozenset[str] | None:
        groups = self.inventory.groups
        out: set[str] = set()
        for position in self._device_groups().get(index, ()):
            group = groups[position]
            if group.potential or not group.nodes:
                return None
            out.update(group.nodes)
        return frozenset(out)

    def _device_groups(self) -> dict[int, list[int]]:
        if self._groups_of is None:
            self._groups_of = {}
            for position, group in enumerate(self.inventory.groups):
                for index in group.devices:
                    self._groups_of.setdefault(index, []).append(position)
        return self._groups_of

    def _node_groups(self) -> dict[str, int]:
        if self._group_of_node is None:
            self._group_of_node = {}
            for position, group in enumerate(self.inventory.groups):
                for node in group.nodes:
                    self._group_of_node.setdefault(node, position)
        return self._group_of_node


def _unallocated_shared(request: PodRequest) -> list[PodClaim]:
    """The pod's claims by name that are not allocated yet (an allocated claim pins already: the
    pod's own check reads its node selector)."""
    return [c for c in request.claims if c.shared and c.allocation is None and c.key]


def _possible(classes: Sequence[ClassVerdict]) -> list[ClassVerdict] | None:
    """The classes a pod may run on, now or later (fits, or undecided); None when one has no named
    node (a group without Node objects: where it is, is not known)."""
    out = [c for c in classes if c.ok is not False]
    if any(not c.nodes for c in out):
        return None
    return out


def _nodes(names: Iterable[str], limit: int = 4) -> str:
    items = list(dict.fromkeys(names))
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")
