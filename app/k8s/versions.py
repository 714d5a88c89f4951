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

from typing import Any

from .field import Path
from .tree import deep_copy

__all__ = [
    "API_GROUP",
    "SERVED_VERSIONS",
    "V1",
    "V1BETA1",
    "V1BETA2",
    "claim_requests",
    "default_request",
    "deprecation_warning",
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

# the API server's own warning text (the type's prerelease lifecycle), the same for 1.34–1.36
_DEPRECATED = {
    V1BETA1: ("v1.35", "v1.38"),
    V1BETA2: ("v1.36", "v1.39"),
}

# v1beta1 request fields that v1 keeps under ``exactly`` (conversion.go: hasAnyMainRequestFieldsSet)
EXACT_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity")


def deprecation_warning(api_version: str, kind: str) -> str | None:
    """``resource.k8s.io/v1beta1 ResourceClaim is deprecated in v1.35+, unavailable in v1.38+``."""
    when = _DEPRECATED.get(api_version)
    if when is None:
        return None
    return f"{api_version} {kind} is deprecated in {when[0]}+, unavailable in {when[1]}+"


def unsupported_version_message(api_version: object, kind: str) -> str:
    """What to say about an apiVersion the API server does not serve for ``kind``."""
    served = ", ".join(SERVED_VERSIONS)
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
