"""Opaque device configuration (claims, classes, allocation results) and raw JSON payloads.

Why: ``opaque.parameters`` is a ``runtime.RawExtension`` — the API server checks it is present,
not ``null``, at most 10 KiB (on create: stored objects are grandfathered) and a JSON *object*.
The size is measured on the compact JSON encoding a client such as kubectl sends, without
recursion (:func:`app.k8s.tree.json_length`): parameters may nest 10,000 levels.
"""

from __future__ import annotations

from typing import Any

from ..k8s import (
    OMIT,
    FieldError,
    OpaqueDeviceConfiguration,
    Path,
    invalid,
    json_length,
    required,
    too_long,
)
from .names import validate_driver_name

__all__ = [
    "OPAQUE_PARAMETERS_MAX_LENGTH",
    "validate_device_configuration",
    "validate_opaque_configuration",
    "validate_raw_extension",
]

OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024  # resource.OpaqueParametersMaxLength


def validate_raw_extension(value: Any, path: Path, stored: bool, max_length: int) -> list[FieldError]:
    """``validateRawExtension``: required, size (new data only), parseable, a JSON object.

    Absent and ``null`` are the same for a RawExtension (``null`` leaves ``Raw`` empty).
    """
    if value is None:
        return [required(path)]
    if not stored and json_length(value) > max_length:
        return [too_long(path, max_length)]
    if not isinstance(value, dict):
        return [invalid(path, OMIT, "must be a valid JSON object")]
    return []


def validate_opaque_configuration(
    config: OpaqueDeviceConfiguration, path: Path, stored: bool
) -> list[FieldError]:
    """``validateOpaqueConfiguration``: a driver name and an object of parameters."""
    errs = validate_driver_name(config.driver, path.child("driver"))
    errs.extend(
        validate_raw_extension(
            config.parameters, path.child("parameters"), stored, OPAQUE_PARAMETERS_MAX_LENGTH
        )
    )
    return errs


def validate_device_configuration(
    opaque: OpaqueDeviceConfiguration | None, path: Path, stored: bool
) -> list[FieldError]:
    """``validateDeviceConfiguration``: ``opaque`` is the only kind of configuration and is required."""
    if opaque is None:
        return [required(path.child("opaque"))]
    return validate_opaque_configuration(opaque, path.child("opaque"), stored)
