"""Issue #20 item 5, "green on nothing": each case exits with the code and says the words that
docs/guides/cli.md "Exit status, case by case" gives — the table there is parsed and every row is run.

Cases: an empty folder or no object at all (exit 2 naming the paths; ``--allow-empty`` accepts
it), no inventory (said once in the summary), an empty or class-less inventory (a warning in the
summary), an unrendered Helm template (exit 2, "render it first"), paths on both sides of
``--inventory``, JUnit's ``skipped=`` and the JSON summary's counts.
"""

from __future__ import annotations

import json
import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from draguard.cli import main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "docs" / "guides" / "cli.md"  # the CLI guide, moved out of README.md
EXAMPLES = ROOT / "examples"
CLAIM_50GI = EXAMPLES / "claims" / "bad" / "10-unsatisfiable-50gi.yaml"
GOOD = EXAMPLES / "claims" / "good" / "70-default-memory.yaml"
CHART_TEMPLATE = """\
{{- if .Values.claim.enabled }}
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: {{ .Release.Name }}-gpu
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
{{- end }}
"""
CONFIGMAP_WITH_TEMPLATE_TEXT = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: alert-templates, namespace: default}
data:
  slack.tmpl: '{{ define "slack.title" }}{{ .CommonLabels.alertname }}{{ end }}'
"""


def lint(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["lint", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture()
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder with the guide's names in it: ``empty/``, ``chart/templates/claim.yaml``,
    ``inv-empty/``, ``nodes-only.yaml``, ``configmap.yaml``, and the examples."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not a manifest\n")
    (tmp_path / "inv-empty").mkdir()
    (tmp_path / "chart" / "templates").mkdir(parents=True)
    (tmp_path / "chart" / "templates" / "claim.yaml").write_text(CHART_TEMPLATE)
    (tmp_path / "configmap.yaml").write_text(CONFIGMAP_WITH_TEMPLATE_TEXT)
    (tmp_path / "nodes-only.yaml").write_text((EXAMPLES / "inventory" / "00-nodes.yaml").read_text())
    (tmp_path / "examples").symlink_to(EXAMPLES)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def readme_cases() -> list[tuple[str, int, str]]:
    """Rows of the guide's table: ``| `draguard lint …` | exit | `message` |``."""
    text = README.read_text()
    section = text.split("\n## Exit status, case by case\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(draguard lint [^`]+)` \| (\d) \| (``?)(.+?)\3 \|$", section, flags=re.M)
    return [(cmd, int(code), message.strip()) for cmd, code, _, message in rows]


def test_the_readme_table_has_every_case() -> None:
    commands = [cmd for cmd, _, _ in readme_cases()]
    assert len(commands) >= 8, commands
    for needle in ("empty/", "--allow-empty", "chart/templates", "inv-empty", "nodes-only.yaml", "--inventory"):
        assert any(needle in c for c in commands), needle


@pytest.mark.parametrize(("command", "code", "message"), readme_cases(), ids=lambda v: str(v)[:60])
def test_each_readme_case(sandbox: Path, capsys: pytest.CaptureFixture[str], command: str, code: int,
                          message: str) -> None:
    argv = shlex.split(command)[2:]
    status, out, err = lint(capsys, *argv)
    assert status == code, out + err
    assert message in out + err, out + err


def test_no_object_names_every_path(sandbox: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = lint(capsys, "empty", "inv-empty")
    assert status == 2 and out == ""
    assert "no Kubernetes object in empty, inv-empty" in err


def test_stdin_with_nothing_is_no_object(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO(""))
    status, _, err = lint(capsys, "-")
    assert status == 2 and "no Kubernetes object in -" in err


def test_other_kinds_only_is_not_empty_and_is_counted(sandbox: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder of ConfigMaps holds objects: exit 0, but the summary says they were skipped."""
    status, out, _ = lint(capsys, "configmap.yaml")
    assert status == 0
    assert out.strip().endswith("0 objects checked: 0 errors, 0 warnings, 1 skipped (not DRA objects)")


def test_a_template_string_inside_a_value_is_not_a_template(sandbox: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The API server accepts a ConfigMap holding Go template text: so does draguard."""
    status, out, err = lint(capsys, "configmap.yaml", "--format", "json")
    assert status == 0, err
    assert json.loads(out)["findings"] == []


def test_an_unrendered_template_is_named_with_its_line(sandbox: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = lint(capsys, "chart/templates", str(GOOD))
    # said once and skipped; the rest is linted (issue #35 item 4): exit 2 only when nothing could be read
    assert status == 0 and out != ""
    assert err.startswith("draguard: chart/templates/claim.yaml:1: looks like an unrendered Helm or Go template")
    assert "not rendered, skipped" in err
    status, out, err = lint(capsys, "chart/templates")
    assert status == 2 and out == "" and "nothing could be read" in err
    # also when only the inventory is a template
    status, _, err = lint(capsys, str(GOOD), "--inventory", "chart/templates")
    assert status == 2 and "render it first" in err


def test_no_inventory_is_said_once(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = lint(capsys, str(EXAMPLES / "claims" / "good"))
    assert status == 0
    assert out.count("satisfiability was not checked") == 1
    status, out, _ = lint(capsys, str(EXAMPLES / "claims" / "good"), "--format", "json")
    summary = json.loads(out)["summary"]
    assert summary["notices"] == ["satisfiability was not checked: no inventory given (--inventory)"]
    # with an inventory there is nothing to say
    _, out, _ = lint(capsys, str(GOOD), "--inventory", str(EXAMPLES / "inventory"), "--format", "json")
    assert "notices" not in json.loads(out)["summary"]


def test_empty_inventory_is_a_warning_that_fail_on_warning_catches(sandbox: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The 50Gi-on-40Gi claim against an empty folder: not a clean pass any more."""
    status, out, _ = lint(capsys, str(CLAIM_50GI), "--inventory", "inv-empty", "--format", "json")
    assert status == 0  # unknown is never an error (no proof)
    doc = json.loads(out)
    assert doc["summary"]["notices"] == ["satisfiability was not checked: the inventory is empty"]
    (file_level,) = [f for f in doc["findings"] if not f["kind"]]
    assert file_level["severity"] == "warning" and file_level["file"] == "inv-empty"
    status, _, _ = lint(capsys, str(CLAIM_50GI), "--inventory", "inv-empty", "--fail-on", "warning")
    assert status == 1


def test_paths_on_both_sides_of_inventory(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = lint(capsys, str(CLAIM_50GI), "--inventory", str(EXAMPLES / "inventory"), str(GOOD),
                          "--format", "json")
    assert status == 1
    files = {f["file"] for f in json.loads(out)["findings"]}
    assert files == {str(CLAIM_50GI), str(GOOD)}
    # options anywhere, several inventories, stdin last
    status, _, _ = lint(capsys, "--inventory", str(EXAMPLES / "inventory" / "10-classes.yaml"), str(GOOD),
                        "--inventory", str(EXAMPLES / "inventory"), "--fail-on", "never", str(CLAIM_50GI))
    assert status == 0


def test_junit_counts_skipped_documents(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = lint(capsys, str(GOOD), str(ROOT / "manifests"), "--format", "junit")
    assert status == 0
    root = ET.fromstring(out)
    suite = root.find("testsuite")
    assert suite is not None
    skipped = suite.findall("testcase/skipped")
    assert int(suite.get("skipped", "0")) == len(skipped) >= 7  # manifests/ rendered by kubectl kustomize, or read
    assert int(suite.get("tests", "0")) == len(suite.findall("testcase")) == len(skipped) + 1
    assert root.get("skipped") == suite.get("skipped")


def test_json_summary_counts_notes_and_skipped(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = lint(capsys, str(GOOD), str(ROOT / "manifests" / "service.yaml"), "--inventory",
                     str(EXAMPLES / "inventory"), "--format", "json")
    doc = json.loads(out)
    notes = sum(f["severity"] == "info" for f in doc["findings"])
    assert notes == 1
    assert doc["summary"] == {"objects": 1, "errors": 0, "warnings": 0, "notes": 1, "skipped": 1}
