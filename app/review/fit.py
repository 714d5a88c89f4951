"""``draguard capacity --fit FILE``: how many pods of this shape fit now, and with every device free.

Why the replica engine, uncapped: "how many more" is the scheduler placing one pod after another,
each with its own copies of the claims, with the allocator's own device order — exactly what
``lint`` counts for a workload's replicas (:func:`~app.satisfy.count_replicas`), asked twice: from
today's allocations (``now``) and from an empty cluster.  The count is not capped at the number of
devices (a shared GPU serves many pods); it stops only at :data:`MAX_COUNT` or when the command's
deadline passes, and then says "at least N" — never a cut-short number called exact.

Why the pod's shape: a pod's tolerations, nodeSelector and affinity decide which nodes count.
Given a workload (Deployment, Job, StatefulSet, a Pod …) ``--fit`` counts its pods as ``lint``
does, the claim templates it names resolved from the same file or the inventory's cluster state;
given a bare ResourceClaim or ResourceClaimTemplate it counts pods that carry nothing but that claim,
and says so in ``assumes`` (no tolerations: tainted nodes do not count).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from ..inventory import Inventory
from ..k8s import (
    DEFAULT_TARGET,
    Budget,
    BudgetExceeded,
    Path,
    Reason,
    ResourceClaim,
    ResourceClaimTemplate,
    Target,
    WorkloadKind,
    structural_pass,
)
from ..satisfy import PodClaim, PodRequest, check_pod, count_replicas
from .workloads import ClaimIndex, KnownClaim, extended_resource_names, pod_request, read_workload

__all__ = ["BARE_POD", "MAX_COUNT", "fit_object"]

MAX_COUNT = 1_000_000
"""Where a count stops and says "at least": far beyond any cluster's devices times their shares."""

BARE_POD = ("a pod with only this claim: no tolerations (tainted nodes do not count), no nodeSelector, no affinity "
            "— give the workload (--fit deployment.yaml) to count its pods' own")
"""What a bare claim or template is counted as (the ``assumes`` of the answer)."""

CLAIM_KINDS = ("ResourceClaim", "ResourceClaimTemplate")


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _label(obj: Mapping[str, Any]) -> str:
    meta = _meta(obj)
    kind = str(obj.get("kind", ""))
    name = str(meta.get("name") or "")
    namespace = str(meta.get("namespace") or "")
    return f"{kind} {namespace + '/' if namespace else ''}{name}".strip()


def _claim_spec(obj: Mapping[str, Any], target: Target) -> tuple[Any, Path] | None:
    """The claim spec of a ResourceClaim or ResourceClaimTemplate and its path; None when unreadable."""
    try:
        model = structural_pass(str(obj.get("kind", "")), dict(obj), target=target).model
    except (ValidationError, ValueError, TypeError):
        return None
    if isinstance(model, ResourceClaim):
        return model.spec, Path.root("spec")
    if isinstance(model, ResourceClaimTemplate):
        return model.spec.spec, Path.root("spec", "spec")
    return None


def _unknown(label: str, note: str, **extra: Any) -> dict[str, Any]:
    return {"object": label, **extra, "now": {"fit": None, "bound": "unknown"},
            "ever": {"fit": None, "bound": "unknown"}, "notes": [note]}


def fit_object(
    obj: Mapping[str, Any],
    inventory: Inventory,
    *,
    budget: Budget | None = None,
    target: Target = DEFAULT_TARGET,
    others: Sequence[Mapping[str, Any]] = (),
    workload_kinds: Sequence[WorkloadKind] = (),
) -> dict[str, Any]:
    """``{"object", "assumes", "replicas", "now": {"fit", "exact", "bound"}, "ever": {...}, "notes"}``.

    ``obj`` is a ResourceClaim, a ResourceClaimTemplate or a workload; ``others`` the other
    objects of the file (the claims and templates a workload names).  ``bound`` is ``exact``,
    ``at most`` (devices several node groups reach: the count depends on node choice), ``at least``
    (stopped by :data:`MAX_COUNT` or the deadline ``budget``) or ``unknown``."""
    label = _label(obj)
    kind = str(obj.get("kind", ""))
    if kind in CLAIM_KINDS:
        got = _claim_spec(obj, target)
        if got is None:
            return _unknown(label, f"not a valid {kind}: lint it first")
        spec, base = got
        request = PodRequest(claims=(PodClaim("claim", spec, f"{kind} {label}", base),))
        return _count(label, request, inventory, budget, target, assumes=BARE_POD, replicas=None)
    return _fit_workload(obj, label, inventory, budget, target, others, workload_kinds)


def _fit_workload(
    obj: Mapping[str, Any], label: str, inventory: Inventory, budget: Budget | None, target: Target,
    others: Sequence[Mapping[str, Any]], workload_kinds: Sequence[WorkloadKind],
) -> dict[str, Any]:
    namespace = str(_meta(obj).get("namespace") or "default")
    files_claims: dict[tuple[str, str], KnownClaim] = {}
    files_templates: dict[tuple[str, str], KnownClaim] = {}
    for other in others:
        kind = other.get("kind")
        if kind not in CLAIM_KINDS:
            continue
        got = _claim_spec(other, target)
        meta = _meta(other)
        key = (str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
        table = files_claims if kind == "ResourceClaim" else files_templates
        table[key] = KnownClaim(got[0] if got is not None else None)
    index = ClaimIndex.build(files_claims, files_templates, inventory.cluster, lint=True)
    review = read_workload(obj, str(obj.get("apiVersion", "")), str(obj.get("kind", "")), namespace,
                           extra_kinds=workload_kinds, extended=extended_resource_names(inventory.classes.values()),
                           index=index)
    if review is None:
        return _unknown(label, "not a workload that uses DRA (give a ResourceClaim, a ResourceClaimTemplate, or a "
                               "Deployment, Job, StatefulSet, Pod … whose pods name claims)", uses_dra=False)
    template = review.templates[0]
    notes = [f"only its first pod template ({template.template.spec_path}) is counted" for _ in review.templates[1:2]]
    replicas = template.template.replicas
    if not template.valid:
        return _unknown(label, "its pod template is not valid: lint it first", replicas=replicas)
    if template.unresolved:
        names = ", ".join(f'"{n}"' for n in template.unresolved if n)
        missing = [n.message for n in template.notes] or [f"pod claim {names} could not be read"]
        return {**_unknown(label, "not counted: " + "; ".join(missing), replicas=replicas)}
    request = pod_request(template)
    if request is None:
        return _unknown(label, "its pods ask nothing of DRA", replicas=replicas)
    out = _count(label, request, inventory, budget, target, assumes=None, replicas=replicas)
    out["notes"] = notes + out["notes"]
    return out


def _count(
    label: str, request: PodRequest, inventory: Inventory, budget: Budget | None, target: Target, *,
    assumes: str | None, replicas: int | None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"object": label, "assumes": assumes, "replicas": replicas, "notes": []}
    # as lint does: a count only for a pod that can run at all; its verdict otherwise
    try:
        verdict = check_pod(request, inventory, budget=budget, target=target)
    except BudgetExceeded as exc:
        return {**out, "now": {"fit": None, "bound": "unknown"}, "ever": {"fit": None, "bound": "unknown"},
                "notes": [f"not counted: the deadline passed ({exc.where})"]}
    if verdict.satisfiable is not True:
        said = [n.message for n in verdict.notes if n.reason in (Reason.UNSATISFIABLE, Reason.SATISFIABILITY_UNKNOWN)]
        if verdict.satisfiable is False:
            zero = {"fit": 0, "exact": True, "bound": "exact"}
            return {**out, "now": dict(zero), "ever": dict(zero), "notes": said}
        return {**out, "now": {"fit": None, "bound": "unknown"}, "ever": {"fit": None, "bound": "unknown"},
                "notes": said or ["not decided"]}
    for key, now in (("now", True), ("ever", False)):
        try:
            got = count_replicas(request, inventory, MAX_COUNT, budget=budget, target=target, now=now)
        except BudgetExceeded as exc:
            out[key] = {"fit": None, "bound": "unknown"}
            out["notes"].append(f"{key}: not counted: the deadline passed ({exc.where})")
            continue
        cut = any(n.fail_open for n in got.notes)
        if cut:
            out[key] = ({"fit": got.fit, "exact": False, "bound": "at least"} if got.fit > 0
                        else {"fit": None, "bound": "unknown"})
            out["notes"].append(f"{key}: the deadline stopped the count" + (f" after {got.fit} pods" if got.fit else ""))
            continue
        if got.fit >= MAX_COUNT:
            out[key] = {"fit": got.fit, "exact": False, "bound": "at least"}
            continue
        out[key] = {"fit": got.fit, "exact": got.exact, "bound": "exact" if got.exact else "at most"}
        if not got.exact:
            out["notes"].append(f"{key}: at most — some devices are reached from several node groups, so the count "
                                "depends on where the scheduler puts each pod")
    return out
