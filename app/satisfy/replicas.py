"""``count_replicas``: how many pods of a workload hold their claims at once, as the scheduler places them.

Why a replay and not a packing: the scheduler places one pod after another, and each pod's claims
get the allocator's *first* solution on the chosen node, with the devices of earlier pods held.
A pod asking for "any partition" takes a whole GPU first if the whole GPU comes first, so six such
pods may find three places where twelve quarter partitions exist.  The count replays exactly
that, on one node of each node class, with every device free at the start.

Exactness: nodes of different node groups reach disjoint devices in the common case (node-local
slices), so each group's count does not depend on where the other pods went, and the total is the
sum — exact.  Devices reachable from several groups (network-attached: ``allNodes``, a pool
``nodeSelector``, ``perDeviceNodeSelection``) are held once for the whole placement: the groups are
replayed one after another, each starting from what the earlier ones hold (:func:`_sequential`).
When every such device the pod may use is reachable from *every* group it may use (one shared pool,
the common case: a NAS, a switch's links) and no group has local devices of those drivers beside it,
each pod meets the same pool wherever it lands, and the sequential count is the scheduler's — exact
(:func:`_one_pool`).  Otherwise (a pool some nodes reach and others do not, local devices that could
stand in for pool ones) the count depends on which node each pod lands on: the independent sum is
given as an upper bound ("at most").  A shared claim (``resourceClaimName``) pins every replica to the
node its first pod picked at random: see :func:`_shared_count`.
Cost follows node classes: alike groups share their count (except in the sequential replay, which
carries what earlier groups hold and is bounded by the review's budget).
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from ..inventory import Inventory
from ..k8s import DEFAULT_TARGET, Budget, Note, Reason, Severity, Target
from .check import SEARCH_DEADLINE, _search_on
from .held import held_by
from .pod import ClassVerdict, PodRequest, ReplicaCount
from .podcheck import Candidate, PodProblem, _label
from .reserved import cap_by_reserved_for
from .search import Held, Outcome, OutcomeKind

__all__ = ["count_replicas"]


def _hold(held: Held, outcome: Outcome) -> Held:
    """``held`` plus the devices, capacity and counters of one pod's solution."""
    used = set(held.used)
    consumed = {i: dict(c) for i, c in held.consumed.items()}
    counters = dict(held.counters)
    for alt, entry in outcome.picks:
        if alt.admin:
            continue
        dev = entry.dev
        charged = dev.multi and dev.index in consumed
        if dev.multi:
            acc = consumed.setdefault(dev.index, {})
            for name, q in (entry.fit.consumed.items() if entry.fit is not None else ()):
                prior = acc.get(name)
                acc[name] = q if prior is None else prior.add(q)
        else:
            used.add(dev.index)
        if not charged:
            for (cset, cname), q in dev.counters.items():
                key = (dev.pool_key, cset, cname)
                had = counters.get(key)
                counters[key] = q if had is None else had.add(q)
    return Held(frozenset(used), consumed, counters)


def _crossing_devices(inventory: Inventory) -> frozenset[int]:
    """The devices reachable from more than one node group — network-attached ones (once per
    snapshot; empty in the common case of node-local slices)."""
    key = ("devices-shared-between-groups",)
    got = inventory.cache.get(key)
    if isinstance(got, frozenset):
        return got
    seen: set[int] = set()
    crossing: set[int] = set()
    for g in inventory.groups:
        crossing.update(seen.intersection(g.devices))
        seen.update(g.devices)
    out = frozenset(crossing)
    inventory.cache.put(key, out, weight=1 + len(out) // 64)
    return out


def _network_devices(inventory: Inventory) -> frozenset[int]:
    """The devices more than one node reaches — network-attached (``allNodes``, a pool or device
    ``nodeSelector``) — once per snapshot.  A group without Nodes ("some node") counts as one."""
    key = ("devices-reached-by-several-nodes",)
    got = inventory.cache.get(key)
    if isinstance(got, frozenset):
        return got
    nodes: Counter[int] = Counter()
    for g in inventory.groups:
        weight = max(1, len(g.nodes))
        for i in g.devices:
            nodes[i] += weight
    out = frozenset(i for i, n in nodes.items() if n > 1)
    inventory.cache.put(key, out, weight=1 + len(out) // 64)
    return out


def _one_pool(real: list[Candidate], inventory: Inventory) -> bool:
    """Whether the network-attached devices the pod may use form one pool every node class it may
    use reaches alike, and no class has node-local devices of the same drivers beside it.  Then a
    pod meets the same pool wherever it lands and cannot swap a pool device for a local one, so
    where the scheduler puts each pod does not change how many fit: the sequential count is exact.
    (Drivers stand for "could serve the same request": a class that selects across drivers by
    attributes is not seen — the pool then still counts once, which is the scheduler's rule.)"""
    network = _network_devices(inventory)
    reached = {network.intersection(c.group.devices) for c in real}
    if len(reached) != 1:
        return False
    pool = next(iter(reached))
    if not pool:
        return False
    drivers = {inventory.devices[i].driver for i in pool}
    return not any(inventory.devices[i].driver in drivers for c in real for i in c.group.devices if i not in network)


_DECIDED = (OutcomeKind.OK, OutcomeKind.UNSAT, OutcomeKind.FATAL)
"""What stops a replay with its count decided: every replica placed, or proof there is no room."""


def _greedy(cand: Candidate, start: Held, limit: int, budget: Budget | None) -> tuple[int, OutcomeKind]:
    """Pods placed one after another on this node group, and what stopped the replay: ``OK``
    (``limit`` placed), ``UNSAT``/``FATAL`` (no room for one more), ``ERROR`` (a selector error:
    undecided) or ``DEADLINE`` (cut short: the budget is spent)."""
    placed, stop, _ = _greedy_held(cand, start, limit, budget)
    return placed, stop


def _greedy_held(cand: Candidate, start: Held, limit: int, budget: Budget | None) -> tuple[int, OutcomeKind, Held]:
    """:func:`_greedy`, and what the placed pods hold at the end (for the next group's replay)."""
    held, placed = start, 0
    while placed < limit:
        if budget is not None and budget.spent():
            return placed, OutcomeKind.DEADLINE, held
        outcome, _ = _search_on(cand.problem, cand.group, budget, held)
        if outcome.kind is not OutcomeKind.OK:
            return placed, outcome.kind, held
        placed += 1
        if not outcome.picks:
            return limit, OutcomeKind.OK, held  # the pod holds nothing here: every replica fits
        held = _hold(held, outcome)
    return placed, OutcomeKind.OK, held


def _sequential(real: list[Candidate], start: Held, replicas: int, budget: Budget | None) -> tuple[list[int], bool] | None:
    """The groups replayed one after another, each from what the earlier ones hold — devices many
    groups reach are taken once for the whole placement.  Per group how many pods it took, and
    whether every replay stopped decided; None when the budget cut it short."""
    held, per_group, decided, total = start, [], True, 0
    full: dict[object, OutcomeKind] = {}  # classes that placed nothing from the current ``held``
    for cand in real:
        if total >= replicas:
            break
        key = (id(cand.problem), cand.problem.class_keys()[cand.position])
        if key in full:  # an alike class, untouched, from the same held devices: the same answer
            per_group.append(0)
            decided = decided and full[key] in _DECIDED
            continue
        n, stop, held = _greedy_held(cand, held, replicas - total, budget)
        if stop is OutcomeKind.DEADLINE:
            return None
        decided = decided and stop in _DECIDED
        per_group.append(n)
        total += n
        if n:
            full.clear()  # what is held changed: earlier answers no longer hold
        else:
            full[key] = stop
    return per_group, decided


def _cut_short(fit: int) -> ReplicaCount:
    """A count the budget stopped: not made (what was placed so far is only a lower bound), said
    the one way a cut-short answer is said — a note marked ``fail_open``."""
    return ReplicaCount(fit, False, [Note(Reason.SATISFIABILITY_UNKNOWN, "replicas not counted: the search deadline passed",
                                          None, Severity.WARNING, fail_open=SEARCH_DEADLINE)])


def count_replicas(
    request: PodRequest, inventory: Inventory, replicas: int, *, budget: Budget | None = None, target: Target = DEFAULT_TARGET,
    now: bool = False, reservations: bool = True,
) -> ReplicaCount:
    """How many of ``replicas`` pods hold their claims at once (see the module docstring); ``now``
    starts from the cluster's allocations instead of every device free.  ``budget`` bounds the
    work: a replay it cuts short makes no count, only a ``SatisfiabilityUnknown`` note marked
    ``fail_open`` (see :func:`_cut_short`).

    ``reservations``: every replica takes an entry of a shared claim's ``status.reservedFor``, so
    at most 256 of them hold it (:func:`~.reserved.cap_by_reserved_for`); False when the caller
    knows the pods may be reserved as one PodGroup instead (``DRAWorkloadResourceClaims``)."""
    count = _count(request, inventory, replicas, budget, target, now)
    if not reservations:
        return count
    return cap_by_reserved_for(count, request, replicas, target=target, cluster=inventory.cluster if now else None)


def _count(request: PodRequest, inventory: Inventory, replicas: int, budget: Budget | None, target: Target,
           now: bool) -> ReplicaCount:
    pod = PodProblem(request, inventory, target)
    candidates, excluded = pod.candidates()
    real = [c for c in candidates if not c.transient]
    if not any(c.problem.plans for c in real) and not pod.pending:
        return ReplicaCount(replicas, True)
    start = held_by(inventory, [c.allocation for c in pod.allocated if c.allocation is not None], now=now)
    crossing = _crossing_devices(inventory)
    reach_overlaps = bool(crossing) and any(n > 1 for n in Counter(i for c in real for i in c.group.devices).values())
    exact = not reach_overlaps
    shared = any(c.shared for c in pod.pending)
    pooled = not shared and reach_overlaps and _one_pool(real, inventory)
    memo: dict[object, tuple[int, OutcomeKind]] = {}
    per_group: list[int] = []
    total = 0
    for cand in real:
        key: object = None
        if start.empty:
            keys = cand.problem.class_keys()
            key = (id(cand.problem), keys[cand.position])
        if key is not None and key in memo:
            got = memo[key]
        else:
            got = _greedy(cand, start, 1 if shared else replicas, budget)  # shared: counted below
            if key is not None:
                memo[key] = got
        n, stop = got
        if stop is OutcomeKind.DEADLINE:
            return _cut_short(total + n)
        exact = exact and stop in _DECIDED
        per_group.append(n)
        total += n
        if not shared and total >= replicas:
            break  # every replica has a place: the count is exact whatever the other groups take
    if shared:
        counted = _shared_count(pod, request, inventory, real, start, replicas, budget, target)
        if counted is None:
            return _cut_short(0)
        fit, exact = counted
    elif pooled:
        # one pool every group reaches: held once for the whole placement, and exact
        replayed = _sequential(real, start, replicas, budget)
        if replayed is None:
            return _cut_short(0)
        per_group, exact = replayed
        fit = min(replicas, sum(per_group))
    else:
        fit = min(replicas, sum(per_group))
    limits = _limits(real, per_group, excluded, inventory, shared, pooled) if fit < replicas else ("", "")
    return ReplicaCount(fit, exact, _notes(fit, replicas, exact, shared, now, limits))


def _shared_count(
    pod: PodProblem, request: PodRequest, inventory: Inventory, real: list[Candidate], start: Held, replicas: int,
    budget: Budget | None, target: Target,
) -> tuple[int, bool] | None:
    """With a shared claim: the first pod allocates it on the node group it lands on (at random
    among the feasible ones); every later replica reuses that allocation — so it must run where
    the claim's devices are — and allocates only its own claims there.  Exact when every feasible
    group gives the same count and the shared devices are local to the group.  None: cut short."""
    rest = PodProblem(dataclasses.replace(request, claims=tuple(c for c in request.claims if not (c.shared and c.allocation is None))),
                      inventory, target)
    rest_problem, rest_claims = rest.variant(frozenset())
    counts: list[int] = []
    local = True
    for cand in real:
        first, _ = _search_on(cand.problem, cand.group, budget, start)
        if first.kind is OutcomeKind.DEADLINE:
            return None
        if first.kind is not OutcomeKind.OK:
            continue
        shared_idx = {i for i, c in enumerate(cand.claims) if c.shared}
        for alt, entry in first.picks:
            if alt.claim in shared_idx and sum(1 for g in inventory.groups if entry.dev.index in g.devices) > 1:
                local = False
        later = Candidate(cand.group, cand.nodes, rest_problem, rest_claims)
        n, stop = _greedy(later, _hold(start, first), replicas - 1, budget)
        if stop is OutcomeKind.DEADLINE:
            return None
        counts.append(1 + n)
    if not counts:
        return 0, True
    if not local:
        return min(replicas, sum(counts)), False
    return min(replicas, max(counts)), len(set(counts)) == 1


_MAX_NAMED = 3
"""Node classes named in a limit clause: the rest are counted."""


def _classes_of(cand: Candidate) -> str:
    """The DeviceClasses the pod's requests name on ``cand`` (its first alternatives), for "whose devices"."""
    names = sorted({p.alternatives[0].class_name for p in cand.problem.plans if p.alternatives and p.alternatives[0].class_name})
    return "/".join(names) if names else "device"


def _capacity_clause(real: list[Candidate], per_group: list[int], pooled: bool = False) -> tuple[str, str]:
    """Per node class the replay reached, how many pods its devices held — "capacity of the
    gpu.example.com devices: node-a holds 2" — and the short form ("node-a holds 2").  Classes
    the replay never reached (every replica had a place before) are not named.  ``pooled``: the
    classes were replayed one after another because devices many of them reach (network-attached)
    are taken once for all — said, since the per-class figures then follow the replay's order."""
    counted = list(zip(real, per_group, strict=False))
    if not counted:
        return "", ""
    shown = [f"{_label(c.nodes, c.group)} holds {n}" for c, n in counted[:_MAX_NAMED]]
    more = f" (+{len(counted) - _MAX_NAMED} more node classes)" if len(counted) > _MAX_NAMED else ""
    where = f"{', '.join(shown)}{more}"
    devices = f"{_classes_of(counted[0][0])} devices"
    if pooled:
        return (f"capacity of the {devices}, those several node classes reach (network-attached) taken once for all: "
                f"{sum(per_group)} in all ({where})", f"{devices}, network-attached: {sum(per_group)} in all")
    return f"capacity of the {devices}: {where}", f"{devices}: {where}"


def _excluded_clause(excluded: list[ClassVerdict], inventory: Inventory) -> tuple[str, str]:
    """The nodes with devices the pods may not use, and why (a taint they do not tolerate, a
    nodeSelector or affinity that leaves them out) — nodes without devices limit nothing — and
    the short form (the reasons alone)."""
    with_devices = {n for g in inventory.groups if g.devices for n in g.nodes}
    out = [c for c in excluded if c.reason and (not c.nodes or not with_devices.isdisjoint(c.nodes))]
    if not out:
        return "", ""
    shown = [f"{c.label}: {c.reason}" for c in out[:_MAX_NAMED]]
    more = f" (+{len(out) - _MAX_NAMED} more)" if len(out) > _MAX_NAMED else ""
    return f"nodes with devices the pods may not use — {'; '.join(shown)}{more}", "; ".join(shown) + more


def _limits(real: list[Candidate], per_group: list[int], excluded: list[ClassVerdict], inventory: Inventory,
            shared: bool, pooled: bool = False) -> tuple[str, str]:
    """What limits the count, as a clause and its short form: nodes the pods may not use first
    (the fix is in the pod spec), then the capacity of the node classes they may use (a shared
    claim is counted per class by :func:`_shared_count`: no per-class figures there)."""
    parts = [_excluded_clause(excluded, inventory)]
    if not shared:
        parts.append(_capacity_clause(real, per_group, pooled))
    kept = [p for p in parts if p[0]]
    return "; ".join(p[0] for p in kept), "; ".join(p[1] for p in kept)


def _notes(fit: int, replicas: int, exact: bool, shared: bool, now: bool, limits: tuple[str, str] = ("", "")) -> list[Note]:
    """The count's warning; its brief (the webhook's 120 characters) is the figure and the limit."""
    notes: list[Note] = []
    clause, short = limits
    if fit < replicas:
        bound = "" if exact else "at most "
        notes.append(Note(Reason.REPLICAS_EXCEED_CAPACITY,
                          f"{bound}{fit} of {replicas} replicas can hold their claims at once, placed one after another "
                          f"as the scheduler does, {'from what is allocated now' if now else 'with every device free'}"
                          + ("; a shared claim is allocated once, so every replica runs where its devices are" if shared else "")
                          + (f"; limited by {clause}" if clause else ""),
                          None, Severity.WARNING,
                          brief=f"{bound}{fit} of {replicas} replicas fit; {short}" if short else "",
                          details={"fit": fit, "replicas": replicas, "exact": exact}))
    return notes
