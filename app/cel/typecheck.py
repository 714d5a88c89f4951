"""Static type check of a selector in the DRA environment, with cel-go's error wording.

Why: the API server type-checks every new selector, so draguard must reject the same
expressions with the same text (``undeclared reference to 'gpu' (in container '')``,
``found no matching overload for '_>_' applied to '(kubernetes.Quantity, int)'``,
``undefined field 'foo'``) and accept the rest.  The checker also resolves which overloads a
call can hit (used by the cost estimator) and namespaced functions such as ``sets.contains``.

The environment: one variable ``device`` of object type ``kubernetes.DRADevice`` with fields
``driver`` (string), ``allowMultipleAllocations`` (bool), ``attributes``
(``map(string, map(string, dyn))``) and ``capacity``
(``map(string, map(string, kubernetes.Quantity))``), plus :data:`app.cel.library.FUNCTIONS`.

Two environments differ by feature gate (Kubernetes' ``newCompiler``): without
DRAConsumableCapacity there is no ``allowMultipleAllocations`` field; without
DRAListTypeAttributes an attribute value has type ``any`` instead of ``dyn`` (so it cannot be the
range of a comprehension: ``.exists(...)`` on an attribute is a compile error) and ``includes`` is
not declared.  The API server checks a *new* expression in the environment of its gates; the
scheduler compiles *stored* expressions in the newest one (``dyn`` values, ``includes``), which is
the default here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import ast as A
from . import types as T
from .library import FUNCTIONS, UNSUPPORTED, Overload

__all__ = ["DEVICE_FIELDS", "Checked", "check"]

ATTRIBUTES_TYPE = T.map_of(T.STRING, T.map_of(T.STRING, T.DYN))
ATTRIBUTES_TYPE_WITHOUT_LISTS = T.map_of(T.STRING, T.map_of(T.STRING, T.ANY))
CAPACITY_TYPE = T.map_of(T.STRING, T.map_of(T.STRING, T.QUANTITY))
DEVICE_FIELDS: dict[str, T.CelType] = {
    "driver": T.STRING,
    "allowMultipleAllocations": T.BOOL,
    "attributes": ATTRIBUTES_TYPE,
    "capacity": CAPACITY_TYPE,
}
_TYPE_IDENTS = {"int": T.INT, "uint": T.UINT, "double": T.DOUBLE, "bool": T.BOOL, "string": T.STRING,
                "bytes": T.BYTES, "list": T.list_of(T.DYN), "map": T.map_of(T.DYN, T.DYN), "null_type": T.NULL,
                "type": T.type_of(T.DYN), "dyn": T.DYN}


@dataclass
class Checked:
    """Result of :func:`check`: node types, resolved overloads, and (offset, message) errors."""

    types: dict[int, T.CelType] = field(default_factory=dict)
    overloads: dict[int, list[Overload]] = field(default_factory=dict)
    errors: list[tuple[int, str]] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    """Functions Kubernetes has but draguard does not evaluate (a reason not to decide)."""


_ERROR = T.CelType("*error*")


# without the DRAConsumableCapacity gate the DRADevice type has no allowMultipleAllocations field
_DEVICE_FIELDS_WITHOUT_CONSUMABLE_CAPACITY = {k: v for k, v in DEVICE_FIELDS.items() if k != "allowMultipleAllocations"}
# functions only some environments declare, and the option that declares them
_GATED_FUNCTIONS = frozenset({"includes"})


def _device_fields(consumable_capacity: bool, list_type_attributes: bool) -> dict[str, T.CelType]:
    fields = dict(DEVICE_FIELDS if consumable_capacity else _DEVICE_FIELDS_WITHOUT_CONSUMABLE_CAPACITY)
    if not list_type_attributes:
        fields["attributes"] = ATTRIBUTES_TYPE_WITHOUT_LISTS
    return fields


class _Checker:
    def __init__(self, device_fields: dict[str, T.CelType], hidden: frozenset[str] = frozenset()) -> None:
        self.out = Checked()
        self.scopes: list[dict[str, T.CelType]] = [{"device": T.DEVICE}]
        self.device_fields = device_fields
        self.hidden = hidden
        """Library functions this environment does not declare (``includes`` without its gate)."""

    def err(self, pos: int, msg: str) -> T.CelType:
        self.out.errors.append((pos, msg))
        return _ERROR

    def lookup(self, name: str) -> T.CelType | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def check(self, e: A.Expr) -> T.CelType:
        t = self._check(e)
        self.out.types[e.id] = t
        return t

    def _check(self, e: A.Expr) -> T.CelType:
        if isinstance(e, A.Const):
            return {"int": T.INT, "uint": T.UINT, "double": T.DOUBLE, "string": T.STRING, "bytes": T.BYTES,
                    "bool": T.BOOL, "null": T.NULL}[e.kind]
        if isinstance(e, A.Ident):
            t = self.lookup(e.name)
            if t is not None:
                return t
            if e.name in _TYPE_IDENTS:
                return T.type_of(_TYPE_IDENTS[e.name])
            return self.err(e.pos, f"undeclared reference to '{e.name}' (in container '')")
        if isinstance(e, A.Select):
            return self.select(e)
        if isinstance(e, A.Call):
            return self.call(e)
        if isinstance(e, A.ListLit):
            return T.list_of(self.joined([self.check(x) for x in e.elems], [x.pos for x in e.elems]))
        if isinstance(e, A.MapLit):
            kt = self.joined([self.check(k) for k, _ in e.entries], [k.pos for k, _ in e.entries])
            vt = self.joined([self.check(v) for _, v in e.entries], [v.pos for _, v in e.entries])
            for k, _ in e.entries:
                t = self.out.types[k.id]
                if t not in (T.STRING, T.INT, T.UINT, T.BOOL, T.DYN, T.ANY, _ERROR):
                    self.err(k.pos, f"unsupported map key type: {t}")
            return T.map_of(kt, vt)
        if isinstance(e, A.Comp):
            return self.comprehension(e)
        if isinstance(e, A.Bind):
            init = self.check(e.init)
            self.scopes.append({e.var: init})
            try:
                return self.check(e.body)
            finally:
                self.scopes.pop()
        raise AssertionError(f"unknown node {e!r}")  # pragma: no cover

    def joined(self, ts: list[T.CelType], positions: list[int]) -> T.CelType:
        """Element type of an aggregate literal; mixed types are an error (HomogeneousAggregateLiterals)."""
        first: T.CelType | None = None
        for t, pos in zip(ts, positions, strict=True):
            if T.is_dyn(t) or t == _ERROR:
                continue
            if first is None:
                first = t
            elif not T.is_assignable(first, t, {}) and not T.is_assignable(t, first, {}):
                self.err(pos, f"expected type '{first}' but found '{t}'")
        if first is None:
            return T.DYN
        return first if all(t == first for t in ts) else T.DYN

    def select(self, e: A.Select) -> T.CelType:
        operand = self.check(e.operand)
        if operand == _ERROR:
            return _ERROR
        if operand == T.DEVICE:
            ft = self.device_fields.get(e.field)
            if ft is None:
                return self.err(e.pos, f"undefined field '{e.field}'")
            return T.BOOL if e.test_only else ft
        if operand.name == "map":
            if not T.is_assignable(operand.params[0], T.STRING, {}):
                return self.err(e.pos, f"type '{operand}' does not support field selection")
            return T.BOOL if e.test_only else operand.params[1]
        if T.is_dyn(operand):
            return T.BOOL if e.test_only else T.DYN
        return self.err(e.pos, f"type '{operand}' does not support field selection")

    def call(self, e: A.Call) -> T.CelType:
        # Namespaced global functions (sets.contains): cel-go resolves `a.b(...)` to the
        # function "a.b" when `a` is not a variable.
        if isinstance(e.target, A.Ident) and self.lookup(e.target.name) is None:
            qualified = f"{e.target.name}.{e.fn}"
            if qualified in FUNCTIONS or qualified in UNSUPPORTED:
                e.fn, e.target = qualified, None
        if e.fn in ("_&&_", "_||_"):
            return self.logical(e)
        if e.fn == "_?_:_":
            return self.conditional(e)
        target_t = self.check(e.target) if e.target is not None else None
        arg_ts = [self.check(a) for a in e.args]
        fn = FUNCTIONS.get(e.fn) if e.fn not in self.hidden else None
        if fn is None:
            if e.fn in UNSUPPORTED:
                self.out.unsupported.append(e.fn)
                return self.err(e.pos, f"function '{e.fn}' of the Kubernetes CEL environment is not supported by draguard")
            return self.err(e.pos, f"undeclared reference to '{e.fn}' (in container '')")
        if _ERROR in arg_ts or target_t == _ERROR:
            return _ERROR
        all_ts = ([target_t] if target_t is not None else []) + arg_ts
        member = target_t is not None
        result: T.CelType | None = None
        matched: list[Overload] = []
        for ov in fn.overloads:
            if ov.member != member or len(ov.params) != len(all_ts):
                continue
            binding: dict[str, T.CelType] = {}
            if all(T.is_assignable(p, a, binding) for p, a in zip(ov.params, all_ts, strict=True)):
                matched.append(ov)
                rt = T.substitute(ov.result, binding)
                result = rt if result is None or result == rt else T.DYN
        if result is None:
            sig = (f"{target_t}." if target_t is not None else "") + "(" + ", ".join(str(t) for t in arg_ts) + ")"
            return self.err(e.pos, f"found no matching overload for '{e.fn}' applied to '{sig}'")
        self.out.overloads[e.id] = matched
        return result

    def logical(self, e: A.Call) -> T.CelType:
        ts = [self.check(a) for a in e.args]
        if _ERROR in ts:
            return _ERROR
        if all(t == T.BOOL or T.is_dyn(t) for t in ts):
            return T.BOOL
        return self.err(e.pos, f"found no matching overload for '{e.fn}' applied to '({', '.join(str(t) for t in ts)})'")

    def conditional(self, e: A.Call) -> T.CelType:
        ts = [self.check(a) for a in e.args]
        if _ERROR in ts:
            return _ERROR
        cond, a, b = ts
        binding: dict[str, T.CelType] = {}
        if (cond == T.BOOL or T.is_dyn(cond)) and T.is_assignable(T.param("A"), a, binding) and T.is_assignable(
            T.param("A"), b, binding
        ):
            return a if a == b else T.DYN
        return self.err(e.pos, f"found no matching overload for '_?_:_' applied to '({cond}, {a}, {b})'")

    def comprehension(self, e: A.Comp) -> T.CelType:
        rng = self.check(e.rng)
        if rng == _ERROR:
            return _ERROR
        if rng.name == "list":
            v1, v2 = (T.INT, rng.params[0]) if e.var2 else (rng.params[0], T.DYN)
        elif rng.name == "map":
            v1, v2 = rng.params[0], rng.params[1]
        elif rng == T.DYN:
            v1, v2 = T.DYN, T.DYN
        else:
            return self.err(e.rng.pos, f"expression of type '{rng}' cannot be range of a comprehension "
                                       "(must be list, map, or dynamic)")
        scope = {e.var: v1}
        if e.var2:
            scope[e.var2] = v2
        self.scopes.append(scope)
        try:
            arg_ts = [self.check(a) for a in e.args]
        finally:
            self.scopes.pop()
        if _ERROR in arg_ts:
            return _ERROR
        k = e.kind
        if k in ("all", "exists", "exists_one", "all2", "exists2", "exists_one2") or (
            k in ("map", "transformList", "transformMap") and len(e.args) == 2
        ) or k == "filter":
            pred = arg_ts[0]
            if pred != T.BOOL and not T.is_dyn(pred):
                fn = "_?_:_" if k in ("exists_one", "exists_one2", "map", "filter", "transformList", "transformMap") else "_&&_"
                sig = f"(bool, {pred})" if fn == "_&&_" else f"({pred}, list(dyn), list(dyn))"
                return self.err(e.args[0].pos, f"found no matching overload for '{fn}' applied to '{sig}'")
        if k in ("all", "exists", "exists_one", "all2", "exists2", "exists_one2"):
            return T.BOOL
        if k == "filter":
            return T.list_of(v1)
        if k in ("map", "transformList"):
            return T.list_of(arg_ts[-1])
        return T.map_of(v1, arg_ts[-1])  # transformMap


def check(
    root: A.Expr, *, consumable_capacity: bool = True, list_type_attributes: bool = True, includes: bool | None = None
) -> Checked:
    """Type-check ``root``; ``consumable_capacity=False`` / ``list_type_attributes=False`` are the
    environments without those gates (see the module docstring).  ``includes`` says whether that
    function is declared; by default where list-typed attributes are (the gate declares it in 1.36
    and 1.37; from 1.38 the API server's base environment has it for every new expression)."""
    declared = list_type_attributes if includes is None else includes
    c = _Checker(_device_fields(consumable_capacity, list_type_attributes), frozenset() if declared else _GATED_FUNCTIONS)
    try:
        c.check(root)
    except RecursionError:
        c.out.errors.append((root.pos, "expression recursion limit exceeded"))
    return c.out
