"""Error values of the DRA CEL environment.

Why values and not exceptions: the allocator and the validators need to *report* CEL problems
(with the exact text the API server would print), never crash on them.  Compile problems come
back from :func:`app.cel.compile_selector` as :class:`CompileFailure`; evaluation problems come
back from :meth:`CompiledSelector.evaluate` as :class:`CelRuntimeError`.  Inside the evaluator a
private exception (:class:`EvalError`) carries errors through the closure tree, because CEL
errors propagate like values but Python has no cheap way to return "either" from every node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..k8s import DraguardError

__all__ = ["CelRuntimeError", "CompileFailure", "EvalError", "format_error"]


@dataclass(frozen=True, slots=True)
class CompileFailure:
    """Why an expression was rejected at compile time.

    ``kind`` tells the caller which Kubernetes field error to emit:
    ``invalid`` → FieldValueInvalid with ``message`` as the detail, ``cost`` → FieldValueForbidden
    ``too complex, exceeds cost limit``, ``too_long`` → FieldValueTooLong (10240 bytes).
    ``unsupported`` is *not* a Kubernetes verdict: the expression uses CEL that Kubernetes accepts
    but draguard cannot evaluate (optional syntax, IP/CIDR/URL/format libraries…).  Callers must
    never turn it into a rejection — a false rejection blocks a workload — only into a warning
    that the selector was not checked.
    """

    kind: Literal["invalid", "cost", "too_long", "unsupported"]
    message: str


@dataclass(frozen=True, slots=True)
class CelRuntimeError:
    """A CEL evaluation error, as data.

    ``missing_key`` is set when the error is a lookup of an attribute/capacity id (or any map
    key) that is absent, so callers can suggest a guard; ``hint`` is that suggestion.
    """

    message: str
    missing_key: str | None = None
    hint: str | None = None


class EvalError(DraguardError):
    """Internal carrier of a CEL runtime error through the evaluator (never escapes the package)."""

    __slots__ = ("message", "missing_key")

    def __init__(self, message: str, missing_key: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.missing_key = missing_key


def format_error(source: str, offset: int, message: str) -> str:
    """Render one issue the way cel-go's ``Error.ToDisplayString`` does.

    ``ERROR: <input>:<line>:<col>: <msg>`` followed by the source line and a caret line made of
    dots; ``offset`` is a 0-based character offset into ``source``.
    """
    offset = max(0, min(offset, len(source)))
    line_no = source.count("\n", 0, offset) + 1
    line_start = source.rfind("\n", 0, offset) + 1
    column = offset - line_start
    line_end = source.find("\n", line_start)
    snippet = source[line_start : line_end if line_end >= 0 else len(source)].replace("\t", " ")
    dots = "".join("." if ord(ch) < 128 else "\uff0e" for ch in snippet[:column])
    caret = "^" if column >= len(snippet) or ord(snippet[column]) < 128 else "\uff3e"
    return f"ERROR: <input>:{line_no}:{column + 1}: {message}\n | {snippet}\n | {dots}{caret}"
