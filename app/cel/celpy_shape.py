"""What cel-python's evaluator can run, decided on the Lark tree alone (no cel-python import).

Why a module of its own: compiling a selector (validation, on every lint) must say at once
whether the engine can evaluate it (:func:`unsupported_reason`), but cel-python itself —
``celpy.celtypes`` pulls in pendulum and dateutil, ~0.05 s of start-up — is needed only when a
selector is evaluated against a device.  :mod:`app.cel.celpy_engine` (imported on the first
evaluation, :mod:`app.cel.engines`) shares these helpers.
"""

from __future__ import annotations

from typing import Any

import lark

__all__ = ["COLLAPSIBLE", "MAX_CELPY_DEPTH", "skip", "tree_depth", "unsupported_reason"]

MAX_CELPY_DEPTH = 96  # surviving tree levels; ~6 Python frames each inside cel-python's evaluator

COLLAPSIBLE = frozenset({"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary",
                         "member", "paren_expr"})


def skip(t: Any) -> Any:
    """Drop single-child precedence wrappers (and parentheses, and ``primary`` around a literal)."""
    while isinstance(t, lark.Tree) and len(t.children) == 1 and isinstance(t.children[0], lark.Tree) and (
        t.data in COLLAPSIBLE or (t.data == "primary" and t.children[0].data in ("literal", "paren_expr"))
    ):
        t = t.children[0]
    return t


def tree_depth(root: lark.Tree[Any]) -> int:
    """Depth of the collapsed tree, computed without recursion."""
    best = 0
    stack: list[tuple[Any, int]] = [(root, 1)]
    while stack:
        t, d = stack.pop()
        t = skip(t)
        best = max(best, d)
        stack.extend((c, d + 1) for c in t.children if isinstance(c, lark.Tree))
    return best


def unsupported_reason(tree: lark.Tree[Any]) -> str | None:
    """Why cel-python's evaluator cannot run this expression at all, or None (decided once, at compile time)."""
    if tree_depth(tree) > MAX_CELPY_DEPTH:
        return f"nests deeper than {MAX_CELPY_DEPTH} levels, more than draguard's CEL evaluator can run"
    return None
