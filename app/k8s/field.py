"""Field paths and field errors, modelled on apimachinery's ``pkg/util/validation/field``.

Why: draguard promises Kubernetes parity — the same field path, the same error type and the
same rendered text the API server puts into ``details.causes``.  Validation functions take a
:class:`Path` for the part of the object they look at and *return* a list of
:class:`FieldError`; callers compose by concatenation.  Nothing here raises for invalid input.

Rendering rules (apimachinery ``errors.go``):

* ``<path>: <body>``; Invalid → ``Invalid value: <value>: <detail>`` where strings print with
  Go's ``%q`` and other values as JSON (``nil`` → ``null``);
* NotSupported → ``Unsupported value: <value>: supported values: "A", "B"``;
* TooLong → ``Too long: may not be more than <n> bytes``; TooMany →
  ``Too many: <n>: must have at most <m> items``; Duplicate → ``Duplicate value: <value>``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .golang import go_quote
from .tree import compact_json

__all__ = ["ErrorType", "FieldError", "Path", "render_value"]


class ErrorType(enum.Enum):
    """The cause types of ``metav1.CauseType``; ``.value`` is what goes into ``reason``."""

    REQUIRED = "FieldValueRequired"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    DUPLICATE = "FieldValueDuplicate"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    FORBIDDEN = "FieldValueForbidden"
    TYPE_INVALID = "FieldValueTypeInvalid"
    NOT_FOUND = "FieldValueNotFound"
    INTERNAL = "InternalError"

    @property
    def label(self) -> str:
        """The human word apimachinery prints for this type."""
        return _LABELS[self]


_LABELS = {
    ErrorType.REQUIRED: "Required value",
    ErrorType.INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TYPE_INVALID: "Invalid value",
    ErrorType.NOT_FOUND: "Not found",
    ErrorType.INTERNAL: "Internal error",
}


@dataclass(frozen=True, slots=True)
class Path:
    """An immutable field path such as ``spec.devices[0].capacity[memory].requestPolicy``.

    Segments are ``str`` (a child field, a map key) or ``int`` (a list index); map keys are
    kept apart from fields so they render as ``[key]``, unquoted, as Kubernetes does.
    """

    segments: tuple[tuple[str, str | int], ...] = ()

    @classmethod
    def root(cls, *names: str) -> Path:
        # one object, not one per name: ~40,000 roots in a 10,000-object lint (every object's
        # ``metadata`` and ``spec``)
        path = _new_path(cls)
        _set_segments(path, tuple([("field", name) for name in names]))
        return path

    # child, index and key make the new Path without the dataclass __init__ (see _new_path),
    # inline: ~400,000 calls in a 10,000-object lint, where a helper's frame was ~2 % of the run
    def child(self, name: str, *more: str) -> Path:
        segs = (*self.segments, ("field", name))
        for extra in more:
            segs = (*segs, ("field", extra))
        path = _new_path(Path)
        _set_segments(path, segs)
        return path

    def index(self, i: int) -> Path:
        path = _new_path(Path)
        _set_segments(path, (*self.segments, ("index", i)))
        return path

    def key(self, k: str) -> Path:
        path = _new_path(Path)
        _set_segments(path, (*self.segments, ("key", k)))
        return path

    def __str__(self) -> str:
        out: list[str] = []
        for kind, value in self.segments:
            if kind == "field":
                if out:
                    out.append(".")
                out.append(str(value))
            elif kind == "index":
                out.append(f"[{value}]")
            else:
                out.append(f"[{value}]")
        return "".join(out)

    def __repr__(self) -> str:
        return f"Path({str(self)!r})"

    def json_pointer_parts(self) -> list[str | int]:
        """The path as raw segments (fields, keys, indices) for locating it in a document."""
        return [value for _, value in self.segments]


_new_path = object.__new__
"""With :data:`_set_segments`, ``Path(segments)`` without the frozen dataclass ``__init__`` (a
Python call and ``object.__setattr__``): validation makes ~50 paths per object, one per field it
looks at, error or not, and that ``__init__`` was ~5 % of linting 10,000 objects."""
_set_segments = Path.__dict__["segments"].__set__  # the slot itself: frozen only forbids __setattr__


class Omitted:
    """A value apimachinery prints as ``"<value omitted>"`` (``field.OmitValueType``)."""


OMIT = Omitted()


def render_value(value: Any) -> str:
    """How apimachinery prints the bad value of an Invalid/Duplicate/NotSupported error."""
    if isinstance(value, Omitted):
        return '"<value omitted>"'
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if value is None:
        return "null"
    if hasattr(value, "__str__") and type(value).__name__ == "Quantity":
        return go_quote(str(value))
    try:
        return go_json(value)
    except (TypeError, ValueError):
        return go_quote(str(value))


def go_json(value: Any) -> str:
    """Go's ``json.Marshal``: UTF-8 kept, ``<``, ``>``, ``&``, U+2028/9 escaped, no spaces."""
    text = compact_json(value, default=str)  # no recursion: values may be deep user data
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def go_float(value: float) -> str:
    """Go's ``%v`` for a float64: the shortest digits, ``%e`` form below 1e-4 or from 1e+06 on."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    sign, digits, exp = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    assert isinstance(exp, int)
    exponent = len(digits) + exp - 1
    prefix = "-" if sign else ""
    if exponent < -4 or exponent >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    if exponent < 0:
        return f"{prefix}0.{'0' * (-exponent - 1)}{text}"
    whole = text[: exponent + 1].ljust(exponent + 1, "0")
    rest = text[exponent + 1 :]
    return f"{prefix}{whole}" + (f".{rest}" if rest else "")


@dataclass(frozen=True, slots=True)
class FieldError:
    """One field error: type, path, bad value and detail; renders like ``(*field.Error).Error``."""

    type: ErrorType
    path: Path
    value: Any = None
    detail: str = ""
    has_value: bool = True

    @property
    def field(self) -> str:
        return str(self.path)

    @property
    def reason(self) -> str:
        return self.type.value

    def body(self) -> str:
        """The text after ``<path>: `` — what the API server puts in a cause's ``message``."""
        t = self.type
        if t is ErrorType.REQUIRED:
            return "Required value" + (f": {self.detail}" if self.detail else "")
        if t is ErrorType.FORBIDDEN:
            return "Forbidden" + (f": {self.detail}" if self.detail else "")
        if t is ErrorType.INTERNAL:
            return f"Internal error: {self.detail}"
        if t is ErrorType.TOO_LONG:
            return "Too long: " + self.detail
        if t is ErrorType.TOO_MANY:
            return "Too many: " + self.detail
        if t is ErrorType.DUPLICATE:
            return f"Duplicate value: {render_value(self.value)}"
        text = f"{t.label}: {render_value(self.value)}" if self.has_value else t.label
        if self.detail:
            text += f": {self.detail}"
        return text

    def __str__(self) -> str:
        field = str(self.path)
        return f"{field}: {self.body()}" if field else self.body()




# ---------------------------------------------------------------------- constructors
def required(path: Path, detail: str = "") -> FieldError:
    return FieldError(ErrorType.REQUIRED, path, None, detail, has_value=False)


def invalid(path: Path, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.INVALID, path, value, detail)


def type_invalid(path: Path, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.TYPE_INVALID, path, value, detail)


def forbidden(path: Path, detail: str) -> FieldError:
    return FieldError(ErrorType.FORBIDDEN, path, None, detail, has_value=False)


def duplicate(path: Path, value: Any) -> FieldError:
    return FieldError(ErrorType.DUPLICATE, path, value, "")


def not_supported(path: Path, value: Any, supported: Sequence[str]) -> FieldError:
    detail = "supported values: " + ", ".join(go_quote(s) for s in supported) if supported else ""
    return FieldError(ErrorType.NOT_SUPPORTED, path, value, detail)


def too_long(path: Path, max_length: int) -> FieldError:
    unit = "byte" if max_length == 1 else "bytes"
    return FieldError(ErrorType.TOO_LONG, path, None, f"may not be more than {max_length} {unit}", False)


def too_many(path: Path, actual: int, max_items: int) -> FieldError:
    unit = "item" if max_items == 1 else "items"
    return FieldError(ErrorType.TOO_MANY, path, actual, f"{actual}: must have at most {max_items} {unit}")


def not_found(path: Path, value: Any) -> FieldError:
    """``field.NotFound``: ``Not found: "value"``."""
    return FieldError(ErrorType.NOT_FOUND, path, value, "")


def internal(path: Path, detail: str) -> FieldError:
    return FieldError(ErrorType.INTERNAL, path, None, detail, has_value=False)


def aggregate_texts(texts: Iterable[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()`` over rendered errors: one as is, several as
    ``[e1, e2]``, identical texts once, nothing as ``""``."""
    seen: list[str] = []
    for text in texts:
        if text not in seen:
            seen.append(text)
    if not seen:
        return ""
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def aggregate_message(errors: Iterable[FieldError]) -> str:
    """The aggregate of field errors, each rendered ``<path>: <body>`` (see :func:`aggregate_texts`)."""
    return aggregate_texts(str(e) for e in errors)
