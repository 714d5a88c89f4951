"""Served ``resource.k8s.io`` versions and their conversion to the v1 shape draguard validates.

Why: Kubernetes 1.36 still serves ``v1beta1`` and ``v1beta2`` (deprecated, off by default,
``--runtime-config``), and clusters before 1.34 have only the betas — NVIDIA's, AMD's and kwok's
demos are v1beta1.  The API server decodes a versioned object strictly, defaults it *in that
version*, converts it to its internal type (which has the v1 shape) and validates that.  So:

* unknown fields and type errors carry the **versioned** path (``spec.devices[0].basic.x``);
* validation errors carry the **internal (v1)** path (``spec.devices[0].attributes``,
  ``spec.devices.requests[0].exactly.deviceClassName``) — checked on a real 1.36 API server;
* every beta object gets the API server's deprecation warning (``Deprecated``, info).

Conversion follows ``pkg/apis/resource/v1beta1/conversion.go``: a device's ``basic`` fields
move up; a flat request becomes ``exactly`` when any of its ``exactly`` fields is set (even
together with ``firstAvailable`` — validation then says "multiple fields are set").  v1beta1
defaulting (``SetDefaults_DeviceRequest``) only fills ``allocationMode``/``count`` when
``deviceClassName`` is set.  ``v1beta2`` has the v1 shape and v1's defaulting.
"""

from __future__ import annotations

import functools
from typing import Any

from .features import minor_key
from .field import Path
from .tree import deep_copy

__all__ = [
    "API_GROUP",
    "SERVED_VERSIONS",
    "V1",
    "V1ALPHA3",
    "V1BETA1",
    "V1BETA2",
    "absent_fields",
    "claim_requests",
    "default_request",
    "deprecation_warning",
    "served_versions",
    "source_path",
    "unsupported_version_message",
    "v1beta1_defaults",
    "v1beta1_to_v1",
]

API_GROUP = "resource.k8s.io"
V1 = f"{API_GROUP}/v1"
V1BETA1 = f"{API_GROUP}/v1beta1"
V1BETA2 = f"{API_GROUP}/v1beta2"
SERVED_VERSIONS = (V1, V1BETA2, V1BETA1)
V1ALPHA3 = f"{API_GROUP}/v1alpha3"
_KIND_VERSIONS_ALL: dict[str, tuple[str, ...]] = {"DeviceTaintRule": (V1, V1BETA2, V1ALPHA3)}

# the API server's own warning text (the type's prerelease lifecycle), the same for 1.34–1.36
_DEPRECATED = {
    V1BETA1: ("v1.35", "v1.38"),
    V1BETA2: ("v1.36", "v1.39"),
}

# v1beta1 request fields that v1 keeps under ``exactly`` (conversion.go: hasAnyMainRequestFieldsSet)
EXACT_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity",
                "derivedAttributes")


def deprecation_warning(api_version: str, kind: str) -> str | None:
    """``resource.k8s.io/v1beta1 ResourceClaim is deprecated in v1.35+, unavailable in v1.38+``.

    DeviceTaintRule's v1beta2 came in 1.36 (deprecated from 1.39 on): no warning up to 1.38."""
    if kind == "DeviceTaintRule":
        return None
    when = _DEPRECATED.get(api_version)
    if when is None:
        return None
    return f"{api_version} {kind} is deprecated in {when[0]}+, unavailable in {when[1]}+"


def unsupported_version_message(api_version: object, kind: str, served_in: tuple[str, ...] = SERVED_VERSIONS,
                                version: str = "") -> str:
    """What to say about an apiVersion the API server does not serve for ``kind``."""
    served = ", ".join(served_in)
    if version and served_in and isinstance(api_version, str) and api_version in _KIND_VERSIONS_ALL.get(kind, ()):
        return f"apiVersion {api_version!r}: Kubernetes {version} does not serve {kind} in it; use one of: {served}"
    if api_version is None or api_version == "":
        return f"apiVersion is missing; {kind} is served as {served}"
    if not isinstance(api_version, str):
        return f"apiVersion must be a string such as {V1}; {kind} is served as {served}"
    if api_version.startswith(f"{API_GROUP}/v1alpha"):
        return (
            f"apiVersion {api_version!r}: {kind} is not served in {api_version} by Kubernetes 1.34 or later; "
            f"use one of: {served}"
        )
    return f"apiVersion {api_version!r} of {kind} is not supported; use one of: {served}"


# ---------------------------------------------------------------------------- defaulting
def v1beta1_defaults(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """v1beta1's own defaulting, on a deep copy (``pkg/apis/resource/v1beta1/defaults.go``)."""
    out: dict[str, Any] = deep_copy(obj)
    for request in claim_requests(kind, out):
        if isinstance(request.get("deviceClassName"), str) and request["deviceClassName"]:
            default_request(request)
        subs = request.get("firstAvailable")
        for sub in subs if isinstance(subs, list) else []:
            if isinstance(sub, dict):
                default_request(sub)
        _default_tolerations(request)
    return out


def default_request(req: dict[str, Any]) -> None:
    """One request's (or subrequest's) defaults, the same in every served version: ``allocationMode``
    "" → ``ExactCount``, then ``count`` 0 → 1, and toleration ``operator`` "" → ``Equal``."""
    if req.get("allocationMode") in (None, ""):
        req["allocationMode"] = "ExactCount"
    if req.get("allocationMode") == "ExactCount" and req.get("count") in (None, 0):
        req["count"] = 1
    _default_tolerations(req)


def _default_tolerations(req: dict[str, Any]) -> None:
    tolerations = req.get("tolerations")
    for tol in tolerations if isinstance(tolerations, list) else []:
        if isinstance(tol, dict) and tol.get("operator") in (None, ""):
            tol["operator"] = "Equal"


def _claim_spec(kind: str, obj: dict[str, Any]) -> Any:
    spec: Any = obj.get("spec")
    if kind == "ResourceClaimTemplate":
        spec = spec.get("spec") if isinstance(spec, dict) else None
    return spec if kind in ("ResourceClaim", "ResourceClaimTemplate") else None


def claim_requests(kind: str, obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The request mappings of a claim's (or a template's claim's) spec; empty for other kinds."""
    spec = _claim_spec(kind, obj)
    devices = spec.get("devices") if isinstance(spec, dict) else None
    requests = devices.get("requests") if isinstance(devices, dict) else None
    return [r for r in requests if isinstance(r, dict)] if isinstance(requests, list) else []


# ---------------------------------------------------------------------------- conversion
def v1beta1_to_v1(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """Convert a (strictly decoded, defaulted) v1beta1 object to the v1 shape, on a copy."""
    out: dict[str, Any] = deep_copy(obj)
    out["apiVersion"] = V1
    if kind == "ResourceSlice":
        spec = out.get("spec")
        devices = spec.get("devices") if isinstance(spec, dict) else None
        for i, device in enumerate(devices if isinstance(devices, list) else []):
            if isinstance(device, dict):
                devices[i] = _unwrap_basic(device)  # type: ignore[index]
    for request in claim_requests(kind, out):
        _nest_exactly(request)
    return out


def _unwrap_basic(device: dict[str, Any]) -> dict[str, Any]:
    converted: dict[str, Any] = {"name": device.get("name", "")}
    basic = device.get("basic")
    if isinstance(basic, dict):
        for key, value in basic.items():
            converted[key] = value
    return converted


def _nest_exactly(request: dict[str, Any]) -> None:
    flat = {key: request.pop(key) for key in EXACT_FIELDS if key in request}
    if _any_exact_field_set(flat):
        request["exactly"] = {k: v for k, v in flat.items() if v is not None}


def _any_exact_field_set(flat: dict[str, Any]) -> bool:
    """Go's ``hasAnyMainRequestFieldsSet``: zero values (and nil slices/pointers) do not count."""
    return bool(
        flat.get("deviceClassName")
        or flat.get("selectors") is not None
        or flat.get("allocationMode")
        or flat.get("count")
        or flat.get("adminAccess") is not None
        or flat.get("tolerations") is not None
        or flat.get("capacity") is not None
        or flat.get("derivedAttributes") is not None
    )


# ---------------------------------------------------------------------------- paths
def source_path(kind: str, api_version: str, path: Path) -> Path:
    """Where a v1-shaped path stands in the object as written in ``api_version``.

    Used for file positions and for naming dropped fields the way the user wrote them.
    """
    segs = path.segments
    if api_version != V1BETA1:
        return path
    names = [value for _, value in segs]
    if kind == "ResourceSlice" and len(segs) > 3 and names[:2] == ["spec", "devices"] and names[3] != "name":
        return Path((*segs[:3], ("field", "basic"), *segs[3:]))
    prefix = ["spec", "spec", "devices", "requests"] if kind == "ResourceClaimTemplate" else ["spec", "devices", "requests"]
    n = len(prefix)
    is_claim = kind in ("ResourceClaim", "ResourceClaimTemplate")
    if is_claim and names[:n] == prefix and len(segs) > n + 1 and names[n + 1] == "exactly":
        return Path((*segs[: n + 1], *segs[n + 2 :]))
    return path


# ---------------------------------------------------------------------------- fields per version
# Fields that exist only in some Kubernetes minors (``k8s.io/api`` ``resource/*/types.go`` of
# v0.36.3, v0.37.2 and v0.38.0-beta.0 diffed field by field).  Everything the pydantic models
# hold is the union of the supported minors; a field outside its minors is not in that API
# server's schema, so strict decoding rejects it ("unknown field") — unlike a field that exists
# but whose gate is off, which is dropped (:mod:`app.k8s.gated`).  Patterns are v1-shaped, ``[]``
# for every list item, ``{}`` for every map value; (pattern, first minor, last minor), None = open.
# Only the fields added or removed after 1.36 are listed: 1.34/1.35 keep treating 1.36's
# additions as gated fields whose gate does not exist there (dropped), as before.
_SLICE_FIELDS: tuple[tuple[str, str | None, str | None], ...] = (
    ("spec.partitionTypeAttribute", "1.37", None),
    ("spec.skipNodeOperations", "1.37", None),
    ("spec.devices.[].consumesCounters.[].compatibilityGroups", "1.37", None),
    ("spec.devices.[].nodeAllocatableResources", "1.37", None),
    ("spec.devices.[].nodeAllocatableResourceMappings", None, "1.36"),  # renamed in 1.37
)


def _claim_fields(base: str) -> tuple[tuple[str, str | None, str | None], ...]:
    return (
        (f"{base}.devices.requests.[].exactly.derivedAttributes", "1.37", None),
        (f"{base}.devices.requests.[].firstAvailable.[].derivedAttributes", "1.37", None),
    )


_VERSIONED_FIELDS: dict[str, tuple[tuple[str, str | None, str | None], ...]] = {
    "ResourceSlice": _SLICE_FIELDS,
    "ResourceClaim": (
        *_claim_fields("spec"),
        ("status.allocation.devices.results.[].skipNodeOperations", "1.37", None),
    ),
    "ResourceClaimTemplate": _claim_fields("spec.spec"),
    # tombstoned in 1.35 ("would depend on copying the device attributes into the allocation result")
    "DeviceTaintRule": (
        ("spec.deviceSelector.deviceClassName", None, "1.34"),
        ("spec.deviceSelector.selectors", None, "1.34"),
    ),
}




def _exists(version: str, first: str | None, last: str | None) -> bool:
    return (first is None or minor_key(version) >= minor_key(first)) and (last is None or minor_key(version) <= minor_key(last))


def _versioned_pattern(kind: str, api_version: str, pattern: str) -> str:
    """``pattern`` (v1-shaped) as written in ``api_version`` (v1beta1: ``basic``, flat requests)."""
    if api_version != V1BETA1:
        return pattern
    if kind == "ResourceSlice" and pattern.startswith("spec.devices.[]."):
        return "spec.devices.[].basic." + pattern.removeprefix("spec.devices.[].")
    return pattern.replace(".requests.[].exactly.", ".requests.[].")


@functools.cache  # pure, and asked for every object of a run: a few kinds × versions
def absent_fields(kind: str, api_version: str, version: str) -> tuple[tuple[str, str], ...]:
    """The fields of ``kind`` that the API server of Kubernetes ``version`` does not have, as
    (pattern in ``api_version``'s shape, why) — present in an object, each is an unknown field."""
    out: list[tuple[str, str]] = []
    for pattern, first, last in _VERSIONED_FIELDS.get(kind, ()):
        if _exists(version, first, last):
            continue
        if first is not None and minor_key(version) < minor_key(first):
            why = f"added in Kubernetes {first}"
        else:
            why = f"removed after Kubernetes {last}"
        out.append((_versioned_pattern(kind, api_version, pattern), why))
    return tuple(out)


# ---------------------------------------------------------------------------- other kinds' versions
_REMOVED = {V1BETA1: "1.38"}
"""A served version's first minor that no longer serves it (a real 1.38.0-beta.0 API server
answers 404 for resource.k8s.io/v1beta1; v1beta2 goes in 1.39, as its deprecation warning says)."""

_KIND_VERSIONS: dict[str, tuple[tuple[str, str], ...]] = {
    # (apiVersion, first minor serving it): v1alpha3 since 1.33 (alpha: only with --runtime-config,
    # accepted since the cluster may enable it), v1beta2 since 1.36, v1 since 1.37 (#138676)
    "DeviceTaintRule": ((V1, "1.37"), (V1BETA2, "1.36"), (V1ALPHA3, "1.33")),
}


@functools.cache  # pure: a few kinds × versions
def served_versions(kind: str, version: str) -> tuple[str, ...]:
    """The ``resource.k8s.io`` versions Kubernetes ``version`` serves ``kind`` in (newest first)."""
    table = _KIND_VERSIONS.get(kind)
    if table is None:  # the four DRA kinds: v1beta1 is no longer served from 1.38 (its deprecation said so)
        return tuple(api for api in SERVED_VERSIONS if api not in _REMOVED or minor_key(version) < minor_key(_REMOVED[api]))
    return tuple(api for api, since in table if minor_key(version) >= minor_key(since))
