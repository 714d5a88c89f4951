"""``draguard explain`` output: a table per claim (text) or JSON.

Formatting only: the answers are :class:`~app.review.Explanation` values.  The text form leads
with what the API server rejects of the object (such an object never runs: both answers are
no), then the two questions — could it ever run (every device free), does it fit now (today's
allocations) — then one row per class of alike nodes with the first reason there.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..k8s import Finding, Note
from ..review import ClaimAnswer, Explanation

__all__ = ["explanation_json", "render_explanation"]


def _notes(items: Sequence[Note]) -> list[dict[str, Any]]:
    out = []
    for n in items:
        entry: dict[str, Any] = {"severity": n.severity.value, "reason": n.reason.value, "message": n.message,
                                 "field": str(n.path) if n.path is not None else ""}
        if n.details:
            entry["details"] = dict(n.details)
        out.append(entry)
    return out


def _claim_json(c: ClaimAnswer) -> dict[str, Any]:
    return {"name": c.name, "origin": c.origin, "state": c.state, "ever": c.ever, "now": c.now,
            "findings": _notes(c.notes), "classes": [row.as_json() for row in c.classes]}


def _rejected(items: Sequence[Finding]) -> list[dict[str, Any]]:
    return [{"severity": f.severity.value, "reason": f.reason, "message": f.message, "field": f.field} for f in items]


def explanation_json(exp: Explanation) -> dict[str, Any]:
    return {"kind": exp.kind, "namespace": exp.namespace, "name": exp.name, "state": exp.state,
            "rejected": _rejected(exp.rejected),
            "ever": exp.ever, "now": exp.now, "claims": [_claim_json(c) for c in exp.claims],
            "findings": _notes(exp.notes), "classes": [row.as_json() for row in exp.classes], "gaps": list(exp.gaps)}


def _word(value: bool | None) -> str:
    return "yes" if value else "unknown" if value is None else "no"


def _table(rows: Sequence[Any], indent: str) -> list[str]:
    header = ["NODES", "EVER", "NOW", "FIRST REASON"]
    cells = [[r.label, _word(r.ever), _word(r.now), r.reason + (f" ({r.held})" if r.held else "")] for r in rows]
    widths = [max(len(c[i]) for c in [header, *cells]) for i in range(3)]
    return [indent + "  ".join(c.ljust(w) for c, w in zip(r[:3], widths, strict=True)) + "  " + r[3]
            for r in [header, *cells]]


def _text(exp: Explanation) -> str:
    lines = [f"{exp.kind} {exp.namespace}/{exp.name}" + (f": {exp.state}" if exp.state else "")]
    if exp.rejected:
        lines.append("  rejected by the API server (it does not accept the object as written):")
        for f in exp.rejected:
            where = f" {f.field}:" if f.field else ""
            lines.append(f"    {f.severity.value}: {f.reason}:{where} {f.message}")
    why = " (the API server rejects it)" if exp.rejected else ""
    lines.append(f"  could ever run (every device free): {_word(exp.ever)}{why}")
    lines.append(f"  fits now (today's allocations):     {_word(exp.now)}{why}")
    for n in exp.notes:
        where = f" {n.path}:" if n.path is not None and str(n.path) else ""
        lines.append(f"  {n.severity.value}: {n.reason.value}:{where} {n.message}")
    if exp.classes:
        lines.append("")
        lines.append("  all claims of the pod together, per class of nodes:")
        lines.extend(_table(exp.classes, "  "))
    for claim in exp.claims:
        lines.append("")
        head = claim.origin + (f": {claim.state}" if claim.state else "")
        lines.append(f"  {head}")
        for n in claim.notes:
            where = f" {n.path}:" if n.path is not None and str(n.path) else ""
            lines.append(f"    {n.severity.value}: {n.reason.value}:{where} {n.message}")
        if claim.classes:
            lines.extend(_table(claim.classes, "    "))
    for gap in exp.gaps:
        lines.append(f"  note: {gap}")
    return "\n".join(lines) + "\n"


def render_explanation(exp: Explanation, fmt: str) -> str:
    """``fmt``: ``text`` (tables) or ``json``."""
    if fmt == "json":
        return json.dumps(explanation_json(exp), indent=2) + "\n"
    return _text(exp)
