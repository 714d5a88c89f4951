"""ObjectReview → AdmissionResponse (admission.k8s.io/v1), the webhook's output format.

Why the care over shape: the API server shows a denial as ``admission webhook "…" denied the
request: <message>``.  A missing ``code`` became 403/"Forbidden" on some versions and a
missing message reads "without explanation" (kube-rs#494), so a denial always
carries ``code`` 422, ``reason: Invalid``, the message kube-apiserver itself would produce
(``ResourceClaim.resource.k8s.io "name" is invalid: [<path>: <body>, …]``) and one
``metav1.StatusCause`` per finding.  Warnings are capped at 120 characters as the API asks,
and a long list is summarised rather than silently truncated by the API server.  Each warning
starts with its reason (README "The webhook and the lint endpoint"), then the figure it is about (a check's short
:attr:`~app.k8s.finding.Finding.brief` when it has one), the field last when there is room; a
warning too long is cut between words, so no number is ever cut in half.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

from ..k8s import Finding, Reason, Severity, aggregate_texts
from ..review import ObjectReview

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


ELLIPSIS = "..."
"""ASCII on purpose: warnings travel as HTTP ``Warning`` headers, which many clients (Python's
http.client, httpx, requests) decode as Latin-1, so a UTF-8 "…" would reach them as mojibake."""


def _clip(text: str, limit: int = WARNING_LIMIT) -> str:
    """One line of at most ``limit`` characters, cut between words (a figure stays whole)."""
    text = " ".join(text.split())  # one line: warnings are shown as single-line headers
    if len(text) <= limit:
        return text
    cut = text[: limit - len(ELLIPSIS)]
    if not text[limit - len(ELLIPSIS)].isspace():  # the cut falls inside a word: drop the word's start
        word_start = cut.rfind(" ")
        if word_start > limit // 2:  # unless the "word" is half the warning (a blob, not a figure)
            cut = cut[:word_start]
    return cut.rstrip(" ,;:") + ELLIPSIS


def finding_warning(f: Finding) -> str:
    """One finding as a warning: reason, then the figure-first text, then the field if it fits."""
    text = f"{f.reason}: {f.brief or f.message}"
    if f.field:
        located = f"{text} at {f.field}"
        if len(" ".join(located.split())) <= WARNING_LIMIT:
            return _clip(located)
    return _clip(text)


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
    response = allow(uid, [f"{Reason.CAPACITY_DEFAULTED}: {d}" for d in review.patch_descriptions])
    if review.patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(review.patch, separators=(",", ":")).encode()).decode()
    return response
