"""Findings: the one result type every check produces and every output format consumes.

Why here, at the bottom: validation, CEL, satisfiability and decoding all emit findings, and
all report formats (text, JSON, JUnit, SARIF, AdmissionReview) read them.  Keeping the type in
the vocabulary layer lets every layer above depend on it without importing sideways.

The JSON form is the contract of README "Findings (the JSON contract)"; :meth:`Finding.to_json` keeps its field order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

from .field import Path
from .reasons import Reason, Severity

__all__ = ["Finding", "Note", "ObjectRef", "Reason", "Severity"]


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """Which object a finding is about, and where it came from."""

    kind: str = ""
    namespace: str = ""
    name: str = ""
    api_version: str = ""
    file: str = ""
    line: int = 0
    column: int = 0

    def describe(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {ns}{self.name}".strip()


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing draguard has to say about one object (or one file, for decode errors)."""

    severity: Severity
    reason: str
    """A :class:`Reason` or a Kubernetes cause type (``FieldValue*``): a key of ``REASONS``."""
    message: str
    field: str = ""
    kind: str = ""
    namespace: str = ""
    name: str = ""
    file: str = ""
    line: int = 0
    column: int = 0
    extra: dict[str, Any] = dc_field(default_factory=dict, compare=False, hash=False)
    brief: str = dc_field(default="", compare=False, hash=False)
    """A short form with the figure first (``7Gi→10Gi memory for request "gpu"``) for places
    with little room — AdmissionReview warnings; empty when the message is short already."""
    details: dict[str, Any] = dc_field(default_factory=dict, compare=False, hash=False)
    """The figures a finding is about, for machines (README "Findings", ``details``): e.g.
    ``{"replicas": 8, "fit": 4, "exact": true}``; emitted in JSON only when not empty."""

    @classmethod
    def for_object(
        cls,
        ref: ObjectRef,
        severity: Severity,
        reason: str,
        message: str,
        field_path: str = "",
        line: int = 0,
        column: int = 0,
        *,
        brief: str = "",
        details: dict[str, Any] | None = None,
        **extra: Any,
    ) -> Finding:
        return cls(
            severity=severity,
            reason=reason,
            message=message,
            field=field_path,
            kind=ref.kind,
            namespace=ref.namespace,
            name=ref.name,
            file=ref.file,
            line=line or ref.line,
            column=column if line else (column or ref.column),
            extra=dict(extra),
            brief=brief,
            details=dict(details or {}),
        )

    def to_json(self) -> dict[str, Any]:
        """The object of README "Findings (the JSON contract)", in its documented field order."""
        out: dict[str, Any] = {
            "severity": self.severity.value,
            "reason": self.reason,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "field": self.field,
            "message": self.message,
        }
        if self.file:
            out["file"] = self.file
        if self.line:
            out["line"] = self.line
            out["column"] = self.column
        if self.details:
            out["details"] = self.details
        return out


@dataclass(frozen=True, slots=True)
class Note:
    """A finding-to-be from a check that knows the field but not the object or file.

    Validation and satisfiability return notes; the pipeline attaches the object reference
    and the source position.  ``reason`` is a Kubernetes cause type only for API-parity field
    errors (those travel as :class:`~app.k8s.field.FieldError` instead); notes carry draguard's
    own reasons (``Lint…``, ``Unsatisfiable``, ``SatisfiabilityUnknown``…).
    """

    reason: Reason
    message: str
    path: Path | None = None
    severity: Severity = Severity.WARNING
    brief: str = ""  # see Finding.brief
    details: Mapping[str, Any] | None = None
    """Figures for machines, copied to :attr:`Finding.details` (see there)."""
    fail_open: str = ""
    """Set when the check gave up (budget spent, search deadline): what stopped it.  The webhook
    reports such reviews loudly (warning log, metric, audit annotation)."""
