"""Door parity (issue #35 item 1): the same objects through every door give the same verdicts,
reasons and counts — CLI (text, JSON, JUnit, SARIF), ``POST /lint`` (its door function), the
webhook (its door function, with a file inventory) and ``capacity --fit``.

Severity differs only where the README's table says so: at the webhook only ``--deny`` reasons deny
and every other error travels as a warning.  Cases: every file of examples/claims against the
example inventory, and the example chart (examples/workloads) against its inventory.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.cli import main
from draguard.inventory import StaticInventory
from draguard.review import DEFAULT_DENY, ReviewOptions, review_admission
from draguard.server.lint import lint_bytes

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CLAIM_FILES = sorted((EXAMPLES / "claims").rglob("*.yaml"))
CHART = EXAMPLES / "workloads" / "chart"
CASES = [(p, EXAMPLES / "inventory") for p in CLAIM_FILES] + [(CHART, EXAMPLES / "workloads" / "inventory")]
IDS = [str(p.relative_to(EXAMPLES)) for p, _ in CASES]

Verdict = tuple[str, str, str, str, str]


def _cli(capsys: pytest.CaptureFixture[str], path: Path, inventory: Path, fmt: str) -> tuple[int, str]:
    code = main(["lint", str(path), "--inventory", str(inventory), "--format", fmt, "--no-cache"])
    return code, capsys.readouterr().out


def _verdicts(findings: list[dict[str, Any]]) -> Counter[Verdict]:
    return Counter((f["kind"], f["namespace"], f["name"], f["reason"], f["severity"]) for f in findings)


def _files(path: Path) -> list[Path]:
    return sorted(path.rglob("*.yaml")) if path.is_dir() else [path]


@pytest.mark.parametrize(("path", "inventory"), CASES, ids=IDS)
def test_cli_formats_and_post_lint_agree(capsys: pytest.CaptureFixture[str], path: Path, inventory: Path) -> None:
    code, out = _cli(capsys, path, inventory, "json")
    doc = json.loads(out)
    want = _verdicts(doc["findings"])
    # text: one line per finding, with its severity and object
    _, text = _cli(capsys, path, inventory, "text")
    for (kind, ns, name, _reason, severity), n in want.items():
        who = f"{severity}: {kind} {ns + '/' if ns else ''}{name}"
        assert sum(who in line for line in text.splitlines()) >= n, (who, text)
    # SARIF: one result per finding, rule = reason, level = severity
    _, sarif = _cli(capsys, path, inventory, "sarif")
    level = {"error": "error", "warning": "warning", "info": "note"}
    results = json.loads(sarif)["runs"][0]["results"]
    assert Counter((r["ruleId"], r["level"]) for r in results) == Counter(
        (reason, level[sev]) for (_, _, _, reason, sev), n in want.items() for _ in range(n))
    # JUnit: a failing test case exactly for the objects with an error
    junit_code, junit = _cli(capsys, path, inventory, "junit")
    failing = {(k, ns, name) for (k, ns, name, _, sev) in want if sev == "error"}
    suite = ET.fromstring(junit).find("testsuite")
    assert suite is not None and int(suite.get("failures", "0")) == len(failing)
    assert junit_code == code
    # POST /lint's door function, on the same bytes
    body = b"---\n".join(p.read_bytes() for p in _files(path))
    posted = json.loads(lint_bytes(body, "json", StaticInventory([str(inventory)]), ReviewOptions()).body)
    assert _verdicts(posted["findings"]) == want
    assert posted["summary"]["errors"] == doc["summary"]["errors"]


def _objects(path: Path) -> list[dict[str, Any]]:
    return [d for p in _files(path) for d in yaml.safe_load_all(p.read_text()) if isinstance(d, dict)]


@pytest.mark.parametrize(("path", "inventory"), CASES, ids=IDS)
def test_the_webhook_denies_exactly_the_proofs_lint_reports(
    capsys: pytest.CaptureFixture[str], path: Path, inventory: Path
) -> None:
    _, out = _cli(capsys, path, inventory, "json")
    lint = json.loads(out)["findings"]
    objects = _objects(path)
    # in a cluster the classes and templates of the same files exist before the pods that use them
    cluster = StaticInventory([str(inventory), *(str(p) for p in _files(path))])
    for obj in objects:
        kind, meta = obj.get("kind", ""), obj.get("metadata") or {}
        if kind in ("DeviceClass", "ResourceSlice", "Namespace"):
            continue
        name, ns = meta.get("name", ""), meta.get("namespace", "default")
        mine = [f for f in lint if f["kind"] == kind and f["name"] == name]
        proofs = {f["reason"] for f in mine if f["severity"] == "error" and f["reason"] in DEFAULT_DENY}
        if any(f["reason"] == "ReferenceNotFound" for f in mine):
            continue  # not in the cluster either: the webhook's answer depends on what exists there
        review = review_admission(kind=kind, operation="CREATE", obj=obj, old_obj=None, namespace=ns,
                                  inventory=cluster.snapshot(), inventory_problem=None,
                                  options=ReviewOptions(admission=True))
        denied_by = {f.reason for f in review.findings if f.severity.value == "error"}
        assert review.denied == bool(proofs), (kind, name, proofs, review.findings)
        assert denied_by == proofs, (kind, name, denied_by, proofs)
        # every other lint error is at least a warning at the webhook, with the same reason
        said = {f.reason for f in review.findings}
        for f in mine:
            if f["severity"] == "error" and f["reason"] not in ("UnknownField", "DecodeError"):
                assert f["reason"] in said, (kind, name, f, said)


def test_capacity_fit_counts_what_lint_counts(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Each workload ``lint`` gives a replica count gets the same count from ``capacity --fit``."""
    inventory = EXAMPLES / "workloads" / "inventory"
    _, out = _cli(capsys, CHART, inventory, "json")
    counted = [f for f in json.loads(out)["findings"] if f["reason"] == "ReplicasExceedCapacity"]
    assert counted, "the example chart has a workload whose replicas do not all fit"
    objects = _objects(CHART)
    templates = [o for o in objects if o.get("kind") == "ResourceClaimTemplate"]
    for finding in counted:
        (workload,) = [o for o in objects if o.get("kind") == finding["kind"] and o["metadata"]["name"] == finding["name"]]
        fit_file = tmp_path / f"{finding['name']}.yaml"
        fit_file.write_text(yaml.safe_dump_all([*templates, workload]))
        # lint adds the linted files' DeviceClasses to the inventory: so does the cluster they are applied to
        code = main(["capacity", "--inventory", str(inventory), "--inventory", str(CHART / "templates" / "deviceclass.yaml"),
                     "--fit", str(fit_file), "--format", "json"])
        fit = json.loads(capsys.readouterr().out)["fit"]
        assert code == 0 and fit["ever"]["fit"] == finding["details"]["fit"], (finding, fit)
        assert fit["ever"]["bound"] == ("exact" if finding["details"]["exact"] else "at most")
