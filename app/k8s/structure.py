"""The structural pass: from a document's object to a typed model (apiVersion, strict decoding, defaulting).

Why a separate step: structural problems (a typo'd field, a string where an int belongs, a
malformed quantity) make the API server refuse the object before any validation rule runs,
so they are reported first, with the path of the offending field, and the object is then
checked as far as its well-formed parts allow (unknown fields are dropped and the rest is
decoded again, so one typo does not hide every other finding).

Defaulting mirrors ``pkg/apis/resource/v1/defaults.go``: ``allocationMode`` "" → ``ExactCount``,
``count`` 0 → 1 for ``ExactCount`` and toleration ``operator`` "" → ``Equal``.  It runs on a copy;
the caller's object is never modified (the mutating webhook diffs against the original).  A v1
ResourceSlice has no defaulting, so it is validated straight from the caller's object and copied
only when something is about to be removed from it (an unknown field, a gated field) — slices are
almost every object of an inventory, and almost none of them changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from .features import DEFAULT_TARGET, Target
from .field import ErrorType, FieldError, Path
from .gated import DroppedField, drop_disabled_fields, has_disabled_fields, pop_present_fields, present_fields
from .models import (
    KIND_MODELS,
    DeviceClass,
    DeviceTaintRule,
    DRAObject,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from .tree import deep_copy
from .versions import (
    V1BETA1,
    absent_fields,
    claim_requests,
    default_request,
    deprecation_warning,
    served_versions,
    unsupported_version_message,
    v1beta1_defaults,
    v1beta1_to_v1,
)

__all__ = ["DEFAULT_TARGET", "Structural", "apply_defaults", "loc_to_path", "structural_pass", "to_internal_shape"]

DRA_MODEL_TYPES = (DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate, DeviceTaintRule)
_V1BETA1_MODELS: dict[str, type[BaseModel]] | None = None


def _v1beta1_models() -> dict[str, type[BaseModel]]:
    """The v1beta1 models by kind, imported on the first v1beta1 object: building their pydantic
    classes is ~15 ms of every start-up, and most inputs are v1 only."""
    global _V1BETA1_MODELS
    if _V1BETA1_MODELS is None:
        from .v1beta1 import V1Beta1ResourceClaim, V1Beta1ResourceClaimTemplate, V1Beta1ResourceSlice

        _V1BETA1_MODELS = {
            "ResourceSlice": V1Beta1ResourceSlice,
            "ResourceClaim": V1Beta1ResourceClaim,
            "ResourceClaimTemplate": V1Beta1ResourceClaimTemplate,
        }
    return _V1BETA1_MODELS

# v1 kinds that ``apply_defaults`` leaves as they are (its copy would be pure cost)
_UNDEFAULTED_KINDS = frozenset({"ResourceSlice"})

_TYPE_WORDS = {
    "string_type": "string",
    "int_type": "integer",
    "int_parsing": "integer",
    "int_from_float": "integer",
    "bool_type": "boolean",
    "bool_parsing": "boolean",
    "list_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
    "float_type": "number",
}


@dataclass
class Structural:
    """The typed object (or ``None`` when it could not be built) and what stood in the way."""

    model: DRAObject | None
    unknown_fields: list[Path] = field(default_factory=list)
    type_errors: list[FieldError] = field(default_factory=list)
    api_version_error: str | None = None
    api_version: str = ""
    deprecation: str | None = None  # the API server's deprecation warning for a beta version
    dropped: list[DroppedField] = field(default_factory=list)  # v1-shaped paths
    not_in_version: dict[str, str] = field(default_factory=dict)
    """Unknown fields that are unknown only to the target's Kubernetes minor (path → "added in
    Kubernetes 1.37"…): the field exists in another supported minor (:func:`~app.k8s.versions.absent_fields`)."""


def apply_defaults(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """The v1 defaulting the API server applies before validation, on a deep copy (made without
    recursion: opaque parameters may nest 10,000 levels)."""
    out: dict[str, Any] = deep_copy(obj)
    _default_in_place(kind, out)
    return out


def _defaulted_view(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """:func:`apply_defaults` without the deep copy: only the containers defaulting writes to —
    the object, its spec, ``devices``, the request list, each request, its ``exactly`` and
    ``firstAvailable`` entries and their toleration lists — are new; everything else (metadata,
    opaque configuration, selectors) is shared with ``obj``.  The caller must deep-copy before
    changing anything else (:func:`structural_pass` does: its ``owned`` flag stays false).

    Why: on the webhook's path the deep copy of every claim was a tenth of a warm review."""
    out = dict(obj)
    spec: Any = out.get("spec")
    if kind == "ResourceClaimTemplate" and isinstance(spec, dict):
        outer = out["spec"] = dict(spec)
        inner = outer.get("spec")
        spec = outer["spec"] = dict(inner) if isinstance(inner, dict) else inner
    elif kind == "ResourceClaim" and isinstance(spec, dict):
        spec = out["spec"] = dict(spec)
    else:
        return out
    if not isinstance(spec, dict) or not isinstance(spec.get("devices"), dict):
        return out
    devices = spec["devices"] = dict(spec["devices"])
    if not isinstance(devices.get("requests"), list):
        return out
    requests = devices["requests"] = [dict(r) if isinstance(r, dict) else r for r in devices["requests"]]
    for request in requests:
        if not isinstance(request, dict):
            continue
        if isinstance(request.get("exactly"), dict):
            request["exactly"] = _fresh_request(request["exactly"])
        if isinstance(request.get("firstAvailable"), list):
            request["firstAvailable"] = [_fresh_request(sub) if isinstance(sub, dict) else sub
                                         for sub in request["firstAvailable"]]
    _default_in_place(kind, out)
    return out


def _fresh_request(req: dict[str, Any]) -> dict[str, Any]:
    out = dict(req)
    if isinstance(out.get("tolerations"), list):
        out["tolerations"] = [dict(t) if isinstance(t, dict) else t for t in out["tolerations"]]
    return out


def _default_in_place(kind: str, out: dict[str, Any]) -> None:
    for request in claim_requests(kind, out):
        exactly = request.get("exactly")
        if isinstance(exactly, dict):
            default_request(exactly)
        subs = request.get("firstAvailable")
        for sub in subs if isinstance(subs, list) else []:
            if isinstance(sub, dict):
                default_request(sub)


# ---------------------------------------------------------------------------- loc → Path
def _unwrap(tp: Any) -> Any:
    """Strip Optional/Annotated wrappers to the type that shapes the JSON."""
    while True:
        origin = get_origin(tp)
        if origin in (Union, UnionType):
            args = [a for a in get_args(tp) if a is not NoneType]
            if len(args) != 1:
                return tp
            tp = args[0]
            continue
        if origin is not None and hasattr(tp, "__metadata__"):
            tp = get_args(tp)[0]
            continue
        return tp


def _field_type(model: type[BaseModel], json_name: str) -> Any:
    for name, info in model.model_fields.items():
        if info.alias == json_name or (info.alias is None and name == json_name):
            return info.annotation
    return None


def loc_to_path(model: type[BaseModel], loc: Iterable[str | int], base: Path | None = None) -> tuple[Path, list[str | int]]:
    """Turn a pydantic error location into a Kubernetes field path and the raw segments.

    Struct fields become ``.name``, list indices ``[i]`` and map keys ``[key]`` — which of the
    two a string is depends on the schema, so the model is walked alongside the location.
    """
    path = base or Path()
    raw: list[str | int] = []
    current: Any = model
    for part in loc:
        tp = _unwrap(current)
        origin = get_origin(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel) and isinstance(part, str):
            path = path.child(part)
            current = _field_type(tp, part)
        elif origin is dict and isinstance(part, str):
            path = path.key(part)
            current = get_args(tp)[1] if get_args(tp) else Any
        elif origin is list and isinstance(part, int):
            path = path.index(part)
            current = get_args(tp)[0] if get_args(tp) else Any
        elif isinstance(part, int):
            path = path.index(part)
            current = Any
        else:
            # validator-function wrappers and the like add non-field segments; skip them
            if isinstance(part, str) and ("[" in part or part.startswith("function")):
                continue
            path = path.child(str(part))
            current = Any
        raw.append(part)
    return path, raw


# ---------------------------------------------------------------------------- decode
def _versioned_model(kind: str, api_version: str) -> type[BaseModel]:
    if api_version == V1BETA1 and kind != "DeviceTaintRule":
        return _v1beta1_models().get(kind, KIND_MODELS[kind])
    return KIND_MODELS[kind]


def to_internal_shape(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """Defaulted v1-shaped copy of a raw object of any served version (best effort, no checks).

    Used for an UPDATE's old object, whose only role is the "in use" ratchet of gated fields.
    """
    api_version = obj.get("apiVersion")
    if api_version == V1BETA1:
        return v1beta1_to_v1(kind, v1beta1_defaults(kind, obj))
    return apply_defaults(kind, obj)


def structural_pass(
    kind: str,
    obj: dict[str, Any],
    *,
    target: Target = DEFAULT_TARGET,
    create: bool = True,
    old: dict[str, Any] | None = None,
) -> Structural:
    """The structural pass of one object of a checked kind, as kube-apiserver decodes it before validating.

    Strict decoding against the schema of the object's own version (unknown fields and JSON
    types, at versioned paths), that version's defaulting, conversion to the v1 shape, then
    ``PrepareForCreate``/``PrepareForUpdate``: gated fields whose gate is off at ``target`` are
    dropped (unless ``old``, v1-shaped, already uses them) and, on create, a claim's ``status``
    is cleared.  The returned model is what validation sees.
    """
    api_version = obj.get("apiVersion")
    served = served_versions(kind, target.version)
    if api_version not in served or not isinstance(api_version, str):
        return Structural(model=None, api_version_error=unsupported_version_message(api_version, kind, served,
                                                                                  target.version))
    versioned_cls = _versioned_model(kind, api_version)
    # ``data`` is ours to change once ``owned``; until then it is the caller's object
    owned = True
    if api_version == V1BETA1:
        data = v1beta1_defaults(kind, obj)
    elif kind in _UNDEFAULTED_KINDS:
        data, owned = obj, False
    else:  # defaulted without a deep copy: what else changes below is copied first
        data, owned = _defaulted_view(kind, obj), False
    deprecation = deprecation_warning(api_version, kind)
    first: BaseModel | None = None
    try:
        first = versioned_cls.model_validate(data)
        errors: list[Any] = []
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    unknown: list[Path] = []
    type_errors: list[FieldError] = []
    unknown_raw: list[list[str | int]] = []
    absent = absent_fields(kind, api_version, target.version)
    not_in_version: dict[str, str] = {}
    if absent:
        for (_, why), found in zip(absent, present_fields(data, tuple(p for p, _ in absent)), strict=True):
            for path in found:
                unknown.append(path)
                not_in_version[str(path)] = why
    for err in errors:
        path, raw = loc_to_path(versioned_cls, err["loc"])
        if not_in_version and _under_any(str(path), not_in_version):
            continue  # inside a field this version does not have: that field is the one error
        if err["type"] == "extra_forbidden":
            unknown.append(path)
            unknown_raw.append(raw)
            continue
        type_errors.append(type_error(path, err))
    result = Structural(
        model=None, unknown_fields=unknown, type_errors=type_errors, api_version=api_version, deprecation=deprecation,
        not_in_version=not_in_version,
    )
    if type_errors:
        return result
    changed = bool(unknown_raw) or bool(not_in_version) or api_version == V1BETA1
    if unknown_raw or not_in_version:
        if not owned:
            data, owned = deep_copy(data), True
        for raw in unknown_raw:
            _delete(data, raw)
        if not_in_version:
            pop_present_fields(data, tuple(p for p, _ in absent))
    if api_version == V1BETA1:
        data = v1beta1_to_v1(kind, data)
    if owned or has_disabled_fields(kind, data, target, old):
        if not owned:
            data, owned = deep_copy(data), True
        result.dropped = drop_disabled_fields(kind, data, target, old)
    if create and kind in ("ResourceClaim", "DeviceTaintRule") and data.get("status") is not None:
        data.pop("status")  # (a top level of its own: _defaulted_view's or a copy)
        changed = True
    changed = changed or bool(result.dropped)
    if not changed and isinstance(first, DRA_MODEL_TYPES):
        result.model = first
        return result
    try:
        result.model = KIND_MODELS[kind].model_validate(data)
    except ValidationError:  # pragma: no cover - only unknown fields were wrong
        result.model = None
    return result


def _under_any(path: str, prefixes: dict[str, str]) -> bool:
    return any(path == p or path.startswith((p + ".", p + "[")) for p in prefixes)


def type_error(path: Path, err: Any) -> FieldError:
    """A pydantic type error as the API server's decoding error at ``path``."""
    err_type = err["type"]
    value = err.get("input")
    if err_type == "value_error":
        message = str(err.get("ctx", {}).get("error", err["msg"]))
        return FieldError(ErrorType.INVALID, path, _printable(value), message)
    wanted = _TYPE_WORDS.get(err_type)
    detail = f"must be of type {wanted}" if wanted else err["msg"]
    return FieldError(ErrorType.TYPE_INVALID, path, _printable(value), detail)


def _printable(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list):
        return "<array>"
    if isinstance(value, dict):
        return "<object>"
    return str(value)


def _delete(obj: Any, raw: list[str | int]) -> None:
    target = obj
    for part in raw[:-1]:
        try:
            target = target[part]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(target, dict) and isinstance(raw[-1], str):
        target.pop(raw[-1], None)
