"""Findings → what each door prints: text, JSON, JUnit, SARIF (:mod:`.render`) and the
AdmissionReview response (:mod:`.admission`); ``draguard explain`` (:mod:`.explain`) and
``draguard capacity`` (:mod:`.capacity`).  Formatting only: no decision is made here.
"""

from typing import TYPE_CHECKING

from ..lazy import lazy_exports
from .admission import allow, limit_warnings, mutation_response, validation_response
from .render import FORMATS, Format, count_at_least, render, tool_version

if TYPE_CHECKING:
    from .capacity import render_capacity
    from .explain import explanation_json, render_explanation
__getattr__ = lazy_exports(__name__, {".capacity": ("render_capacity",),
                                      ".explain": ("explanation_json", "render_explanation")})
"""``draguard explain`` and ``capacity`` load their renderers with their first use (:mod:`app.lazy` says why)."""

__all__ = [
    "FORMATS",
    "Format",
    "allow",
    "count_at_least",
    "explanation_json",
    "limit_warnings",
    "mutation_response",
    "render",
    "render_capacity",
    "render_explanation",
    "tool_version",
    "validation_response",
]
