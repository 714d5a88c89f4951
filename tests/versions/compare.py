"""draguard's verdict on manifests, in the shape a real API server's verdict has, and the diff.

Why: the real kube-apiserver is the ground truth for what each target version and gate set
accepts.  ``verdicts`` runs draguard's lint pipeline (no inventory: the API server has none
either) and keeps what the API server would say — accepted or not, and which ``(field, cause)``
pairs; ``disagreements`` lists every object where the two differ.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.inventory import load_paths
from app.k8s.decode import CHECKED_KINDS
from app.k8s.features import Target
from app.k8s.finding import Severity
from app.review.pipeline import ReviewOptions, review_documents

# findings the API server turns into a rejection (decode errors are 400s without causes)
_DECODE = {"DecodeError", "UnknownField", "FieldValueTypeInvalid"}


@dataclass(frozen=True)
class OurVerdict:
    name: str
    admitted: bool
    causes: frozenset[tuple[str, str]]
    decode_error: bool
    dropped: frozenset[str]


def verdicts(paths: Sequence[Path | str], target: Target) -> dict[str, OurVerdict]:
    """draguard's verdict per object name (names are unique in a corpus)."""
    decoded = load_paths([str(p) for p in paths])
    docs = [d for d in decoded.documents if d.kind in CHECKED_KINDS]
    review = review_documents(docs, inventory=None, options=ReviewOptions(target=target))
    out: dict[str, OurVerdict] = {}
    for obj in review.objects:
        errors = [f for f in obj.findings if f.severity is Severity.ERROR and not f.reason.startswith("Lint")]
        decode = any(f.reason in _DECODE for f in errors)
        causes = frozenset((f.field, f.reason) for f in errors if f.reason.startswith("FieldValue"))
        dropped = frozenset(f.field for f in obj.findings if f.reason == "FieldDropped")
        out[obj.ref.name] = OurVerdict(obj.ref.name, not errors, causes, decode, dropped)
    return out


def disagreements(real: Iterable[object], ours: dict[str, OurVerdict]) -> list[str]:
    """One line per object whose verdict differs (``real`` are ``tests.realapi.Verdict``)."""
    out: list[str] = []
    for v in real:
        name = getattr(v, "name", None)
        if name is None or name not in ours:
            continue
        mine = ours[name]
        admitted = bool(getattr(v, "admitted", False))
        code = getattr(v, "code", None)
        if admitted != mine.admitted:
            out.append(f"{name}: API server {'accepts' if admitted else 'rejects'} ({code} "
                       f"{getattr(v, 'message', '')[:300]!r}), draguard {'accepts' if mine.admitted else 'rejects'} "
                       f"{sorted(mine.causes)}")
            continue
        if not admitted and code == 422 and not mine.decode_error:
            theirs = v.cause_fields()  # type: ignore[attr-defined]
            if theirs != mine.causes:
                out.append(f"{name}: causes differ: API server {sorted(theirs)}, draguard {sorted(mine.causes)}")
    return out
