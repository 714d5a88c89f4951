"""Recognising a Helm (or any Go ``text/template``) file that was never rendered.

Why: a chart's ``templates/`` folder is the first thing people point a linter at, and YAML
readers answer ``{{- if .Values.x }}`` with "did not find expected key" — true, useless, and
an ordinary finding (exit 1) although nothing was linted.  Here such a file becomes one
``DecodeError`` that says what it is and what to do, marked so that the CLI exits 2 (the input
is unusable, DESIGN exit codes).

A file counts as an unrendered template only when both hold: a line outside comments has
``{{``, and the file is broken by it — YAML refused it, or a mapping key came out as
something no Kubernetes object has (``name: {{ .Values.x }}`` parses as a flow mapping inside
a flow mapping).  A ConfigMap that carries a Go template *as a string value* parses cleanly
and is left alone: the API server accepts it, so draguard must too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .finding import Finding, Reason, Severity

__all__ = ["TEMPLATE_MESSAGE", "UNRENDERED_TEMPLATE", "template_finding"]

TEMPLATE_MESSAGE = "looks like an unrendered Helm or Go template (`{{`): render it first"
UNRENDERED_TEMPLATE = "unrendered_template"
"""The :attr:`Finding.extra` key that marks the finding (the CLI exits 2 on it)."""

_MAX_NODES = 200_000  # a bound on the key walk; decoded documents are bounded already


def template_finding(text: str, source: str, findings: Iterable[Finding], values: Iterable[Any]) -> Finding | None:
    """The one finding for ``text`` when it is an unrendered template, else ``None``.

    ``findings`` are what decoding said (a ``DecodeError`` means YAML refused the text),
    ``values`` the documents it produced.
    """
    if "{{" not in text:
        return None
    where = _first_action(text)
    if where is None:
        return None
    broken = any(f.reason == Reason.DECODE_ERROR for f in findings) or any(_has_odd_key(v) for v in values)
    if not broken:
        return None
    line, column = where
    return Finding(
        severity=Severity.ERROR,
        reason=Reason.DECODE_ERROR,
        message=f"{TEMPLATE_MESSAGE} (helm template CHART | draguard lint -)",
        file=source,
        line=line,
        column=column,
        extra={UNRENDERED_TEMPLATE: True},
    )


def _first_action(text: str) -> tuple[int, int] | None:
    """1-based position of the first ``{{`` on a line that is not a YAML comment."""
    for number, line in enumerate(text.splitlines(), start=1):
        column = line.find("{{")
        if column >= 0 and not line.lstrip().startswith("#"):
            return number, column + 1
    return None


def _has_odd_key(value: Any) -> bool:
    """Whether any mapping key is not a string, number, bool or null (JSON has nothing else)."""
    stack = [value]
    seen = 0
    while stack and seen < _MAX_NODES:
        item = stack.pop()
        seen += 1
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str | int | float | bool | type(None)):
                    return True
                stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)
    return False
