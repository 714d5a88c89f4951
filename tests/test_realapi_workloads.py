"""Pods and workloads against a real kube-apiserver 1.36: draguard's parity errors are the API server's.

The manifests in tests/data/workloads/parity/ exercise every DRA rule of pod validation on a Pod
and on each workload kind; the API server's dry run is the truth.  Skips, with a reason, where the
binaries are absent (tests/realapi.py).
"""

from __future__ import annotations

from pathlib import Path

import realapi
from draguard.inventory import load_paths
from draguard.review import review_documents

DATA = Path(__file__).resolve().parent / "data" / "workloads"
CASES = DATA / "parity" / "cases.yaml"
NOT_DRA = {"metadata.annotations[kubernetes.io/config.mirror]"}
"""API-server rules on pod fields draguard does not check (the mirror pod's nodeName rule)."""


def test_parity_errors_equal_the_api_servers_causes() -> None:
    run = realapi.run([CASES], inventory=DATA / "parity-inventory")
    review = review_documents(load_paths([str(CASES)]).documents, inventory=None)
    mine: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for f in review.findings:
        if f.severity.value == "error" and f.reason.startswith("FieldValue"):
            mine.setdefault((f.kind, f.name), set()).add((f.field, f.message))
    assert len(run.verdicts) >= 15, run.output
    for verdict in run.verdicts:
        theirs = {(str(c.get("field", "")), str(c.get("message", ""))) for c in verdict.causes}
        theirs = {c for c in theirs if c[0] not in NOT_DRA}
        got = mine.get((str(verdict.kind), str(verdict.name)), set())
        assert got == theirs, (verdict.name, verdict.code, sorted(theirs ^ got))
        assert verdict.admitted == (not theirs and verdict.code != 422), verdict
