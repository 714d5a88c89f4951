"""The validation part of the Kubernetes 1.36 conformance sample, run in-process.

For every object in ``expected/**/*.jsonl`` the set of (field path, cause type) of draguard's
errors must equal the set Kubernetes 1.36.2 produced (parsed from ``"<path>: <Body>"`` exactly
as ``scripts/conformance.py`` does).  Objects whose only errors involve CEL are skipped while ``app.cel`` is
not available.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.k8s import Target
from draguard.k8s.structure import structural_pass
from draguard.validation import ValidationContext, validate

CORPUS = Path(__file__).resolve().parents[1] / "data" / "conformance"  # the repository's copy of the sample

BODY = re.compile(
    r"^(.*?): (Required value|Invalid value|Unsupported value|Duplicate value|"
    r"Too long|Too many|Forbidden|Internal error)"
)
CAUSE = {
    "Required value": "FieldValueRequired",
    "Invalid value": "FieldValueInvalid",
    "Unsupported value": "FieldValueNotSupported",
    "Duplicate value": "FieldValueDuplicate",
    "Too long": "FieldValueTooLong",
    "Too many": "FieldValueTooMany",
    "Forbidden": "FieldValueForbidden",
    "Internal error": "InternalError",
}
NAMESPACED = {"ResourceClaim", "ResourceClaimTemplate"}
AS_RECORDED = ValidationContext(target=Target("1.36"))  # the sample is 1.36.2's answers


def _expected_set(errors: list[str]) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for e in errors:
        m = BODY.match(e)
        out.add((m.group(1), CAUSE[m.group(2)]) if m else (e.split(": ", 1)[0], "Unknown"))
    return out


def _cases() -> list[Any]:
    if not CORPUS.is_dir():
        return []
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    params = []
    for entry in manifest["files"]:
        docs: dict[tuple[str, str, str], dict[str, Any]] = {}
        for doc in yaml.safe_load_all((CORPUS / entry["file"]).read_text()):
            if not isinstance(doc, dict):
                continue
            kind = doc.get("kind", "")
            meta = doc.get("metadata") or {}
            ns = (meta.get("namespace") or "default") if kind in NAMESPACED else ""
            docs[(kind, ns, meta.get("name", ""))] = doc
        for line in (CORPUS / entry["expected"]).read_text().splitlines():
            o = json.loads(line)
            if o.get("decodeError") or (o.get("panics") and not o["validationErrors"]):
                continue
            key = (o["kind"], o.get("namespace") or "", o["name"])
            params.append(
                pytest.param(entry["file"], docs.get(key), o, id=f"{entry['file']}:{o['name'][:60]}")
            )
    return params


CASES = _cases()


def _uses_cel(doc: dict[str, Any]) -> bool:
    return '"cel"' in json.dumps(doc)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="conformance sample not present")
@pytest.mark.parametrize(("file", "doc", "expected"), CASES)
def test_conformance_object(file: str, doc: dict[str, Any] | None, expected: dict[str, Any]) -> None:
    assert doc is not None, f"{expected['kind']}/{expected['name']} not found in {file}"
    st = structural_pass(doc["kind"], doc)
    assert st.model is not None and not st.type_errors and not st.unknown_fields
    result = validate(st.model, AS_RECORDED)  # type: ignore[arg-type]
    got = {(e.field, e.reason) for e in result.errors}
    assert got == _expected_set(expected["validationErrors"]), [str(e) for e in result.errors]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="conformance sample not present")
def test_validation_sample_messages_match_where_deterministic() -> None:
    """Beyond (path, type): the full error lines equal Kubernetes' for every non-CEL validation case."""
    for param in CASES:
        file, doc, expected = param.values
        if "validation" not in file or doc is None or _uses_cel(doc):
            continue
        model = structural_pass(doc["kind"], doc).model
        result = validate(model, AS_RECORDED)  # type: ignore[arg-type]
        assert sorted(str(e) for e in result.errors) == sorted(expected["validationErrors"]), expected["name"]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="conformance sample not present")
def test_inventory_objects_are_valid() -> None:
    """Every inventory object of the sample was accepted by Kubernetes; draguard must accept it too."""
    for path in sorted(CORPUS.glob("inventories/**/*.yaml")) + sorted(CORPUS.glob("random/inventory-*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not isinstance(doc, dict) or doc.get("kind") not in ("DeviceClass", "ResourceSlice"):
                continue
            model = structural_pass(doc["kind"], doc).model
            result = validate(model, AS_RECORDED)  # type: ignore[arg-type]
            assert result.errors == [], (path.name, doc["metadata"]["name"], [str(e) for e in result.errors])
