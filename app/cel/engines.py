"""The thin evaluation-engine interface behind :func:`app.cel.compile_selector`.

Everything that decides *whether* a selector is valid and *what it may cost* — parsing, the type
checker, the cost estimate, the read-set analysis and the result caches — is engine-independent
and runs in front of the engine (:mod:`app.cel.selector`).  An engine only turns a checked
program into something runnable and runs it on one device:

* ``prepare(program) -> prepared`` once per compiled selector;
* ``run(prepared, device) -> value``, raising :class:`~app.cel.errors.EvalError` for a CEL
  runtime error (a value in draguard's model: ``bool``, ``int``, ``str``, ``list``, …).

Engines:

* ``celpy`` (:class:`CelPythonEngine`, **the default**) — cel-python's evaluator, per the
  product decision; see :mod:`app.cel.celpy_engine` for how Kubernetes semantics are kept and
  which few constructs it routes to the compiled engine;
* ``compiled`` (:class:`CompiledEngine`) — draguard's closure compiler
  (:mod:`app.cel.evaluator`), kept as the differential-testing oracle and for the constructs
  cel-python cannot evaluate.

Selection: the environment variable ``DRAGUARD_CEL_ENGINE`` (``celpy`` | ``compiled``) is read once
at import; :func:`set_default_engine` overrides it (tests).  A selector keeps the engine it was
compiled with; the compile cache is keyed by engine name, so switching engines never returns a
selector prepared by the other one.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any, Protocol

import lark

from app.cel import ast as A
from app.cel import celpy_engine
from app.cel.device import CelDevice
from app.cel.evaluator import Program, compile_program
from app.cel.typecheck import Checked

__all__ = [
    "ENGINES", "ENGINE_ENV", "CelPythonEngine", "CompiledEngine", "Engine", "ProgramSource", "Routed",
    "default_engine", "get_engine", "set_default_engine",
]

ENGINE_ENV = "DRAGUARD_CEL_ENGINE"
_log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class ProgramSource:
    """A parsed and type-checked selector, as every engine receives it."""

    expression: str
    root: A.Expr  # draguard's AST (what the checker and cost estimator saw)
    checked: Checked
    tree: lark.Tree[Any]  # cel-python's Lark tree of the same text
    counting: bool  # the static estimate exceeds the limit: enforce the runtime cost limit


class Engine(Protocol):
    name: str

    def prepare(self, program: ProgramSource) -> Any: ...

    def run(self, prepared: Any, device: CelDevice) -> Any: ...


class CompiledEngine:
    """draguard's own closure compiler (:mod:`app.cel.evaluator`)."""

    name = "compiled"

    def prepare(self, program: ProgramSource) -> Program:
        return compile_program(program.root, program.checked, counting=program.counting)

    def run(self, prepared: Program, device: CelDevice) -> Any:
        return prepared.run(device)


@dataclass(frozen=True, eq=False)
class Routed:
    """A selector the cel-python engine hands to the compiled engine, and why."""

    program: Program
    reason: str


class CelPythonEngine:
    """cel-python's evaluator (:mod:`app.cel.celpy_engine`); the default engine."""

    name = "celpy"

    def __init__(self) -> None:
        self._compiled = CompiledEngine()

    def prepare(self, program: ProgramSource) -> celpy_engine.CelpyProgram | Routed:
        reason = celpy_engine.routing_reason(program.root, program.tree)
        if reason is not None:
            return Routed(self._compiled.prepare(program), reason)
        return celpy_engine.prepare(program.tree, program.counting)

    def run(self, prepared: celpy_engine.CelpyProgram | Routed, device: CelDevice) -> Any:
        if type(prepared) is Routed:
            return prepared.program.run(device)
        assert isinstance(prepared, celpy_engine.CelpyProgram)
        return celpy_engine.run(prepared, device)


ENGINES: dict[str, Engine] = {"celpy": CelPythonEngine(), "compiled": CompiledEngine()}


def _from_env() -> str:
    name = os.environ.get(ENGINE_ENV, "").strip().lower() or "celpy"
    if name not in ENGINES:
        _log.warning("%s=%r is not one of %s; using celpy", ENGINE_ENV, name, sorted(ENGINES))
        return "celpy"
    return name


_ENV_DEFAULT = _from_env()
_default = _ENV_DEFAULT


def get_engine(name: str) -> Engine:
    return ENGINES[name]


def default_engine() -> Engine:
    """The engine new selectors are compiled with."""
    return ENGINES[_default]


def set_default_engine(name: str | None) -> None:
    """Override the engine for selectors compiled from now on (``None``: back to the env setting)."""
    global _default
    if name is not None and name not in ENGINES:
        raise ValueError(f"unknown CEL engine {name!r} (known: {', '.join(sorted(ENGINES))})")
    _default = _ENV_DEFAULT if name is None else name
