"""``draguard explain``: the answer for one claim (or each claim of a pod), per class of alike nodes,
with every device free (*ever*) and with today's allocations (*now*).

Why per node class: the scheduler's "cannot allocate all claims" is one line for every cause;
the user needs to know, for each kind of node, whether the devices ran out, a selector failed or
a constraint cannot hold — and, where capacity is the reason, what holds it.  Each class is
answered by the same search the webhook runs, on the snapshot restricted to that class (and on
its held view for *now*); classes of the same hardware are searched once.  Holders are named
only in the asking namespace (no leak across tenants).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from ..inventory import ClaimReducer, HeldClaim, Inventory, NodeGroup, only_groups
from ..k8s import Budget, NodeSelector, Note, Path, Reason, ResourceClaimSpec, Severity, Toleration
from ..satisfy import (
    ClassVerdict,
    PodClaim,
    PodPlacement,
    PodRequest,
    capacity_in_use,
    check_claim_spec,
    check_pod,
    held_figures,
    holders_phrase,
    plan_claim,
    pod_capacity_in_use,
)

__all__ = ["ClaimAnswer", "ClassRow", "Explanation", "explain_claim", "explain_object"]

_FAILS = frozenset({Reason.UNSATISFIABLE, Reason.SELECTOR_RUNTIME_ERROR})


@dataclass(frozen=True)
class ClassRow:
    """One class of alike nodes: the verdicts and the first reason (empty when it fits now)."""

    label: str
    nodes: tuple[str, ...]
    ever: bool | None
    now: bool | None
    reason: str = ""
    held: str = ""
    """Where capacity is the reason: what holds it (``held by 3 claims in other namespaces``)."""

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label, "nodes": list(self.nodes), "ever": self.ever, "now": self.now,
                               "reason": self.reason}
        if self.held:
            out["held"] = self.held
        return out


@dataclass
class ClaimAnswer:
    """One claim of the explanation (a pod has one per ``spec.resourceClaims`` entry)."""

    name: str
    origin: str
    state: str = ""
    ever: bool | None = None
    now: bool | None = None
    notes: list[Note] = field(default_factory=list)
    classes: list[ClassRow] = field(default_factory=list)


@dataclass
class Explanation:
    """The answer for a claim or a pod: overall, per claim, and (for a pod's joint search) per class."""

    kind: str
    namespace: str
    name: str
    state: str = ""
    ever: bool | None = None
    now: bool | None = None
    claims: list[ClaimAnswer] = field(default_factory=list)
    classes: list[ClassRow] = field(default_factory=list)
    """For a pod: the engine's joint search over all of its claims, per class of nodes."""
    notes: list[Note] = field(default_factory=list)
    """For a pod: the findings of that joint search (ever, and CapacityInUse)."""
    gaps: list[str] = field(default_factory=list)


def _verdict(notes: Sequence[Note]) -> bool | None:
    if any(n.reason in _FAILS and n.severity is Severity.ERROR for n in notes):
        return False
    if any(n.reason in (Reason.SATISFIABILITY_UNKNOWN, Reason.SELECTOR_RUNTIME_ERROR) for n in notes):
        return None
    return True


def _first_reason(notes: Sequence[Note]) -> str:
    for n in notes:
        if n.reason in _FAILS or n.reason == Reason.SATISFIABILITY_UNKNOWN:
            return n.message
    return ""


def _only(inventory: Inventory, group: NodeGroup) -> Inventory:
    return only_groups(inventory, (group,))


def _state(held: HeldClaim | None) -> str:
    if held is None:
        return ""
    if held.allocation is None:
        return "not allocated yet"
    devices = ", ".join(f"{r.pool}/{r.device}" for r in held.allocation.devices.results) or "no devices"
    pods = f"; reserved for {', '.join(held.reserved_for)}" if held.reserved_for else ""
    return f"allocated: {devices}{pods}"


def explain_claim(
    spec: ResourceClaimSpec,
    inventory: Inventory,
    *,
    namespace: str,
    name: str,
    origin: str = "",
    base: Path | None = None,
    held: HeldClaim | None = None,
    budget: Budget | None = None,
) -> ClaimAnswer:
    """The claim's answer overall and per node class, ever and now; every search under ``budget``."""
    base = base if base is not None else Path.root("spec")
    answer = ClaimAnswer(name, origin or f'claim "{name}"', _state(held))
    if held is not None and held.allocation is not None:
        answer.ever = answer.now = True
        return answer
    ever_notes = check_claim_spec(spec, inventory, base=base, budget=budget)
    answer.ever = _verdict(ever_notes)
    now_notes = capacity_in_use(spec, inventory, base=base, ever=ever_notes, namespace=namespace,
                                budget=budget) if answer.ever else []
    answer.now = None if any(n.fail_open for n in now_notes) else False if now_notes else answer.ever
    answer.notes = [*ever_notes, *now_notes]
    now = inventory.held_view()
    now_groups = {g.nodes: (i, g) for i, g in enumerate(now.groups)}
    memo: dict[object, tuple[bool | None, str]] = {}
    plans = plan_claim(spec, base)
    ever_classes, now_classes = _node_classes(inventory), _node_classes(now)
    for gi, group in enumerate(inventory.groups):
        key = ("ever", ever_classes[gi])
        if key not in memo:
            notes = check_claim_spec(spec, _only(inventory, group), base=base, budget=budget)
            memo[key] = (_verdict(notes), _first_reason(notes))
        ever, reason = memo[key]
        ni, now_group = now_groups.get(group.nodes, (-1, None))
        now_ok: bool | None = False
        now_reason = "a node the autoscaler can create: not there now" if group.potential else ""
        holders = ""
        if now_group is not None and ever:
            nkey = ("now", now_classes[ni])
            if nkey not in memo:
                notes = check_claim_spec(spec, _only(now, now_group), base=base, budget=budget)
                memo[nkey] = (_verdict(notes), _first_reason(notes))
            now_ok, now_reason = memo[nkey]
            if now_ok is False:
                within = frozenset(group.devices)
                figs = [held_figures(alt, inventory, namespace, within=within) for p in plans for alt in p.alternatives[:1]]
                short = next((f for f in figs if f.short), figs[0] if figs else None)
                if short is not None:
                    now_reason = (f'request "{short.alt.display}": {short.matching - short.free} of {short.matching} '
                                  f"matching devices here are held")
                    holders = holders_phrase(short)
        elif not ever:
            now_ok = False
        answer.classes.append(ClassRow(group.label, group.nodes, ever, now_ok if ever else ever,
                                       reason if not ever else now_reason, holders))
    return answer


def _node_classes(inventory: Inventory) -> Sequence[int]:
    """Per node group, its node class under the full device profile (equal: the same answer for
    every claim), so each class is searched once."""
    classes, _ = inventory.profiles.project(None).group_classes(inventory.devices, inventory.groups)
    return classes


def _claim_of(kind_ns_name: tuple[str, str, str], inventory: Inventory, objects: Mapping[tuple[str, str, str], Any]) -> HeldClaim | None:
    _, namespace, name = kind_ns_name
    held = inventory.cluster.claims.get((namespace, name))
    if held is None and kind_ns_name in objects:
        held = ClaimReducer().claim(objects[kind_ns_name])
    return held


def _pod_state(pod: Mapping[str, Any]) -> str:
    spec = pod.get("spec") if isinstance(pod.get("spec"), Mapping) else {}
    status = pod.get("status") if isinstance(pod.get("status"), Mapping) else {}
    if isinstance(spec, Mapping) and spec.get("nodeName"):
        return f"scheduled on {spec['nodeName']}"
    for cond in (status.get("conditions") or []) if isinstance(status, Mapping) else []:
        if isinstance(cond, Mapping) and cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            return f"pending; the scheduler says: {cond.get('message') or cond.get('reason') or 'unschedulable'}"
    return "pending"


def _pod_claims(pod: Mapping[str, Any], namespace: str) -> list[tuple[str, str, str, str]]:
    """(pod claim name, claim name or "", template name or "", problem) per ``spec.resourceClaims`` entry
    (in order: the position is the entry's index)."""
    spec = pod.get("spec") if isinstance(pod.get("spec"), Mapping) else {}
    status = pod.get("status") if isinstance(pod.get("status"), Mapping) else {}
    statuses = {s.get("name"): s.get("resourceClaimName") for s in (status.get("resourceClaimStatuses") or [])
                if isinstance(s, Mapping)} if isinstance(status, Mapping) else {}
    out: list[tuple[str, str, str, str]] = []
    for entry in (spec.get("resourceClaims") or []) if isinstance(spec, Mapping) else []:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            out.append(("?", "", "", "an entry without a name"))
            continue
        name = entry["name"]
        if isinstance(entry.get("resourceClaimName"), str):
            out.append((name, entry["resourceClaimName"], "", ""))
        elif isinstance(entry.get("resourceClaimTemplateName"), str):
            made = statuses.get(name)
            out.append((name, made if isinstance(made, str) else "", entry["resourceClaimTemplateName"], ""))
        else:
            out.append((name, "", "", "none of resourceClaimName and resourceClaimTemplateName is set"))
    return out


def explain_object(
    kind: str,
    namespace: str,
    name: str,
    inventory: Inventory,
    objects: Mapping[tuple[str, str, str], Any],
    *,
    budget: Budget | None = None,
) -> Explanation | None:
    """The explanation of ``kind`` (``Pod`` or ``ResourceClaim``) ``namespace/name``, or None when it
    is not known (neither in the inventory's claims nor among ``objects`` fetched by name).
    ``budget`` (the command's one) bounds every search the explanation makes."""
    if kind == "ResourceClaim":
        held = _claim_of((kind, namespace, name), inventory, objects)
        if held is None:
            return None
        exp = Explanation(kind, namespace, name)
        if held.spec is None:
            exp.gaps.append("the claim's spec could not be read")
            return exp
        answer = explain_claim(held.spec, inventory, namespace=namespace, name=name, held=held, budget=budget)
        exp.state, exp.ever, exp.now, exp.claims = answer.state, answer.ever, answer.now, [answer]
        return exp
    pod = objects.get(("Pod", namespace, name))
    if not isinstance(pod, Mapping):
        return None
    exp = Explanation("Pod", namespace, name, _pod_state(pod))
    answers: list[ClaimAnswer] = []
    resolved: list[tuple[int, str, ResourceClaimSpec, str, HeldClaim | None, bool]] = []
    for index, (pod_claim, claim_name, template, problem) in enumerate(_pod_claims(pod, namespace)):
        if problem:
            exp.gaps.append(f'pod claim "{pod_claim}": {problem}')
            continue
        held = _claim_of(("ResourceClaim", namespace, claim_name), inventory, objects) if claim_name else None
        if held is not None and held.spec is not None:
            origin = f'pod claim "{pod_claim}" (claim {claim_name})'
            resolved.append((index, pod_claim, held.spec, origin, held, not template))
            answers.append(explain_claim(held.spec, inventory, namespace=namespace, name=claim_name, origin=origin,
                                         held=held, budget=budget))
            continue
        spec = inventory.cluster.templates.get((namespace, template)) if template else None
        if isinstance(spec, ResourceClaimSpec):
            origin = f'pod claim "{pod_claim}" (template {template}; its claim is not created yet)'
            resolved.append((index, pod_claim, spec, origin, None, False))
            answers.append(explain_claim(spec, inventory, namespace=namespace, name=pod_claim, origin=origin,
                                         base=Path.root("spec", "spec"), budget=budget))
            continue
        missing = f"claim {claim_name}" if claim_name else f"template {template}"
        exp.gaps.append(f'pod claim "{pod_claim}": {missing} not found in namespace {namespace}')
    exp.claims = answers
    request = _pod_request(pod, resolved) if not exp.gaps and resolved else None
    if request is not None:
        exp.ever, exp.now, exp.classes, exp.notes = _pod_classes(request, inventory, namespace, budget)
        return exp
    verdicts = [a.ever for a in answers]
    exp.ever = False if False in verdicts else None if None in verdicts or exp.gaps else True
    nows = [a.now for a in answers]
    exp.now = False if False in nows else None if None in nows or exp.gaps else True
    return exp


def _pod_request(pod: Mapping[str, Any], resolved: Sequence[tuple[int, str, ResourceClaimSpec, str, HeldClaim | None, bool]]) -> PodRequest | None:
    """The pod as the engine's per-pod search sees it: its claims (resolved above) and its own node
    constraints (nodeName, nodeSelector, required node affinity, tolerations).  Containers'
    extended-resource requests are left out (explain answers for the pod's claims)."""
    spec = pod.get("spec") if isinstance(pod.get("spec"), Mapping) else {}
    assert isinstance(spec, Mapping)
    claims = tuple(
        PodClaim(name, claim_spec, origin, Path.root("spec", "resourceClaims").index(i), shared=shared,
                 allocation=held.allocation if held is not None else None,
                 key=f"{held.namespace}/{held.name}" if held is not None and shared else "")
        for i, name, claim_spec, origin, held, shared in resolved
    )
    try:
        tolerations = tuple(Toleration.model_validate(t) for t in (spec.get("tolerations") or []) if isinstance(t, Mapping))
        affinity_raw = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                        .get("requiredDuringSchedulingIgnoredDuringExecution"))
        affinity = NodeSelector.model_validate(affinity_raw) if isinstance(affinity_raw, Mapping) else None
    except (ValidationError, ValueError, TypeError, AttributeError):
        return None
    selector = spec.get("nodeSelector")
    placement = PodPlacement(
        node_name=str(spec.get("nodeName") or ""),
        node_selector={str(k): str(v) for k, v in selector.items()} if isinstance(selector, Mapping) else {},
        affinity=affinity, tolerations=tolerations,
    )
    return PodRequest(claims=claims, placement=placement)


def _now_answer(cls: ClassVerdict, now: Sequence[ClassVerdict]) -> tuple[bool | None, str]:
    """The "now" answer over the nodes of one class of the "ever" check.  The two checks may
    divide the nodes differently (what is held today splits a class into its groups), so the
    answer is gathered node by node: yes when some node of the class fits now, no (with the first
    reason) when none does, undecided otherwise; the class's own answer when no node is named."""
    exact = next((c for c in now if c.nodes == cls.nodes and c.eligible == cls.eligible), None)
    if exact is not None:
        return exact.ok, exact.reason
    wanted = set(cls.nodes)
    got = [c for c in now if c.eligible == cls.eligible and wanted.intersection(c.nodes)]
    if not got:
        return cls.ok, ""
    if any(c.ok for c in got):
        return True, ""
    first = next((c for c in got if c.ok is False), None)
    if first is not None and all(c.ok is False for c in got):
        return False, first.reason
    return None, next((c.reason for c in got if not c.ok), "")


def _pod_classes(request: PodRequest, inventory: Inventory, namespace: str, budget: Budget | None) -> tuple[bool | None, bool | None, list[ClassRow], list[Note]]:
    """Per class of nodes, the pod's verdict ever and now (the engine's joint search over all of its
    claims, every class evaluated), with the holders where only today's allocations are in the way."""
    ever = check_pod(request, inventory, budget=budget, every_class=True)
    now = check_pod(request, inventory, budget=budget, every_class=True, now=True)
    rows: list[ClassRow] = []
    plans = [alt for c in request.claims if c.allocation is None for p in plan_claim(c.spec, c.path) for alt in p.alternatives[:1]]
    for cls in ever.per_class:
        now_ok, now_reason = _now_answer(cls, now.per_class)
        reason = cls.reason if not cls.ok else (now_reason if not now_ok else "")
        held = ""
        if cls.ok and now_ok is False:
            within = {i for g in inventory.groups if set(cls.nodes) & set(g.nodes) for i in g.devices}
            figs = [held_figures(alt, inventory, namespace, within=within) for alt in plans]
            short = next((f for f in figs if f.short), None)
            if short is not None:
                held = holders_phrase(short)
        rows.append(ClassRow(cls.label, cls.nodes, cls.ok, now_ok if cls.ok else cls.ok, reason, held))
    notes = [*ever.notes, *pod_capacity_in_use(request, inventory, ever, namespace=namespace, budget=budget)]
    return ever.satisfiable, (False if now.satisfiable is False and ever.satisfiable else ever.satisfiable and now.satisfiable), rows, notes
