"""What a plain Pod's — or claim's, or template's — satisfiability findings were made of, so that a
caller reviewing the same object again on a new snapshot (the audit) re-decides only the part the
snapshot can change.

Why: a Pod's review is decoding, validation, resolving its claims and templates — none of which reads
the devices — and then two questions of the engine: could it ever run (:func:`check_pod`) and does
it fit now (:func:`pod_capacity_in_use`).  Its findings are a function of the pod's content, of the
few parts of the inventory the first steps read (:func:`reads_alike`: extended resource names,
whether claims are known; :func:`refs_alike`: the claims and templates its references name), and of
those two answers.  So when a ResourceSlice changes, the audit asks the two questions again of the
request it kept (cheap: the engine remembers a verdict per claims and placement effect on the
snapshot, shared by every pod that asks alike) and, when both answers are equal to the kept ones,
the pod's findings are the ones it had — exactly what a review from scratch gives.  When an answer
differs, the findings are made again from the new answers (the pipeline's ``remade_findings``);
when one cannot be had (a deadline), the pod goes through the whole pipeline again.

A ResourceClaim or ResourceClaimTemplate is the same story with one spec: decoding and validation
never read the inventory; its two answers are :func:`check_claim_spec` (made sound for the target
version) and :func:`capacity_in_use` (:class:`ClaimCheck`).

"Plain" is the case the audit meets 10,000 times: a pending Pod with one pod spec whose claims all
resolved, or a claim or template, whose checks ran to the end.  Anything else — a workload (replica
counts), a claim that could not be read, an answer cut short — is not recorded, and is reviewed again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..inventory import ClusterState, Inventory, ObjectKey
from ..k8s import (
    Budget,
    BudgetExceeded,
    Document,
    Finding,
    Note,
    Path,
    ResourceClaimSpec,
    Target,
    current_budget,
)
from ..satisfy import capacity_in_use, check_claim_spec, sound_for_target, spec_text

if TYPE_CHECKING:
    from ..satisfy import PodRequest
# the pod engine and the workload readers are imported where a pod first needs them (app/lazy.py)

__all__ = ["Check", "ClaimCheck", "PodCheck", "Ref", "object_refs", "reads_alike", "recheck", "record", "recording",
           "refs_alike"]


Ref = tuple[str, ObjectKey]
"""``("claim" | "template", (namespace, name))``: an entry of the cluster's claims or templates."""


@dataclass(frozen=True, slots=True)
class PodCheck:
    """One plain Pod's two engine answers on one snapshot, with what asking them again needs."""

    request: PodRequest
    claims_text: str | None
    """:func:`claims_key` of ``request``, written out once."""
    namespace: str
    now: bool
    """Whether "does it fit now?" was asked (a pending pod whose claims all resolved)."""
    satisfiable: bool | None
    notes: tuple[Note, ...]
    """The verdict's notes (:class:`PodVerdict`)."""
    capacity: tuple[Note, ...]
    """``CapacityInUse`` notes (empty when not asked or nothing to say)."""
    effect: dict[str, object] = field(default_factory=dict, compare=False, hash=False)
    """The placement's effect (:func:`placement_effect`) and the node infos it was decided on,
    kept from one recheck to the next: on a snapshot with equal infos it is the same."""
    doc: Document | None = field(default=None, compare=False)
    """The reviewed document, and below the findings made without the inventory's devices (decoding,
    validation, references): with new answers, the pod's findings are these and one per note
    (:func:`~app.review.pipeline.plain_pod_findings`), without the pipeline's other steps."""
    static: tuple[Finding, ...] = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class ClaimCheck:
    """One claim's or template's two engine answers on one snapshot, with what asking them again
    needs (the pipeline's ``_satisfiability``)."""

    spec: ResourceClaimSpec
    base: Path
    """``spec`` (a claim) or ``spec.spec`` (a template): where the notes point."""
    namespace: str
    now: bool
    """Whether "does it fit now?" was asked (not an allocated claim)."""
    notes: tuple[Note, ...]
    """Satisfiability notes, then ``CapacityInUse`` notes."""
    memo: dict[str, str | None] = field(default_factory=dict, compare=False, hash=False)
    """The spec written out (:func:`spec_text`), once for every recheck."""
    doc: Document | None = field(default=None, compare=False)
    """As :class:`PodCheck`'s."""
    static: tuple[Finding, ...] = field(default=(), compare=False)


Check = PodCheck | ClaimCheck

_LOG: ContextVar[dict[int, Check | None] | None] = ContextVar("draguard_pod_checks", default=None)


@contextmanager
def recording() -> Iterator[dict[int, Check | None]]:
    """While inside, the pipeline records per reviewed Pod, claim or template document (by ``id`` of
    its :class:`~app.k8s.Document`) its :class:`Check`, or None when it is not plain."""
    log: dict[int, Check | None] = {}
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)


def active() -> bool:
    """Whether a caller records (the pipeline writes out a request's claims only then)."""
    return _LOG.get() is not None


def record(doc_id: int, check: Check | None) -> None:
    """The pipeline's side: what the pod's findings were made of (None: not plain)."""
    log = _LOG.get()
    if log is not None:
        log[doc_id] = check


def add_static(doc: Document, static: tuple[Finding, ...]) -> None:
    """The pipeline's side, once the pod's findings are made: those made before its answers."""
    log = _LOG.get()
    check = log.get(id(doc)) if log is not None else None
    if log is not None and check is not None:
        log[id(doc)] = replace(check, doc=doc, static=static)


def plain_notes(notes: tuple[Note, ...]) -> bool:
    """No note was cut short by a deadline (such an answer is not the snapshot's own)."""
    return not any(n.fail_open for n in notes)


def recheck(check: Check, inventory: Inventory, *, deadline_seconds: float | None, strict: bool,
            target: Target) -> Check | None:
    """:func:`_recheck`, with capacity request names resolved as ``target``'s allocator does."""
    from ..capacity import capacity_names_for

    with capacity_names_for(target):
        return _recheck(check, inventory, deadline_seconds=deadline_seconds, strict=strict, target=target)


def _recheck(check: Check, inventory: Inventory, *, deadline_seconds: float | None, strict: bool,
             target: Target) -> Check | None:
    """The two answers of ``check``'s request or spec on ``inventory``, asked as the pipeline asks
    them (one budget for both, :func:`~app.review.pipeline._review_budget`'s); ``check`` itself
    when they are equal; None when the budget ran out or an answer was cut short — the caller then
    reviews the object in full."""
    budget = Budget.within(deadline_seconds, current_budget())
    if isinstance(check, ClaimCheck):
        return _recheck_claim(check, inventory, budget, strict, target)
    from ..satisfy import check_pod, distinct_infos, placement_effect, pod_capacity_in_use

    infos = distinct_infos(inventory)
    if check.effect.get("infos") != infos:  # the same objects, or equal ones of another snapshot
        check.effect["infos"], check.effect["effect"] = infos, placement_effect(check.request, inventory)
    effect = check.effect["effect"]
    assert effect is None or isinstance(effect, str)
    try:
        verdict = check_pod(check.request, inventory, budget=budget, strict=strict, target=target,
                            claims_text=check.claims_text, effect=effect)
        notes = tuple(verdict.notes)
        capacity: tuple[Note, ...] = ()
        if check.now:
            capacity = tuple(pod_capacity_in_use(check.request, inventory, verdict, namespace=check.namespace,
                                                 budget=budget, target=target))
    except BudgetExceeded:
        return None
    if not plain_notes(notes) or not plain_notes(capacity):
        return None
    if (verdict.satisfiable, notes, capacity) == (check.satisfiable, check.notes, check.capacity):
        return check
    return replace(check, satisfiable=verdict.satisfiable, notes=notes, capacity=capacity)


def claim_notes(spec: ResourceClaimSpec, inventory: Inventory, *, base: Path, budget: Budget | None, strict: bool,
                target: Target, namespace: str, now: bool, text: str | None = None) -> list[Note]:
    """A claim's or template's satisfiability notes, as the pipeline makes them when no budget runs
    out (raises :class:`BudgetExceeded` when one does; the pipeline words that itself).  ``text``:
    :func:`spec_text` of ``spec`` when kept."""
    notes = sound_for_target(check_claim_spec(spec, inventory, base=base, budget=budget, strict=strict, text=text),
                             spec, target)
    if now:
        notes += capacity_in_use(spec, inventory, base=base, ever=notes, namespace=namespace, budget=budget)
    return notes


def _recheck_claim(check: ClaimCheck, inventory: Inventory, budget: Budget | None, strict: bool,
                   target: Target) -> ClaimCheck | None:
    if "text" not in check.memo:
        check.memo["text"] = spec_text(check.spec)
    try:
        notes = tuple(claim_notes(check.spec, inventory, base=check.base, budget=budget, strict=strict, target=target,
                                  namespace=check.namespace, now=check.now, text=check.memo["text"]))
    except BudgetExceeded:
        return None
    if not plain_notes(notes):
        return None
    return check if notes == check.notes else replace(check, notes=notes)


def reads_alike(old: Inventory, new: Inventory) -> bool:
    """Whether every review reads the same of ``old`` and ``new`` outside its two engine answers
    and its own references (:func:`refs_alike`): the extended resource names DeviceClasses declare
    (which container resources are DRA's) and whether the cluster's claims are known.  Devices,
    pools, nodes, class selectors and allocations are read only by the two answers, which
    :func:`recheck` asks again."""
    if old is new:
        return True
    if old.cluster.known != new.cluster.known:
        return False
    from .workloads import extended_resource_names

    return extended_resource_names(old.classes.values()) == extended_resource_names(new.classes.values())


def refs_alike(refs: tuple[Ref, ...], old: Inventory, new: Inventory, memo: dict[Ref, bool] | None = None) -> bool:
    """Whether the cluster's claims and templates an object looked up (``refs``, :func:`object_refs`)
    are the same on both (as resolution reads them: a claim's spec and allocation, a template's
    spec).  Claims allocated or released elsewhere in the cluster do not matter here: "now" is one
    of the answers asked again.  ``memo`` keeps each entry's answer for a caller asking of many
    objects (pods of one namespace name the same templates)."""
    a, b = old.cluster, new.cluster
    if a is b:
        return True
    for ref in refs:
        same = memo.get(ref) if memo is not None else None
        if same is None:
            same = _same_entry(ref, a, b)
            if memo is not None:
                memo[ref] = same
        if not same:
            return False
    return True


def _same_entry(ref: Ref, a: ClusterState, b: ClusterState) -> bool:
    kind, key = ref
    if kind == "template":
        x, y = a.templates.get(key), b.templates.get(key)
        return x is y or x == y
    p, q = a.claims.get(key), b.claims.get(key)
    if p is None or q is None:
        return p is q
    return p is q or ((p.spec is q.spec or p.spec == q.spec) and (p.allocation is q.allocation or p.allocation == q.allocation))


def object_refs(obj: object, namespace: str) -> tuple[Ref, ...]:
    """The cluster's claims and templates an audited object's review looks up besides its two
    answers: those a Pod's ``spec.resourceClaims`` name (its resolution); a ResourceClaim's own entry
    (whether the cluster holds it allocated decides whether "now" is asked)."""
    if not isinstance(obj, dict):
        return ()
    if obj.get("kind") == "ResourceClaim":
        meta = obj.get("metadata")
        return (("claim", (namespace, str(meta.get("name") if isinstance(meta, dict) else ""))),)
    if obj.get("kind") != "Pod":
        return ()
    spec = obj.get("spec")
    entries = spec.get("resourceClaims") if isinstance(spec, dict) else None
    out: list[Ref] = []
    for entry in entries if isinstance(entries, list) else ():
        if not isinstance(entry, dict):
            continue
        if entry.get("resourceClaimName"):
            out.append(("claim", (namespace, str(entry["resourceClaimName"]))))
        if entry.get("resourceClaimTemplateName"):
            out.append(("template", (namespace, str(entry["resourceClaimTemplateName"]))))
    return tuple(out)


def written(request: PodRequest, inventory: Inventory) -> tuple[str | None, str | None, dict[str, object]]:
    """What :class:`PodCheck` keeps of ``request`` on ``inventory``: its :func:`claims_key`, its
    :func:`placement_effect` and the effect with the node infos it was decided on (the pipeline
    hands the first two to :func:`check_pod`, which would otherwise work them out itself)."""
    from ..satisfy import claims_key, distinct_infos, placement_effect

    effect = placement_effect(request, inventory)
    return claims_key(request), effect, {"infos": distinct_infos(inventory), "effect": effect}
