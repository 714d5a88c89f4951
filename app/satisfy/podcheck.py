"""``check_pod``: is there one node the pod may use on which *all* of its claims can be allocated?

Why per node class: nodes that reach devices of the same profiles in the same pool layout give
the same answer for the same claims (the claim-level engine's class key), so a thousand alike
nodes are searched once; the pod's own filters (:mod:`.placement`) and, for extended resources,
the node's device plugins decide which nodes of a class count.  Each class gets its own verdict
(:class:`ClassVerdict`) — the explanation names why each kind of node is out.

Rejections stay proofs: a missing class, a selector that cannot be compiled, a deadline, a
doubt about the inventory (:mod:`.doubts`) make the answer unknown, never a denial.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from ..inventory import Inventory, NodeGroup, NodeInfo, PoolKey
from ..k8s import DEFAULT_TARGET, Budget, Note, Path, Reason, ResourceClaimSpec, Severity, Target
from .check import SEARCH_DEADLINE, SEARCH_UNDECIDED, Problem, _search_on
from .doubts import find_doubts
from .extended import implicit_claim, resource_classes
from .held import held_by
from .placement import Filter, PlacementFilter
from .plan import RequestPlan, plan_claim
from .pod import ClassVerdict, PodClaim, PodRequest, PodVerdict
from .podexplain import class_reason, lead, summary
from .search import Held, Outcome, OutcomeKind

__all__ = ["Candidate", "PodProblem", "check_pod", "claims_key", "distinct_infos", "placement_effect"]

IMPLICIT_NAME = "<extended-resources>"


@dataclass(frozen=True, slots=True)
class Candidate:
    """The nodes of one node class the pod may use, with the problem to solve there."""

    group: NodeGroup
    nodes: tuple[str, ...]
    problem: Problem
    claims: tuple[PodClaim, ...]
    transient: str = ""
    """Set when these nodes are out only for now (cordoned, not ready): why."""
    position: int = 0
    """Index of ``group`` in ``Inventory.groups`` (its class key is at the same index)."""


@dataclass(frozen=True, slots=True)
class NodeClass:
    """The node groups of one class for one problem — equal class keys, all potential or none — with
    their nodes gathered by :class:`NodeInfo`, so the pod's filters are decided once per distinct
    info of the class rather than once per node (and per group)."""

    position: int
    """The first group of the class in ``Inventory.groups``: the one searched for all of them."""
    positions: tuple[int, ...]
    """Every group of the class."""
    members: tuple[tuple[NodeInfo | None, tuple[str, ...]], ...]
    """Nodes by the info the filters read, in inventory order (``""`` for "some node")."""
    nodes: tuple[str, ...]
    """Every named node of the class."""


def node_classes(problem: Problem, inventory: Inventory) -> tuple[NodeClass, ...]:
    """``problem``'s node classes in inventory order (existing nodes first, as the groups are),
    kept on the snapshot's cache per claim shape (the key of its class keys)."""
    key = ("nodeclasses", problem.cache_key)
    hit = inventory.cache.get(key)
    if isinstance(hit, tuple):
        return hit
    groups = inventory.groups
    order: dict[object, list[int]] = {}
    for position, class_key in enumerate(problem.class_keys()):
        order.setdefault((class_key, groups[position].potential), []).append(position)
    classes = tuple(_node_class(positions, inventory) for positions in order.values())
    inventory.cache.put(key, classes, weight=1 + len(groups) // 64 + len(inventory.node_info) // 256)
    return classes


def _node_class(positions: Sequence[int], inventory: Inventory) -> NodeClass:
    groups, infos = inventory.groups, inventory.node_info
    by_info: dict[int, tuple[NodeInfo | None, list[str]]] = {}
    for position in positions:
        for name in groups[position].nodes or ("",):
            info = infos.get(name) if name else None
            by_info.setdefault(id(info), (info, []))[1].append(name)
    members = tuple((info, tuple(names)) for info, names in by_info.values())
    return NodeClass(positions[0], tuple(positions), members, tuple(n for _, names in members for n in names if n))


def split_by_held(cls: NodeClass, touched: frozenset[int], held: Held,
                  counters: Mapping[PoolKey, tuple[tuple[str, str, int], ...]], inventory: Inventory) -> list[NodeClass]:
    """``cls`` divided by what ``held`` holds on each of its groups (:func:`_held_here`): groups
    held alike — none, or every device of a full node — still have one answer; the free part
    first (it shares the class's answer from an empty start)."""
    parts: dict[object, list[int]] = {}
    for position in cls.positions:
        here = _held_here(inventory.groups[position], held, counters, inventory) if position in touched else ()
        parts.setdefault(here, []).append(position)
    return [_node_class(positions, inventory) for positions in sorted(parts.values(), key=lambda ps: (ps[0] in touched, ps[0]))]


class PodProblem:
    """The pod's claims as one search problem per implicit-claim variant, and its node filters."""

    def __init__(self, request: PodRequest, inventory: Inventory, target: Target, claims_text: str | None = None) -> None:
        self.request = request
        self.inventory = inventory
        self.pending = tuple(c for c in request.claims if c.allocation is None)
        self.allocated = tuple(c for c in request.claims if c.allocation is not None)
        self.filter = PlacementFilter(request.placement, [c.allocation for c in self.allocated if c.allocation])
        self.mapping = resource_classes(inventory, target)
        self._variants: dict[frozenset[str], tuple[Problem, tuple[PodClaim, ...]]] = {}
        self._claims_text = claims_text if claims_text is not None else _claims_key(request)
        self._memos: dict[int, dict[object, object]] = {}

    def variant(self, device_plugin: frozenset[str]) -> tuple[Problem, tuple[PodClaim, ...]]:
        """The problem on nodes where ``device_plugin`` resources come from device plugins."""
        relevant = frozenset(r for r in device_plugin if r in self.mapping)
        got = self._variants.get(relevant)
        if got is None:
            claims = list(self.pending)
            spec, names = implicit_claim(self.request.containers, self.mapping, relevant)
            if spec is not None:
                path = self.request.spec_path.child("containers")
                claims.append(PodClaim(IMPLICIT_NAME, spec, f"extended resources {', '.join(names)}", path))
            got = self._variants[relevant] = (self._problem(claims), tuple(claims))
            self._memos[id(got[0])] = self._shared_memo(relevant)
        return got

    def _shared_memo(self, relevant: frozenset[str]) -> dict[object, object]:
        """Answers per class key for one variant's problem — search outcome and reason — kept on
        the snapshot's bounded cache, so the next pod with the same claims (whatever its
        placement: filters only choose which classes are asked) skips every class searched before."""
        if self._claims_text is None:
            return {}
        key = ("podclasses", self._claims_text, tuple(sorted(relevant)))
        hit = self.inventory.cache.get(key)
        if isinstance(hit, dict):
            return hit
        memo: dict[object, object] = {}
        self.inventory.cache.put(key, memo, weight=1 + len(self._claims_text) // 256 + len(self.inventory.groups) // 64)
        return memo

    def memo(self, problem: Problem) -> dict[object, object]:
        """The shared answers of ``problem`` (one of :meth:`variant`'s)."""
        return self._memos[id(problem)]

    def variants(self) -> list[tuple[Problem, tuple[PodClaim, ...]]]:
        """The problems built so far (one per set of device-plugin resources met)."""
        return list(self._variants.values())

    def _problem(self, claims: Sequence[PodClaim]) -> Problem:
        plans: list[RequestPlan] = []
        for i, c in enumerate(claims):
            plans.extend(plan_claim(c.spec, Path(), claim=i, key_start=sum(len(p.alternatives) for p in plans)))
        specs: list[ResourceClaimSpec] = [c.spec for c in claims] or [ResourceClaimSpec()]
        return Problem(specs, plans, self.inventory)

    def candidates(self) -> tuple[list[Candidate], list[ClassVerdict]]:
        """Per node group: the nodes that pass the filters (split by implicit-claim variant), and
        the groups no node of which passes, with the reason."""
        excluded: list[ClassVerdict] = []
        return list(self.walk(excluded)), excluded

    def walk(self, excluded: list[ClassVerdict]) -> Iterator[Candidate]:
        """:meth:`candidates` lazily, in inventory order (nodes out only for now last): a check
        that stops at the first class that fits never filters the nodes after it."""
        later: list[Candidate] = []
        for position, group in enumerate(self.inventory.groups):
            yield from self._group_candidates(position, group, excluded, later)
        yield from later

    def _group_candidates(self, position: int, group: NodeGroup, excluded: list[ClassVerdict],
                          later: list[Candidate]) -> Iterator[Candidate]:
        """One group's candidates (one per implicit-claim variant; nodes out only for now go to
        ``later``); when no node passes for good, the group's excluded entry."""
        infos = self.inventory.node_info
        names = group.nodes or ("",)
        if len(names) == 1:  # the common case, node-local slices: no grouping of nodes needed
            name = names[0]
            info = infos.get(name) if name else None
            if self.filter.miss(name, info) is None:
                plugins = info.device_plugin if info is not None else frozenset()
                problem, claims = self.variant(plugins)
                yield Candidate(group, names if name else (), problem, claims, "", position)
                return
        passing: dict[tuple[frozenset[str], str], list[str]] = {}
        misses: dict[Filter, tuple[str, list[str]]] = {}
        for name in names:
            info = infos.get(name) if name else None
            miss = self.filter.miss(name, info)
            transient = ""
            if miss is not None:
                misses.setdefault(miss[0], (miss[1], []))[1].extend([name] if name else [])
                if self.filter.miss(name, info, lenient=True) is not None:
                    continue
                transient = miss[1]
            plugins = info.device_plugin if info is not None else frozenset()
            passing.setdefault((plugins, transient), []).append(name)
        if not any(not why for _, why in passing):
            excluded.append(_excluded(group.label, group.nodes, misses))
        for (plugins, transient), members in passing.items():
            problem, claims = self.variant(plugins)
            cand = Candidate(group, tuple(n for n in members if n), problem, claims, transient, position)
            if transient:
                later.append(cand)
            else:
                yield cand

    def walk_classes(self, excluded: list[ClassVerdict], touched: frozenset[int], held: Held,
                     counters: Mapping[PoolKey, tuple[tuple[str, str, int], ...]], *, from_cluster: bool = False,
                     ) -> Iterator[Candidate]:
        """:meth:`walk` with one step per node class instead of one per group: for a pod with one
        problem everywhere (no node's device plugins change its claims), each class is searched
        once on its first group, over the nodes of all of its groups the filters let the pod use
        — every group of a class has the same answer from the same start.  A class with a group
        in ``touched`` (positions whose devices or pools ``held`` holds, :func:`touched_groups`)
        is divided by what is held on each group (:func:`split_by_held`; ``counters``:
        :func:`_counters_by_pool` of ``held``) — kept per snapshot when ``from_cluster`` says
        ``held`` is the cluster's allocations alone, the same for every such pod.  Nodes of a class the
        filters keep out are one excluded entry.  Cost: the classes, and the distinct node infos
        — not the nodes — unless the pod names nodes (``nodeName``, ``matchFields``)."""
        problem, claims = self.variant(frozenset())
        later: list[Candidate] = []
        splits = self._splits_now(problem) if touched and from_cluster else {}
        for whole in node_classes(problem, self.inventory):
            parts = splits.get(whole.position) if touched and not touched.isdisjoint(whole.positions) else (whole,)
            if parts is None:
                parts = splits[whole.position] = tuple(split_by_held(whole, touched, held, counters, self.inventory))
            for cls in parts:
                yield from self._class_candidates(cls, problem, claims, excluded, later)
        yield from later

    def _splits_now(self, problem: Problem) -> dict[int, tuple[NodeClass, ...]]:
        """The classes of ``problem`` divided by the cluster's allocations, kept on the snapshot's
        cache per claim shape and allocations object (the entry keeps the object: a later
        snapshot's allocations never meet an older division)."""
        allocations = self.inventory.cluster.allocations
        key = ("nowsplits", problem.cache_key)
        hit = self.inventory.cache.get(key)
        if isinstance(hit, tuple) and hit[0] is allocations:
            splits: dict[int, tuple[NodeClass, ...]] = hit[1]
            return splits
        splits = {}
        self.inventory.cache.put(key, (allocations, splits), weight=1 + len(self.inventory.groups) // 32)
        return splits

    def _class_candidates(self, cls: NodeClass, problem: Problem, claims: tuple[PodClaim, ...],
                          excluded: list[ClassVerdict], later: list[Candidate]) -> Iterator[Candidate]:
        """One class's candidate over the nodes the filters let the pod use (nodes out only for
        now go to ``later``); the nodes they keep out, one excluded entry."""
        group = self.inventory.groups[cls.position]
        miss_of = self.filter.miss
        by_name = self.filter.by_name
        if len(cls.members) == 1 and not by_name:
            info, names = cls.members[0]
            if miss_of(names[0], info) is None:  # the common case: the whole class may be used
                yield Candidate(group, cls.nodes, problem, claims, "", cls.position)
                return
        usable: list[str] = []
        out: list[str] = []
        transient: dict[str, list[str]] = {}
        misses: dict[Filter, tuple[str, list[str]]] = {}
        for info, names in cls.members:
            for who in ([(n,) for n in names] if by_name else [names]):
                miss = miss_of(who[0], info)
                if miss is None:
                    usable.extend(who)
                    continue
                misses.setdefault(miss[0], (miss[1], []))[1].extend(n for n in who if n)
                out.extend(who)
                if miss_of(who[0], info, lenient=True) is None:
                    transient.setdefault(miss[1], []).extend(who)
        if out:
            nodes = tuple(n for n in out if n)
            excluded.append(_excluded(_label(nodes, group), nodes, misses))
        if usable:
            yield Candidate(group, tuple(n for n in usable if n), problem, claims, "", cls.position)
        for why, members in transient.items():
            later.append(Candidate(group, tuple(n for n in members if n), problem, claims, why, cls.position))


_MAX_NODES_NAMED = 3


def _excluded(label: str, nodes: tuple[str, ...], misses: dict[Filter, tuple[str, list[str]]]) -> ClassVerdict:
    """The class's nodes the pod may not use, and why (each node's first failing filter, in the
    scheduler's order).  Several reasons name the nodes each applies to ("excluded by the pod's
    nodeSelector … on edge-1; taint … is not tolerated on edge-2"): nodes of one class differ in
    labels and taints, and a reason must not read as if it held for all of them."""
    if len(misses) == 1:
        why = next(iter(misses.values()))[0]
        return ClassVerdict(label, nodes, False, why, eligible=False)
    parts = []
    for why, who in misses.values():
        shown = ", ".join(who[:_MAX_NODES_NAMED]) + (f" (+{len(who) - _MAX_NODES_NAMED} more)" if len(who) > _MAX_NODES_NAMED else "")
        parts.append(f"{why} on {shown}" if who else why)
    return ClassVerdict(label, nodes, False, "; ".join(parts), eligible=False)


def _label(nodes: tuple[str, ...], group: NodeGroup) -> str:
    if not nodes or nodes == group.nodes:
        return group.label
    suffix = ", potential" if group.potential else ""
    return nodes[0] + (f" (+{len(nodes) - 1} alike{suffix})" if len(nodes) > 1 else (" (potential)" if suffix else ""))


def _preflight(problem: Problem, claims: Sequence[PodClaim], inventory: Inventory, strict: bool) -> list[Note]:
    """Missing classes and selectors that do not compile: the search cannot decide."""
    notes: list[Note] = []
    for plan in problem.plans:
        claim = claims[plan.claim]
        for alt in plan.alternatives:
            who = f'{_phrase(claim)}, request "{alt.display}"'
            if alt.class_name and alt.class_name not in inventory.classes:
                if strict:
                    notes.append(Note(Reason.UNSATISFIABLE, f"{who}: DeviceClass {alt.class_name} does not exist", claim.path, Severity.ERROR))
                else:
                    notes.append(Note(Reason.SATISFIABILITY_UNKNOWN, f"{who}: DeviceClass {alt.class_name} does not exist (yet); "
                                      "classes may be applied later, so satisfiability was not checked", claim.path))
                continue
            problem_ = problem.cands[alt.key].selectors.compile_problem()
            if problem_ is not None:
                first = problem_.message.splitlines()[0] if problem_.message else "compile error"
                notes.append(Note(Reason.SATISFIABILITY_UNKNOWN, f"{who}: {problem_.origin} selector #{problem_.index} cannot be "
                                  f"evaluated ({first}); satisfiability not checked", claim.path))
    return notes


def _phrase(claim: PodClaim) -> str:
    if claim.name == IMPLICIT_NAME:
        return f"the implicit claim of {claim.origin.removeprefix('extended resources ')}"
    return f'claim "{claim.name}" ({claim.origin})' if claim.origin else f'claim "{claim.name}"'


def _class_memo_key(cand: Candidate, touched: frozenset[int], held: Held,
                    counters: Mapping[PoolKey, tuple[tuple[str, str, int], ...]]) -> object:
    """Equal keys mean equal answers — outcome and reason — for the pod's problem on a group: the
    problem and the group's class key (its profiles in their pool layout).  On a group nothing
    holds devices or counters of, the held devices are not there: the answer is the one from an
    empty start.  On a group in ``touched`` the key adds what is held there (:func:`_held_here`):
    alike groups held alike — every GPU of a full pool of nodes — still share one search."""
    key = cand.problem.class_keys()[cand.position]
    if cand.position not in touched:
        return key
    return (key, _held_here(cand.group, held, counters, cand.problem.inventory))


def _held_here(group: NodeGroup, held: Held, counters: Mapping[PoolKey, tuple[tuple[str, str, int], ...]],
               inventory: Inventory) -> object:
    """What ``held`` holds on ``group``, in the group's own terms (device positions in the group,
    pools by their position in it — as the class key names them): dedicated devices, consumed
    capacity, counters per pool (``counters``: :func:`_counters_by_pool` of ``held``)."""
    devices = inventory.devices
    local: dict[PoolKey, int] = {}
    out: list[object] = []
    for n, i in enumerate(group.devices):
        local.setdefault(devices[i].pool_key, len(local))
        caps = held.consumed.get(i)
        if i in held.used or caps is not None:
            out.append((n, i in held.used, tuple(sorted((k, q.nanos) for k, q in caps.items())) if caps else ()))
    if counters:
        for pool_key, n in local.items():
            got = counters.get(pool_key)
            if got:
                out.append((n, got))
    return tuple(out)


def _counters_by_pool(held: Held) -> dict[PoolKey, tuple[tuple[str, str, int], ...]]:
    """``held``'s counters per pool, sorted: made once per check for :func:`_held_here`."""
    by_pool: dict[PoolKey, list[tuple[str, str, int]]] = {}
    for (pool, cset, cname), q in held.counters.items():
        by_pool.setdefault(pool, []).append((cset, cname, q.nanos))
    return {pool: tuple(sorted(items)) for pool, items in by_pool.items()}


def touched_groups(inventory: Inventory, held: Held) -> frozenset[int]:
    """Positions of the groups whose devices, or whose devices' pools' counters, ``held`` holds."""
    if held.empty:
        return frozenset()
    by_device, by_pool = _group_index(inventory)
    out: set[int] = set()
    for i in held.used:
        out.update(by_device.get(i, ()))
    for i in held.consumed:
        out.update(by_device.get(i, ()))
    for pool, _, _ in held.counters:
        out.update(by_pool.get(pool, ()))
    return frozenset(out)


def _touched_now(inventory: Inventory) -> frozenset[int]:
    """:func:`touched_groups` of the cluster's allocations alone — every "now" check of a pod
    without allocated claims of its own asks it — once per allocations object (the entry keeps
    the object, so a later snapshot's allocations never meet an older answer)."""
    allocations = inventory.cluster.allocations
    hit = inventory.cache.get(("touched-now",))
    if isinstance(hit, tuple) and hit[0] is allocations:
        touched: frozenset[int] = hit[1]
        return touched
    touched = touched_groups(inventory, held_by(inventory, (), now=True))
    inventory.cache.put(("touched-now",), (allocations, touched), weight=1 + len(touched) // 256)
    return touched


def _group_index(inventory: Inventory) -> tuple[dict[int, list[int]], dict[object, list[int]]]:
    """Device index → positions of the groups that reach it, and pool → the same; once per snapshot."""
    hit = inventory.cache.get(("group-index",))
    if isinstance(hit, tuple):
        return hit
    by_device: dict[int, list[int]] = {}
    by_pool: dict[object, list[int]] = {}
    devices = inventory.devices
    for position, group in enumerate(inventory.groups):
        pools: set[object] = set()
        for i in group.devices:
            by_device.setdefault(i, []).append(position)
            pools.add(devices[i].pool_key)
        for pool in pools:
            by_pool.setdefault(pool, []).append(position)
    index = (by_device, by_pool)
    inventory.cache.put(("group-index",), index, weight=1 + sum(len(g.devices) for g in inventory.groups) // 256)
    return index


def search_candidate(cand: Candidate, held: Held, budget: Budget | None, memo: dict[object, object],
                     key: object) -> tuple[Outcome, bool]:
    """The outcome on one candidate, remembered under ``key`` (:func:`_class_memo_key`; None: not
    at all) in ``memo`` (the problem's, :meth:`PodProblem.memo`); an outcome the budget cut short is not."""
    group = cand.group
    if key is not None:
        hit = memo.get(("search", key))
        if isinstance(hit, tuple):
            return hit
    got = _search_on(cand.problem, group, budget, held)
    if key is not None and got[0].kind is not OutcomeKind.DEADLINE:
        memo[("search", key)] = got
    return got


class _Unset(enum.Enum):
    UNSET = enum.auto()


_UNSET = _Unset.UNSET


def claims_key(request: PodRequest) -> str | None:
    """:func:`_claims_key`, public: what a caller that re-checks one request on several snapshots
    computes once and passes to :func:`check_pod`."""
    return _claims_key(request)


def _claims_key(request: PodRequest) -> str | None:
    """The pod's claims and containers as text (what a variant's problem is built from, and the
    origins its reasons name) — not its placement.  None when a spec cannot be written out."""
    try:
        claims = [(c.name, c.origin, str(c.path), c.shared, c.key,
                   c.spec.model_dump_json(by_alias=True, exclude={"devices": {"config"}}),
                   c.allocation.model_dump_json(by_alias=True) if c.allocation is not None else "")
                  for c in request.claims]
    except ValueError:
        return None
    containers = [(c.name, c.index, sorted((k, str(q)) for k, q in c.requests.items()), c.init, c.restart_always,
                   str(c.path)) for c in request.containers]
    return repr((claims, containers, str(request.spec_path)))


_MAX_EFFECT_INFOS = 64
"""Distinct node infos up to which a pod's placement is keyed by its effect (:func:`placement_effect`):
the effect costs one filter decision per info for every pod asked (a few microseconds each), a
price worth paying while clusters have a few node pools times a few zones; beyond, the placement's
text is the key, as it was."""


def distinct_infos(inventory: Inventory) -> tuple[NodeInfo, ...]:
    """The snapshot's distinct :class:`NodeInfo` objects (interned: equal infos are one object), in
    first-seen order; once per snapshot.  Equal tuples on two snapshots mean equal
    :func:`placement_effect` for every request."""
    hit = inventory.cache.get(("distinct-infos",))
    if isinstance(hit, tuple):
        return hit
    seen: dict[int, NodeInfo] = {}
    for info in inventory.node_info.values():
        seen.setdefault(id(info), info)
    infos = tuple(seen.values())
    inventory.cache.put(("distinct-infos",), infos, weight=1 + len(infos) // 64)
    return infos


def placement_effect(request: PodRequest, inventory: Inventory) -> str | None:
    """What the pod's placement *does* on this snapshot, as text: per distinct node info, the
    filter's answer (which filter turns it away and why, strict and lenient).  The check reads the
    placement only through :meth:`PlacementFilter.miss` on (name, info) — unless the filter decides
    by name (``nodeName``, ``matchFields``) — and a node without info passes every filter, so two
    pods with the same claims and the same effect get the same verdict: pods that differ in a
    toleration of a taint no node has, or a selector every node matches, share one check.  None
    (key by the placement's text) when the filter reads names or the snapshot has too many infos."""
    infos = distinct_infos(inventory)
    if len(infos) > _MAX_EFFECT_INFOS:
        return None
    pins = [c.allocation for c in request.claims if c.allocation is not None]
    flt = PlacementFilter(request.placement, pins)
    if flt.by_name:
        return None
    out: list[object] = []
    for info in infos:
        strict_miss = flt.miss("", info)
        out.append(None if strict_miss is None else (strict_miss, flt.miss("", info, lenient=True)))
    return repr(out)


def _request_key(claims_text: str | None, request: PodRequest, inventory: Inventory | None = None,
                 effect: str | _Unset | None = _UNSET) -> tuple[str, ...] | None:
    """The pod's question as texts: its claims and containers (``claims_text``, :func:`_claims_key`)
    and its placement — by its effect on ``inventory``'s nodes when that can be said
    (:func:`placement_effect`; ``effect`` when the caller has it), else by its text.  A tuple, not
    one joined text: a caller that passes the same strings again (the audit's rechecks) hashes none
    of them again.  None when a spec cannot be written out (nested too deep), and then nothing is
    remembered."""
    if claims_text is None:
        return None
    if inventory is not None:
        if isinstance(effect, _Unset):
            effect = placement_effect(request, inventory)
        if effect is not None:
            return (claims_text, "effect", effect)
    place = request.placement
    try:
        placement = (place.node_name, sorted(place.node_selector.items()),
                     place.affinity.model_dump_json(by_alias=True) if place.affinity is not None else "",
                     [t.model_dump_json(by_alias=True) for t in place.tolerations])
    except ValueError:
        return None
    return (claims_text, repr(placement))


def check_pod(
    request: PodRequest, inventory: Inventory, *, budget: Budget | None = None, strict: bool = False,
    target: Target = DEFAULT_TARGET, now: bool = False, every_class: bool = False,
    claims_text: str | _Unset | None = _UNSET, effect: str | _Unset | None = _UNSET,
) -> PodVerdict:
    """Whether some node the pod may use can allocate all of its claims (see the module docstring).

    ``claims_text``: :func:`claims_key` of ``request`` when the caller has it already (the audit's
    re-check of a remembered pod), so a remembered verdict costs no writing out of the claims;
    ``effect``: :func:`placement_effect` of ``request`` on ``inventory``, likewise (the caller
    vouches that it is this snapshot's: it depends only on the snapshot's :func:`distinct_infos`).

    ``now`` starts from the cluster's allocations (``Inventory.cluster.allocations``); otherwise
    only the pod's own allocated claims hold devices.  ``budget`` bounds the work: a search cut
    short says so with the ``fail_open`` mark :data:`SEARCH_DEADLINE`.  ``every_class`` decides
    every node class (``draguard explain``, DaemonSets) instead of stopping at the first that fits.

    The verdict depends only on the request and the snapshot's devices, so — like a claim's
    answer — it is remembered on the snapshot (its bounded LRU): a Deployment's replicas, the
    audit's namespaces and a webhook's retries ask the same question over and over.  The key holds
    the placement by its effect on the snapshot's nodes (:func:`placement_effect`), so pods whose
    placements differ only where no node tells them apart share it.  Not
    remembered: answers cut short by the budget, and "now" answers (they read the cluster's
    allocations, which a snapshot shares its cache across).
    """
    if isinstance(claims_text, _Unset):
        claims_text = _claims_key(request)
    text = None if now else _request_key(claims_text, request, inventory, effect)
    key = ("pod", text, strict, every_class, target.version, tuple(sorted(target.overrides.items())))
    if text is not None:
        cached = inventory.cache.get(key)
        if isinstance(cached, PodVerdict):
            return PodVerdict(list(cached.notes), cached.satisfiable, cached.per_class)
    verdict = _check_pod(request, inventory, budget=budget, strict=strict, target=target, now=now,
                         every_class=every_class, claims_text=claims_text)
    if text is not None and not any(n.fail_open for n in verdict.notes):
        inventory.cache.put(key, PodVerdict(list(verdict.notes), verdict.satisfiable, verdict.per_class),
                            weight=1 + sum(map(len, text)) // 256 + len(verdict.per_class) // 4)
    return verdict


def _check_pod(
    request: PodRequest, inventory: Inventory, *, budget: Budget | None, strict: bool,
    target: Target, now: bool, every_class: bool, claims_text: str | None,
) -> PodVerdict:
    pod = PodProblem(request, inventory, target, claims_text)
    if not request.claims and not request.containers:
        return PodVerdict([], None)
    for plugins in _plugin_sets(inventory):
        problem, claims = pod.variant(plugins)
        notes = _preflight(problem, claims, inventory, strict)
        if notes:
            return PodVerdict(notes, False if any(n.severity is Severity.ERROR for n in notes) else None)
    if not any(problem.plans for problem, _ in pod.variants()) and not pod.allocated:
        return PodVerdict([], None)
    excluded: list[ClassVerdict] = []
    held = held_by(inventory, [c.allocation for c in pod.allocated if c.allocation is not None], now=now)
    per_class: list[ClassVerdict] = []
    results: list[tuple[Candidate, Outcome, bool]] = []
    # one step per node class when one problem holds on every node; a class something holds
    # devices of is divided by what is held on each group
    from_cluster = now and not pod.allocated  # held is the cluster's allocations alone
    touched = _touched_now(inventory) if from_cluster else touched_groups(inventory, held)
    counters = _counters_by_pool(held)
    walk = (pod.walk_classes(excluded, touched, held, counters, from_cluster=from_cluster)
            if len(pod.variants()) == 1 else pod.walk(excluded))
    for cand in walk:
        if budget is not None and budget.spent():
            results.append((cand, Outcome(OutcomeKind.DEADLINE), True))
            break
        memo = pod.memo(cand.problem)
        ckey = _class_memo_key(cand, touched, held, counters)
        outcome, certain = search_candidate(cand, held, budget, memo, ckey)
        results.append((cand, outcome, certain))
        label = _label(cand.nodes, cand.group)
        if outcome.kind is OutcomeKind.OK:
            per_class.append(ClassVerdict(label, cand.nodes, None if cand.transient else True,
                                          f"the claims fit, but the nodes are out for now: {cand.transient}" if cand.transient else ""))
            if not cand.transient and not every_class:
                break
            continue
        if outcome.kind in (OutcomeKind.UNSAT, OutcomeKind.FATAL):
            # one sentence per class of alike groups, not per group: cost follows profiles, not nodes
            hit = memo.get(("reason", ckey)) if ckey is not None else None
            if isinstance(hit, str):
                reason = hit
            else:
                reason = class_reason(cand, outcome, held, budget, _phrase)
                if ckey is not None and not (budget is not None and budget.spent()):
                    memo[("reason", ckey)] = reason
        else:
            reason = outcome.kind
        per_class.append(ClassVerdict(label, cand.nodes, False if outcome.kind in (OutcomeKind.UNSAT, OutcomeKind.FATAL) else None, reason))
    per_class[:0] = excluded
    return _verdict(request, inventory, results, excluded, per_class, every_class)


def _plugin_sets(inventory: Inventory) -> frozenset[frozenset[str]]:
    """The distinct sets of device-plugin resources of the snapshot's nodes (and the empty set),
    kept on its cache: a pod's check needs them before every search, the snapshot has them once."""
    hit = inventory.cache.get(("pluginsets",))
    if isinstance(hit, frozenset):
        return hit
    sets = frozenset({frozenset()} | {i.device_plugin for i in inventory.node_info.values()})
    inventory.cache.put(("pluginsets",), sets, weight=1 + len(sets) // 16)
    return sets


def _verdict(
    request: PodRequest, inventory: Inventory, results: list[tuple[Candidate, Outcome, bool]],
    excluded: list[ClassVerdict], per_class: list[ClassVerdict], every_class: bool = False,
) -> PodVerdict:
    from .check import _error_note, error_blocks

    classes = tuple(per_class)
    ok = next((c for c, o, _ in results if o.kind is OutcomeKind.OK and not c.transient), None)
    later = next((c for c, o, _ in results if o.kind is OutcomeKind.OK and c.transient), None)
    notes: list[Note] = []
    errors = [(o, c) for _, o, c in results if o.kind is OutcomeKind.ERROR and o.entry is not None]
    if errors:
        first, certain = errors[0]
        notes.append(_error_note(first, Severity.ERROR if certain and error_blocks(ok is not None, inventory) else Severity.WARNING))
    if ok is not None:
        if ok.group.potential:
            notes.append(Note(Reason.SATISFIABLE_ON_SCALE_UP, "no existing node can run the pod now; a node the autoscaler "
                              f"can create ({_label(ok.nodes, ok.group)}) could", None, Severity.INFO))
        if every_class and any(o.kind is OutcomeKind.DEADLINE for _, o, _ in results):  # per_class is incomplete
            notes.append(Note(Reason.SATISFIABILITY_UNKNOWN, "not every node class decided: the search deadline passed",
                              None, Severity.INFO, fail_open=SEARCH_DEADLINE))
        return PodVerdict(notes, True, classes)
    if any(c for _, c in errors):
        return PodVerdict(notes, False, classes)
    if later is not None:
        notes.append(Note(Reason.SATISFIABILITY_UNKNOWN, f"no node can run the pod now: the claims fit on "
                          f"{_label(later.nodes, later.group)}, but {later.transient}; no other node can", request.spec_path))
        return PodVerdict(notes, None, classes)
    if any(o.kind is OutcomeKind.DEADLINE for _, o, _ in results):
        notes.append(Note(Reason.SATISFIABILITY_UNKNOWN, f"{SEARCH_UNDECIDED}: the search deadline passed", None,
                          Severity.WARNING, fail_open=SEARCH_DEADLINE))
        return PodVerdict(notes, None, classes)
    if errors:
        notes.append(Note(Reason.SATISFIABILITY_UNKNOWN, "no node could allocate the pod's claims in the device order tried, "
                          "and in another order a selector error may be reached first", None, Severity.WARNING))
        return PodVerdict(notes, None, classes)
    message, path = summary(request, inventory, classes, bool(excluded), [c for c, _, _ in results])
    plans = [p for c, _, _ in results for p in c.problem.plans]
    doubts = find_doubts(plans, inventory) if plans else ([] if inventory.groups else ["no node is known yet"])
    if doubts:
        more = f" (and {len(doubts) - 1} more)" if len(doubts) > 1 else ""
        text = f"{doubts[0]}{more}, so unsatisfiability cannot be proven; with what is known now: {message}"
        return PodVerdict([*notes, Note(Reason.SATISFIABILITY_UNKNOWN, text, path, Severity.WARNING)], None, classes)
    return PodVerdict([*notes, Note(Reason.UNSATISFIABLE, message, path, Severity.ERROR,
                                    brief=lead(inventory, classes))], False, classes)
