"""The example chart (examples/workloads/, README "Workloads"): the issue's six mistakes, in every door.

The chart is a Deployment, Jobs, claim templates and a class; the inventory two nodes — node-a
with four whole GPUs, node-b with two NICs.  Each mistake must be reported in lint (text, JSON,
JUnit, SARIF), by ``POST /lint``'s door function and by the webhook's, with an explanation that
names the failing part.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.inventory import StaticInventory, load_paths
from draguard.report import render
from draguard.review import ReviewOptions, review_admission, review_documents
from draguard.server.lint import lint_bytes

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "workloads"
CHART, INVENTORY = EXAMPLE / "chart", EXAMPLE / "inventory"

# (kind, name, reason, severity, words the explanation must contain)
MISTAKES = [
    ("Job", "eval", "ReferenceNotFound", "warning", ['"one-gpu-typo"']),
    ("Job", "export", "FieldValueNotFound", "error", ['"accelerator"', "pod.spec.resourceClaims: gpu"]),
    ("ResourceClaimTemplate", "big-gpu", "Unsatisfiable", "error", ["50Gi", "40Gi"]),
    ("Job", "allreduce", "Unsatisfiable", "error", ['claim "nic"', "node-a", 'claim "gpu"', "node-b"]),
    ("Deployment", "inference", "Unsatisfiable", "error", ["nodeSelector", "topology.kubernetes.io/zone=zone-2"]),
    ("Deployment", "train", "ReplicasExceedCapacity", "warning", ["4 of 8 replicas"]),
]


@pytest.fixture(scope="module")
def source() -> StaticInventory:
    return StaticInventory([str(INVENTORY)])


@pytest.fixture(scope="module")
def review(source: StaticInventory) -> Any:
    decoded = load_paths([str(CHART)])
    return review_documents(decoded.documents, inventory=source.snapshot(), inventory_objects=source.objects())


def _matching(findings: list[dict[str, Any]], kind: str, name: str, reason: str) -> list[dict[str, Any]]:
    return [f for f in findings if f["kind"] == kind and f["name"] == name and f["reason"] == reason]


@pytest.mark.parametrize(("kind", "name", "reason", "severity", "words"), MISTAKES)
def test_each_mistake_is_reported_in_lint_json_and_text(review: Any, kind: str, name: str, reason: str,
                                                        severity: str, words: list[str]) -> None:
    report = json.loads(render(review, "json"))
    (found,) = _matching(report["findings"], kind, name, reason)
    assert found["severity"] == severity and all(w in found["message"] for w in words), found
    if reason == "ReplicasExceedCapacity":
        assert found["details"] == {"replicas": 8, "fit": 4, "exact": True}
    text = render(review, "text")
    assert any(f"{severity}: {kind} default/{name}" in line and words[0] in line for line in text.splitlines())
    junit = render(review, "junit")
    assert f'name="{kind} default/{name}"' in junit or name in junit
    sarif = json.loads(render(review, "sarif"))
    results = sarif["runs"][0]["results"]
    assert any(r["ruleId"] == reason and words[0] in r["message"]["text"] for r in results)


@pytest.mark.parametrize(("kind", "name", "reason", "severity", "words"), MISTAKES)
def test_each_mistake_is_reported_by_post_lint(source: StaticInventory, kind: str, name: str, reason: str,
                                               severity: str, words: list[str]) -> None:
    body = b"---\n".join(p.read_bytes() for p in sorted(CHART.rglob("*.yaml")))
    result = lint_bytes(body, "json", source, ReviewOptions())
    (found,) = _matching(json.loads(result.body)["findings"], kind, name, reason)
    assert found["severity"] == severity and all(w in found["message"] for w in words)


def _documents() -> dict[tuple[str, str], dict[str, Any]]:
    out = {}
    for path in sorted(CHART.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                out[(doc["kind"], doc["metadata"]["name"])] = doc
    return out


@pytest.mark.parametrize(("kind", "name", "reason", "severity", "words"),
                         [m for m in MISTAKES if m[2] != "ReferenceNotFound"])
def test_each_mistake_reaches_the_webhook(kind: str, name: str, reason: str, severity: str, words: list[str]) -> None:
    obj = _documents()[(kind, name)]
    # in the cluster the chart's DeviceClass and claim templates were created before its pods
    cluster = StaticInventory([str(INVENTORY), str(CHART / "templates" / "deviceclass.yaml"),
                               str(CHART / "templates" / "claim-templates.yaml")])
    review = review_admission(kind=kind, operation="CREATE", obj=obj, old_obj=None, namespace="default",
                              inventory=cluster.snapshot(), inventory_problem=None,
                              options=ReviewOptions(admission=True))
    found = [f for f in review.findings if f.reason == reason]
    assert found and all(w in found[0].message for w in words), review.findings
    # only a proof denies; a parity finding is a warning at the webhook (the API server decided already)
    assert found[0].severity.value == ("error" if reason == "Unsatisfiable" else "warning")
    assert review.denied == (reason == "Unsatisfiable")


def test_the_fine_job_has_nothing_to_say(review: Any) -> None:
    assert [f for f in review.findings if f.name == "smoke"] == []
