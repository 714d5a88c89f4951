"""The reason registry (app/k8s/reasons.py) is the one place a reason is defined.

Held here: every reason a finding can carry has exactly one registry row; no module of app/
spells a reason as a string of its own (they use ``Reason.X``); the "Reasons" reference page
(docs/reference/reasons.md) and README.md's index of reasons are the ones the registry renders; the pipeline dispatches on families, not on spellings.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from pathlib import Path

import pytest
from draguard.k8s import REASONS, ErrorType, Family, Finding, Reason, Severity, family_of
from draguard.report.rules import RULES, reasons_table
from draguard.review import parse_deny
from draguard.review.pipeline import admission_policy

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = {ROOT / "app" / "k8s" / "reasons.py", ROOT / "app" / "k8s" / "field.py"}


def _table_tool() -> object:
    spec = importlib.util.spec_from_file_location("reasons_table_tool", ROOT / "scripts" / "reasons-table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def spelled_reasons(folder: Path, skip: set[Path]) -> list[str]:
    """``file:line: "Reason"`` for each string literal in ``folder`` that is a registered reason
    or looks like a lint reason, outside ``skip`` and ``__all__`` lists (class names such as
    ``BudgetExceeded`` may equal a reason)."""
    hits: list[str] = []
    for path in sorted(folder.rglob("*.py")):
        if path in skip:
            continue
        tree = ast.parse(path.read_text())
        exported: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                exported |= {id(c) for c in ast.walk(node.value)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in exported:
                continue
            if node.value in REASONS or re.fullmatch(r"Lint[A-Z][a-z]+[A-Z][A-Za-z]+", node.value):
                hits.append(f"{path.relative_to(folder)}:{node.lineno}: {node.value!r}")
    return hits


# ------------------------------------------------------------------ one row per reason
def test_every_reason_and_cause_type_has_one_row() -> None:
    expected = [str(r) for r in Reason] + [e.value for e in ErrorType if e is not ErrorType.INTERNAL]
    assert sorted(REASONS) == sorted(expected)
    assert len(expected) == len(set(expected))


def test_rows_carry_what_sarif_and_the_readme_need() -> None:
    for reason, info in REASONS.items():
        assert info.reason == reason and info.anchor == f"reason-{reason.lower()}"
        assert info.sarif_name and info.sarif_name != reason and info.description.endswith(".")
    assert len({i.sarif_name for i in REASONS.values()}) == len(REASONS)
    assert set(RULES) == set(REASONS)


def test_reason_is_a_plain_string_in_comparisons_and_json() -> None:
    assert Reason.UNSATISFIABLE == "Unsatisfiable" and f"{Reason.LINT_MAX_OFF_GRID}" == "LintMaxOffGrid"
    finding = Finding(Severity.ERROR, Reason.UNSATISFIABLE, "m")
    assert json.loads(json.dumps(finding.to_json()))["reason"] == "Unsatisfiable"


# ------------------------------------------------------------------ spelled once
def test_no_module_spells_a_reason_of_its_own() -> None:
    assert spelled_reasons(ROOT / "app", REGISTRY) == []


def test_a_reason_spelled_outside_the_registry_is_found(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text('__all__ = ["BudgetExceeded"]\nX = "Unsatisfiable"\nY = "LintNewThing"\n')
    assert spelled_reasons(tmp_path, set()) == ["bad.py:2: 'Unsatisfiable'", "bad.py:3: 'LintNewThing'"]


# ------------------------------------------------------------------ README and docs
def test_the_reasons_page_is_the_registry() -> None:
    tool = _table_tool()
    page = (ROOT / "docs" / "reference" / "reasons.md").read_text()
    assert page == tool.render(), "run `make reasons` or `make docs`"  # type: ignore[attr-defined]
    assert reasons_table() in page


def test_the_readme_index_is_the_registry() -> None:
    tool = _table_tool()
    readme = (ROOT / "README.md").read_text()
    assert tool.rewritten(readme) == readme, "run `make reasons`"  # type: ignore[attr-defined]
    for reason, info in REASONS.items():
        assert f'<a id="{info.anchor}"></a>[`{reason}`](docs/reference/reasons.md#{info.anchor})' in readme


def test_a_stale_readme_index_is_rewritten() -> None:
    tool = _table_tool()
    stale = f"x\n{tool.BEGIN}| old |\n{tool.END}\ny\n"  # type: ignore[attr-defined]
    index = tool.readme_index()  # type: ignore[attr-defined]
    assert tool.rewritten(stale) == f"x\n{tool.BEGIN}{index}{tool.END}\ny\n"  # type: ignore[attr-defined]
    assert index.count("<a id=") == len(REASONS) and "| old |" not in index


def test_a_readme_without_the_markers_is_refused() -> None:
    tool = _table_tool()
    with pytest.raises(SystemExit, match="no reasons-index markers"):
        tool.rewritten("# README without the index\n")  # type: ignore[attr-defined]


# ------------------------------------------------------------------ dispatch by family
@pytest.mark.parametrize(
    ("reason", "family"),
    [("FieldValueInvalid", Family.PARITY), (Reason.UNKNOWN_FIELD, Family.DECODE),
     (Reason.LINT_MAX_OFF_GRID, Family.LINT), (Reason.UNSATISFIABLE, Family.INVENTORY), ("LintNotAReason", None)],
)
def test_family_of(reason: str, family: Family | None) -> None:
    assert family_of(reason) is family


def test_only_the_lint_family_turns_a_warning_into_a_denial() -> None:
    lint = Finding(Severity.WARNING, Reason.LINT_MAX_OFF_GRID, "m")
    other = Finding(Severity.WARNING, Reason.CAPACITY_ROUNDED, "m")
    deny = frozenset({Reason.LINT_MAX_OFF_GRID, Reason.CAPACITY_ROUNDED})
    assert [f.severity for f in admission_policy([lint, other], deny)] == [Severity.ERROR, Severity.WARNING]


def test_deny_accepts_lint_reasons_and_refuses_parity_by_family() -> None:
    assert parse_deny("LintMaxOffGrid") == {"LintMaxOffGrid"}
    with pytest.raises(ValueError, match="API-parity"):
        parse_deny("UnknownField")


def test_deny_refuses_a_lint_name_that_is_no_reason() -> None:
    with pytest.raises(ValueError, match="no such reason"):
        parse_deny("LintMaxOfGrid")
