"""``draguard explain``: the answer for one claim, pod or workload (its pod template), per class of
alike nodes, with every device free (*ever*) and with today's allocations (*now*).

Why per node class: the scheduler's "cannot allocate all claims" is one line for every cause;
the user needs to know, for each kind of node, whether the devices ran out, a selector failed or
a constraint cannot hold — and, where capacity is the reason, what holds it.  The rows are the
per-pod engine's own (the search the webhook runs, every class decided), one row per class:
a node kept out only for now (a cordon, a taint the node lifecycle controller sets and removes,
``node.kubernetes.io/not-ready`` …) is answered by the search as if it were back — ever yes when
the claims fit there, now no — never a "never".  Each reason is counted on the devices of its
class, so a request's figures never land on nodes that do not have such devices.  What the API
server rejects of the object comes first: such an object never runs as written.  Holders are
named only in the asking namespace (no leak across tenants).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..inventory import ClaimReducer, HeldClaim, Inventory
from ..k8s import (
    DEFAULT_TARGET,
    Budget,
    Document,
    Family,
    Finding,
    Note,
    Path,
    Reason,
    ResourceClaimSpec,
    Severity,
    Target,
    Toleration,
    decode_pod_spec,
    family_of,
)
from ..satisfy import (
    ClassVerdict,
    PodClaim,
    PodPlacement,
    PodRequest,
    PodVerdict,
    capacity_in_use,
    check_claim_spec,
    check_pod,
    held_figures,
    holders_phrase,
    plan_claim,
    pod_capacity_in_use,
)
from .pipeline import ReviewOptions, review_documents
from .workloads import container_resources, pod_placement

__all__ = ["WORKLOAD_TEMPLATES", "ClaimAnswer", "ClassRow", "Explanation", "explain_claim", "explain_object"]

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
    rejected: list[Finding] = field(default_factory=list)
    """What the API server rejects of the object (its validation errors): such an object never
    runs as written, so the verdicts are "no" and these come first."""


WORKLOAD_TEMPLATES: Mapping[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}
"""Where each workload kind ``explain`` accepts keeps its pod template: its pods are explained."""


def _verdict(notes: Sequence[Note]) -> bool | None:
    if any(n.reason in _FAILS and n.severity is Severity.ERROR for n in notes):
        return False
    if any(n.reason in (Reason.SATISFIABILITY_UNKNOWN, Reason.SELECTOR_RUNTIME_ERROR) for n in notes):
        return None
    return True


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
    """The claim's answer overall and per node class, ever and now; every search under ``budget``.

    The rows are the per-pod engine's, for a pod that carries only this claim and tolerates
    every node taint (the claim's own answer: which pod will use it is not known here), so each
    row's reason is about the devices of *that* class — a request's shortfall counted on its
    nodes, never a sentence about the whole inventory copied onto nodes it does not describe."""
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
    request = PodRequest(claims=(PodClaim(name, spec, "", base),), placement=_ANY_NODE)
    _, _, rows = _class_rows(request, inventory, namespace, budget)
    prefix = f'claim "{name}": '
    answer.classes = [dataclasses.replace(r, reason=r.reason.removeprefix(prefix)) for r in rows]
    return answer


_ANY_NODE = PodPlacement(tolerations=(Toleration(operator="Exists"),))
"""A claim's own rows: a pod that tolerates every taint (and a cordon), no selector."""

_OUT_FOR_NOW = "the claims fit, but the nodes are out for now: "
"""How the engine words a class whose claims fit but whose nodes its filters keep out only for
now (a cordon, a taint the node's controllers set and remove with its condition)."""


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
    target: Target = DEFAULT_TARGET,
) -> Explanation | None:
    """The explanation of ``kind`` (``Pod``, ``ResourceClaim`` or a kind of
    :data:`WORKLOAD_TEMPLATES`: its pod template) ``namespace/name``, or None when it is not known
    (neither in the inventory's claims nor among ``objects`` fetched by name).  What the API
    server rejects of the object (validated for ``target``) comes first and makes the verdicts no.
    ``budget`` (the command's one) bounds every search the explanation makes."""
    if kind == "ResourceClaim":
        held = _claim_of((kind, namespace, name), inventory, objects)
        if held is None:
            return None
        exp = Explanation(kind, namespace, name, rejected=_rejections(objects.get((kind, namespace, name)), target))
        if held.spec is None:
            exp.gaps.append("the claim's spec could not be read")
            return exp
        answer = explain_claim(held.spec, inventory, namespace=namespace, name=name, held=held, budget=budget)
        exp.state, exp.ever, exp.now, exp.claims = answer.state, answer.ever, answer.now, [answer]
        return _rejected_first(exp)
    raw = objects.get((kind, namespace, name))
    if kind in WORKLOAD_TEMPLATES:
        pod = _template_pod(raw, WORKLOAD_TEMPLATES[kind], namespace) if isinstance(raw, Mapping) else None
        state = f"its pod template ({'.'.join(WORKLOAD_TEMPLATES[kind])}) explained as one more pod"
    else:
        pod, state = raw, _pod_state(raw) if isinstance(raw, Mapping) else ""
    if not isinstance(pod, Mapping):
        return None
    exp = Explanation(kind, namespace, name, state, rejected=_rejections(raw, target))
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
    request = _pod_request(pod, resolved, per_node=kind == "DaemonSet") if not exp.gaps else None
    if request is not None:
        exp.ever, exp.now, exp.classes, exp.notes = _pod_classes(request, inventory, namespace, budget)
    else:
        verdicts = [a.ever for a in answers]
        exp.ever = False if False in verdicts else None if None in verdicts or exp.gaps else True
        nows = [a.now for a in answers]
        exp.now = False if False in nows else None if None in nows or exp.gaps else True
    return _rejected_first(exp)


def _rejected_first(exp: Explanation) -> Explanation:
    """An object the API server rejects never runs as written: no, whatever its devices say."""
    if exp.rejected:
        exp.ever = exp.now = False
    return exp


def _rejections(obj: object, target: Target) -> list[Finding]:
    """The object's validation errors as the API server would give them (the lint pipeline with no
    inventory: the rules only, no search)."""
    if not isinstance(obj, Mapping):
        return []
    got = review_documents([Document(dict(obj))], inventory=None, options=ReviewOptions(target=target))
    return [f for o in got.objects for f in o.findings
            if f.severity is Severity.ERROR and family_of(f.reason) in (Family.PARITY, Family.DECODE)]


def _template_pod(workload: Mapping[str, Any], where: Sequence[str], namespace: str) -> dict[str, Any] | None:
    """The pod a workload's controller would create from its template (no name, no status)."""
    node: Any = workload
    for key in where:
        node = node.get(key) if isinstance(node, Mapping) else None
    if not isinstance(node, Mapping) or not isinstance(node.get("spec"), Mapping):
        return None
    meta = node.get("metadata") if isinstance(node.get("metadata"), Mapping) else {}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {**dict(meta or {}), "namespace": namespace},
            "spec": node["spec"]}


def _pod_request(
    pod: Mapping[str, Any],
    resolved: Sequence[tuple[int, str, ResourceClaimSpec, str, HeldClaim | None, bool]],
    *,
    per_node: bool,
) -> PodRequest | None:
    """The pod as the engine's per-pod search sees it — built as lint and the webhook build it
    (:func:`container_resources`, :func:`pod_placement`): its claims (resolved above), its
    containers' extended-resource requests (the implicit claim) and its own node constraints
    (nodeName, nodeSelector, required node affinity, tolerations; a DaemonSet's added ones).
    None when the spec cannot be read or there is nothing DRA to ask."""
    base = Path.root("spec")
    spec = decode_pod_spec(pod.get("spec"), base).model
    if spec is None:
        return None
    claims = tuple(
        PodClaim(name, claim_spec, _short_origin(origin), Path.root("spec", "resourceClaims").index(i), shared=shared,
                 allocation=held.allocation if held is not None else None,
                 key=f"{held.namespace}/{held.name}" if held is not None and shared else "")
        for i, name, claim_spec, origin, held, shared in resolved
    )
    containers = container_resources(spec, base)
    if not claims and not any(c.requests for c in containers):
        return None
    return PodRequest(claims, containers, pod_placement(spec, per_node=per_node), base)


def _short_origin(origin: str) -> str:
    """``template gpu`` of ``pod claim "g" (template gpu; its claim is not created yet)``: the
    engine's sentences name the claim already (``claim "g" (template gpu)``)."""
    inner = origin.partition("(")[2].rstrip(")")
    return inner.partition(";")[0] or origin


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


def _class_rows(
    request: PodRequest, inventory: Inventory, namespace: str, budget: Budget | None,
) -> tuple[PodVerdict, PodVerdict, list[ClassRow]]:
    """Per class of nodes, one row: the pod's verdict ever and now (the engine's joint search over
    all of its claims, every class evaluated), with the holders where only today's allocations are
    in the way.

    One row per class: the engine reports nodes its filters keep out only for now (a cordon, a
    ``node.kubernetes.io/not-ready`` taint …) twice — once as excluded, once searched as if they
    were back.  Such nodes are one row here, answered by the search: *ever* is whether the claims
    fit there, *now* is no ("not now: …"), since the node lifecycle controller removes those
    taints when the node recovers — a transient taint is never a "never"."""
    ever = check_pod(request, inventory, budget=budget, every_class=True)
    now = check_pod(request, inventory, budget=budget, every_class=True, now=True)
    plans = [alt for c in request.claims if c.allocation is None for p in plan_claim(c.spec, c.path) for alt in p.alternatives[:1]]
    potential = {n for g in inventory.groups if g.potential for n in g.nodes}
    excluded = [c for c in ever.per_class if not c.eligible]
    searched = [c for c in ever.per_class if c.eligible]
    out_for_now = {n for c in searched for n in c.nodes if any(n in x.nodes for x in excluded)}
    rows: list[ClassRow] = []
    for cls in excluded:
        left = tuple(n for n in cls.nodes if n not in out_for_now)
        if left or not cls.nodes:
            rows.append(ClassRow(_label(left) if left != cls.nodes else cls.label, left, False, False, cls.reason))
    for cls in searched:
        if out_for_now.intersection(cls.nodes):
            rows.append(_not_now_row(cls))
            continue
        now_ok, now_reason = _now_answer(cls, now.per_class)
        if cls.ok and cls.nodes and set(cls.nodes) <= potential:
            now_ok, now_reason = False, "a node the autoscaler can create: not there now"
        reason = cls.reason if not cls.ok else (now_reason if not now_ok else "")
        held = ""
        if cls.ok and now_ok is False:
            within = {i for g in inventory.groups if set(cls.nodes) & set(g.nodes) for i in g.devices}
            figs = [held_figures(alt, inventory, namespace, within=within) for alt in plans]
            short = next((f for f in figs if f.short), None)
            if short is not None:
                held = holders_phrase(short)
                if not reason:
                    reason = (f'request "{short.alt.display}": {short.matching - short.free} of {short.matching} '
                              "matching devices here are held")
        rows.append(ClassRow(cls.label, cls.nodes, cls.ok, now_ok if cls.ok else cls.ok, reason, held))
    return ever, now, rows


def _not_now_row(cls: ClassVerdict) -> ClassRow:
    """A class of nodes out only for now: its claims fit (ever yes, now no), or the search's own
    answer when they do not."""
    if cls.ok is None and cls.reason.startswith(_OUT_FOR_NOW):
        why = cls.reason.removeprefix(_OUT_FOR_NOW)
        back = ("until it is uncordoned" if why.startswith("cordoned") else
                "a taint the node's controllers set with its condition and remove when it recovers")
        return ClassRow(cls.label, cls.nodes, True, False, f"not now: {why} ({back}); the claims fit here")
    return ClassRow(cls.label, cls.nodes, cls.ok, False if cls.ok is not None else None, cls.reason)


def _label(nodes: tuple[str, ...]) -> str:
    if not nodes:
        return "(some node)"
    return nodes[0] if len(nodes) == 1 else f"{nodes[0]} (+{len(nodes) - 1} alike)"


def _overall(verdict: PodVerdict, rows: Sequence[ClassRow], question: str) -> bool | None:
    """The pod's answer to one question: yes when some row says yes (a class out only for now
    still answers *ever*), else the engine's verdict — no when every row says no."""
    if any(getattr(r, question) is True for r in rows):
        return True
    if verdict.satisfiable is False or (rows and all(getattr(r, question) is False for r in rows)
                                        and not any(n.fail_open for n in verdict.notes)):
        return False
    return verdict.satisfiable


def _pod_classes(request: PodRequest, inventory: Inventory, namespace: str, budget: Budget | None) -> tuple[bool | None, bool | None, list[ClassRow], list[Note]]:
    """The pod's verdicts ever and now, its rows (:func:`_class_rows`) and findings."""
    ever, now, rows = _class_rows(request, inventory, namespace, budget)
    notes = [*ever.notes, *pod_capacity_in_use(request, inventory, ever, namespace=namespace, budget=budget)]
    ever_ok = _overall(ever, rows, "ever")
    now_ok = _overall(now, rows, "now") if ever_ok else ever_ok
    return ever_ok, now_ok, rows, notes
