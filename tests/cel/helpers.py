"""Test helpers: evaluate arbitrary (non-bool) expressions through the same pipeline and engine."""

from __future__ import annotations

from typing import Any

from draguard.cel import make_device
from draguard.cel.cost import estimate_cost
from draguard.cel.device import CelDevice
from draguard.cel.engines import ProgramSource, default_engine
from draguard.cel.errors import EvalError
from draguard.cel.parser import parse, parse_source
from draguard.cel.typecheck import check

EMPTY_DEVICE = make_device("dra.example.com", False, {}, {})


def value(expr: str, device: CelDevice = EMPTY_DEVICE) -> Any:
    """The CEL value of ``expr`` under the current default engine; raises AssertionError on compile
    errors, EvalError at runtime."""
    root, tree = parse_source(expr)
    checked = check(root)
    assert not checked.errors, checked.errors
    engine = default_engine()
    counting = estimate_cost(root, checked) > 1_000_000
    return engine.run(engine.prepare(ProgramSource(expr, root, checked, tree, counting)), device)


def runtime_error(expr: str, device: CelDevice = EMPTY_DEVICE) -> str:
    try:
        v = value(expr, device)
    except EvalError as e:
        return e.message
    raise AssertionError(f"expected a runtime error, got {v!r}")


def compile_errors(expr: str) -> list[str]:
    return [m for _, m in check(parse(expr)).errors]
