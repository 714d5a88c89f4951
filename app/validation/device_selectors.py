"""CEL device selectors: length, compilation, result type and estimated cost.

Why through ``app.cel``: the DRA CEL environment (``device`` variable, Kubernetes libraries,
cost estimation) lives there; this module only maps its verdict to the field error the API
server returns.  Like Kubernetes, the length is checked first and an over-long expression is
not compiled at all.

An expression that uses CEL Kubernetes accepts but draguard cannot evaluate (optional syntax,
the IP/CIDR/URL libraries…) is never an error here — that would be a false rejection — but a
``SelectorNotChecked`` warning from :func:`unchecked_selector_notes`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

from ..cel import CompileFailure, compile_selector
from ..k8s import (
    DeviceClass,
    DeviceSelector,
    FieldError,
    Note,
    Path,
    Reason,
    ResourceClaim,
    ResourceClaimSpec,
    ResourceClaimTemplate,
    Severity,
    byte_len,
    check_budget,
    forbidden,
    invalid,
    minor_key,
    required,
    too_long,
)
from .helpers import validate_slice
from .target import current_target, gate_enabled

T = TypeVar("T")

__all__ = [
    "CEL_SELECTOR_EXPRESSION_MAX_LENGTH",
    "DEVICE_SELECTORS_MAX_SIZE",
    "unchecked_selector_notes",
    "validate_cel_expression",
    "validate_selector",
    "validate_selectors",
]

CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024  # resource.CELSelectorExpressionMaxLength
DEVICE_SELECTORS_MAX_SIZE = 32  # resource.DeviceSelectorsMaxSize


def _environment() -> dict[str, bool]:
    """The CEL environment the target's API server compiles a new selector in: list-typed
    attribute values with ``DRAListTypeAttributes``, and ``includes`` with it or from 1.38 (whose
    API server declares it whatever the gate)."""
    lists = gate_enabled("DRAListTypeAttributes")
    version = current_target().version
    return {
        "consumable_capacity": gate_enabled("DRAConsumableCapacity"),
        "list_type_attributes": lists,
        "includes": lists or minor_key(version) >= (1, 38),
    }


def validate_cel_expression(expression: str, path: Path, stored: bool = False) -> list[FieldError]:
    """``validateCELExpression``: ≤ 10 KiB, compiles, bool/dyn result, cost within the limit.

    ``stored``: an unchanged stored expression is not re-checked (DeviceClass updates).
    """
    if stored:
        return []
    if byte_len(expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
        return [too_long(path, CEL_SELECTOR_EXPRESSION_MAX_LENGTH)]
    check_budget("selector compilation")
    result = compile_selector(expression, **_environment())
    if not isinstance(result, CompileFailure) or result.kind == "unsupported":
        return []
    if result.kind == "cost":
        return [forbidden(path, "too complex, exceeds cost limit")]
    if result.kind == "too_long":
        return [too_long(path, CEL_SELECTOR_EXPRESSION_MAX_LENGTH)]
    return [invalid(path, expression, result.message)]


_REQUESTS_MAX = 32  # resource.DeviceRequestsMaxSize (app.validation.resourceclaim imports this module)
_FIRST_AVAILABLE_MAX = 8  # resource.FirstAvailableDeviceRequestMaxSize


def _within(items: list[T], limit: int) -> list[T]:
    """Nothing past an API-server size limit: the object is refused with TooMany, and compiling
    what it refuses would only burn CPU (~0.3 s per 10 KiB selector)."""
    return items if len(items) <= limit else []


def _selectors_of(obj: DeviceClass | ResourceClaim | ResourceClaimTemplate) -> Iterator[tuple[str, Path]]:
    def claim_spec(spec: ResourceClaimSpec, base: Path) -> Iterator[tuple[str, Path]]:
        requests = base.child("devices", "requests")
        for i, request in enumerate(_within(spec.devices.requests, _REQUESTS_MAX)):
            if request.exactly is not None:
                for j, sel in enumerate(_within(request.exactly.selectors, DEVICE_SELECTORS_MAX_SIZE)):
                    if sel.cel is not None:
                        yield sel.cel.expression, requests.index(i).child("exactly", "selectors").index(j)
            for k, sub in enumerate(_within(request.first_available, _FIRST_AVAILABLE_MAX)):
                for j, sel in enumerate(_within(sub.selectors, DEVICE_SELECTORS_MAX_SIZE)):
                    if sel.cel is not None:
                        yield sel.cel.expression, requests.index(i).child("firstAvailable").index(k).child(
                            "selectors"
                        ).index(j)

    if isinstance(obj, DeviceClass):
        for j, sel in enumerate(_within(obj.spec.selectors, DEVICE_SELECTORS_MAX_SIZE)):
            if sel.cel is not None:
                yield sel.cel.expression, Path.root("spec", "selectors").index(j)
    elif isinstance(obj, ResourceClaim):
        yield from claim_spec(obj.spec, Path.root("spec"))
    else:
        yield from claim_spec(obj.spec.spec, Path.root("spec", "spec"))


def unchecked_selector_notes(obj: DeviceClass | ResourceClaim | ResourceClaimTemplate) -> list[Note]:
    """A warning for every selector draguard cannot evaluate (Kubernetes may well accept it)."""
    notes: list[Note] = []
    for expression, path in _selectors_of(obj):
        if byte_len(expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
            continue
        check_budget("selector compilation")
        result = compile_selector(expression, **_environment())
        if isinstance(result, CompileFailure) and result.kind == "unsupported":
            notes.append(
                Note(Reason.SELECTOR_NOT_CHECKED, result.message, path.child("cel", "expression"), Severity.WARNING)
            )
    return notes


def validate_selector(selector: DeviceSelector, path: Path, stored: bool = False) -> list[FieldError]:
    """``validateSelector``: ``cel`` is the only selector kind and is required."""
    if selector.cel is None:
        return [required(path.child("cel"))]
    return validate_cel_expression(selector.cel.expression, path.child("cel", "expression"), stored)


def validate_selectors(selectors: list[DeviceSelector], path: Path, stored: bool = False) -> list[FieldError]:
    """``validateSelectorSlice``: at most 32 selectors."""
    return validate_slice(
        selectors, DEVICE_SELECTORS_MAX_SIZE, lambda s, p: validate_selector(s, p, stored), path
    )
