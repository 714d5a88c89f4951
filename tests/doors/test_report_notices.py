"""JUnit and SARIF carry the run's notices as JSON does (issue #35 item 9): "satisfiability was not
checked" must not vanish from a CI dashboard or code scanning because of the format chosen."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from draguard.cli import main

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "examples" / "claims" / "good"
NOTICE = "satisfiability was not checked"


def _lint(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    main(["lint", str(GOOD), *argv])
    return capsys.readouterr().out


def test_json_says_it(capsys: pytest.CaptureFixture[str]) -> None:
    notices = json.loads(_lint(capsys, "--format", "json"))["summary"]["notices"]
    assert any(NOTICE in n for n in notices)


def test_junit_says_it_as_a_suite_property(capsys: pytest.CaptureFixture[str]) -> None:
    root = ET.fromstring(_lint(capsys, "--format", "junit"))
    suite = root.find("testsuite")
    assert suite is not None
    props = [p.get("value", "") for p in suite.findall("properties/property") if p.get("name") == "notice"]
    assert any(NOTICE in p for p in props), ET.tostring(root, encoding="unicode")[:400]
    out = suite.find("system-out")
    assert out is not None and NOTICE in (out.text or "")


def test_sarif_says_it_as_a_tool_notification(capsys: pytest.CaptureFixture[str]) -> None:
    run = json.loads(_lint(capsys, "--format", "sarif"))["runs"][0]
    notes = [n["message"]["text"] for inv in run.get("invocations", []) for n in inv.get("toolExecutionNotifications", [])]
    assert any(NOTICE in n for n in notes), run.keys()
    assert run["invocations"][0]["executionSuccessful"] is True


def test_nothing_is_said_when_there_is_nothing_to_say(capsys: pytest.CaptureFixture[str]) -> None:
    inventory = str(ROOT / "examples" / "inventory")
    root = ET.fromstring(_lint(capsys, "--inventory", inventory, "--format", "junit", "--no-cache"))
    assert root.find("testsuite/properties") is None
    run = json.loads(_lint(capsys, "--inventory", inventory, "--format", "sarif", "--no-cache"))["runs"][0]
    assert not [n for inv in run.get("invocations", []) for n in inv.get("toolExecutionNotifications", [])]
