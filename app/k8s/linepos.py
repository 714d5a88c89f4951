"""Positions of a plain block-style YAML document, read line by line (no YAML parser).

Why: a finding points at a line, and documents read on the fast path get their positions only
when one is asked for (:class:`app.k8s.decode._Locator`).  Reading the C parser's events for
that (:func:`app.k8s.decode._positions_only`) costs ~100 Python event objects for a 20-line
claim; linting 10,000 generated objects with 3,582 findings spent 13 % of its time there.  Most
manifests are the plain block style ``kubectl`` and Helm write — ``key: value``, ``key:``,
``- key: value``, ``- value``, one node per line — whose node starts can be read off the lines
directly.

The reader is a guard as much as a reader: any line it does not know for certain (flow
collections other than ``[]``/``{}``, block scalars, multi-line scalars, comments after
content, quoted keys, tabs, anchors, tags, an empty value, a ``kind: …List``) makes it answer
``None``, and the caller reads the events as before.  Where it answers, the tables are what the
event reader records (the test-suite compares both on every project manifest, generated
inventories and random edits of them).
"""

from __future__ import annotations

import re

__all__ = ["block_positions"]

Position = tuple[int, int]
PathKey = tuple[str | int, ...]

_PLAIN = re.compile(r"[^-?:,\[\]{}#&*!|>'\"%@`\s]|[-?:][^\s,\[\]{}]")
"""How a one-line plain scalar may start (YAML 1.2 ``ns-plain-first`` in block context)."""
_DOUBLE = re.compile(r'"(?:[^"\\]|\\.)*" *')
_SINGLE = re.compile(r"'(?:[^']|'')*' *")
_MAX_DEPTH = 100  # well below what the event reader records (200): deeper documents are read by it


_LINE = re.compile(r"^( *)(- +)?(?:([A-Za-z0-9_][A-Za-z0-9_./-]*)(:(?: +|$)))?([^\n]*)$", re.MULTILINE)
"""One line: its indentation, a sequence dash (with its spaces), a plain key, its colon (with
the spaces after it), the rest."""


def block_positions(text: str, line0: int = 0) -> tuple[dict[PathKey, Position], dict[PathKey, Position]] | None:
    """``(positions, key_positions)`` of the one document in ``text``, or ``None`` when the
    text is not plain block style the reader is sure of.  ``line0`` is added to every line."""
    if "\t" in text or "\r" in text or ("#" in text and not _comments_only(text)):
        return None
    positions: dict[PathKey, Position] = {}
    keys: dict[PathKey, Position] = {}
    # Open collections, innermost last: (is_map, column of its keys or dashes, path); the next
    # item index of each sequence is in ``counts`` under its path.
    stack: list[tuple[bool, int, PathKey]] = []
    counts: dict[PathKey, int] = {}
    pending: PathKey | None = None  # a "key:" whose node starts on a later line
    pending_column = -1
    started = False
    number = line0
    for indent, dash, key, colon, rest in _LINE.findall(text):
        number += 1
        if not dash and not key:
            if not rest or rest.startswith("#"):
                continue
            if not started and not indent and (rest == "---" or rest.startswith("--- ")):
                if rest[4:].strip():
                    return None  # content on the document-start line
                continue
            return None  # "-" alone, a scalar line, "...", "---" later, anything else
        column = len(indent)
        if dash:
            inner = column + len(dash)
            if not key and (not rest or rest.startswith("- ")):
                return None  # "-" then nothing or nested "- -": not read here
            if pending is not None:
                if column < pending_column:
                    return None
                stack.append((False, column, pending))
                positions[pending] = (number, column + 1)
                pending = None
            elif not started:
                return None  # a sequence as the document: not an object
            else:
                while stack and (stack[-1][1] > column or (stack[-1][0] and stack[-1][1] == column)):
                    stack.pop()
                if not stack or stack[-1][0] or stack[-1][1] != column:
                    return None
            seq = stack[-1][2]
            index = counts.get(seq, 0)
            counts[seq] = index + 1
            item: PathKey = (*seq, index)
            if len(item) > _MAX_DEPTH:
                return None
            positions[item] = (number, inner + 1)
            if not key:
                if not _scalar_value(rest):
                    return None
                continue
            stack.append((True, inner, item))
            column = inner
        else:
            if pending is not None:
                if column <= pending_column:
                    return None  # an empty value: the event reader decides where it starts
                stack.append((True, column, pending))
                positions[pending] = (number, column + 1)
                pending = None
            elif not started:
                stack.append((True, column, ()))
                positions[()] = (number, column + 1)
                started = True
            else:
                while stack and (stack[-1][1] > column or (not stack[-1][0] and stack[-1][1] == column)):
                    stack.pop()
                if not stack or not stack[-1][0] or stack[-1][1] != column:
                    return None
        path = (*stack[-1][2], key)
        if path in keys or len(path) > _MAX_DEPTH:
            return None
        keys[path] = (number, column + 1)
        if not rest:
            pending, pending_column = path, column
            continue
        if not _scalar_value(rest):
            return None
        positions[path] = (number, column + 1 + len(key) + len(colon))
        if path == ("kind",) and "List" in rest:
            return None  # a List is split into its items: the event reader does that
    if pending is not None or not started:
        return None
    return positions, keys


def _scalar_value(value: str) -> bool:
    """Whether ``value`` (the rest of a line) is one whole scalar or ``[]``/``{}``."""
    if value[0] == '"':
        return _DOUBLE.fullmatch(value) is not None
    if value[0] == "'":
        return _SINGLE.fullmatch(value) is not None
    stripped = value.rstrip(" ")
    if stripped in ("[]", "{}"):
        return True
    return not (_PLAIN.match(value) is None or ": " in stripped or stripped.endswith(":") or " #" in value)


def _comments_only(text: str) -> bool:
    """Whether every ``#`` of ``text`` starts a whole-line comment."""
    for line in text.split("\n"):
        body = line.lstrip(" ")
        if "#" in body and not body.startswith("#"):
            return False
    return True
