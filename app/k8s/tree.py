"""JSON trees (dicts, lists, scalars) handled without recursion: copy, compare, measure, encode.

Why: user data reaches draguard as nested dicts and lists, and Kubernetes accepts nesting up to
10,000 levels (``opaque.parameters`` is free-form JSON).  ``copy.deepcopy``, ``==`` on dicts,
``json.dumps`` and pydantic's serialiser all recurse — in Python or in C with the interpreter's
recursion guard — and give up near 1,000 levels with a ``RecursionError`` (or a
``ValueError``) that turned into "internal error, allowed" or a 500.  Everything here walks
with an explicit stack, so the only depth limit is the one the decoder enforces.

Scalars (str, int, float, bool, None) are handled by the standard library one at a time, which
never recurses; containers are the only thing these functions take apart.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

__all__ = ["compact_json", "deep_copy", "depth", "describe", "equal", "json_length"]


def deep_copy(value: Any) -> Any:
    """A copy of a JSON tree in which every dict and list is new (scalars are immutable)."""
    if not isinstance(value, dict | list):
        return value
    root: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, child in items:
            if isinstance(child, dict | list):
                copied: Any = {} if isinstance(child, dict) else []
                stack.append((child, copied))
            else:
                copied = child
            if isinstance(target, dict):
                target[key] = copied
            else:
                target.append(copied)
    return root


def depth(value: Any) -> int:
    """Nesting depth: 0 for a scalar, 1 for ``{}`` or ``[1]``, 2 for ``[[1]]``…"""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, level + 1)
        stack.extend((child, level + 1) for child in children)
    return deepest


def equal(a: Any, b: Any) -> bool:
    """``a == b`` for JSON trees and the pydantic models holding them, without recursion.

    Same semantics as Python's ``==`` (a model equals a model of the same class with equal
    fields, as pydantic's ``__eq__``); scalars — Quantities included — use their own ``==``.
    """
    stack: list[tuple[Any, Any]] = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        if isinstance(x, BaseModel) or isinstance(y, BaseModel):
            if type(x) is not type(y):
                return False
            stack.append((x.__dict__, y.__dict__))
            stack.append((x.__pydantic_extra__, y.__pydantic_extra__))
            stack.append((x.__pydantic_private__, y.__pydantic_private__))
        elif isinstance(x, dict) and isinstance(y, dict):
            if len(x) != len(y):
                return False
            for key, value in x.items():
                if key not in y:
                    return False
                stack.append((value, y[key]))
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(x, dict | list) or isinstance(y, dict | list) or x != y:
            return False
    return True


def _scalar_json(value: Any, default: Callable[[Any], Any] | None) -> str:
    if default is not None and not isinstance(value, str | int | float | bool) and value is not None:
        value = default(value)
        if isinstance(value, dict | list):  # a default must give a scalar here
            value = str(value)
    return json.dumps(value, ensure_ascii=False, allow_nan=True)


def compact_json(value: Any, *, default: Callable[[Any], Any] | None = None) -> str:
    """``json.dumps(value, separators=(",", ":"), ensure_ascii=False)`` without recursion.

    ``default`` turns a non-JSON scalar into a JSON one (as ``json.dumps``' own ``default``);
    without it such a value raises ``TypeError`` like ``json.dumps`` does.
    """
    out: list[str] = []
    # the stack holds either a value still to encode or a literal piece of text to emit
    stack: list[tuple[bool, Any]] = [(False, value)]
    while stack:
        is_text, item = stack.pop()
        if is_text:
            out.append(item)
            continue
        if isinstance(item, dict):
            pieces: list[tuple[bool, Any]] = [(True, "{")]
            for i, (key, child) in enumerate(item.items()):
                if not isinstance(key, str):
                    key = _scalar_json(key, None)  # json.dumps turns int/float/bool keys to text
                pieces.append((True, ("," if i else "") + json.dumps(key, ensure_ascii=False) + ":"))
                pieces.append((False, child))
            pieces.append((True, "}"))
            stack.extend(reversed(pieces))
        elif isinstance(item, list):
            pieces = [(True, "[")]
            for i, child in enumerate(item):
                if i:
                    pieces.append((True, ","))
                pieces.append((False, child))
            pieces.append((True, "]"))
            stack.extend(reversed(pieces))
        else:
            out.append(_scalar_json(item, default))
    return "".join(out)


def json_length(value: Any) -> int:
    """Bytes of the compact UTF-8 JSON encoding (lone surrogates counted as their 3 bytes)."""
    return len(compact_json(value, default=str).encode("utf-8", "surrogatepass"))


def describe(value: Any, limit: int = 80) -> str:
    """A short ``repr`` of a user-supplied value for a message: scalars as ``repr`` (clipped to
    ``limit`` characters), containers by type only — ``repr`` of a deep one recurses, and of a
    large one would copy the client's megabytes into a response."""
    if isinstance(value, dict):
        return "<object>"
    if isinstance(value, list):
        return "<array>"
    text = repr(value) if isinstance(value, str | int | float | bool) or value is None else f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 4] + "…" + text[-3:]
