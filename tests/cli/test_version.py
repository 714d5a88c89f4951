"""``draguard --version`` (and ``python -m draguard --version``): the installed distribution's version,
the one pyproject.toml declares, which SARIF reports carry too."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from draguard.cli import main

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"draguard {VERSION}\n"


def test_python_dash_m_draguard() -> None:
    proc = subprocess.run([sys.executable, "-m", "draguard", "--version"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert (proc.returncode, proc.stdout.strip()) == (0, f"draguard {VERSION}")


def test_no_command_is_still_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2 and "command" in capsys.readouterr().err


def test_sarif_names_the_same_version(capsys: pytest.CaptureFixture[str]) -> None:
    main(["lint", str(ROOT / "examples" / "claims" / "good"), "--format", "sarif"])
    driver = json.loads(capsys.readouterr().out)["runs"][0]["tool"]["driver"]
    assert driver["version"] == VERSION
