"""The thin evaluation-engine interface behind :func:`app.cel.compile_selector`.

Everything that decides *whether* a selector is valid and *what it may cost* — parsing, the type
checker, the cost estimate, the read-set analysis and the result caches — is engine-independent
and runs in front of the engine (:mod:`app.cel.selector`).  An engine only turns a checked
program into something runnable and runs it on one device:

* ``prepare(program) -> prepared`` once per compiled selector, raising
  :class:`UnsupportedExpression` for a valid expression it cannot run (the selector is then not
  checked — a warning, never a rejection);
* ``run(prepared, device) -> value``, raising :class:`~app.cel.errors.EvalError` for a CEL
  runtime error (a value in draguard's model: ``bool``, ``int``, ``str``, ``list``, …).

Production has exactly one engine, cel-python's evaluator (:class:`CelPythonEngine`; see
:mod:`app.cel.celpy_engine` for how Kubernetes semantics are kept).  The interface exists so
that tests can run the very same pipeline on a differential-testing oracle
(``tests/cel/oracle.py``, an independent closure compiler) inside :func:`engine_scope`; the
compile cache is keyed by engine name, so an oracle's selectors never leak into production's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import lark

from ..k8s import DraguardError
from . import ast as A
from . import celpy_engine
from .device import CelDevice
from .typecheck import Checked

__all__ = ["CelPythonEngine", "Engine", "ProgramSource", "UnsupportedExpression", "default_engine", "engine_scope"]


@dataclass(frozen=True, eq=False)
class ProgramSource:
    """A parsed and type-checked selector, as every engine receives it."""

    expression: str
    root: A.Expr  # draguard's AST (what the checker and cost estimator saw)
    checked: Checked
    tree: lark.Tree[Any]  # cel-python's Lark tree of the same text
    counting: bool  # the static estimate exceeds the limit: enforce the runtime cost limit


class UnsupportedExpression(DraguardError):
    """A valid expression the engine cannot evaluate; ``reason`` completes "the selector …"."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Engine(Protocol):
    name: str

    def prepare(self, program: ProgramSource) -> Any: ...

    def run(self, prepared: Any, device: CelDevice) -> Any: ...


class CelPythonEngine:
    """cel-python's evaluator (:mod:`app.cel.celpy_engine`): the production engine."""

    name = "celpy"

    def prepare(self, program: ProgramSource) -> celpy_engine.CelpyProgram:
        reason = celpy_engine.unsupported_reason(program.tree)
        if reason is not None:
            raise UnsupportedExpression(reason)
        return celpy_engine.prepare(program.tree, program.counting)

    def run(self, prepared: celpy_engine.CelpyProgram, device: CelDevice) -> Any:
        return celpy_engine.run(prepared, device)


_PRODUCTION: Engine = CelPythonEngine()
_current: Engine = _PRODUCTION
"""The one piece of process-wide state here, and why it is global: the differential tests run the
whole pipeline (validation, satisfiability) on the oracle, and threading an engine through every
caller for a test's sake would put it in production signatures.  Only :func:`engine_scope`
changes it, always for one block, and the compile cache is keyed by engine name."""


def default_engine() -> Engine:
    """The engine new selectors are compiled with (cel-python's, outside an :func:`engine_scope`)."""
    return _current


@contextmanager
def engine_scope(engine: Engine) -> Iterator[Engine]:
    """Compile new selectors with ``engine`` while the block runs (tests: the oracle); the engine
    before it is back afterwards, whatever happens in the block."""
    global _current
    before, _current = _current, engine
    try:
        yield engine
    finally:
        _current = before
