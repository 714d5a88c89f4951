"""``explain`` and ``capacity`` take ``--kubernetes-version``/``--feature-gates`` as ``lint`` does
(one target for every door): files are stored as the target stores them."""

from __future__ import annotations

from pathlib import Path

import pytest
from draguard.cli import main

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = str(ROOT / "examples" / "inventory")


def test_capacity_reads_the_inventory_as_the_target_stores_it(capsys: pytest.CaptureFixture[str]) -> None:
    """A 1.35 API server drops allowMultipleAllocations: the shared GPU class matches nothing there."""
    assert main(["capacity", "--inventory", INVENTORY, "--kubernetes-version", "1.37", "--format", "json"]) == 0
    newest = capsys.readouterr().out
    assert main(["capacity", "--inventory", INVENTORY, "--kubernetes-version", "1.35", "--format", "json"]) == 0
    older = capsys.readouterr().out
    assert newest != older


def test_a_bad_version_is_a_usage_error_naming_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capacity", "--inventory", INVENTORY, "--kubernetes-version", "1.20"]) == 2
    assert "--kubernetes-version" in capsys.readouterr().err
    assert main(["explain", "pod/x", "--inventory", INVENTORY, "--feature-gates", "Nope=true"]) == 2
    assert "--feature-gates" in capsys.readouterr().err
