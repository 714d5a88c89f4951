"""AdmissionReview in → decision → AdmissionReview out, without any HTTP.

Why separate from the routes: every rule about *what* the webhook answers (which operations
and kinds are reviewed, what a timeout or an internal error means, what goes into the log
line and the metrics) is plain data handling and is tested here without a server; the routes
only read the body, enforce the deadline and serialise.

Rules (README "The webhook and the lint endpoint"):

* ``uid`` is echoed; the envelope's apiVersion/kind echo the request's.
* DELETE and CONNECT are allowed untouched; kinds draguard does not check (or versions other
  than ``resource.k8s.io/v1``) are allowed with one warning — the webhook must never block
  what it does not understand.
* ``/mutate`` reviews only ResourceClaim CREATE (the only thing it may patch) and is always
  ``allowed``; denial is ``/validate``'s job, so a broken mutation can never block anything.
* A review that does not finish in time, or fails inside draguard, is allowed with a warning
  (sound rejection: only a proven problem denies).
* ``dryRun`` requests are answered exactly like real ones; draguard has no side effects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..inventory import Inventory, InventorySource
from ..k8s import (
    DRA_KINDS,
    DraguardError,
    JsonError,
    Reason,
    Severity,
    WorkloadKind,
    describe,
    loads_json,
    workload_kind_for,
)
from ..report import allow, mutation_response, validation_response
from ..review import ObjectReview, ReviewOptions, review_admission
from ..satisfy import SEARCH_DEADLINE

__all__ = [
    "ADMISSION_API_VERSIONS",
    "AdmissionCall",
    "Answer",
    "BadReview",
    "Route",
    "answer_for",
    "envelope",
    "fallback_answer",
    "needs_review",
    "parse_admission_review",
    "review_call",
    "review_object",
]

Route = Literal["validate", "mutate"]
ADMISSION_API_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT")
DRA_GROUP = "resource.k8s.io"
DRA_VERSION = "v1"


class BadReview(DraguardError, ValueError):
    """The body is not an AdmissionReview request; answered with 400 and this message."""


@dataclass(frozen=True, slots=True)  # slots: half the cost of making one, on every request
class AdmissionCall:
    """The parts of an AdmissionReview request draguard uses."""

    api_version: str
    uid: str
    group: str
    version: str
    kind: str
    operation: str
    namespace: str
    name: str
    obj: dict[str, Any] | None
    old_obj: dict[str, Any] | None
    dry_run: bool


@dataclass
class Answer:
    """The response plus what the log line and metrics say about it."""

    response: dict[str, Any]
    decision: str  # allowed | denied
    reason: str  # the first error reason, else first warning reason, else a fixed word
    reasons: list[str] = field(default_factory=list)
    review_ms: float = 0.0
    fail_open: str | None = None  # why it was allowed undecided: Timeout|InternalError|SearchDeadline


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _object_name(obj: dict[str, Any] | None) -> str:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict):
        return ""
    return _str(meta.get("name")) or _str(meta.get("generateName"))


def parse_admission_review(body: bytes) -> AdmissionCall:
    """Check the envelope strictly enough to answer it; raise :class:`BadReview` otherwise."""
    try:
        # no recursion (nesting up to Kubernetes' 10,000 levels), and a lone surrogate or bytes
        # that are not UTF-8 are a 400 here rather than a failure when the answer is rendered
        doc = loads_json(body)
    except JsonError as exc:
        raise BadReview(f"body is not JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise BadReview("body is not a JSON object")
    api_version = doc.get("apiVersion")
    if api_version not in ADMISSION_API_VERSIONS or doc.get("kind") != "AdmissionReview":
        raise BadReview(
            f"expected kind AdmissionReview of apiVersion admission.k8s.io/v1, got "
            f"kind {describe(doc.get('kind'))} apiVersion {describe(api_version)}"
        )
    request = doc.get("request")
    if not isinstance(request, dict):
        raise BadReview("AdmissionReview has no request")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise BadReview("request.uid is missing")
    kind = request.get("kind")
    if not isinstance(kind, dict) or not isinstance(kind.get("kind"), str):
        raise BadReview("request.kind is missing")
    operation = request.get("operation")
    if operation not in OPERATIONS:
        raise BadReview(f"request.operation must be one of {', '.join(OPERATIONS)}, got {describe(operation)}")
    obj = request.get("object")
    old_obj = request.get("oldObject")
    if obj is not None and not isinstance(obj, dict):
        raise BadReview("request.object is not an object")
    if old_obj is not None and not isinstance(old_obj, dict):
        raise BadReview("request.oldObject is not an object")
    if operation in ("CREATE", "UPDATE") and obj is None:
        raise BadReview(f"request.object is required for {operation}")
    return AdmissionCall(
        api_version=str(api_version),
        uid=uid,
        group=_str(kind.get("group")),
        version=_str(kind.get("version")),
        kind=kind["kind"],
        operation=str(operation),
        namespace=_str(request.get("namespace")),
        name=_str(request.get("name")) or _object_name(obj) or _object_name(old_obj),
        obj=obj,
        old_obj=old_obj,
        dry_run=bool(request.get("dryRun", False)),
    )


def envelope(call: AdmissionCall, response: dict[str, Any]) -> dict[str, Any]:
    """The AdmissionReview answer: same apiVersion and kind as the request."""
    return {"apiVersion": call.api_version, "kind": "AdmissionReview", "response": response}


def _workload(call: AdmissionCall, workload_kinds: Sequence[WorkloadKind]) -> bool:
    api_version = f"{call.group}/{call.version}" if call.group else call.version
    return call.kind not in DRA_KINDS and workload_kind_for(api_version, call.kind, workload_kinds) is not None


def needs_review(
    call: AdmissionCall, route: Route, workload_kinds: Sequence[WorkloadKind] = ()
) -> Answer | None:
    """The answer for requests that need no pipeline run, or None when one is needed.

    Pods and workloads (Deployment, Job…, and the operator's ``--workload-kinds``) are reviewed
    by ``/validate`` only: ``/mutate`` never patches them.
    """
    if call.operation in ("DELETE", "CONNECT"):
        return Answer(allow(call.uid), "allowed", "Skipped")
    if _workload(call, workload_kinds):
        return Answer(allow(call.uid), "allowed", "Skipped") if route == "mutate" else None
    if call.group != DRA_GROUP or call.kind not in DRA_KINDS:
        warning = f"draguard does not check {call.kind or 'this kind'} objects; allowed without checks"
        return Answer(allow(call.uid, [warning] if route == "validate" else []), "allowed", Reason.UNSUPPORTED_KIND)
    if call.version != DRA_VERSION:
        warning = f"draguard checks {DRA_GROUP}/{DRA_VERSION} only, not {call.version}; allowed without checks"
        return Answer(allow(call.uid, [warning] if route == "validate" else []), "allowed", "UnsupportedVersion")
    if route == "mutate" and not (call.kind == "ResourceClaim" and call.operation == "CREATE"):
        return Answer(allow(call.uid), "allowed", "Skipped")
    return None


def _search_gave_up(review: ObjectReview) -> bool:
    """The satisfiability search ran out of its time budget (the claim is let through unproven)."""
    return any(f.extra.get("fail_open") == SEARCH_DEADLINE for f in review.findings)


def _first_reason(review: ObjectReview, severities: tuple[Severity, ...]) -> str:
    return next((f.reason for f in review.findings if f.severity in severities), "")


def review_object(call: AdmissionCall, inventory: Inventory | None, problem: str | None,
                  options: ReviewOptions) -> ObjectReview:
    """The pipeline's review of the call's object (CPU-bound: the server runs it in a worker thread)."""
    return review_admission(
        kind=call.kind,
        operation=call.operation,
        obj=call.obj,
        old_obj=call.old_obj,
        namespace=call.namespace,
        inventory=inventory,
        inventory_problem=problem,
        options=options,
    )


def answer_for(call: AdmissionCall, route: Route, review: ObjectReview) -> Answer:
    """The route's answer to ``call`` from a review of its object.

    Only ``call``'s own ``uid``, kind, group and name are read here besides the review, so a
    review remembered for an equal object (``answers.py``) answers another call correctly.
    """
    reasons = sorted({f.reason for f in review.findings})
    undecided = "SearchDeadline" if _search_gave_up(review) else (Reason.BUDGET_EXCEEDED if review.fail_open else None)
    if route == "mutate":
        response = mutation_response(call.uid, review)
        reason = "Patched" if review.patch else "none"
        return Answer(response, "allowed", reason, reasons, review.elapsed_ms)
    response = validation_response(call.uid, review, kind=call.kind, name=call.name, group=call.group)
    if response["allowed"]:
        reason = _first_reason(review, (Severity.WARNING, Severity.INFO)) or "none"
        return Answer(response, "allowed", reason, reasons, review.elapsed_ms, undecided)
    return Answer(response, "denied", _first_reason(review, (Severity.ERROR,)), reasons, review.elapsed_ms)


def review_call(
    call: AdmissionCall, route: Route, inventory: InventorySource, options: ReviewOptions
) -> Answer:
    """Review one call against the source's current snapshot and answer it."""
    return answer_for(call, route, review_object(call, inventory.snapshot(), inventory.problem(), options))


def fallback_answer(call: AdmissionCall, route: Route, why: Literal["Timeout", "InternalError"],
                     detail: str) -> Answer:
    """Allowed with a warning: draguard could not finish, so it must not block (fail open).

    The warning starts with its reason, as every AdmissionReview warning does
    (README "The webhook and the lint endpoint").
    """
    if why == "Timeout":
        text = f"Timeout: draguard's review did not finish within {detail}; allowed without a full check"
    else:
        text = f"InternalError: draguard failed ({detail}); allowed without a full check"
    return Answer(allow(call.uid, [text]), "allowed", why, fail_open=why)
