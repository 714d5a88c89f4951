"""Read the recorded upstream allocator table (tests/data/upstream-allocator/<minor>/cases.json.gz)
and ask draguard about one case the way ``draguard lint CASE --inventory DIR`` would.

The data is written by scripts/record-upstream-allocator.sh (convert.py, then pack.py): per case
its truth (what Kubernetes' allocator said, now and ever, and the target to ask draguard at) and
its files (inventory/*.yaml, case.yaml), each file stored once as a list of documents.
"""

from __future__ import annotations

import functools
import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from draguard.inventory import open_inventory
from draguard.k8s.decode import decode_text
from draguard.k8s.features import parse_target
from draguard.k8s.finding import Finding, Severity
from draguard.review.pipeline import ReviewOptions, review_documents

DATA = Path(__file__).resolve().parents[1] / "data" / "upstream-allocator"
KNOWN = DATA / "known.json"


def versions() -> list[str]:
    """The recorded minors, oldest first (each a folder with cases.json.gz)."""
    found = [p.parent.name for p in DATA.glob("*/cases.json.gz")]
    return sorted(found, key=lambda v: tuple(int(x) for x in v.split(".")))


@functools.cache
def load(version: str) -> dict[str, Any]:
    with gzip.open(DATA / version / "cases.json.gz", "rt", encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


def cases(version: str) -> dict[str, dict[str, Any]]:
    """case name -> {"truth": ..., "files": {relpath: blob key}}."""
    return {c["truth"]["case"]: c for c in load(version)["cases"]}


def known() -> dict[str, Any]:
    if not KNOWN.is_file():
        return {}
    data: dict[str, Any] = json.loads(KNOWN.read_text(encoding="utf-8"))
    return data


def _text(version: str, key: str) -> str:
    return yaml.safe_dump_all(load(version)["blobs"][key], sort_keys=False)


@dataclass(frozen=True)
class Answer:
    """draguard's answer for a case's pod on the case's node.

    ``ever``: "never" (an ``Unsatisfiable`` error on the pod or one of its claims),
    "runtime-error" (a ``SelectorRuntimeError`` error: Kubernetes would abort), "unknown"
    (``SatisfiabilityUnknown``, no proof), "invalid" (another error: an object draguard refuses, so
    the claims were not all checked), or "can" (nothing against it).
    ``now``: only when ``ever`` is "can": "not-now" (``CapacityInUse`` on the pod), "unknown" (the
    "now" check was cut short) or "can".
    """

    ever: str
    now: str | None
    findings: tuple[Finding, ...]

    def describe(self) -> str:
        lines = [f"ever={self.ever} now={self.now}"]
        for f in self.findings:
            if f.severity is not Severity.INFO or f.reason == "SatisfiabilityUnknown":
                lines.append(f"  {f.severity.value} {f.reason} {f.kind}/{f.name} {f.field}: {f.message[:400]}")
        return "\n".join(lines)


def ask_draguard(version: str, case: dict[str, Any]) -> Answer:
    """Lint the case's claims and pod against its inventory, at the truth's target."""
    truth = case["truth"]
    target = parse_target(truth["kubernetesVersion"], truth["featureGates"])
    files: dict[str, str] = case["files"]
    inventory_text = "---\n".join(_text(version, k) for rel, k in files.items() if rel.startswith("inventory/"))
    source = open_inventory(["-"], stdin_text=inventory_text, target=target)
    decoded = decode_text(_text(version, files["case.yaml"]), "case.yaml")
    review = review_documents(
        decoded.documents,
        inventory=source.snapshot(),
        inventory_objects=source.objects(),
        inventory_problem=source.problem(),
        options=ReviewOptions(mutate=False, target=target),
        decode_findings=[*decoded.findings, *source.findings()],
        inventory_name="inventory",
    )
    findings = tuple(review.findings)
    errors = [f for f in findings if f.severity is Severity.ERROR]
    pod = [f for f in findings if f.kind == "Pod"]
    if any(f.reason == "Unsatisfiable" for f in errors):
        ever = "never"
    elif any(f.reason == "SelectorRuntimeError" for f in errors):
        ever = "runtime-error"
    elif errors:
        ever = "invalid"
    elif any(f.reason == "SatisfiabilityUnknown" and f.severity is Severity.WARNING for f in findings):
        ever = "unknown"
    else:
        ever = "can"
    now: str | None = None
    if ever == "can":
        if any(f.reason == "CapacityInUse" for f in pod):
            now = "not-now"
        elif any(f.reason == "SatisfiabilityUnknown" for f in pod):
            now = "unknown"
        else:
            now = "can"
    return Answer(ever, now, findings)


def allocated(outcome: dict[str, Any] | None) -> bool | None:
    """Upstream's outcome as yes/no: "allocated" -> True; "unallocatable", "failed-on-node"
    (the scheduler marks the node unschedulable) and "error" (it aborts the attempt) -> False."""
    if not outcome or not outcome.get("outcome"):
        return None
    return bool(outcome["outcome"] == "allocated")


def classify(truth: dict[str, Any], answer: Answer) -> str | None:
    """The disagreement between upstream's truth and draguard's answer, or None.

    "false-rejection": draguard denies (``Unsatisfiable``, or ``SelectorRuntimeError``: "Kubernetes
    aborts") where upstream allocates (ever);
    "invalid": draguard refuses an object of a case upstream allocates;
    "unknown-proven": upstream never allocates, draguard says SatisfiabilityUnknown;
    "missed": upstream never allocates, draguard finds nothing against it;
    "now-missed": upstream allocates ever but not now, draguard says it fits now;
    "now-false": upstream allocates now, draguard warns CapacityInUse;
    "now-unknown": draguard's "now" check did not decide where upstream did.
    """
    ever = allocated(truth.get("ever"))
    now = allocated(truth.get("now"))
    if ever is True:
        if answer.ever in ("never", "runtime-error"):
            return "false-rejection"
        if answer.ever == "invalid":
            return "invalid"
        if answer.ever == "unknown":
            return None  # not knowing is allowed where the claims can be allocated
        if now is False and answer.now == "can":
            return "now-missed"
        if now is True and answer.now == "not-now":
            return "now-false"
        if answer.now == "unknown" and now is not None:
            return "now-unknown"
        return None
    if ever is False:
        if answer.ever in ("never", "runtime-error", "invalid"):
            return None
        return "unknown-proven" if answer.ever == "unknown" else "missed"
    return None
