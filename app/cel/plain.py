"""The plainest selectors answered without cel-python: comparisons of a device's driver,
``allowMultipleAllocations`` and attributes with literals, joined by ``&&``, ``||`` and ``!``.

Why: most selectors in the wild are ``device.driver == "gpu.example.com"`` or
``device.attributes["gpu.example.com"].model == "A100"`` (Kubernetes' own examples), and
cel-python — with pendulum and dateutil behind it — costs ~0.05–0.1 s to import, a large share
of a whole ``draguard lint`` run against an inventory.

Only what is certain is answered here: both sides of a comparison are present and of the same
type (``string``, ``int`` or ``bool``; ``version`` attributes, an attribute the device does not
have, a domain it does not publish, any other type or operator are left to the engine, which
gives the exact error).  A part that is not answered leaves the whole expression to the engine,
so no error absorption of ``&&``/``||`` is reproduced here.  The result of an answered
comparison is Go's and cel-python's (string, int and bool equality are the same everywhere).
"""

from __future__ import annotations

from collections.abc import Callable

from . import ast as A
from .device import CelDevice

__all__ = ["PlainProgram", "plain_program"]

PlainProgram = Callable[[CelDevice], bool | None]
"""A selector over one device: its value, or ``None`` when the engine must answer."""
_Value = Callable[[CelDevice], object]

_UNKNOWN = object()
_LITERAL_TYPES = {"string": str, "int": int, "bool": bool}


def plain_program(root: A.Expr) -> PlainProgram | None:
    """The selector as a :data:`PlainProgram`, or ``None`` when it is not one of the plain shapes."""
    return _boolean(root)


def _boolean(e: A.Expr) -> PlainProgram | None:
    if isinstance(e, A.Call) and e.target is None:
        if e.fn in ("_&&_", "_||_") and len(e.args) == 2:
            left, right = _boolean(e.args[0]), _boolean(e.args[1])
            if left is None or right is None:
                return None
            return _and(left, right) if e.fn == "_&&_" else _or(left, right)
        if e.fn == "!_" and len(e.args) == 1:
            inner = _boolean(e.args[0])
            return None if inner is None else _not(inner)
        if e.fn in ("_==_", "_!=_") and len(e.args) == 2:
            return _comparison(e.fn == "_==_", e.args[0], e.args[1])
        return None
    if _is_device_field(e, "allowMultipleAllocations"):
        return _allow_multiple
    return None


def _comparison(equal: bool, a: A.Expr, b: A.Expr) -> PlainProgram | None:
    if isinstance(a, A.Const):
        a, b = b, a
    if not isinstance(b, A.Const):
        return None
    literal_type = _LITERAL_TYPES.get(b.kind)
    value = _value(a)
    if literal_type is None or value is None or type(b.value) is not literal_type:
        return None
    literal = b.value

    def compare(device: CelDevice) -> bool | None:
        got = value(device)
        if type(got) is not literal_type:
            return None  # absent, another type (a version), or a type error: the engine's answer
        return (got == literal) is equal

    return compare


def _value(e: A.Expr) -> _Value | None:
    if _is_device_field(e, "driver"):
        return _driver
    if _is_device_field(e, "allowMultipleAllocations"):
        return _allow_multiple
    if (
        isinstance(e, A.Select) and not e.test_only and isinstance(e.operand, A.Call)
        and e.operand.fn == "_[_]" and e.operand.target is None and len(e.operand.args) == 2
        and _is_device_field(e.operand.args[0], "attributes")
        and isinstance(e.operand.args[1], A.Const) and e.operand.args[1].kind == "string"
        and isinstance(e.operand.args[1].value, str)
    ):
        domain, ident = e.operand.args[1].value, e.field

        def attribute(device: CelDevice) -> object:
            attributes = device.attributes.get(domain)  # .get: an unknown domain is not answered here
            return _UNKNOWN if attributes is None else attributes.get(ident, _UNKNOWN)

        return attribute
    return None


def _is_device_field(e: A.Expr, name: str) -> bool:
    return (isinstance(e, A.Select) and not e.test_only and e.field == name
            and isinstance(e.operand, A.Ident) and e.operand.name == "device")


def _driver(device: CelDevice) -> object:
    return device.driver


def _allow_multiple(device: CelDevice) -> bool | None:
    value = device.allowMultipleAllocations
    return value if type(value) is bool else None


def _and(left: PlainProgram, right: PlainProgram) -> PlainProgram:
    def both(device: CelDevice) -> bool | None:
        a, b = left(device), right(device)
        return None if a is None or b is None else a and b

    return both


def _or(left: PlainProgram, right: PlainProgram) -> PlainProgram:
    def either(device: CelDevice) -> bool | None:
        a, b = left(device), right(device)
        return None if a is None or b is None else a or b

    return either


def _not(inner: PlainProgram) -> PlainProgram:
    def negated(device: CelDevice) -> bool | None:
        a = inner(device)
        return None if a is None else not a

    return negated
