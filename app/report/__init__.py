"""Findings → what each door prints: text, JSON, JUnit, SARIF (:mod:`.render`) and the
AdmissionReview response (:mod:`.admission`); ``draguard explain`` (:mod:`.explain`) and
``draguard capacity`` (:mod:`.capacity`).  Formatting only: no decision is made here.
"""

from .admission import allow, mutation_response, validation_response
from .capacity import render_capacity
from .explain import explanation_json, render_explanation
from .render import FORMATS, Format, count_at_least, render, tool_version

__all__ = [
    "FORMATS",
    "Format",
    "allow",
    "count_at_least",
    "explanation_json",
    "mutation_response",
    "render",
    "render_capacity",
    "render_explanation",
    "tool_version",
    "validation_response",
]
