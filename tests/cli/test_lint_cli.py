"""``draguard lint`` end to end, as CI runs it: a real process, real files, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

BROKEN = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: broken
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        count: "two"
        capacty: {}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: bad-quantity
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        capacity:
          requests:
            memory: 10Gx
"""

SYNTAX = "apiVersion: v1\nkind: [unclosed\n"

GOOD = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: good
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
"""


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "draguard", "lint", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
        check=False,
    )


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    out = {"broken": tmp_path / "broken.yaml", "syntax": tmp_path / "syntax.yaml", "good": tmp_path / "good.yaml"}
    out["broken"].write_text(BROKEN)
    out["syntax"].write_text(SYNTAX)
    out["good"].write_text(GOOD)
    return out


def findings(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    doc = json.loads(proc.stdout)
    assert set(doc) == {"findings", "summary"}
    return list(doc["findings"])


def test_each_structural_problem_has_reason_and_position(files: dict[str, Path]) -> None:
    proc = run(str(files["broken"]), str(files["syntax"]), "--format", "json")
    assert proc.returncode == 1, proc.stderr
    got = {(f["reason"], f.get("field", ""), f.get("line"), f.get("column")) for f in findings(proc)}
    assert ("UnknownField", "spec.devices.requests[0].exactly.capacty", 12, 9) in got
    assert ("FieldValueTypeInvalid", "spec.devices.requests[0].exactly.count", 11, 16) in got
    assert ("FieldValueInvalid", "spec.devices.requests[0].exactly.capacity.requests[memory]", 26, 21) in got
    decode = [f for f in findings(proc) if f["reason"] == "DecodeError"]
    assert decode and decode[0]["file"].endswith("syntax.yaml") and decode[0]["line"] == 3


def test_json_contract_field_order(files: dict[str, Path]) -> None:
    proc = run(str(files["broken"]), "--format", "json")
    first = findings(proc)[0]
    assert list(first)[:7] == ["severity", "reason", "kind", "namespace", "name", "field", "message"]
    assert first["kind"] == "ResourceClaim" and first["namespace"] == "default"
    summary = json.loads(proc.stdout)["summary"]
    assert summary == {"objects": 2, "errors": summary["errors"], "warnings": summary["warnings"], "notes": 0,
                       "skipped": 0, "notices": ["satisfiability was not checked: no inventory given (--inventory)"]}
    assert summary["errors"] >= 3


def test_clean_file_exits_zero_and_text_summary(files: dict[str, Path]) -> None:
    proc = run(str(files["good"]))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("1 objects checked: 0 errors, 0 warnings; "
                                        "satisfiability was not checked: no inventory given (--inventory)")


def test_text_lines_have_the_documented_shape(files: dict[str, Path]) -> None:
    proc = run(str(files["broken"]))
    line = next(x for x in proc.stdout.splitlines() if "UnknownField" in x or "capacty" in x)
    assert line.startswith(f"{files['broken']}:12:9: error: ResourceClaim default/broken: ")


def test_missing_file_exits_two_with_one_line(tmp_path: Path) -> None:
    proc = run(str(tmp_path / "nope.yaml"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "nope.yaml" in proc.stderr


def test_fail_on_never_and_warning(files: dict[str, Path]) -> None:
    assert run(str(files["broken"]), "--fail-on", "never").returncode == 0
    assert run(str(files["good"]), "--fail-on", "warning").returncode == 0


def test_stdin(files: dict[str, Path]) -> None:
    proc = run("-", "--format", "json", stdin=BROKEN)
    assert proc.returncode == 1
    assert all(f["file"] == "<stdin>" for f in findings(proc))


def test_junit_parses_with_one_case_per_object(files: dict[str, Path]) -> None:
    proc = run(str(files["broken"]), str(files["good"]), "--format", "junit")
    root = ET.fromstring(proc.stdout)
    cases = root.findall(".//testcase")
    assert len(cases) == 3
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(failed) == 2


def test_sarif_has_the_required_properties(files: dict[str, Path]) -> None:
    proc = run(str(files["broken"]), "--format", "sarif")
    doc = json.loads(proc.stdout)
    assert doc["version"] == "2.1.0"
    run0 = doc["runs"][0]
    driver = run0["tool"]["driver"]
    assert driver["name"] == "draguard"
    rule_ids = [r["id"] for r in driver["rules"]]
    assert len(rule_ids) == len(set(rule_ids))
    for result in run0["results"]:
        assert result["ruleId"] in rule_ids
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]
        assert result["level"] in {"error", "warning", "note", "none"}
        assert result["message"]["text"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1


def test_usage_error_exits_two() -> None:
    proc = run("--format", "yaml", "x.yaml")
    assert proc.returncode == 2


NEGATIVE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: negative
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        capacity:
          requests:
            memory: "-1Gi"
"""

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_strict_turns_lint_warnings_into_errors(tmp_path: Path) -> None:
    path = tmp_path / "neg.yaml"
    path.write_text(NEGATIVE)
    relaxed = run(str(path), "--format", "json")
    assert relaxed.returncode == 0
    assert {(f["reason"], f["severity"]) for f in findings(relaxed)} == {("LintNegativeCapacityRequest", "warning")}
    strict = run(str(path), "--format", "json", "--strict")
    assert strict.returncode == 1
    assert {(f["reason"], f["severity"]) for f in findings(strict)} == {("LintNegativeCapacityRequest", "error")}
    assert run(str(path), "--fail-on", "warning").returncode == 1


def test_show_mutations_adds_the_patch_to_json() -> None:
    proc = run(str(EXAMPLES / "claims" / "good" / "70-default-memory.yaml"), "--inventory", str(EXAMPLES / "inventory"),
               "--format", "json", "--show-mutations")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0
    (mutation,) = doc["mutations"]
    assert mutation["name"] == "notebook-default-share"
    assert mutation["patch"] == [
        {"op": "add", "path": "/spec/devices/requests/0/exactly/capacity", "value": {"requests": {"memory": "5Gi"}}}
    ]


def test_inventory_folder_also_linted_counts_each_slice_once() -> None:
    inventory = str(EXAMPLES / "inventory")
    proc = run(inventory, str(EXAMPLES / "claims" / "good"), "--inventory", inventory, "--format", "json")
    assert proc.returncode == 0, proc.stdout
    assert not [f for f in findings(proc) if f["severity"] == "error"]
