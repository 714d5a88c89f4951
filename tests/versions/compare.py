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
from typing import Any

import yaml
from draguard.inventory import load_paths
from draguard.k8s.decode import CHECKED_KINDS
from draguard.k8s.features import Target
from draguard.k8s.finding import Severity
from draguard.review.pipeline import ReviewOptions, review_documents

# findings the API server turns into a rejection (decode errors are 400s without causes)
_DECODE = {"DecodeError", "UnknownField", "FieldValueTypeInvalid"}


@dataclass(frozen=True)
class OurVerdict:
    name: str
    admitted: bool
    causes: frozenset[tuple[str, str]]
    decode_error: bool
    dropped: frozenset[str]
    admin_unverified: bool = False  # the namespace-label rule draguard leaves to a warning


def verdicts(paths: Sequence[Path | str], target: Target) -> dict[str, OurVerdict]:
    """draguard's verdict per object name (names are unique in a corpus)."""
    decoded = load_paths([str(p) for p in paths])
    docs = [d for d in decoded.documents if d.kind in CHECKED_KINDS]
    review = review_documents(docs, inventory=None, options=ReviewOptions(target=target))
    return {obj.ref.name: _verdict(obj) for obj in review.objects}


def normalize(sources: Sequence[Path], out_dir: Path) -> list[Path]:
    """One file per source with only its DRA objects, namespaces removed (a dry-run API server
    has only ``default``), so the API server and draguard see exactly the same documents."""
    written: list[Path] = []
    for source in sources:
        docs = [d for d in yaml.safe_load_all(source.read_text()) if isinstance(d, dict) and d.get("kind") in CHECKED_KINDS]
        for doc in docs:
            if isinstance(doc.get("metadata"), dict):
                doc["metadata"].pop("namespace", None)
        if docs:
            target = out_dir / source.name
            target.write_text(yaml.safe_dump_all(docs, sort_keys=False))
            written.append(target)
    return written


def verdicts_in_order(path: Path, target: Target) -> list[OurVerdict]:
    """draguard's verdicts on one file, in document order (the API server's ``index``)."""
    decoded = load_paths([str(path)])
    review = review_documents(decoded.documents, inventory=None, options=ReviewOptions(target=target))
    return [_verdict(obj) for obj in review.objects]


def _skipped_verdict(name: str) -> OurVerdict:
    """A document draguard skips (a pod that uses no DRA at this target): nothing to say, so accepted."""
    return OurVerdict(name, True, frozenset(), False, frozenset())


def _verdict(obj: Any) -> OurVerdict:
    errors = [f for f in obj.findings if f.severity is Severity.ERROR and not f.reason.startswith("Lint")]
    decode = any(f.reason in _DECODE for f in errors)
    causes = frozenset((f.field, f.reason) for f in errors if f.reason.startswith("FieldValue"))
    dropped = frozenset(f.field for f in obj.findings if f.reason == "FieldDropped")
    admin = any(f.reason == "AdminAccessUnverified" for f in obj.findings)
    return OurVerdict(obj.ref.name, not errors, causes, decode, dropped, admin)


def compare_run(real: Iterable[Any], files: Sequence[Path], target: Target) -> tuple[int, list[str]]:
    """(objects compared, disagreements) between a harness run and draguard on ``files``."""
    by_file: dict[str, list[Any]] = {}
    for v in real:
        by_file.setdefault(Path(v.file).name, []).append(v)
    compared = 0
    problems: list[str] = []
    for f in files:
        theirs = sorted(by_file.get(f.name, []), key=lambda v: v.index)
        ours = verdicts_in_order(f, target)
        by_name = {o.name: o for o in ours}
        if len(theirs) != len(ours) and len(by_name) != len(ours):
            problems.append(f"{f.name}: the API server answered {len(theirs)} objects, draguard reviewed {len(ours)}")
            continue
        pairs = zip(theirs, ours, strict=True) if len(theirs) == len(ours) else (
            (v, by_name.get(str(v.name)) or _skipped_verdict(str(v.name))) for v in theirs)  # skipped pods
        for v, mine in pairs:
            compared += 1
            problems.extend(f"{f.name}: {line}" for line in disagreements([v], {str(v.name): mine}))
    return compared, problems


def disagreements(real: Iterable[object], ours: dict[str, OurVerdict]) -> list[str]:
    """One line per object whose verdict differs (``real`` are ``tests.realapi.Verdict``)."""
    out: list[str] = []
    for v in real:
        name = getattr(v, "name", None)
        if name is None or name not in ours:
            continue
        mine = ours[name]
        if mine.admin_unverified:
            continue  # admin access depends on namespace labels: a warning by design (docs/guides/cli.md)
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
