"""The paste box: a claim, template or workload in, its findings and how many copies fit out —
``POST /lint``'s report and ``capacity --fit``'s counts against the cluster the page shows.

The lint half is :func:`~app.review.review_documents` rendered by :func:`~app.report.render` as
JSON, as ``/lint`` does; the fit half picks the object as ``capacity --fit FILE`` picks it (the
first workload that uses DRA, else the first claim or template; the other pasted objects are what
the workload names) and asks :func:`~app.review.fit_object`.  Bad input is an answer, never a
crash: an empty or oversized body is a 400 that says so, YAML that does not parse or a field of
the wrong type is a finding with its field and line.
"""

from __future__ import annotations

import json
from typing import Any

from ..inventory import Inventory
from ..k8s import CHECKED_KINDS, DRA_KINDS, Budget, DraguardError, Target, decode_bytes
from ..report import render
from ..review import ReviewOptions, fit_object, review_documents

__all__ = ["MAX_PASTE_BYTES", "PASTE_NAME", "CheckError", "check_paste"]

MAX_PASTE_BYTES = 1 << 20
PASTE_NAME = "<pasted>"
"""The file name the findings carry (angle brackets: never mistaken for a path)."""


class CheckError(DraguardError, ValueError):
    """The body cannot be checked at all; the message names what is wrong with it."""


def check_paste(body: bytes, inventory: Inventory, *, target: Target, deadline: float) -> dict[str, Any]:
    """``{"lint": <the /lint JSON report>, "fit": <capacity --fit's answer> | None, "fit_note": str}``."""
    if len(body) > MAX_PASTE_BYTES:
        raise CheckError(f"body: {len(body)} bytes; at most {MAX_PASTE_BYTES} are checked")
    if not body.strip():
        raise CheckError("body: empty — paste a ResourceClaim, a ResourceClaimTemplate or a workload (YAML or JSON)")
    decoded = decode_bytes(body, source=PASTE_NAME)
    review = review_documents(decoded.documents, inventory=inventory, options=ReviewOptions(
        target=target, deadline_seconds=deadline), decode_findings=decoded.findings)
    lint: dict[str, Any] = json.loads(render(review, "json"))
    docs = [d for d in decoded.documents if isinstance(d.obj, dict)]
    claims = [d for d in docs if d.kind in ("ResourceClaim", "ResourceClaimTemplate")]
    workloads = [d for d in docs if d.kind in CHECKED_KINDS and d.kind not in DRA_KINDS]
    fit: dict[str, Any] | None = None
    for doc in workloads:
        answer = fit_object(doc.obj, inventory, budget=Budget.within(deadline), others=[d.obj for d in claims],
                            target=target)
        if answer.pop("uses_dra", True):
            fit = answer
            break
    if fit is None and claims:
        fit = fit_object(claims[0].obj, inventory, budget=Budget.within(deadline), target=target)
    note = "" if fit is not None else "nothing to count: no workload that uses DRA, ResourceClaim or ResourceClaimTemplate"
    return {"lint": lint, "fit": fit, "fit_note": note}
