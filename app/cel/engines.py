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

import importlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..k8s import DraguardError
from . import ast as A
from .device import CelDevice
from .parser import LarkTree
from .plain import PlainProgram, plain_program
from .typecheck import Checked

if TYPE_CHECKING:
    from .celpy_engine import CelpyProgram

__all__ = ["CelPythonEngine", "Engine", "ProgramSource", "UnsupportedExpression", "default_engine", "engine_scope"]


@dataclass(frozen=True, eq=False)
class ProgramSource:
    """A parsed and type-checked selector, as every engine receives it."""

    expression: str
    root: A.Expr  # draguard's AST (what the checker and cost estimator saw)
    checked: Checked
    tree: LarkTree  # cel-python's Lark tree of the same text, parsed when first asked for (``tree.get()``)
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
    """cel-python's evaluator (:mod:`app.cel.celpy_engine`): the production engine.

    Why ``prepare`` only checks and defers: a lint validates every selector but evaluates one
    only against an inventory, and cel-python (with pendulum and dateutil behind it) costs
    ~0.05 s to import.  Whether the engine can run the expression is decided here, on the tree
    (:mod:`app.cel.celpy_shape`); cel-python is imported and the program built on the first
    evaluation it is needed for (:class:`DeferredProgram`): the plainest comparisons are answered
    without it wherever the answer is certain (:mod:`app.cel.plain`).  Lark, too, is left alone
    for a selector the quick parser read (``program.tree.shallow``: nothing to check here, and
    the tree is parsed only when the program is built)."""

    name = "celpy"

    def prepare(self, program: ProgramSource) -> DeferredProgram:
        if not program.tree.shallow:
            from .celpy_shape import unsupported_reason  # needs Lark, which made this tree already

            reason = unsupported_reason(program.tree.get())
            if reason is not None:
                raise UnsupportedExpression(reason)
        plain = None if program.counting else plain_program(program.root)
        return DeferredProgram(program.tree, program.counting, plain)

    def run(self, prepared: DeferredProgram, device: CelDevice) -> Any:
        if prepared.plain is not None:  # a plain comparison: answered without cel-python when certain
            value = prepared.plain(device)
            if value is not None:
                return value
        return _celpy_engine().run(prepared.program(), device)


class DeferredProgram:
    """A selector the cel-python engine accepted, built into a :class:`~app.cel.celpy_engine.CelpyProgram`
    on its first evaluation (once: a lock, and the built program is immutable) — the first moment
    its Lark tree is needed, so that is when a quick-parsed selector's is made."""

    __slots__ = ("_built", "_counting", "_lock", "_tree", "plain")

    def __init__(self, tree: LarkTree, counting: bool, plain: PlainProgram | None = None) -> None:
        self._tree = tree
        self._counting = counting
        self.plain = plain
        """The selector as :mod:`.plain` reads it, when it is one of its shapes."""
        self._built: CelpyProgram | None = None
        self._lock = threading.Lock()

    def program(self) -> CelpyProgram:
        built = self._built
        if built is None:
            with self._lock:
                if self._built is None:
                    self._built = _celpy_engine().prepare(self._tree.get(), self._counting)
                built = self._built
        return built


def _celpy_engine() -> Any:
    """:mod:`app.cel.celpy_engine`, imported on first use (see :class:`CelPythonEngine`); kept
    here after that, since every evaluation asks for it."""
    global _LOADED
    if _LOADED is None:
        _LOADED = importlib.import_module(".celpy_engine", __package__)
    return _LOADED


_LOADED: Any = None


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
