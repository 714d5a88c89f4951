"""From a raw decoded object to a typed model: apiVersion check, defaulting, strict decoding.

Why a separate step: structural problems (a typo'd field, a string where an int belongs, a
malformed quantity) make the API server refuse the object before any validation rule runs,
so they are reported first, with the path of the offending field, and the object is then
checked as far as its well-formed parts allow (unknown fields are dropped and the rest is
decoded again, so one typo does not hide every other finding).

Defaulting mirrors ``pkg/apis/resource/v1/defaults.go``: ``allocationMode`` "" → ``ExactCount``,
``count`` 0 → 1 for ``ExactCount`` and toleration ``operator`` "" → ``Equal``.  It runs on a copy;
the caller's object is never modified (the mutating webhook diffs against the original).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from app.k8s.field import ErrorType, FieldError, Path
from app.k8s.models import DRA_API_VERSIONS, KIND_MODELS, DRAObject

__all__ = ["Structural", "apply_defaults", "decode_object", "loc_to_path"]

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


def apply_defaults(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """The v1 defaulting the API server applies before validation, on a copy.

    Only the dicts and lists on the way to a defaulted field are copied (the rest is shared with
    the caller's object, which is never modified): copying a 10,000-device ResourceSlice whole,
    only to default nothing in it, was a fifth of the time of loading an inventory.
    """
    if kind not in ("ResourceClaim", "ResourceClaimTemplate"):
        return obj
    out = dict(obj)
    holder: Any = out
    if kind == "ResourceClaimTemplate":
        template = holder.get("spec")
        if not isinstance(template, dict):
            return out
        holder["spec"] = holder = dict(template)
    spec = holder.get("spec")
    if not isinstance(spec, dict):
        return out
    holder["spec"] = spec = dict(spec)
    devices = spec.get("devices")
    if not isinstance(devices, dict):
        return out
    spec["devices"] = devices = dict(devices)
    requests = devices.get("requests")
    if not isinstance(requests, list):
        return out
    devices["requests"] = requests = [dict(r) if isinstance(r, dict) else r for r in requests]
    for request in requests:
        if not isinstance(request, dict):
            continue
        exactly = request.get("exactly")
        if isinstance(exactly, dict):
            request["exactly"] = _default_request(dict(exactly))
        subs = request.get("firstAvailable")
        if isinstance(subs, list):
            request["firstAvailable"] = [_default_request(dict(sub)) if isinstance(sub, dict) else sub for sub in subs]
    return out


def _default_request(req: dict[str, Any]) -> dict[str, Any]:
    """Default one (sub)request, a copy the caller made; its tolerations are copied here."""
    if req.get("allocationMode") in (None, ""):
        req["allocationMode"] = "ExactCount"
    if req.get("allocationMode") == "ExactCount" and req.get("count") in (None, 0):
        req["count"] = 1
    tolerations = req.get("tolerations")
    if isinstance(tolerations, list):
        req["tolerations"] = [
            {**tol, "operator": "Equal"} if isinstance(tol, dict) and tol.get("operator") in (None, "") else tol
            for tol in tolerations
        ]
    return req


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
def decode_object(kind: str, obj: dict[str, Any]) -> Structural:
    """Default and strictly decode one object of a checked kind."""
    model_cls = KIND_MODELS[kind]
    api_version = obj.get("apiVersion")
    if api_version not in DRA_API_VERSIONS:
        supported = ", ".join(DRA_API_VERSIONS)
        return Structural(
            model=None,
            api_version_error=f"apiVersion {api_version!r} of {kind} is not supported; use one of: {supported}",
        )
    data = apply_defaults(kind, obj)
    try:
        return Structural(model=model_cls.model_validate(data))
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    unknown: list[Path] = []
    type_errors: list[FieldError] = []
    unknown_raw: list[list[str | int]] = []
    for err in errors:
        path, raw = loc_to_path(model_cls, err["loc"])
        if err["type"] == "extra_forbidden":
            unknown.append(path)
            unknown_raw.append(raw)
            continue
        type_errors.append(_type_error(path, err))
    model: DRAObject | None = None
    if not type_errors:
        cleaned = data
        for raw in unknown_raw:
            cleaned = _without(cleaned, raw)
        try:
            model = model_cls.model_validate(cleaned)
        except ValidationError:  # pragma: no cover - only unknown fields were wrong
            model = None
    return Structural(model=model, unknown_fields=unknown, type_errors=type_errors)


def _type_error(path: Path, err: Any) -> FieldError:
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


def _without(obj: Any, raw: list[str | int]) -> Any:
    """``obj`` with the field at ``raw`` removed: the containers on the path are copied, the rest shared."""
    chain: list[Any] = [obj]
    for part in raw[:-1]:
        try:
            chain.append(chain[-1][part])
        except (KeyError, IndexError, TypeError):
            return obj
    last = chain[-1]
    if not (isinstance(last, dict) and isinstance(raw[-1], str)) or raw[-1] not in last:
        return obj
    child: Any = {k: v for k, v in last.items() if k != raw[-1]}
    for parent, part in zip(reversed(chain[:-1]), reversed(raw[:-1]), strict=True):
        copied: Any = dict(parent) if isinstance(parent, dict) else list(parent)
        copied[part] = child
        child = copied
    return child
