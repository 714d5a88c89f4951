"""Device taints (ResourceSlice) and tolerations (claims, allocation results), binding conditions.

Why together: taints and tolerations share the effect vocabulary and the label-name/label-value
formats; Kubernetes validates them in ``validateDeviceTaint`` / ``validateDeviceToleration``.
Note the 1.36 facts: the effect ``None`` is accepted, the number of tolerations is *not*
limited (``DeviceTolerationsMaxLength`` exists but is not enforced), taints are limited to 16
per device by the caller.
"""

from __future__ import annotations

from ..k8s import (
    DeviceTaint,
    DeviceToleration,
    FieldError,
    Path,
    duplicate,
    invalid,
    not_supported,
    required,
)
from .helpers import validate_slice
from .names import validate_label_name, validate_label_value

__all__ = [
    "BINDING_CONDITIONS_MAX_SIZE",
    "DEVICE_TAINTS_MAX_LENGTH",
    "TAINT_EFFECTS",
    "TOLERATION_OPERATORS",
    "validate_binding_parameters",
    "validate_device_taint",
    "validate_device_toleration",
]

DEVICE_TAINTS_MAX_LENGTH = 16  # resource.DeviceTaintsMaxLength (1.35+; 4 in 1.34)
BINDING_CONDITIONS_MAX_SIZE = 4  # BindingConditionsMaxSize = BindingFailureConditionsMaxSize
TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")  # sorted, as sets.List prints them
TOLERATION_OPERATORS = ("Equal", "Exists")


def validate_device_taint(taint: DeviceTaint, path: Path) -> list[FieldError]:
    """``validateDeviceTaint``: key a label name (so required), value a label value, effect required."""
    errs = validate_label_name(taint.key, path.child("key"))
    if taint.value:
        errs.extend(validate_label_value(taint.value, path.child("value")))
    if not taint.effect:
        errs.append(required(path.child("effect")))
    elif taint.effect not in TAINT_EFFECTS:
        errs.append(not_supported(path.child("effect"), taint.effect, TAINT_EFFECTS))
    return errs


def validate_device_toleration(toleration: DeviceToleration, path: Path) -> list[FieldError]:
    """``validateDeviceToleration``; the operator was defaulted to ``Equal`` before this runs."""
    errs: list[FieldError] = []
    if toleration.key:
        errs.extend(validate_label_name(toleration.key, path.child("key")))
    op = toleration.operator
    if op == "Exists":
        if toleration.value:
            errs.append(invalid(path.child("value"), toleration.value, "must be empty for operator `Exists`"))
    elif op == "Equal":
        errs.extend(validate_label_value(toleration.value, path.child("value")))
    elif op == "":
        errs.append(required(path.child("operator")))
    else:
        errs.append(not_supported(path.child("operator"), op, TOLERATION_OPERATORS))
    if toleration.effect and toleration.effect not in TAINT_EFFECTS:
        errs.append(not_supported(path.child("effect"), toleration.effect, TAINT_EFFECTS))
    return errs


def validate_binding_parameters(
    conditions: list[str], failure_conditions: list[str], path: Path
) -> list[FieldError]:
    """``validateDeviceBindingParameters``: ≤ 4 each, label-name format, unique, disjoint, paired."""
    errs = validate_slice(
        conditions, BINDING_CONDITIONS_MAX_SIZE, validate_label_name, path.child("bindingConditions")
    )
    errs.extend(
        validate_slice(
            failure_conditions,
            BINDING_CONDITIONS_MAX_SIZE,
            validate_label_name,
            path.child("bindingFailureConditions"),
        )
    )
    seen: set[str] = set()
    for i, cond in enumerate(conditions):
        if cond in seen:
            errs.append(duplicate(path.child("bindingConditions").index(i), cond))
        seen.add(cond)
    seen_failure: set[str] = set()
    all_conditions = set(conditions)
    for i, cond in enumerate(failure_conditions):
        if cond in seen_failure:
            errs.append(duplicate(path.child("bindingFailureConditions").index(i), cond))
        seen_failure.add(cond)
        if cond in all_conditions:
            errs.append(
                invalid(
                    path.child("bindingFailureConditions").index(i),
                    cond,
                    "bindingFailureConditions must not overlap with bindingConditions",
                )
            )
    if not conditions and failure_conditions:
        errs.append(
            invalid(
                path.child("bindingConditions"),
                [],
                "bindingConditions are required to use bindingFailureConditions",
            )
        )
    if not failure_conditions and conditions:
        errs.append(
            invalid(
                path.child("bindingFailureConditions"),
                [],
                "bindingFailureConditions are required to use bindingConditions",
            )
        )
    return errs
