"""CEL device selectors: length, compilation, result type and estimated cost.

Why through ``app.cel``: the DRA CEL environment (``device`` variable, Kubernetes libraries,
cost estimation) is built by another part of draguard; this module only maps its verdict to the
field error the API server returns.  Like Kubernetes, the length is checked first and an
over-long expression is not compiled at all.

Until ``app.cel.compile_selector`` exists the compile step is skipped (nothing can be decided),
so this module works in every build.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from app.k8s.field import FieldError, Path, forbidden, invalid, required, too_long
from app.k8s.models import DeviceSelector
from app.validation.helpers import blen, validate_slice

__all__ = [
    "CEL_SELECTOR_EXPRESSION_MAX_LENGTH",
    "DEVICE_SELECTORS_MAX_SIZE",
    "cel_available",
    "validate_cel_expression",
    "validate_selector",
    "validate_selectors",
]

CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024  # resource.CELSelectorExpressionMaxLength
DEVICE_SELECTORS_MAX_SIZE = 32  # resource.DeviceSelectorsMaxSize

_compiler: Callable[[str], Any] | None = None
_failure_type: type | None = None


def _load_compiler() -> Callable[[str], Any] | None:
    """Find ``app.cel.compile_selector`` once it exists; looked up again until it does."""
    global _compiler, _failure_type
    if _compiler is not None:
        return _compiler
    try:
        module = importlib.import_module("app.cel")
    except ImportError:
        return None
    fn = getattr(module, "compile_selector", None)
    failure = getattr(module, "CompileFailure", None)
    if callable(fn):
        _compiler = fn
        _failure_type = failure if isinstance(failure, type) else None
    return _compiler


def cel_available() -> bool:
    """Whether CEL selectors can be compiled in this build (tests skip CEL cases otherwise)."""
    return _load_compiler() is not None


def validate_cel_expression(expression: str, path: Path, stored: bool = False) -> list[FieldError]:
    """``validateCELExpression``: ≤ 10 KiB, compiles, bool/dyn result, cost within the limit.

    ``stored``: an unchanged stored expression is not re-checked (DeviceClass updates).
    """
    if stored:
        return []
    if blen(expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
        return [too_long(path, CEL_SELECTOR_EXPRESSION_MAX_LENGTH)]
    compile_selector = _load_compiler()
    if compile_selector is None:
        return []
    result = compile_selector(expression)
    if _failure_type is not None and not isinstance(result, _failure_type):
        return []  # a CompiledSelector: fine
    kind = getattr(result, "kind", None)
    message = getattr(result, "message", None)
    if kind is None or not isinstance(message, str):
        return []
    if kind == "cost":
        return [forbidden(path, "too complex, exceeds cost limit")]
    if kind == "too_long":
        return [too_long(path, CEL_SELECTOR_EXPRESSION_MAX_LENGTH)]
    return [invalid(path, expression, message)]


def validate_selector(selector: DeviceSelector, path: Path, stored: bool = False) -> list[FieldError]:
    """``validateSelector``: ``cel`` is the only selector kind and is required."""
    if selector.cel is None:
        return [required(path.child("cel"))]
    return validate_cel_expression(selector.cel.expression, path.child("cel", "expression"), stored)


def validate_selectors(selectors: list[DeviceSelector], path: Path, stored: bool = False) -> list[FieldError]:
    """``validateSelectorSlice``: at most 32 selectors."""
    return validate_slice(
        selectors, DEVICE_SELECTORS_MAX_SIZE, lambda s, p: validate_selector(s, p, stored), path
    )
