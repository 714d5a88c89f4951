"""CLI and report defects of issue #13 item 5, each shown failing before and passing now:
``--inventory`` takes one value and repeats; SARIF URIs are relative to the working directory
(or ``--sarif-root``); SARIF rules have readable names and help links to anchors of the reasons (README.md, docs/)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from draguard.cli import main
from draguard.k8s.field import ErrorType
from draguard.k8s.finding import Reason
from draguard.report.rules import DOCS_URI, RULES, rule_for

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "tests" / "server" / "data" / "inventory.yaml"

CLAIM_50GI = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: llm-50gi, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        capacity:
          requests: {memory: 50Gi}
"""


def lint(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(["lint", *argv])
    return status, capsys.readouterr().out


@pytest.fixture()
def claim_file(tmp_path: Path) -> Path:
    (tmp_path / "claims").mkdir()
    path = tmp_path / "claims" / "big.yaml"
    path.write_text(CLAIM_50GI)
    return path


# ------------------------------------------------------------------ --inventory
def test_inventory_before_the_linted_path_takes_one_value(
    claim_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = lint(capsys, "--inventory", str(INVENTORY), str(claim_file), "--format", "json")
    assert status == 1
    assert [f["reason"] for f in json.loads(out)["findings"]] == ["Unsatisfiable"]


def test_inventory_repeats_and_every_value_counts(
    tmp_path: Path, claim_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    documents = INVENTORY.read_text().split("\n---\n")
    (tmp_path / "class.yaml").write_text(documents[1])  # the DeviceClass
    (tmp_path / "rest.yaml").write_text("\n---\n".join([documents[0], documents[2]]))  # Node, slice
    both = ["--inventory", str(tmp_path / "class.yaml"), "--inventory", str(tmp_path / "rest.yaml")]
    status, out = lint(capsys, *both, str(claim_file), "--format", "json")
    assert status == 1
    assert [f["reason"] for f in json.loads(out)["findings"]] == ["Unsatisfiable"]
    # with only the slice the class is unknown: nothing is proven
    _, out = lint(capsys, "--inventory", str(tmp_path / "rest.yaml"), str(claim_file), "--format", "json")
    # (and the run says once, file-level, that this inventory has no DeviceClass at all)
    unknown = json.loads(out)["findings"]
    assert [f["reason"] for f in unknown] == ["SatisfiabilityUnknown"] * 2
    assert sorted(bool(f["kind"]) for f in unknown) == [False, True]


def test_inventory_without_a_value_is_a_usage_error(claim_file: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["lint", str(claim_file), "--inventory"])
    assert exc.value.code == 2


# ------------------------------------------------------------------ SARIF locations
def sarif(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    _, out = lint(capsys, *argv, "--format", "sarif")
    doc: dict[str, Any] = json.loads(out)
    return doc


def location(doc: dict[str, Any]) -> dict[str, Any]:
    (result,) = doc["runs"][0]["results"]
    loc: dict[str, Any] = result["locations"][0]["physicalLocation"]
    return loc


def test_sarif_uris_are_relative_to_the_working_directory(
    tmp_path: Path, claim_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    doc = sarif(capsys, str(claim_file), "--inventory", str(INVENTORY))  # an absolute path given
    loc = location(doc)
    assert loc["artifactLocation"] == {"uri": "claims/big.yaml", "uriBaseId": "%SRCROOT%"}
    assert loc["region"]["startLine"] > 0
    assert doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/"


def test_sarif_root_flag(tmp_path: Path, claim_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = sarif(capsys, str(claim_file), "--inventory", str(INVENTORY), "--sarif-root", str(tmp_path / "claims"))
    assert location(doc)["artifactLocation"] == {"uri": "big.yaml", "uriBaseId": "%SRCROOT%"}


def test_sarif_file_outside_the_root_gets_an_absolute_uri(
    tmp_path: Path, claim_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "elsewhere").mkdir()
    doc = sarif(capsys, str(claim_file), "--inventory", str(INVENTORY), "--sarif-root", str(tmp_path / "elsewhere"))
    assert location(doc)["artifactLocation"] == {"uri": claim_file.as_uri()}


# ------------------------------------------------------------------ SARIF rules
def test_sarif_rules_have_readable_names_and_help_links(
    claim_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (rule,) = sarif(capsys, str(claim_file), "--inventory", str(INVENTORY))["runs"][0]["tool"]["driver"]["rules"]
    assert rule["id"] == "Unsatisfiable" and rule["name"] == "ClaimCanNeverBeAllocated"
    assert rule["helpUri"].endswith("docs/reference/reasons.md#reason-unsatisfiable")


def test_every_registered_reason_has_a_rule() -> None:
    emitted = {str(r) for r in Reason} | {e.value for e in ErrorType if e is not ErrorType.INTERNAL}
    assert sorted(emitted ^ set(RULES)) == []


def test_rule_names_differ_from_ids_and_from_each_other() -> None:
    rules = [*RULES.values(), rule_for("LintSomethingNew"), rule_for("SomethingElse")]
    assert all(r.name != r.id for r in rules)
    assert len({r.name for r in rules}) == len(rules)


@pytest.mark.parametrize("page", [DOCS_URI.split("/blob/main/", 1)[1], "README.md"])
def test_every_help_uri_anchor_exists_in_the_docs(page: str) -> None:
    """The page ``helpUri`` names (the reasons reference page) carries every rule's anchor, and so
    does README.md's reasons index (links made before the docs site keep working)."""
    text = (ROOT / page).read_text()
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', text))
    missing = [r.id for r in RULES.values() if r.help_uri.rsplit("#", 1)[1] not in anchors]
    assert missing == []


# ------------------------------------------------------------------ JSON text
@pytest.mark.parametrize("filename", ["big.yaml", "größe-ü.yaml"])
def test_json_report_is_the_standard_librarys_text_byte_for_byte(
    tmp_path: Path, filename: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """orjson writes the report when its text is ASCII; a non-ASCII file name (UTF-8 from orjson,
    ``\\u`` escapes from the standard library) falls back, so the bytes never change with it."""
    path = tmp_path / filename
    path.write_text(CLAIM_50GI)
    status, out = lint(capsys, str(path), "--inventory", str(INVENTORY), "--format", "json")
    assert status == 1
    assert out == json.dumps(json.loads(out), indent=2) + "\n"
    assert out.isascii()
    assert json.loads(out)["findings"][0]["file"].endswith(filename)
