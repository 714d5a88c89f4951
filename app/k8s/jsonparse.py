"""JSON decoding with the API server's limits: fast, bounded depth, no Python recursion.

Why not plain ``json.loads``: it recurses once per nesting level, so ``[[[[…]]]]`` a thousand deep
raises ``RecursionError`` (a 500 in a server), while Kubernetes accepts documents nested up to
10,000 levels (``opaque.parameters`` may legally be that deep).  And a string with a lone
surrogate escape (``"\\ud800"``) decodes to a Python ``str`` that cannot be encoded back to UTF-8,
so it would only fail later, when a response is rendered.

How: orjson (or the C scanner of the standard library, when duplicate keys must be noticed) for
the common case; when it refuses the depth (orjson stops at 1,024 levels), a small iterative
parser with an explicit stack takes over and enforces :data:`MAX_DEPTH` itself.  Everything that
is not acceptable JSON comes out as :class:`JsonError` with a line and column — never another
exception.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

import orjson

from .errors import DraguardError

__all__ = ["MAX_DEPTH", "DuplicateKeyError", "JsonError", "has_surrogates", "loads_json"]

MAX_DEPTH = 10_000
"""Kubernetes' JSON decoder (sigs.k8s.io/json) refuses documents nested deeper than this."""

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abAB]", re.ASCII)
_SURROGATE = re.compile("[\ud800-\udfff]")
_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


class JsonError(DraguardError, ValueError):
    """Not acceptable JSON: says why and where (1-based line and column, 0 when unknown)."""

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


class DuplicateKeyError(JsonError):
    """An object repeats a key: Kubernetes' strict decoding refuses it."""


def has_surrogates(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (it could never be encoded as UTF-8).

    An ASCII text has none, and ``str.isascii`` answers from the string's header without reading
    it: a 53 MB inventory skips a ~0.3 s search."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(f'duplicate key "{key}"')
            seen.add(key)
    return out


def _refuse_constant(name: str) -> Any:
    raise JsonError(f"{name} is not a JSON value")


def _walk_strings_for_surrogates(value: Any) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                return True
        elif isinstance(v, dict):
            for k, item in v.items():
                if _SURROGATE.search(k):
                    return True
                stack.append(item)
        elif isinstance(v, list):
            stack.extend(v)
    return False


def loads_json(data: str | bytes, *, reject_duplicates: bool = False, allow_surrogates: bool = False) -> Any:
    """Decode one JSON value; raises :class:`JsonError` (and only that) when it is not acceptable.

    ``reject_duplicates`` makes a repeated key in an object a :class:`DuplicateKeyError` (lint
    wants it; an AdmissionReview was already decoded by the API server).  ``allow_surrogates``
    keeps lone surrogate escapes as they are (the webhook echoes a client's ``uid`` exactly; its
    responses escape them again) instead of refusing the text.
    """
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonError(f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    else:
        text = data
    # text decoded from bytes cannot hold one: Python's strict UTF-8 decoder refuses encoded
    # surrogates, so only a str given as such is scanned (the scan is half of a webhook body's decode)
    if not allow_surrogates and not isinstance(data, bytes) and has_surrogates(text):
        raise JsonError("text contains a lone surrogate: not encodable as UTF-8")
    try:
        if not reject_duplicates and not allow_surrogates:
            return orjson.loads(text)
        hook = _no_duplicates if reject_duplicates else None
        value = json.loads(text, object_pairs_hook=hook, parse_constant=_refuse_constant)
    except RecursionError:
        return _IterativeParser(text, reject_duplicates, allow_surrogates).parse()
    except orjson.JSONDecodeError as exc:
        if "depth" in str(exc) or "recursion" in str(exc):
            return _IterativeParser(text, reject_duplicates, allow_surrogates).parse()
        raise JsonError(_orjson_message(exc), exc.lineno, exc.colno) from None
    except json.JSONDecodeError as exc:
        raise JsonError(exc.msg, exc.lineno, exc.colno) from None
    if not allow_surrogates and _SURROGATE_ESCAPE.search(text) and _walk_strings_for_surrogates(value):
        raise JsonError("a string holds a lone surrogate escape (\\ud800-\\udfff): not encodable as UTF-8")
    return value


def _orjson_message(exc: orjson.JSONDecodeError) -> str:
    msg = str(exc)
    cut = msg.rfind(": line ")
    return msg[:cut] if cut > 0 else msg


class _IterativeParser:
    """RFC 8259 JSON with an explicit stack: depth is a counter, not the interpreter's stack."""

    def __init__(self, text: str, reject_duplicates: bool, allow_surrogates: bool = False) -> None:
        self.text = text
        self.reject_duplicates = reject_duplicates
        self.allow_surrogates = allow_surrogates

    def fail(self, message: str, offset: int) -> JsonError:
        line, column = _position(self.text, offset)
        return JsonError(message, line, column)

    def parse(self) -> Any:
        """One state machine: read a value, then attach it and close finished containers."""
        text = self.text
        n = len(text)
        pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
        # Each frame: (container, key awaiting a value or None).  Objects collect pairs in a dict.
        stack: list[tuple[dict[str, Any] | list[Any], list[str | None]]] = []
        result: Any = None
        done = False
        while not done:
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            if pos >= n:
                raise self.fail("unexpected end of input", pos)
            ch = text[pos]
            value: Any
            if ch == "{" or ch == "[":
                if len(stack) >= MAX_DEPTH:
                    raise self.fail(f"nesting depth exceeds {MAX_DEPTH}, the most Kubernetes accepts", pos)
                container: dict[str, Any] | list[Any] = {} if ch == "{" else []
                pos += 1
                stack.append((container, [None]))
                value = container
                after = _WS.match(text, pos).end()  # type: ignore[union-attr]
                close = "}" if ch == "{" else "]"
                if after < n and text[after] == close:
                    pos = after + 1
                    stack.pop()
                elif ch == "{":
                    pos = self._key(stack[-1][1], after)
                    continue
                else:
                    continue
            elif ch == '"':
                value, pos = self._string(pos)
            elif ch in "-0123456789":
                m = _NUMBER.match(text, pos)
                if m is None:
                    raise self.fail("invalid number", pos)
                value = float(m.group()) if m.group(1) or m.group(2) else int(m.group())
                pos = m.end()
            elif text.startswith("true", pos):
                value, pos = True, pos + 4
            elif text.startswith("false", pos):
                value, pos = False, pos + 5
            elif text.startswith("null", pos):
                value, pos = None, pos + 4
            else:
                raise self.fail(f"unexpected character {ch!r}", pos)
            # attach the finished value and close every container that ends here
            while True:
                if not stack:
                    result = value
                    done = True
                    break
                container, slot = stack[-1]
                if isinstance(container, dict):
                    key = slot[0]
                    assert key is not None
                    if self.reject_duplicates and key in container:
                        raise DuplicateKeyError(f'duplicate key "{key}"', *_position(text, pos))
                    container[key] = value
                else:
                    container.append(value)
                pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
                if pos >= n:
                    raise self.fail("unexpected end of input", pos)
                sep = text[pos]
                if sep == ",":
                    pos += 1
                    if isinstance(container, dict):
                        pos = self._key(slot, _WS.match(text, pos).end())  # type: ignore[union-attr]
                    break
                if sep == ("}" if isinstance(container, dict) else "]"):
                    pos += 1
                    stack.pop()
                    value = container
                    continue
                raise self.fail(f"expected ',' or a closing bracket, found {sep!r}", pos)
        end = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if end != n:
            raise self.fail("extra data after the JSON value", end)
        return result

    def _key(self, slot: list[str | None], pos: int) -> int:
        text = self.text
        if pos >= len(text) or text[pos] != '"':
            raise self.fail("expected a string key", pos)
        key, pos = self._string(pos)
        pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= len(text) or text[pos] != ":":
            raise self.fail("expected ':' after a key", pos)
        slot[0] = key
        return pos + 1

    def _string(self, pos: int) -> tuple[str, int]:
        try:
            value, end = scanstring(self.text, pos + 1, True)
        except json.JSONDecodeError as exc:
            raise self.fail(exc.msg, exc.pos) from None
        if not self.allow_surrogates and _SURROGATE.search(value):
            raise self.fail("a string holds a lone surrogate escape (\\ud800-\\udfff): not encodable as UTF-8", pos)
        return value, end

