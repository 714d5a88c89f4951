"""Helpers for validation tests: build objects from YAML through the real decoder, then validate."""

from __future__ import annotations

from typing import Any

import yaml
from draguard.k8s.structure import structural_pass
from draguard.validation import DRAObject, ValidationContext, ValidationResult, validate, validate_update


def decode(raw: dict[str, Any] | str) -> DRAObject:
    """Decode (with v1 defaulting) a dict or a YAML document into a typed model.

    ``create=False`` keeps a claim's ``status`` (a create clears it before validation): these
    tests exercise the rules themselves, status rules included.
    """
    data = yaml.safe_load(raw) if isinstance(raw, str) else raw
    st = structural_pass(data["kind"], data, create=False)
    assert st.model is not None, (st.unknown_fields, st.type_errors, st.api_version_error)
    assert not st.unknown_fields and not st.type_errors, (st.unknown_fields, st.type_errors)
    return st.model  # type: ignore[return-value]


def check(raw: dict[str, Any] | str, ctx: ValidationContext | None = None) -> ValidationResult:
    return validate(decode(raw), ctx or ValidationContext())


def check_update(
    raw: dict[str, Any] | str, old: dict[str, Any] | str, ctx: ValidationContext | None = None
) -> ValidationResult:
    return validate_update(decode(raw), decode(old), ctx or ValidationContext())


def lines(result: ValidationResult) -> list[str]:
    """The errors rendered exactly as the API server's ``details.causes`` (``<path>: <body>``)."""
    return [str(e) for e in result.errors]


def pairs(result: ValidationResult) -> set[tuple[str, str]]:
    return {(e.field, e.reason) for e in result.errors}


