"""Findings → what each door prints: text, JSON, JUnit, SARIF (:mod:`.render`) and the
AdmissionReview response (:mod:`.admission`).  Formatting only: no decision is made here.
"""

from .admission import allow, mutation_response, validation_response
from .render import FORMATS, Format, count_at_least, render, tool_version

__all__ = [
    "FORMATS",
    "Format",
    "allow",
    "count_at_least",
    "mutation_response",
    "render",
    "tool_version",
    "validation_response",
]
