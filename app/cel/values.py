"""Runtime value model: which Python objects stand for which CEL values, and CEL equality.

Why plain Python objects: the evaluator is a tree of closures, and the cheapest values to
pass around are ``bool``/``int``/``float``/``str``/``bytes``/``None``/``list``/``dict`` plus the
two Kubernetes types.  The only extra classes are :class:`UInt` (CEL keeps ``int`` and
``uint`` apart), :class:`TypeValue` (results of ``type(x)``) and :class:`DefaultMap`, the
map that answers an unknown key with an empty map, which Kubernetes uses for
``device.attributes`` / ``device.capacity`` domains.

Note ``bool`` is a subclass of ``int`` in Python, so type tests here always use ``type(x)``.
"""

from __future__ import annotations

import math
from typing import Any

from ..k8s import Quantity
from .errors import EvalError
from .semver import Semver

__all__ = [
    "EMPTY_MAP", "DefaultMap", "TypeValue", "UInt", "cel_equal", "go_type_name", "no_overload", "type_name",
]



class UInt(int):
    """A CEL ``uint``."""

    __slots__ = ()


class TypeValue:
    """A CEL type value (``type(1) == int``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TypeValue) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("type", self.name))

    def __repr__(self) -> str:
        return f"TypeValue({self.name})"


class DefaultMap(dict[str, Any]):
    """``map(string, map(string, V))`` whose missing keys read as an empty map (never stored)."""

    def __missing__(self, key: str) -> dict[str, Any]:
        return EMPTY_MAP


EMPTY_MAP: dict[str, Any] = {}


_TYPE_NAMES: dict[type, str] = {
    bool: "bool", int: "int", UInt: "uint", float: "double", str: "string", bytes: "bytes", type(None): "null_type",
    list: "list", tuple: "list", dict: "map", DefaultMap: "map", Quantity: "kubernetes.Quantity",
    Semver: "kubernetes.Semver", TypeValue: "type",
}
_GO_NAMES: dict[type, str] = {
    bool: "types.Bool", int: "types.Int", UInt: "types.Uint", float: "types.Double", str: "types.String",
    bytes: "types.Bytes", type(None): "types.Null", Quantity: "cel.Quantity", Semver: "cel.Semver",
    TypeValue: "types.Type",
}


def type_name(v: object) -> str:
    """The CEL type name of a runtime value (``type(v)`` and error messages)."""
    return _TYPE_NAMES.get(type(v), "dyn")


def go_type_name(v: object) -> str:
    """The Go type name cel-go puts in some runtime errors (``got 'types.Int', ...``)."""
    return _GO_NAMES.get(type(v), type_name(v))


def no_overload(fn: str, *args: object) -> EvalError:
    return EvalError(f"no such overload: {fn}(" + ", ".join(type_name(a) for a in args) + ")")


_NUMERIC = (int, UInt, float)


def cel_equal(a: object, b: object) -> bool:
    """CEL heterogeneous equality (cel-go ≥ 0.10): numbers compare by value across int/uint/double,
    other mismatched types are simply unequal, lists/maps compare element-wise."""
    ta = type(a)
    tb = type(b)
    if ta is tb or (ta in (dict, DefaultMap) and tb in (dict, DefaultMap)) or (ta in (list, tuple) and tb in (list, tuple)):
        if ta is list or ta is tuple:
            assert isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))
            return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
        if ta is dict or ta is DefaultMap:
            assert isinstance(a, dict) and isinstance(b, dict)
            if len(a) != len(b):
                return False
            return all(k in b and cel_equal(v, b[k]) for k, v in a.items())
        return a == b
    if ta in _NUMERIC and tb in _NUMERIC:
        assert isinstance(a, (int, float)) and isinstance(b, (int, float))
        if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
            return False
        return a == b
    return False
