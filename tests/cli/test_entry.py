"""The ``draguard`` program entry: a lint exits without tearing down its heap, output intact."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from draguard.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _program(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "draguard", *args], capture_output=True, text=True, cwd=ROOT, check=False)


def test_lint_with_findings_prints_the_whole_report_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["lint", "examples/claims", "--inventory", "examples/inventory", "--format", "json"]
    in_process = main(args)
    expected = capsys.readouterr().out
    run = _program(*args)
    assert (in_process, run.returncode) == (1, 1)
    assert run.stdout == expected
    assert run.stdout.rstrip().endswith("}")


def test_clean_lint_exits_0() -> None:
    run = _program("lint", "examples/claims/good", "--inventory", "examples/inventory")
    assert run.returncode == 0, run.stdout + run.stderr


def test_usage_error_still_exits_2_with_its_message() -> None:
    run = _program("lint", "no/such/file.yaml")
    assert run.returncode == 2
    assert run.stderr.startswith("draguard: ")


_WITH_EXIT_HOOK = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('exit hook ran'))\n"
    "if sys.argv[1] == 'traced':\n"
    "    sys.settrace(lambda *a: None)\n"
    "sys.argv = ['draguard', 'lint', 'examples/claims/good', '--inventory', 'examples/inventory']\n"
    "from draguard.cli import entry\n"
    "entry()\n"
)


def test_lint_skips_the_orderly_shutdown() -> None:
    run = subprocess.run([sys.executable, "-c", _WITH_EXIT_HOOK, "plain"], capture_output=True, text=True,
                         cwd=ROOT, check=False)
    assert run.returncode == 0, run.stderr
    assert "exit hook ran" not in run.stdout


def test_lint_under_a_tracer_exits_the_ordinary_way_so_its_report_is_written() -> None:
    run = subprocess.run([sys.executable, "-c", _WITH_EXIT_HOOK, "traced"], capture_output=True, text=True,
                         cwd=ROOT, check=False)
    assert run.returncode == 0, run.stderr
    assert "exit hook ran" in run.stdout
