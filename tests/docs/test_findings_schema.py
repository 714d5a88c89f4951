"""The JSON output validates against the published schema, docs/reference/findings.schema.json
(issue #38): ``draguard lint --format json`` over the examples (claims against their inventory,
the workloads example against its inventory, files with decode and validation errors, mutations,
a run without an inventory) and the ``POST /lint`` answer of a real server over HTTPS.  And the schema is strict:
a findings document with a field removed, renamed or of the wrong type is refused, so validating
against it says something."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from draguard.cli import main
from draguard.inventory import StaticInventory
from draguard.server.state import ServerState
from jsonschema import Draft202012Validator
from server.conftest import Served

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCHEMA = json.loads((ROOT / "docs" / "reference" / "findings.schema.json").read_text())
VALIDATOR = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
BROKEN_YAML = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: x\nspec: [\n"


def errors(doc: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(doc)]


def lint_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    status = main(["lint", "--format", "json", *argv])
    out = capsys.readouterr().out
    assert status in (0, 1), out
    doc: dict[str, Any] = json.loads(out)
    return doc


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    Draft202012Validator.check_schema(SCHEMA)


# ------------------------------------------------------------------ real output validates
RUNS = {
    "claims with the demo inventory": ["examples/claims", "--inventory", "examples/inventory"],
    "workloads with their inventory": ["examples/workloads/chart", "--inventory", "examples/workloads/inventory"],
    "schema and CEL errors": ["examples/claims/bad/40-schema-errors.yaml", "examples/claims/bad/50-cel-syntax-error.yaml",
                              "examples/claims/bad/60-slice-bad-request-policy.yaml"],
    "mutations": ["examples/claims/good/70-default-memory.yaml", "--inventory", "examples/inventory",
                  "--show-mutations"],
    "no inventory (notices)": ["examples/claims/good"],
}


@pytest.fixture()
def in_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(ROOT)
    yield


@pytest.mark.parametrize("argv", RUNS.values(), ids=list(RUNS))
def test_lint_json_validates(capsys: pytest.CaptureFixture[str], in_root: None, argv: list[str]) -> None:
    doc = lint_json(capsys, *argv)
    assert errors(doc) == []
    assert doc["summary"]["objects"] > 0


def test_the_runs_cover_what_the_schema_allows(capsys: pytest.CaptureFixture[str], in_root: None) -> None:
    """The examples exercise every optional part: positions, details, notices, mutations, and all
    three severities — so the validations above check them."""
    docs = [lint_json(capsys, *argv) for argv in RUNS.values()]
    findings = [f for d in docs for f in d["findings"]]
    assert {f["severity"] for f in findings} == {"error", "warning", "info"}
    assert any("line" in f for f in findings) and any("details" in f for f in findings)
    assert any("notices" in d["summary"] for d in docs) and any(d.get("mutations") for d in docs)
    assert any("\n" in f["message"] for f in findings)  # the CEL caret display keeps its line breaks


def test_a_decode_error_validates(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(BROKEN_YAML)
    doc = lint_json(capsys, str(broken))
    assert [f["reason"] for f in doc["findings"]] == ["DecodeError"]
    assert errors(doc) == []


@pytest.fixture()
def lint_endpoint(serve: Callable[..., Served]) -> Served:
    """A real draguard server over HTTPS on loopback with the demo inventory (tests/server's fixture)."""
    return serve(ServerState(inventory=StaticInventory([str(EXAMPLES / "inventory")])))


@pytest.mark.parametrize("path", ["claims/bad/10-unsatisfiable-50gi.yaml", "claims/bad/40-schema-errors.yaml",
                                  "claims/good/20-shared-gpu-7gi-rounds-up.yaml"])
@pytest.mark.parametrize("query", ["", "?file=claims.yaml"])
def test_the_lint_endpoint_answer_validates(lint_endpoint: Served, path: str, query: str) -> None:
    answer = lint_endpoint.client.post(f"/lint{query}", content=(EXAMPLES / path).read_bytes())
    assert answer.status_code == 200, answer.text
    doc = answer.json()
    assert doc["findings"] and errors(doc) == []


def test_the_lint_endpoint_decode_error_validates(lint_endpoint: Served) -> None:
    doc = lint_endpoint.client.post("/lint", content=BROKEN_YAML.encode()).json()
    assert doc["findings"][0]["reason"] == "DecodeError" and errors(doc) == []


# ------------------------------------------------------------------ the schema refuses
@pytest.fixture(scope="module")
def sample() -> dict[str, Any]:
    """One real document with a positioned finding with details, notices and a mutation."""
    doc = {
        "findings": [{"severity": "warning", "reason": "ReplicasExceedCapacity", "kind": "Deployment",
                      "namespace": "default", "name": "train", "field": "spec.replicas",
                      "message": "4 of 8 replicas can hold their claims at once", "file": "deploy.yaml",
                      "line": 7, "column": 3, "details": {"replicas": 8, "fit": 4, "exact": True}}],
        "summary": {"objects": 1, "errors": 0, "warnings": 1, "notes": 0, "skipped": 0,
                    "notices": ["satisfiability was not checked: no inventory given (--inventory)"]},
        "mutations": [{"kind": "ResourceClaim", "namespace": "default", "name": "c", "file": "c.yaml",
                       "patch": [{"op": "add", "path": "/spec/devices/requests/0/exactly/capacity",
                                  "value": {"requests": {"memory": "5Gi"}}}],
                       "description": ["5Gi memory filled in"]}],
    }
    assert errors(doc) == []
    return doc


FINDING_FIELDS = ["severity", "reason", "kind", "namespace", "name", "field", "message"]
SUMMARY_FIELDS = ["objects", "errors", "warnings", "notes", "skipped"]


@pytest.mark.parametrize("field", FINDING_FIELDS)
def test_a_finding_without_a_required_field_is_refused(sample: dict[str, Any], field: str) -> None:
    doc = copy.deepcopy(sample)
    del doc["findings"][0][field]
    assert errors(doc) != []


@pytest.mark.parametrize("field", SUMMARY_FIELDS)
def test_a_summary_without_a_count_is_refused(sample: dict[str, Any], field: str) -> None:
    doc = copy.deepcopy(sample)
    del doc["summary"][field]
    assert errors(doc) != []


@pytest.mark.parametrize("top", ["findings", "summary"])
def test_a_document_without_findings_or_summary_is_refused(sample: dict[str, Any], top: str) -> None:
    doc = copy.deepcopy(sample)
    del doc[top]
    assert errors(doc) != []


@pytest.mark.parametrize(
    ("where", "key", "value"),
    [
        ("finding", "line", "7"),             # a number as a string
        ("finding", "column", 1.5),
        ("finding", "line", 0),
        ("finding", "severity", "fatal"),     # not a severity
        ("finding", "reason", "NoSuchReason"),  # not a registered reason
        ("finding", "message", ""),
        ("finding", "message", None),
        ("finding", "details", {}),           # emitted only when not empty
        ("finding", "details", [1]),
        ("finding", "kind", 3),
        ("finding", "severity_", "error"),    # an unknown (misspelt) field
        ("summary", "errors", "1"),
        ("summary", "objects", -1),
        ("summary", "notices", []),
        ("summary", "notices", "one"),
        ("summary", "total", 3),
        ("document", "extra", []),
        ("document", "findings", {}),
        ("mutation", "patch", [{"op": "add"}]),
        ("mutation", "patch", [{"op": "merge", "path": "/spec"}]),
        ("mutation", "description", "filled"),
    ],
)
def test_a_mistyped_or_unknown_field_is_refused(sample: dict[str, Any], where: str, key: str, value: Any) -> None:
    doc = copy.deepcopy(sample)
    target = {"finding": doc["findings"][0], "summary": doc["summary"], "document": doc,
              "mutation": doc["mutations"][0]}[where]
    target[key] = value
    assert errors(doc) != [], (where, key, value)


def test_line_and_column_come_together(sample: dict[str, Any]) -> None:
    for field in ("line", "column"):
        doc = copy.deepcopy(sample)
        del doc["findings"][0][field]
        assert errors(doc) != [], field
    doc = copy.deepcopy(sample)
    del doc["findings"][0]["line"], doc["findings"][0]["column"], doc["findings"][0]["file"]
    assert errors(doc) == []
