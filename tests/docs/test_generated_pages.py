"""The reference pages under docs/reference/ are what scripts/docs/generate.py writes from the code
now (issue #38): regenerated into a temporary folder and compared, so a flag, a reason, a gate or a
chart value changed without `make docs` fails here, naming the page.  And each page says what its
source holds: every option of the parser, every registered reason, every gate and version, every
chart value."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import ModuleType

import pytest
from draguard.cli import build_parser
from draguard.k8s import REASONS
from draguard.k8s.features import DRA_GATES, SUPPORTED_VERSIONS

ROOT = Path(__file__).resolve().parents[2]

REFERENCE = ROOT / "docs" / "reference"


def test_every_generated_page_is_up_to_date(generator: ModuleType, tmp_path: Path) -> None:
    generator.write(tmp_path)
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(generator.pages())
    stale = [name for name in written
             if not (REFERENCE / name).is_file() or (REFERENCE / name).read_text() != (tmp_path / name).read_text()]
    assert stale == [], f"docs/reference/{', '.join(stale)} stale: run `make docs`"


def test_a_stale_or_missing_page_is_found(generator: ModuleType, tmp_path: Path) -> None:
    generator.write(tmp_path)
    assert generator.stale(tmp_path) == []
    (tmp_path / "reasons.md").write_text((tmp_path / "reasons.md").read_text().replace("Unsatisfiable", "Unsat"))
    (tmp_path / "gates.md").unlink()
    assert sorted(generator.stale(tmp_path)) == ["gates.md", "reasons.md"]
    assert generator.main(["--check", "--out", str(tmp_path)]) == 1
    generator.main(["--out", str(tmp_path)])
    assert generator.main(["--check", "--out", str(tmp_path)]) == 0


def _subcommands() -> list[str]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


@pytest.mark.parametrize("command", _subcommands())
def test_the_cli_page_has_every_option_of_the_parser(generator: ModuleType, command: str) -> None:
    page = generator.render_all()["cli.md"]
    section = page.split(f"\n## draguard {command}\n", 1)[1].split("\n## ", 1)[0]
    parser = next(a for a in build_parser(command)._actions
                  if isinstance(a, argparse._SubParsersAction)).choices[command]
    options = [o for a in parser._actions if a.help != argparse.SUPPRESS for o in a.option_strings
               if not isinstance(a, argparse._HelpAction)]
    assert options, command
    for option in options:
        assert f"`{option}`" in section, (command, option)


def test_the_reasons_page_has_every_reason(generator: ModuleType) -> None:
    page = generator.render_all()["reasons.md"]
    for reason, info in REASONS.items():
        assert f'<a id="{info.anchor}"></a>`{reason}`' in page


def test_the_gates_page_has_every_gate_and_version(generator: ModuleType) -> None:
    page = generator.render_all()["gates.md"]
    for gate in DRA_GATES:
        assert f"| `{gate}` |" in page
    header = next(line for line in page.splitlines() if line.startswith("| gate |"))
    assert all(v in header for v in SUPPORTED_VERSIONS)
    # a locked GA gate and a removed one read as such (DRAExtendedResource is locked from 1.37;
    # DynamicResourceAllocation left kube-apiserver in 1.38)
    row = next(line for line in page.splitlines() if line.startswith("| `DRAExtendedResource` |"))
    assert row.split("|")[-2].strip() == "**GA, on, locked**"
    row = next(line for line in page.splitlines() if line.startswith("| `DynamicResourceAllocation` |"))
    assert row.split("|")[-2].strip() == "removed (on)"


def _leaves(schema: dict[str, object], path: str = "") -> list[str]:
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return [path]
    return [leaf for key, sub in props.items() for leaf in _leaves(sub, f"{path}.{key}" if path else key)]


def test_the_helm_page_has_every_value_of_the_schema(generator: ModuleType) -> None:
    page = generator.render_all()["helm-values.md"]
    schema = json.loads((ROOT / "charts" / "draguard" / "values.schema.json").read_text())
    leaves = _leaves(schema)
    assert "certificates.mode" in leaves and len(leaves) > 10
    for leaf in leaves:
        assert f"| `{leaf}` |" in page, leaf
