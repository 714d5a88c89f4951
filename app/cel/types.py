"""CEL types as the checker sees them, printed exactly like cel-go's ``FormatCELType``.

Why: compile errors must quote types the way the API server does
(``map(string, map(string, dyn))``, ``kubernetes.Quantity``), and overload resolution needs
assignability with ``dyn`` and type parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ANY", "BOOL", "BYTES", "DEVICE", "DOUBLE", "DYN", "INT", "NULL", "QUANTITY", "SEMVER", "STRING", "UINT",
    "CelType", "is_assignable", "is_dyn", "list_of", "map_of", "param", "substitute", "type_of",
]


@dataclass(frozen=True, slots=True)
class CelType:
    """A CEL type for the checker: a name and its parameters (``list(int)``), or a type parameter."""

    name: str
    params: tuple[CelType, ...] = ()
    is_param: bool = False

    def __str__(self) -> str:
        if self.name == "type" and self.params:
            return f"type({self.params[0]})"
        if self.params:
            return f"{self.name}(" + ", ".join(str(p) for p in self.params) + ")"
        return self.name


INT = CelType("int")
UINT = CelType("uint")
DOUBLE = CelType("double")
BOOL = CelType("bool")
STRING = CelType("string")
BYTES = CelType("bytes")
NULL = CelType("null_type")
DYN = CelType("dyn")
ANY = CelType("any")
"""``google.protobuf.Any``, printed ``any``: the type of a device attribute value in an environment
without DRAListTypeAttributes.  cel-go treats it as ``dyn`` everywhere (assignability, field
selection, overloads) except as the range of a comprehension, which it refuses — so
``device.attributes["d"].ids.exists(...)`` compiles only with the gate."""
QUANTITY = CelType("kubernetes.Quantity")
SEMVER = CelType("kubernetes.Semver")
DEVICE = CelType("kubernetes.DRADevice")


def is_dyn(t: CelType) -> bool:
    """``dyn`` or ``any`` (cel-go's ``isDyn``): a type that switches checking off."""
    return t in (DYN, ANY)


def list_of(elem: CelType) -> CelType:
    return CelType("list", (elem,))


def map_of(key: CelType, value: CelType) -> CelType:
    return CelType("map", (key, value))


def type_of(t: CelType) -> CelType:
    return CelType("type", (t,))


def param(name: str) -> CelType:
    return CelType(name, is_param=True)


def substitute(t: CelType, binding: dict[str, CelType]) -> CelType:
    """Replace type parameters by their bindings (unbound ones become ``dyn``)."""
    if t.is_param:
        return binding.get(t.name, DYN)
    if t.params:
        return CelType(t.name, tuple(substitute(p, binding) for p in t.params))
    return t


def is_assignable(decl: CelType, actual: CelType, binding: dict[str, CelType]) -> bool:
    """Can a value of type ``actual`` be passed where ``decl`` is declared?  Binds parameters.

    ``dyn`` (and ``any``) is assignable both ways (it switches checking off), as in cel-go.
    """
    if decl.is_param:
        bound = binding.get(decl.name)
        if bound is None:
            binding[decl.name] = actual
            return True
        if bound == DYN and actual != DYN:
            binding[decl.name] = actual
            return True
        return is_assignable(bound, actual, binding)
    if is_dyn(decl) or is_dyn(actual):
        return True
    if decl.name != actual.name or len(decl.params) != len(actual.params):
        return False
    return all(is_assignable(d, a, binding) for d, a in zip(decl.params, actual.params, strict=True))
