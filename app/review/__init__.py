"""The pipeline every door shares: objects (+ inventory) → findings, and → the mutating JSONPatch.

Public surface: :func:`review_documents` (lint, ``/lint``), :func:`review_admission` (the
webhook), their options (:class:`ReviewOptions`) and results (:class:`Review`,
:class:`ObjectReview`).  Decoding is :mod:`app.k8s`'s, the rules :mod:`app.validation`'s, the
proof of (un)satisfiability and the defaults to fill :mod:`app.satisfy`'s; this package only
orders them and turns their answers into findings and patches.  :mod:`.rechecks` lets a caller that
reviews the same objects on every new snapshot (the audit) ask only the engine's answers again.  :func:`explain_object` answers
``draguard explain`` (a claim or pod, per node class, ever and now).
"""

from typing import TYPE_CHECKING

from ..lazy import lazy_exports
from .pipeline import (
    DEFAULT_DENY,
    DenyPolicyError,
    ObjectReview,
    Review,
    ReviewOptions,
    parse_deny,
    remade_findings,
    review_admission,
    review_documents,
)
from .rechecks import Check, Ref, object_refs, reads_alike, recheck, recording, refs_alike

if TYPE_CHECKING:
    from .explain import ClaimAnswer, ClassRow, Explanation, explain_claim, explain_object
    from .fit import fit_object
__getattr__ = lazy_exports(__name__, {
    ".explain": ("ClaimAnswer", "ClassRow", "Explanation", "explain_claim", "explain_object"),
    ".fit": ("fit_object",),
    ".workloads": (),  # exports nothing: the pipeline imports it with the first pod (load_all loads it too)
})
"""``draguard explain`` and ``capacity`` load their modules with their first use (:mod:`app.lazy` says why)."""

__all__ = [
    "DEFAULT_DENY",
    "Check",
    "ClaimAnswer",
    "ClassRow",
    "DenyPolicyError",
    "Explanation",
    "ObjectReview",
    "Ref",
    "Review",
    "ReviewOptions",
    "explain_claim",
    "explain_object",
    "fit_object",
    "object_refs",
    "parse_deny",
    "reads_alike",
    "recheck",
    "recording",
    "refs_alike",
    "remade_findings",
    "review_admission",
    "review_documents",
]
