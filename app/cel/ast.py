"""The engine-independent CEL syntax tree draguard checks, costs and evaluates.

Why our own tree: cel-python's Lark tree mirrors its grammar (a dozen wrapper nodes per
operand) and drops operator positions; the type checker, the cost estimator, the read-set
analysis used for result caching and the evaluator all want a small tree in cel-go's shape
(calls named ``_==_``, ``_[_]``; macros already expanded to their kind) with each node's
character offset for cel-go-style carets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Bind", "Call", "Comp", "Const", "Expr", "Ident", "ListLit", "MapLit", "Select", "walk"]

ConstKind = Literal["int", "uint", "double", "string", "bytes", "bool", "null"]

# Comprehension macros.  One-variable: all, exists, exists_one, map, filter.
# Two-variable (cel-go TwoVarComprehensions): all2, exists2, existsOne2, transformList,
# transformMap.  ``args`` holds the predicate/transform (and the optional filter first).
CompKind = Literal[
    "all", "exists", "exists_one", "map", "filter", "all2", "exists2", "exists_one2", "transformList", "transformMap"
]


@dataclass(eq=False, slots=True)
class Expr:
    """A node: its character offset in the text (for carets) and its id (numbered in pre-order after parsing)."""

    pos: int
    id: int = field(default=0, init=False)


@dataclass(eq=False, slots=True)
class Const(Expr):
    """A literal (``1``, ``"a"``, ``true``, ``null``…) and its CEL kind."""

    value: object
    kind: ConstKind


@dataclass(eq=False, slots=True)
class Ident(Expr):
    """A name (``device``, a macro's variable)."""

    name: str


@dataclass(eq=False, slots=True)
class Select(Expr):
    """A field selection ``operand.field`` (``test_only``: inside ``has()``)."""

    operand: Expr
    field: str
    test_only: bool = False  # has(operand.field)


@dataclass(eq=False, slots=True)
class Call(Expr):
    """A call: an operator in cel-go's naming (``_==_``, ``_[_]``, ``!_``) or a function, with its receiver for a method."""

    fn: str
    target: Expr | None
    args: list[Expr]


@dataclass(eq=False, slots=True)
class ListLit(Expr):
    """A list literal ``[a, b]``."""

    elems: list[Expr]


@dataclass(eq=False, slots=True)
class MapLit(Expr):
    """A map literal ``{k: v}``."""

    entries: list[tuple[Expr, Expr]]


@dataclass(eq=False, slots=True)
class Comp(Expr):
    """A comprehension macro (``all``, ``exists``, ``map``…) over ``rng`` with its variable(s) and its predicate/transform."""

    kind: CompKind
    rng: Expr
    var: str
    var2: str | None
    args: list[Expr]


@dataclass(eq=False, slots=True)
class Bind(Expr):
    """``cel.bind(var, init, body)`` (cel-go ext.Bindings)."""

    var: str
    init: Expr
    body: Expr


def children(e: Expr) -> list[Expr]:
    if isinstance(e, Select):
        return [e.operand]
    if isinstance(e, Call):
        return ([e.target] if e.target is not None else []) + list(e.args)
    if isinstance(e, ListLit):
        return list(e.elems)
    if isinstance(e, MapLit):
        return [x for kv in e.entries for x in kv]
    if isinstance(e, Comp):
        return [e.rng, *e.args]
    if isinstance(e, Bind):
        return [e.init, e.body]
    return []


def walk(e: Expr) -> list[Expr]:
    """All nodes, pre-order, without recursion (deep trees must not hit the recursion limit)."""
    out: list[Expr] = []
    stack = [e]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(children(n)))
    return out
