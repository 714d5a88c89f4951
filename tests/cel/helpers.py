"""Test helpers: evaluate arbitrary (non-bool) expressions through the same pipeline."""

from __future__ import annotations

from typing import Any

from app.cel import make_device
from app.cel.cost import estimate_cost
from app.cel.device import CelDevice
from app.cel.errors import EvalError
from app.cel.evaluator import compile_program
from app.cel.parser import parse
from app.cel.typecheck import check

EMPTY_DEVICE = make_device("dra.example.com", False, {}, {})


def value(expr: str, device: CelDevice = EMPTY_DEVICE) -> Any:
    """The CEL value of ``expr``; raises AssertionError on compile errors, EvalError at runtime."""
    root = parse(expr)
    checked = check(root)
    assert not checked.errors, checked.errors
    return compile_program(root, checked, counting=estimate_cost(root, checked) > 1_000_000).run(device)


def runtime_error(expr: str, device: CelDevice = EMPTY_DEVICE) -> str:
    try:
        v = value(expr, device)
    except EvalError as e:
        return e.message
    raise AssertionError(f"expected a runtime error, got {v!r}")


def compile_errors(expr: str) -> list[str]:
    return [m for _, m in check(parse(expr)).errors]
