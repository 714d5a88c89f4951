"""ObjectReview → AdmissionResponse (admission.k8s.io/v1), the webhook's output format.

Why the care over shape: the API server shows a denial as ``admission webhook "…" denied the
request: <message>``.  A missing ``code`` became 403/"Forbidden" on some versions and a
missing message reads "without explanation" (anchors §6, kube-rs#494), so a denial always
carries ``code`` 422, ``reason: Invalid``, the message kube-apiserver itself would produce
(``ResourceClaim.resource.k8s.io "name" is invalid: [<path>: <body>, …]``) and one
``metav1.StatusCause`` per finding.  Warnings are capped at 120 characters as the API asks,
and a long list is summarised rather than silently truncated by the API server.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

from app.k8s import Finding, Severity, aggregate_texts
from app.review import ObjectReview

__all__ = [
    "MAX_CAUSES",
    "MAX_WARNINGS",
    "WARNING_LIMIT",
    "allow",
    "denial_message",
    "denial_status",
    "finding_warning",
    "limit_warnings",
    "mutation_response",
    "validation_response",
]

WARNING_LIMIT = 120  # characters per warning (k8s.io/api/admission/v1 AdmissionResponse.Warnings)
MAX_WARNINGS = 10  # more are summarised in one last warning
MAX_CAUSES = 50  # keeps the response a few KiB even for a pathological object
RESOURCE_GROUP = "resource.k8s.io"


def _field_error_text(f: Finding) -> str:
    return f"{f.field}: {f.message}" if f.field else f.message


def denial_message(kind: str, name: str, errors: Sequence[Finding], group: str = RESOURCE_GROUP) -> str:
    """The message of ``apierrors.NewInvalid(kind, name, errs)``."""
    qualified = f"{kind}.{group}" if group else kind
    shown = [_field_error_text(f) for f in errors[:MAX_CAUSES]]
    if len(errors) > MAX_CAUSES:
        shown.append(f"and {len(errors) - MAX_CAUSES} more errors")
    return f"{qualified} {json.dumps(name)} is invalid: {aggregate_texts(shown)}"


def denial_status(kind: str, name: str, errors: Sequence[Finding], group: str = RESOURCE_GROUP) -> dict[str, Any]:
    """A ``metav1.Status`` for an Invalid error: code 422 and a cause per error."""
    return {
        "metadata": {},
        "status": "Failure",
        "message": denial_message(kind, name, errors, group),
        "reason": "Invalid",
        "details": {
            "name": name,
            "group": group,
            "kind": kind,
            "causes": [  # metav1.StatusCause: the body alone, as the API server's NewInvalid does
                {"reason": f.reason, "message": f.message, "field": f.field}
                for f in errors[:MAX_CAUSES]
            ],
        },
        "code": 422,
    }


def _clip(text: str, limit: int = WARNING_LIMIT) -> str:
    text = " ".join(text.split())  # one line: warnings are shown as single-line headers
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def finding_warning(f: Finding) -> str:
    """One finding as a warning: reason first, so truncation keeps what matters most."""
    return _clip(f"{f.reason}: {_field_error_text(f)}")


def limit_warnings(warnings: Sequence[str], limit: int = MAX_WARNINGS) -> list[str]:
    """At most ``limit`` warnings of at most 120 characters; the rest are counted in the last."""
    clipped = [_clip(w) for w in warnings if w]
    if len(clipped) <= limit:
        return clipped
    rest = len(clipped) - (limit - 1)
    return [*clipped[: limit - 1], _clip(f"draguard: {rest} more warnings; run draguard lint for the full list")]


def allow(uid: str, warnings: Sequence[str] = ()) -> dict[str, Any]:
    """An ``allowed: true`` response with optional warnings (no status: it is not consulted)."""
    response: dict[str, Any] = {"uid": uid, "allowed": True}
    limited = limit_warnings(warnings)
    if limited:
        response["warnings"] = limited
    return response


def validation_response(
    uid: str, review: ObjectReview, *, kind: str, name: str, group: str = RESOURCE_GROUP
) -> dict[str, Any]:
    """The ``response`` of ``/validate``: errors deny, warnings and info become warnings."""
    errors = [f for f in review.findings if f.severity is Severity.ERROR]
    notes = [finding_warning(f) for f in review.findings if f.severity is not Severity.ERROR]
    if not errors:
        return allow(uid, notes)
    response: dict[str, Any] = {
        "uid": uid,
        "allowed": False,
        "status": denial_status(kind, name, errors, group),
    }
    limited = limit_warnings(notes)
    if limited:
        response["warnings"] = limited
    return response


def mutation_response(uid: str, review: ObjectReview) -> dict[str, Any]:
    """The ``response`` of ``/mutate``: always allowed (validation is ``/validate``'s job);
    a base64 JSONPatch only when there is something to fill, with warnings saying what."""
    response = allow(uid, [f"draguard filled in: {d}" for d in review.patch_descriptions])
    if review.patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(review.patch, separators=(",", ":")).encode()).decode()
    return response
