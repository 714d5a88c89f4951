"""The satisfiability part of the conformance sample (Kubernetes 1.36.2's own verdicts), in-process.

Scored like ``scripts/conformance.py``: not allocatable → an error ``Unsatisfiable``; allocatable → no
``Unsatisfiable`` and no error (except ``SelectorRuntimeError`` when another node errored);
a CEL runtime error → ``SelectorRuntimeError`` or ``Unsatisfiable``.
"""

from __future__ import annotations

import json
from pathlib import Path as FsPath
from typing import Any

import pytest
from draguard.inventory import build_inventory, load_paths
from draguard.k8s.field import Path
from draguard.k8s.models import ResourceClaim, ResourceClaimTemplate
from draguard.k8s.structure import structural_pass
from draguard.satisfy import check_claim_spec

SAMPLE = FsPath(__file__).resolve().parents[1] / "data" / "conformance"  # the repository's copy of the sample


def _cases() -> list[tuple[str, dict[str, Any], dict[str, Any], list[str]]]:
    if not (SAMPLE / "manifest.json").is_file():
        return []
    out = []
    manifest = json.loads((SAMPLE / "manifest.json").read_text())
    for entry in manifest["files"]:
        expected = {}
        for line in (SAMPLE / entry["expected"]).read_text().splitlines():
            o = json.loads(line)
            expected[(o["kind"], o["name"])] = o
        for doc in load_paths([str(SAMPLE / entry["file"])]).documents:
            o = expected.get((doc.kind, doc.name))
            if o is None or o["validationErrors"] or o.get("allocatable") is None:
                continue
            if o.get("allocationError") and "CEL runtime error" not in o["allocationError"]:
                continue  # other allocator errors (e.g. a missing class) are not scored
            out.append((f"{entry['file']}::{doc.name}", doc.obj, o, entry["inventoryFiles"]))
    return out


CASES = _cases()
_INVENTORIES: dict[tuple[str, ...], Any] = {}


@pytest.mark.skipif(not CASES, reason="conformance sample not present")
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_conformance_satisfiability(case: tuple[str, dict[str, Any], dict[str, Any], list[str]]) -> None:
    _, raw, expected, inventory_files = case
    key = tuple(inventory_files)
    if key not in _INVENTORIES:
        docs = load_paths([str(SAMPLE / f) for f in inventory_files]).documents
        _INVENTORIES[key] = build_inventory([d.obj for d in docs])
    model = structural_pass(raw["kind"], raw).model
    if isinstance(model, ResourceClaim):
        spec, base = model.spec, Path.root("spec")
    else:
        assert isinstance(model, ResourceClaimTemplate)
        spec, base = model.spec.spec, Path.root("spec", "spec")
    notes = check_claim_spec(spec, _INVENTORIES[key], base=base)
    errors = [n for n in notes if n.severity.value == "error"]
    unsat = any(n.reason == "Unsatisfiable" and n.severity.value == "error" for n in notes)
    runtime = any(n.reason == "SelectorRuntimeError" and n.severity.value == "error" for n in notes)
    node_errors = any(v.startswith("error") for v in (expected.get("nodeOutcomes") or {}).values())
    if expected["allocatable"]:
        assert not any(n.reason == "Unsatisfiable" for n in notes), notes
        if node_errors:
            assert all(n.reason == "SelectorRuntimeError" for n in errors), notes
        else:
            assert not errors, notes
    elif expected.get("allocationError"):
        assert unsat or runtime, notes
    else:
        assert unsat, notes
        assert all(n.message for n in errors)
