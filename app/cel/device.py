"""Devices converted once into the values the evaluator reads.

Why a dedicated, immutable object: the allocator evaluates many selectors against the same
inventory, so the conversion (domain splitting, semver parsing, default-empty maps) is paid
once per inventory change, not once per evaluation.  Kubernetes' ``DeviceMatches`` rules are
reproduced here: a name without ``/`` lives under the driver's domain, ``dom/id`` splits at the
first ``/``, unknown domains read as empty maps, and an attribute without a value makes every
selector evaluated on the device fail with ``unsupported attribute value``.

List-typed attributes (DRAListTypeAttributes: kinds ``ints``/``bools``/``strings``/``versions``)
are CEL lists — kept as tuples, so that a device's values stay hashable for the result caches —
of ints, bools, strings or parsed :class:`~app.cel.semver.Semver` values; one version in the list
that does not parse fails every selector on the device, like a scalar version does.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from ..k8s import Quantity
from .semver import SemverError, parse_semver
from .values import DefaultMap

__all__ = ["LIST_KINDS", "CelDevice", "device_error", "make_device", "split_name"]

_serial = itertools.count(1)


class CelDevice:
    """An immutable, pre-converted device (the CEL ``device`` variable).

    Field names are the CEL field names so the evaluator can read them with ``getattr``.
    ``error`` is set when the device cannot be evaluated at all (Kubernetes fails every
    selector on such a device).  ``memo`` is a small per-device cache of selector results
    keyed by selector serial; it is an internal optimisation and never changes results.
    ``engine_value`` caches an engine's own conversion of the device (see
    :mod:`app.cel.celpy_engine`); it is derived data, written at most once per value (a race
    between threads converts twice and keeps one of two equal results).
    """

    __slots__ = (
        "allowMultipleAllocations", "attributes", "capacity", "driver", "engine_value", "error", "memo", "serial",
    )

    driver: str
    allowMultipleAllocations: bool
    attributes: DefaultMap
    capacity: DefaultMap
    error: str | None
    memo: dict[int, Any]
    serial: int
    engine_value: Any

    def __init__(
        self, driver: str, allow_multiple: bool, attributes: DefaultMap, capacity: DefaultMap, error: str | None
    ) -> None:
        object.__setattr__(self, "driver", driver)
        object.__setattr__(self, "allowMultipleAllocations", allow_multiple)
        object.__setattr__(self, "attributes", attributes)
        object.__setattr__(self, "capacity", capacity)
        object.__setattr__(self, "error", error)
        object.__setattr__(self, "memo", {})
        object.__setattr__(self, "serial", next(_serial))
        object.__setattr__(self, "engine_value", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("CelDevice is immutable")

    def __repr__(self) -> str:
        return f"CelDevice(driver={self.driver!r}, attributes={dict(self.attributes)!r}, capacity={dict(self.capacity)!r})"


def split_name(name: str, driver: str) -> tuple[str, str]:
    """``parseQualifiedName``: ``dom/id`` → (dom, id); a bare id belongs to the driver's domain."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


_ATTRIBUTE_KINDS: dict[str, tuple[type, str]] = {
    "int": (int, "an int"), "bool": (bool, "a bool"), "string": (str, "a str"), "version": (str, "a str"),
}
LIST_KINDS: dict[str, str] = {"ints": "int", "bools": "bool", "strings": "string", "versions": "version"}
"""List-typed attribute kinds (the ``DeviceAttribute`` field names) → the kind of their elements."""


def _attribute_value(kind: str, value: object) -> object:
    element_kind = LIST_KINDS.get(kind)
    if element_kind is not None:
        if type(value) not in (list, tuple):
            raise ValueError(f"{kind} attribute needs a list, got {value!r}")
        return tuple(_attribute_value(element_kind, v) for v in value)  # type: ignore[attr-defined]
    expected = _ATTRIBUTE_KINDS.get(kind)
    if expected is None:
        raise ValueError(f"unknown attribute kind {kind!r}")
    if type(value) is not expected[0]:
        raise ValueError(f"{kind} attribute needs {expected[1]}, got {value!r}")
    return parse_semver(value) if kind == "version" else value  # type: ignore[arg-type]


def make_device(
    driver: str,
    allow_multiple_allocations: bool,
    attributes: Mapping[str, tuple[str | None, object]],
    capacity: Mapping[str, Quantity],
) -> CelDevice:
    """Build the CEL view of one device (see module docstring for the Kubernetes rules)."""
    attrs = DefaultMap()
    error: str | None = None
    for name, (kind, value) in attributes.items():
        domain, ident = split_name(name, driver)
        if kind is None:
            error = error or f"attribute {name}: unsupported attribute value"
            continue
        try:
            converted = _attribute_value(kind, value)
        except SemverError as e:
            error = error or f"attribute {name}: {e}"
            continue
        attrs.setdefault(domain, {})[ident] = converted
    caps = DefaultMap()
    for name, q in capacity.items():
        domain, ident = split_name(name, driver)
        caps.setdefault(domain, {})[ident] = q
    return CelDevice(driver, bool(allow_multiple_allocations), attrs, caps, error)


def device_error(attributes: Mapping[str, tuple[str | None, object]]) -> str | None:
    """The ``error`` :func:`make_device` gives the same attributes, without building the device.

    Why: an inventory needs to know, for every device, whether selectors can be evaluated on it
    at all, but needs the converted device only for the few devices it evaluates (one per
    profile); building all of them up front costs ~1 KB per device.
    """
    for name, (kind, value) in attributes.items():
        if kind is None:
            return f"attribute {name}: unsupported attribute value"
        if kind == "version":
            versions: tuple[object, ...] = (value,)
        elif kind == "versions" and isinstance(value, (list, tuple)):
            versions = tuple(value)
        else:
            continue
        for version in versions:
            if isinstance(version, str):
                try:
                    parse_semver(version)
                except SemverError as e:
                    return f"attribute {name}: {e}"
    return None
