"""``check_claim_spec``: is there a node on which Kubernetes 1.36 could allocate this claim?

Why per node group and with an empty cluster: admission-time checks must not depend on what
happens to be allocated right now; the question is whether the claim can *ever* be allocated.
Rejections are reserved for proofs (README "What denies, what warns, and why"): a missing class, an expired deadline or an
order-dependent corner the search cannot settle all produce warnings, never errors.

Speed: devices are reduced to a per-claim key (how they behave for *this* claim: match status,
consumption, constraint attributes); node groups whose devices have the same keys in the same
pool layout have the same answer, so 1,000 nodes of the same hardware are searched once.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from ..capacity import qualified_capacity_names
from ..inventory import DeviceRecord, Inventory, NodeGroup
from ..k8s import Budget, Note, Path, Reason, ResourceClaimSpec, Severity
from .candidates import Candidates, Status, candidates_for, candidates_key
from .constraints import ConstraintState, build_constraints, in_scope, lookup_attribute, modelled_constraints
from .doubts import find_doubts
from .explain import explain_alternative, explain_combination
from .notes import capacity_notes
from .plan import RequestPlan, plan_claim
from .search import NOTHING_HELD, Held, Outcome, OutcomeKind, search_group

__all__ = ["SEARCH_DEADLINE", "SEARCH_UNDECIDED", "check_claim_spec", "spec_text"]

SEARCH_UNDECIDED = "could not decide whether the claim can be allocated"
"""The start of the SatisfiabilityUnknown message of a search cut short (for people; machines read
the note's ``fail_open``)."""
SEARCH_DEADLINE = "satisfiability search deadline"
"""The ``fail_open`` mark of the note a search cut short carries (the review's :class:`Budget`
spent, too many pool orders, too deep), so callers (the answer cache, the webhook's metrics)
recognise it by a field, not by parsing the message."""

_MAX_POOL_ORDERS = 24


class Problem:
    """Everything derived once from the claims of one search (one claim, or all of a pod's):
    plans, candidates, constraint facts, keys."""

    def __init__(self, spec: ResourceClaimSpec | Sequence[ResourceClaimSpec], plans: list[RequestPlan], inventory: Inventory) -> None:
        self.specs = [spec] if isinstance(spec, ResourceClaimSpec) else list(spec)
        self.spec = self.specs[0]
        self.plans = plans
        self.inventory = inventory
        self.cands: dict[int, Candidates] = {alt.key: candidates_for(alt, inventory) for p in plans for alt in p.alternatives}
        unique: dict[int, Candidates] = {}
        for c in self.cands.values():
            unique.setdefault(id(c), c)
        self.unique = list(unique.values())
        self.modelled = [modelled_constraints(s) for s in self.specs]
        self.attrs = tuple(c.match_attribute or c.distinct_attribute or "" for cs in self.modelled for c in cs)
        self.distinct = [(i, c) for i, cs in enumerate(self.modelled) for c in cs if c.distinct_attribute]
        self.exact_distinct = all(self._set_semantics(i, c.requests) for i, c in self.distinct)
        reads: set[tuple[str, str]] | None = set()
        for c in self.unique:
            if c.reads is None or reads is None:
                reads = None
            else:
                reads.update(c.reads)
        # Devices with equal profiles under everything this claim reads get equal keys.
        self.projection = inventory.profiles.project(
            tuple(sorted(reads)) if reads is not None else None, tuple(a for a in self.attrs if a)
        )
        self._profile_keys: dict[int, int] = {}
        """Claim profile id → device key."""
        self._interned: dict[object, int] = {}
        self._class_keys: list[object] | None = None
        self.cache_key = ("groupkeys", tuple(candidates_key(c.alt) for c in self.unique), self.attrs)
        self.last_group: tuple[NodeGroup, _GroupPrelude] | None = None
        """What :func:`_search_on` derives of the last group it searched, whatever is held: a
        replay searches one group again and again (one search per pod placed), and the devices,
        their error scan, the quick no and the profile keys do not change between those searches.
        One slot, replaced whole (a reader sees the old pair or the new, never half)."""

    def constraints(self) -> list[ConstraintState]:
        """Fresh constraint states of every claim (each tagged with its claim)."""
        return [c for i, cs in enumerate(self.modelled) for c in build_constraints(cs, i)]

    def _set_semantics(self, claim: int, scope: Sequence[str]) -> bool:
        """1.36's per-request distinct state equals "all different" when each request picks one device."""
        return all(
            not alt.all_mode and alt.count == 1
            for p in self.plans if p.claim == claim for alt in p.alternatives if in_scope(scope, alt)
        )

    def profile_key(self, dev: DeviceRecord) -> int:
        """A small int: equal for devices that behave alike for this claim (decided once per profile)."""
        pid = self.projection.ids[dev.index]
        got = self._profile_keys.get(pid)
        if got is None:
            parts: list[object] = []
            for cand in self.unique:
                e = cand.entry(dev)
                if e.status is Status.OK and e.fit is not None:
                    parts.append(tuple(sorted((k, v.nanos) for k, v in e.fit.consumed.items())))
                else:
                    parts.append(int(e.status))
            caps = tuple(sorted((k, c.value.nanos if c.value is not None else 0) for k, c in dev.capacity.items())) if dev.multi else ()
            attrs = tuple(lookup_attribute(dev, a) for a in self.attrs)
            pool = self.inventory.pools[dev.pool_key]
            # Counters are per pool: the pool's counter limits (not its name) belong to the key; the
            # node group key tells the pools of a group apart by their position in the group.
            full = (tuple(parts), dev.multi, caps, attrs, pool.counter_signature if dev.counters else None, pool.usable,
                    tuple(sorted(dev.counters.items())))
            got = self._interned.setdefault(full, len(self._interned))
            self._profile_keys[pid] = got
        return got

    def class_keys(self) -> list[object]:
        """Per node group, in inventory order: equal keys mean equal answers.  Cached on the
        snapshot per claim shape, so repeated checks of alike claims skip this work.

        Groups with the same profiles in the same pool layout (one class of the projection) have
        the same key, so the key is built from the devices of one group per class only."""
        if self._class_keys is not None:
            return self._class_keys
        self._class_keys = self._load_class_keys()
        return self._class_keys

    def _load_class_keys(self) -> list[object]:
        hit = self.inventory.cache.get(self.cache_key)
        if not isinstance(hit, tuple):
            inventory = self.inventory
            classes, first = self.projection.group_classes(inventory.devices, inventory.groups)
            class_keys = [self.class_key(inventory.groups[g]) for g in first]
            cached = [class_keys[c] for c in classes]
            # only the keys are kept: the profile numbering is needed while they are made, and a
            # problem that finds them cached never makes one again
            self.inventory.cache.put(self.cache_key, (cached,), weight=1 + len(cached) // 32 + len(self._profile_keys))
            return cached
        keys: list[object] = hit[0]
        return keys

    def class_key(self, group: NodeGroup) -> object:
        local: dict[tuple[str, str], int] = {}
        out: list[object] = []
        for i in group.devices:
            dev = self.inventory.devices[i]
            out.append((local.setdefault(dev.pool_key, len(local)), self.profile_key(dev)))
        return tuple(out)


def _class_notes(plans: Sequence[RequestPlan], inventory: Inventory, strict: bool) -> list[Note]:
    notes: list[Note] = []
    for plan in plans:
        for alt in plan.alternatives:
            if alt.class_name and alt.class_name not in inventory.classes:
                path = alt.path.child("deviceClassName")
                if strict:
                    notes.append(Note(Reason.UNSATISFIABLE, f'request "{alt.display}": DeviceClass {alt.class_name} does not exist', path, Severity.ERROR))
                else:
                    notes.append(
                        Note(
                            Reason.SATISFIABILITY_UNKNOWN,
                            f'request "{alt.display}": DeviceClass {alt.class_name} does not exist (yet); classes may be '
                            "applied later, so satisfiability was not checked",
                            path,
                            Severity.WARNING,
                        )
                    )
    return notes


def _quick_unsat(claim: Problem, devices: Sequence[DeviceRecord]) -> str | None:
    """Cheap necessary conditions: enough matching devices per request, enough distinct values.
    The answer says which failed (it becomes the explanation when every node fails this way)."""
    for plan in claim.plans:
        possible = False
        best = 0
        for alt in plan.alternatives:
            cand = claim.cands[alt.key]
            n = sum(1 for d in devices if cand.status(d) is Status.OK)
            best = max(best, n)
            if (alt.all_mode and n > 0) or (not alt.all_mode and n >= alt.count):
                possible = True
                break
        if not possible:
            need = min((1 if a.all_mode else a.count) for a in plan.alternatives) if plan.alternatives else 1
            return (f'request "{plan.name}": this node has {best} usable device{"s" if best != 1 else ""} for it, '
                    f"it needs {need}; no node has enough devices for every request at once")
    if claim.exact_distinct:
        for ci, c in claim.distinct:
            scoped = [p for p in claim.plans if p.claim == ci and all(in_scope(c.requests, a) for a in p.alternatives)]
            values = {
                lookup_attribute(d, c.distinct_attribute or "")
                for p in scoped
                for a in p.alternatives
                for d in devices
                if claim.cands[a.key].status(d) is Status.OK
            }
            values.discard(None)
            if len(values) < len(scoped):
                return (f"distinctAttribute {c.distinct_attribute} needs {len(scoped)} different values; "
                        f"this node's usable devices have {len(values)}")
    return None


def _pool_orders(devices: list[DeviceRecord], limit: int) -> tuple[list[list[DeviceRecord]], bool]:
    pools: list[tuple[str, str]] = []
    for d in devices:
        if d.pool_key not in pools:
            pools.append(d.pool_key)
    if len(pools) <= 1:
        return [devices], True
    orders: list[list[DeviceRecord]] = []
    for i, perm in enumerate(itertools.permutations(pools)):
        if i >= limit:
            return orders, False
        rank = {p: j for j, p in enumerate(perm)}
        orders.append(sorted(devices, key=lambda d: (rank[d.pool_key], d.index)))
    return orders, True


@dataclass(frozen=True, slots=True)
class _GroupPrelude:
    """What a search of one group needs before it starts, the same whatever is held."""

    devices: list[DeviceRecord]
    quick: str | None
    keys: dict[int, int] | None
    """Profile keys for the pruned search; None where every order must be searched (a device
    whose selectors error, or distinct constraints without set semantics)."""


def _prelude(claim: Problem, group: NodeGroup) -> _GroupPrelude:
    last = claim.last_group
    if last is not None and last[0] is group:
        return last[1]
    inventory = claim.inventory
    devices = [inventory.devices[i] for i in group.devices]
    has_error = any(c.status(d) is Status.ERROR for c in claim.unique for d in devices)
    quick = None if has_error else _quick_unsat(claim, devices)
    faithful = has_error or not claim.exact_distinct
    keys = None if faithful or quick is not None else {d.index: claim.profile_key(d) for d in devices}
    got = _GroupPrelude(devices, quick, keys)
    claim.last_group = (group, got)
    return got


def _search_on(claim: Problem, group: NodeGroup, budget: Budget | None, held: Held = NOTHING_HELD) -> tuple[Outcome, bool]:
    """The group's outcome, and whether an ``error`` outcome is certain (every order errors)."""
    inventory = claim.inventory
    pre = _prelude(claim, group)
    devices, quick = pre.devices, pre.quick
    if quick is not None:
        return Outcome(OutcomeKind.UNSAT, detail=quick, depth=0), True
    if pre.keys is not None:
        out = search_group(inventory, claim.plans, claim.cands, devices, claim.constraints(), budget=budget, prune=True,
                           keys=pre.keys, held=held)
        return out, True
    orders, complete = _pool_orders(devices, _MAX_POOL_ORDERS)
    outcomes: list[Outcome] = []
    for order in orders:
        out = search_group(inventory, claim.plans, claim.cands, order, claim.constraints(), budget=budget, prune=False,
                           held=held)
        if out.kind in (OutcomeKind.OK, OutcomeKind.DEADLINE):
            return out, True
        outcomes.append(out)
    errors = [o for o in outcomes if o.kind is OutcomeKind.ERROR]
    if errors:
        return errors[0], complete and len(errors) == len(outcomes)
    if not complete:
        return Outcome(OutcomeKind.DEADLINE, detail="too many pool orders to try"), True
    return outcomes[0], True


FEASIBLE_NODES_TO_FIND = 100
"""kube-scheduler filters every node only in clusters smaller than this (``minFeasibleNodesToFind``);
in larger ones it may stop once enough nodes passed, before it reaches the node that errors."""


def error_blocks(found_ok: bool, inventory: Inventory) -> bool:
    """Whether a selector error reached in every device order is a proof that scheduling aborts:
    always when no node fits; when some node fits, only if the scheduler filters every node."""
    return not found_ok or inventory.node_count < FEASIBLE_NODES_TO_FIND


def _error_note(out: Outcome, severity: Severity) -> Note:
    assert out.entry is not None and out.entry.error is not None
    err, dev, alt = out.entry.error, out.entry.dev, out.alt
    hint = f" ({err.hint})" if err.hint else ""
    who = f'request "{alt.display}": ' if alt is not None else ""
    msg = (
        f"{who}{err.origin.owner} selector #{err.index} fails on device {dev.where} with a CEL runtime error: "
        f"{err.message}{hint}; Kubernetes aborts scheduling of the pod when it evaluates this device"
    )
    return Note(Reason.SELECTOR_RUNTIME_ERROR, msg, alt.path if alt is not None else None, severity)


def check_claim_spec(
    spec: ResourceClaimSpec, inventory: Inventory, *, base: Path, budget: Budget | None = None, strict: bool = False,
    text: str | None = None,
) -> list[Note]:
    """Satisfiability notes for one claim spec (``base`` is ``spec`` or ``spec.spec``).

    ``budget`` bounds the search (None: unbounded); once it is spent the answer is a
    ``SatisfiabilityUnknown`` note marked ``fail_open`` = :data:`SEARCH_DEADLINE`.
    The answer depends only on the spec and the snapshot, so it is remembered on the snapshot
    (a bounded LRU: see :class:`~app.inventory.cache.BoundedCache`) — the webhook sees the same
    few claim specs over and over.  An answer cut short is not remembered.  ``text``: :func:`spec_text`
    of ``spec``, when the caller keeps it (the audit asks of one spec on every new snapshot).
    """
    if text is None:
        text = spec_text(spec)
    if text is None:
        return _check(spec, inventory, base=base, budget=budget, strict=strict)
    key = ("notes", text, str(base), strict, qualified_capacity_names())
    cached = inventory.cache.get(key)
    if isinstance(cached, tuple):
        return list(cached)
    notes = _check(spec, inventory, base=base, budget=budget, strict=strict)
    if not any(n.fail_open for n in notes):  # the one way an answer says "cut short"
        inventory.cache.put(key, tuple(notes), weight=1 + len(text) // 256)
    return notes


def spec_text(spec: ResourceClaimSpec) -> str | None:
    """The spec as :func:`check_claim_spec` remembers its answer by: written out without the opaque
    driver config (it never changes an allocation, and may nest 10,000 levels deep: then None)."""
    try:
        return spec.model_dump_json(by_alias=True, exclude={"devices": {"config"}})
    except ValueError:
        return None


def _check(
    spec: ResourceClaimSpec, inventory: Inventory, *, base: Path, budget: Budget | None, strict: bool
) -> list[Note]:
    plans = plan_claim(spec, base)
    if not plans:
        return []
    notes = _class_notes(plans, inventory, strict)
    if notes:
        return notes
    claim = Problem(spec, plans, inventory)
    for plan in plans:
        for alt in plan.alternatives:
            problem = claim.cands[alt.key].selectors.compile_problem()
            if problem is not None:
                first = problem.message.splitlines()[0] if problem.message else "compile error"
                return [
                    Note(
                        Reason.SATISFIABILITY_UNKNOWN,
                        f'request "{alt.display}": {problem.origin} selector #{problem.index} cannot be evaluated '
                        f"({first}); satisfiability not checked",
                        alt.path,
                        Severity.WARNING,
                    )
                ]

    memo: dict[object, tuple[Outcome, bool]] = {}
    results: list[tuple[NodeGroup, Outcome, bool]] = []
    found_ok = False
    for group, key in zip(inventory.groups, claim.class_keys(), strict=True):
        if budget is not None and budget.spent():
            results.append((group, Outcome(OutcomeKind.DEADLINE), True))
            break
        if key not in memo:
            memo[key] = _search_on(claim, group, budget)
        outcome, certain = memo[key]
        results.append((group, outcome, certain))
        if outcome.kind is OutcomeKind.OK:
            found_ok = True
            break

    out: list[Note] = []
    errors = [(o, c) for _, o, c in results if o.kind is OutcomeKind.ERROR and o.entry is not None]
    if errors:
        first_error, certain = errors[0]
        out.append(_error_note(first_error, Severity.ERROR if certain and error_blocks(found_ok, inventory) else Severity.WARNING))
    if found_ok:
        ok_group = next(g for g, o, _ in results if o.kind is OutcomeKind.OK)
        if ok_group.potential:
            out.append(Note(
                Reason.SATISFIABLE_ON_SCALE_UP,
                f"no existing node can allocate the claim now; a node the autoscaler can create ({ok_group.label}) could",
                None, Severity.INFO,
            ))
        out.extend(capacity_notes(plans, claim.cands))
        return out
    if any(c for _, c in errors):
        return out
    if any(o.kind is OutcomeKind.DEADLINE for _, o, _ in results):
        detail = next((o.detail for _, o, _ in results if o.kind is OutcomeKind.DEADLINE and o.detail), "the search deadline passed")
        out.append(Note(Reason.SATISFIABILITY_UNKNOWN, f"{SEARCH_UNDECIDED}: {detail}", None, Severity.WARNING,
                        fail_open=SEARCH_DEADLINE))
        return out
    if errors:
        out.append(
            Note(
                Reason.SATISFIABILITY_UNKNOWN,
                "no node could allocate the claim in the device order tried, and in another order a selector error may be reached first",
                None,
                Severity.WARNING,
            )
        )
        return out
    out.append(_sound(_unsat_note(claim, results), claim))
    return out


def _sound(unsat: Note, claim: Problem) -> Note:
    """The denial only if nothing known to be missing could change it; else a warning leading with what is missing."""
    doubts = find_doubts(claim.plans, claim.inventory)
    if not doubts:
        return unsat
    more = f" (and {len(doubts) - 1} more)" if len(doubts) > 1 else ""
    message = f"{doubts[0]}{more}, so unsatisfiability cannot be proven; with what is known now: {unsat.message}"
    return Note(Reason.SATISFIABILITY_UNKNOWN, message, unsat.path, Severity.WARNING)


def _unsat_note(claim: Problem, results: list[tuple[NodeGroup, Outcome, bool]]) -> Note:
    plans, inventory = claim.plans, claim.inventory
    if not inventory.groups:
        return Note(Reason.UNSATISFIABLE, f'request "{plans[0].name}": no node can reach any device in the inventory', plans[0].path, Severity.ERROR)
    memo: dict[object, str | None] = {}
    for plan in plans:
        reasons = [explain_alternative(alt, claim.cands[alt.key], inventory, memo) for alt in plan.alternatives]
        if plan.alternatives and all(r is not None for r in reasons):
            return Note(Reason.UNSATISFIABLE, "; ".join(r for r in reasons if r), plan.path, Severity.ERROR)
    best_group, best = None, None
    for g, o, _ in results:
        if best is None or o.depth > best.depth or (o.kind is OutcomeKind.FATAL and best.kind is not OutcomeKind.FATAL):
            best_group, best = g, o
    constraint_specs = [
        (c.distinct_attribute or c.match_attribute or "", frozenset(c.requests), bool(c.distinct_attribute))
        for c in claim.modelled[0]
        if c.distinct_attribute or c.match_attribute
    ]
    message = explain_combination(plans, claim.cands, inventory, constraint_specs, best, best_group.label if best_group else "-")
    path = next((p.path for p in plans if best is not None and p.name == best.stalled), plans[0].path)
    return Note(Reason.UNSATISFIABLE, message, path, Severity.ERROR)
