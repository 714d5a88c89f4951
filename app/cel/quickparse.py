"""A hand-written parser for the plainest CEL selectors, so that a lint that meets only those
never imports Lark.

Why: ``draguard lint`` is a short-lived process, and parsing one selector through cel-python's
grammar costs tens of milliseconds of start-up (importing ``lark``, loading the analysed grammar,
building the lexer: ~100 M instructions, 4 % of linting a small file of plain claims).  Almost every real selector is one of a few plain shapes —
``device.driver == "gpu.example.com"``, ``device.attributes["gpu.example.com"].model == "A100"``
— joined by ``&&``, ``||`` and ``!``.  This module reads exactly such text, and builds exactly the
tree :func:`app.cel.parser.parse_with_tree` builds for it (same node classes, fields and
positions); anything else returns ``None`` and the caller parses with Lark as before, so errors,
macros and every other construct keep their messages.  Declining is always safe; a different
tree would be a bug (``tests/cel/test_quickparse.py`` compares the two on thousands of texts).

The subset, as a grammar (lowest precedence first; binary operators associate to the left, as
in the Lark grammar)::

    or      := and ("||" and)*
    and     := rel ("&&" rel)*
    rel     := unary (("==" | "!=" | "<" | "<=" | ">" | ">=" | "in") unary)*
    unary   := "!" unary | member
    member  := primary ("." IDENT | "[" or "]")*
    primary := IDENT | INT | STRING | "true" | "false" | "null" | "(" or ")"

Tokens, and what is declined (returns ``None``) even where CEL would accept it:

* the whole text must be ASCII; blanks are ``" \\t\\n\\r\\f"``; no ``//`` comments;
* ``IDENT`` is ``[_a-zA-Z][_a-zA-Z0-9]*`` and never a CEL reserved word (nor ``in``, ``true``,
  ``false``, ``null`` where a name is expected — Lark reads some of them as names, cel-go
  does not, and neither reading is needed here);
* ``INT`` is decimal digits without a sign or leading zero that fit int64 (no ``-``, hex,
  ``u`` suffix or float); a number may not run into a name, a dot or a quote;
* ``STRING`` is ``"…"`` or ``'…'`` of printable ASCII without the quote or a backslash (no
  escapes, raw, bytes or triple-quoted strings); a string may not touch another quote;
* no calls or macros (``f(…)``, ``x.f(…)``, ``has``), no arithmetic, ``-``, ``?:``, lists, maps
  or message construction;
* at most :data:`MAX_DEPTH` levels of nesting, so that the tree is always one cel-python's
  evaluator can run (see :data:`MAX_DEPTH`) and the parser's own recursion stays small.

Positions are the ones the Lark path's converter gives: an operator's call (``_==_``, ``_&&_``,
``!_``, ``_[_]``) and a field selection sit at their operator token (``==``, ``&&``, ``!``,
``[``, ``.``), names and literals at their first character.  Node ids are not set here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import ast as A

__all__ = ["MAX_DEPTH", "quick_parse"]

MAX_DEPTH = 40
"""Deepest tree accepted (root = 1).  Each level of this subset adds at most two levels to the
collapsed Lark tree cel-python's evaluator walks (a relation's left operand sits under
``relation`` → ``relation_eq``), and a name is two (``primary`` → ``ident``), so 40 levels are
at most 80, under :data:`app.cel.celpy_shape.MAX_CELPY_DEPTH` (96): a text accepted here is
never one that engine would refuse as too deep — which is why the Lark tree can wait."""

_RESERVED = frozenset({
    "as", "break", "const", "continue", "else", "for", "function", "if", "import", "let", "loop", "package",
    "namespace", "return", "var", "void", "while", "in", "true", "false", "null",
})
_LITERAL_WORDS: dict[str, tuple[object, A.ConstKind]] = {
    "true": (True, "bool"), "false": (False, "bool"), "null": (None, "null"),
}
_RELATIONS = {"==": "_==_", "!=": "_!=_", "<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "in": "@in"}
_INT64_MAX = 2**63 - 1

_TOKEN = re.compile(
    r"""(?P<ws>[\t\n\f\r ]+)
      | (?P<name>[_a-zA-Z][_a-zA-Z0-9]*)
      | (?P<int>0|[1-9][0-9]{0,18})
      | (?P<str>"[ !\#-\[\]-~]*"|'[ -&(-\[\]-~]*')
      | (?P<op>==|!=|<=|>=|&&|\|\||[<>!.\[\]()])
    """,
    re.X,
)
_AFTER_INT = frozenset("_.'\"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
"""What may not follow a number directly (``1.5``, ``1u``, ``0x1``, ``007``, ``1e3``): Lark's to read."""
_AFTER_NAME = frozenset("'\"")
"""What may not follow a name directly: the ``r"…"``/``b"…"`` string prefixes are Lark's to read."""
_AFTER_STR = frozenset("'\"")
"""What may not follow a string directly: three quotes in a row open a triple-quoted string in Lark."""
_GLUED: dict[str, frozenset[str]] = {"int": _AFTER_INT, "name": _AFTER_NAME, "str": _AFTER_STR, "op": frozenset()}


class _Decline(Exception):
    """The text is outside the subset (or not CEL at all): the Lark path decides."""


_Token = tuple[str, str, int]  # (kind, text, offset); kind is "name", "int", "str", "op" or "end"


def _tokens(src: str) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    n = len(src)
    while pos < n:
        m = _TOKEN.match(src, pos)
        if m is None:
            raise _Decline
        kind = m.lastgroup
        end = m.end()
        assert kind is not None
        if kind != "ws":
            if end < n and src[end] in _GLUED[kind]:
                raise _Decline
            out.append((kind, m.group(), pos))
        pos = end
    out.append(("end", "", n))
    return out


class _Parser:
    """Recursive descent over the token list; every method returns the subtree it read."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.i = 0
        self.depth = 0

    def peek(self) -> _Token:
        return self.tokens[self.i]

    def take(self) -> _Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expect(self, text: str) -> None:
        kind, value, _ = self.take()
        if kind != "op" or value != text:
            raise _Decline

    def nested(self) -> None:
        """One level deeper in the grammar (parentheses, ``!``, an index): bounded, see MAX_DEPTH."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Decline

    def _chain(self, op: str, operand: Callable[[], A.Expr]) -> A.Expr:
        """``operand (op operand)*``, associating to the left, each call at its operator token."""
        left = operand()
        while self.peek()[:2] == ("op", op):
            pos = self.take()[2]
            left = A.Call(pos, f"_{op}_", None, [left, operand()])
        return left

    def or_(self) -> A.Expr:
        return self._chain("||", self.and_)

    def and_(self) -> A.Expr:
        return self._chain("&&", self.rel)

    def rel(self) -> A.Expr:
        left = self.unary()
        while True:
            kind, value, pos = self.peek()
            if not ((kind == "op" or (kind == "name" and value == "in")) and value in _RELATIONS):
                return left
            self.i += 1
            left = A.Call(pos, _RELATIONS[value], None, [left, self.unary()])

    def unary(self) -> A.Expr:
        kind, value, pos = self.peek()
        if kind == "op" and value == "!":
            self.i += 1
            self.nested()
            operand = self.unary()
            self.depth -= 1
            return A.Call(pos, "!_", None, [operand])
        return self.member()

    def member(self) -> A.Expr:
        e = self.primary()
        while True:
            kind, value, pos = self.peek()
            if kind != "op":
                return e
            if value == ".":
                self.i += 1
                name_kind, name, _ = self.take()
                if name_kind != "name" or name in _RESERVED or self.peek()[:2] == ("op", "("):
                    raise _Decline  # a reserved word, or a method call / macro: Lark's
                e = A.Select(pos, e, name)
            elif value == "[":
                self.i += 1
                self.nested()
                index = self.or_()
                self.depth -= 1
                self.expect("]")
                e = A.Call(pos, "_[_]", None, [e, index])
            else:
                return e

    def primary(self) -> A.Expr:
        kind, value, pos = self.take()
        if kind == "name":
            if value in _LITERAL_WORDS:
                literal, const_kind = _LITERAL_WORDS[value]
                return A.Const(pos, literal, const_kind)
            if value in _RESERVED or self.peek()[:2] == ("op", "("):
                raise _Decline  # a reserved word, or a global call / macro: Lark's
            return A.Ident(pos, value)
        if kind == "int":
            number = int(value)
            if number > _INT64_MAX:
                raise _Decline  # the Lark path reports "invalid int literal"
            return A.Const(pos, number, "int")
        if kind == "str":
            return A.Const(pos, value[1:-1], "string")
        if kind == "op" and value == "(":
            self.nested()
            inner = self.or_()
            self.depth -= 1
            self.expect(")")
            return inner
        raise _Decline


def _depth(root: A.Expr) -> int:
    """Depth of the tree (root = 1), without recursion."""
    best = 0
    stack = [(root, 1)]
    while stack:
        e, d = stack.pop()
        best = max(best, d)
        stack.extend((c, d + 1) for c in A.children(e))
    return best


def quick_parse(src: str) -> A.Expr | None:
    """The tree of ``src`` when it is in the subset (ids not yet numbered), else ``None``."""
    if not src.isascii():
        return None
    try:
        parser = _Parser(_tokens(src))
        root = parser.or_()
        if parser.peek()[0] != "end":
            return None
    except _Decline:
        return None
    return root if _depth(root) <= MAX_DEPTH else None
