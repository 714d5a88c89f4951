"""The default evaluation engine: cel-python's evaluator (``celpy.evaluation.Evaluator``).

What runs: cel-python's tree-walking interpreter over the Lark tree of cel-python's own grammar
(the tree :func:`app.cel.parser.parse_with_tree` returns), with draguard's Kubernetes function
library (:data:`app.cel.library.FUNCTIONS`) registered as cel-python functions in one shared,
read-only :class:`celpy.evaluation.Activation`, and the ``device`` variable converted to
``celtypes`` values.  The type checker, cost estimator and result caches run in front of it and
are engine-independent (:mod:`app.cel.selector`).

Where cel-python differs from cel-go, Kubernetes semantics win, and the fixes
live here — never in the callers:

* **value adapters** (:func:`to_py` / :func:`to_cel`): every registered function receives
  draguard's plain value model and its result is converted back to ``celtypes``.  That gives
  cross-type numeric comparisons (``1 < 1.5``), heterogeneous ``==`` (``"a" == 1`` is false),
  cel-go's messages (``no such key: model``, ``no such overload: …``) and the Kubernetes
  Quantity/Semver/strings/lists/sets libraries with one implementation shared with the
  type checker's declarations (:mod:`app.cel.library`).  Library failures come back as CEL error *values* (a
  :class:`celpy.evaluation.CELEvalError` subclass), so ``&&``/``||`` can absorb them; any
  other Python exception is carried past cel-python's ``except TypeError/ValueError``
  handlers (which would relabel it ``no such overload``) and re-raised, so :class:`~app.cel.CompiledSelector` reports it
  as an internal error instead of a wrong verdict;
* **an Evaluator subclass** (:class:`_K8sEvaluator`) that overrides only what cel-python gets
  wrong: left-to-right short-circuit ``&&``/``||``/``?:`` with cel-go's error absorption,
  field selection on maps (``no such key: <id>``), ``has()``, map literals (repeated keys),
  the comprehension macros (``all``/``exists``/``exists_one``/``existsOne``/``map``/
  ``filter``, which cel-python evaluates eagerly and treats error values as truthy),
  namespaced functions (``sets.contains``), type identifiers (``int``) and literals
  (pre-decoded once, with the parser's own unescaping).  Unknown attribute/capacity domains
  read as empty maps through :class:`_DefaultMapType`;
* **the runtime cost limit**: when the static estimate does not already prove the selector
  cheap, :class:`_CountingEvaluator` charges cel-go-like costs per visited node (1 per
  identifier/selection/index/call/operator, 10 per list literal, 30 per map literal, 3 per
  comprehension iteration — the units of cel-go's runtime cost, which the test oracle charges too) and stops with
  ``operation cancelled: actual cost limit exceeded`` past 1,000,000 (Kubernetes' runtime cost limit for a selector).

Constructs cel-python has no evaluation for, evaluated by the same subclass so that no second
engine is needed:

* ``cel.bind(v, init, body)`` (cel-python has no ``ext.Bindings``): ``init`` is evaluated once,
  before ``body``, in a scope where ``v`` names it — the same order and cost (10) as cel-go's
  comprehension-based expansion; an error value from ``init`` is the result;
* two-variable comprehensions (``m.all(k, v, …)``, ``exists``, ``existsOne``, ``transformList``,
  ``transformMap``; cel-python raises a raw ``ValueError``): the one-variable macro loop with
  (index, element) for lists and (key, value) for maps;
* leading-dot function calls (``.size(x)``; cel-python's ``dot_ident_arg`` is unimplemented):
  a call in the root namespace, like the plain call.

Not evaluated: trees nested deeper than :data:`MAX_CELPY_DEPTH` — cel-python's evaluator recurses
several Python frames per tree level and would exhaust the interpreter's recursion limit
(cel-python itself raises that limit process-wide in ``Environment()``; draguard never does).
:func:`unsupported_reason` says so at compile time and the selector becomes an ``unsupported``
compile failure: a ``SelectorNotChecked`` warning and ``SatisfiabilityUnknown``, never a rejection.

Caching and speed: a device is converted to ``celtypes`` lazily, on its first real evaluation,
and the conversion is kept on :attr:`CelDevice.engine_value`; selectors answered from the
projection/result caches never convert the device at all.  The Lark tree is simplified once
per selector (single-child precedence wrappers such as ``expr → conditionalor → … → member``
are dropped — cel-python's docs name AST transformation as the intended optimisation hook).

Thread safety: no ``celpy.Environment`` is ever created (its constructor calls
``sys.setrecursionlimit`` and its parser is a process-wide singleton), and
``CompiledRunner`` (module-global activation, not thread-safe) is not used.  A prepared
program is immutable; every evaluation builds its own evaluator objects, variables and cost
budget; the shared :class:`~celpy.evaluation.Activation` is only read (function lookup).
Concurrent evaluations of one selector are therefore safe; the only shared write is the
benign device-conversion cache.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import lark
from celpy import celtypes
from celpy.evaluation import Activation, CELEvalError, Evaluator, Result

from ..k8s import check_budget
from .celpy_shape import MAX_CELPY_DEPTH, unsupported_reason
from .celpy_shape import skip as _skip
from .cost import COST_LIMIT
from .device import CelDevice
from .errors import EvalError
from .library import FUNCTIONS
from .parser import read_literal
from .values import DefaultMap, TypeValue, UInt, go_type_name, no_overload, type_name

__all__ = [
    "MAX_CELPY_DEPTH", "CelpyProgram", "device_value", "prepare", "run", "to_cel", "to_py", "unsupported_reason",
]


BoolType = celtypes.BoolType
IntType = celtypes.IntType
UintType = celtypes.UintType
DoubleType = celtypes.DoubleType
StringType = celtypes.StringType
BytesType = celtypes.BytesType
ListType = celtypes.ListType
MapType = celtypes.MapType

TRUE = BoolType(True)
FALSE = BoolType(False)


# --------------------------------------------------------------------------- errors
class _KErr(CELEvalError):
    """A CEL error value with draguard's (cel-go) message; ``&&``/``||`` absorb it like any CELEvalError."""

    def __init__(self, message: str, missing_key: str | None = None) -> None:
        super().__init__(message, EvalError, (message,))
        self.message = message
        self.missing_key = missing_key


def _err(e: EvalError) -> _KErr:
    return _KErr(e.message, e.missing_key)


class _Escape(Exception):
    """A raw Python exception from a library function, carried past cel-python's handlers."""

    def __init__(self, original: Exception) -> None:
        super().__init__(original)
        self.original = original


class _CostExceeded(Exception):
    """Raised (not returned) so that no ``&&``/``||``/macro can absorb it."""


# --------------------------------------------------------------------------- values
class _DefaultMapType(MapType):
    """``device.attributes`` / ``device.capacity``: an unknown domain reads as an empty map."""

    def __missing__(self, key: Any) -> Any:
        return _EMPTY


_EMPTY = MapType()


class _DeviceMap(MapType):
    """The ``device`` variable; remembers its :class:`CelDevice` so library functions see the same object."""

    device: CelDevice


def _list_to_py(v: Any) -> list[Any]:
    return [to_py(x) for x in v]


def _map_to_py(v: Any) -> dict[Any, Any]:
    return {to_py(k): to_py(x) for k, x in v.items()}


def _default_map_to_py(v: Any) -> DefaultMap:
    return DefaultMap({to_py(k): to_py(x) for k, x in v.items()})


_TO_PY: dict[type, Callable[[Any], Any]] = {
    BoolType: bool, IntType: int, UintType: UInt, DoubleType: float, StringType: str, BytesType: bytes,
    ListType: _list_to_py, MapType: _map_to_py, _DefaultMapType: _default_map_to_py,
    _DeviceMap: lambda v: v.device,
}


def to_py(v: Any) -> Any:
    """``celtypes`` value → draguard's value model (Quantity, Semver, TypeValue, None pass through)."""
    f = _TO_PY.get(type(v))
    return v if f is None else f(v)


def _list_to_cel(v: Any) -> Any:
    return ListType([to_cel(x) for x in v])


def _map_to_cel(v: Any) -> Any:
    return MapType({to_cel(k): to_cel(x) for k, x in v.items()})


def _default_map_to_cel(v: Any) -> Any:
    return _DefaultMapType({to_cel(k): to_cel(x) for k, x in v.items()})


# The celtypes constructors re-validate (IntType builds a range-checking wrapper per call); the
# library has already range-checked every value, so the base-type constructors are enough.
_TO_CEL: dict[type, Callable[[Any], Any]] = {
    bool: lambda v: TRUE if v else FALSE, int: lambda v: int.__new__(IntType, v),
    UInt: lambda v: int.__new__(UintType, v), float: lambda v: float.__new__(DoubleType, v),
    str: lambda v: str.__new__(StringType, v), bytes: lambda v: bytes.__new__(BytesType, v),
    list: _list_to_cel, tuple: _list_to_cel, dict: _map_to_cel, DefaultMap: _default_map_to_cel,
    CelDevice: lambda v: device_value(v),
}


def to_cel(v: Any) -> Any:
    """draguard value → ``celtypes`` value (Quantity, Semver, TypeValue, None pass through)."""
    f = _TO_CEL.get(type(v))
    return v if f is None else f(v)


def device_value(d: CelDevice) -> Any:
    """The ``device`` variable for cel-python, converted on first use and cached on the device."""
    v = d.engine_value
    if v is None:
        s = StringType
        v = _DeviceMap({
            s("driver"): s(d.driver),
            s("allowMultipleAllocations"): TRUE if d.allowMultipleAllocations else FALSE,
            s("attributes"): _default_map_to_cel(d.attributes),
            s("capacity"): _default_map_to_cel(d.capacity),
        })
        v.device = d
        object.__setattr__(d, "engine_value", v)
    return v


# --------------------------------------------------------------------------- functions
def _wrap(name: str, impl: Callable[..., Any]) -> Callable[..., Any]:
    """Register ``impl`` (draguard value model, raises EvalError) as a cel-python function."""

    def fn(*args: Any) -> Any:
        for a in args:
            if isinstance(a, CELEvalError):
                return a  # strict: the first error argument is the result (cel-go order)
        try:
            return to_cel(impl(*[to_py(a) for a in args]))
        except EvalError as e:
            return _err(e)
        except (_Escape, _CostExceeded):
            raise
        except Exception as e:  # not TypeError/ValueError to cel-python: it would relabel them
            raise _Escape(e) from e

    fn.__name__ = name
    return fn


_getitem: Callable[[Any, Any], Any] = dict.__getitem__  # skips MapType's key check; keeps __missing__

_SAME_TYPE_EQ: dict[type, Callable[[Any, Any], bool]] = {
    StringType: str.__eq__, IntType: int.__eq__, BoolType: int.__eq__, UintType: int.__eq__,
}


def _fast_eq(slow: Callable[..., Any], negate: bool) -> Callable[..., Any]:
    def eq(a: Any, b: Any) -> Any:
        ta = type(a)
        if ta is type(b):
            f = _SAME_TYPE_EQ.get(ta)
            if f is not None:
                return TRUE if f(a, b) is not negate else FALSE
        return slow(a, b)

    return eq


def _fast_index(slow: Callable[..., Any]) -> Callable[..., Any]:
    def index(c: Any, k: Any) -> Any:
        tc = type(c)
        if (tc is MapType or tc is _DefaultMapType) and type(k) is StringType:
            try:
                return _getitem(c, k)
            except KeyError:
                return _KErr(f"no such key: {k}", str(k))
        return slow(c, k)

    return index


def _fast_in(slow: Callable[..., Any]) -> Callable[..., Any]:
    def contains(elem: Any, c: Any) -> Any:
        tc = type(c)
        if type(elem) is StringType and (tc is MapType or tc is _DefaultMapType):
            return TRUE if elem in c else FALSE
        return slow(elem, c)

    return contains


def _functions() -> dict[str, Callable[..., Any]]:
    out: dict[str, Callable[..., Any]] = {}
    for name, f in FUNCTIONS.items():
        celpy_name = "_in_" if name == "@in" else name  # cel-python's name for the `in` operator
        out[celpy_name] = _wrap(celpy_name, f.impl)
    out["_==_"] = _fast_eq(out["_==_"], negate=False)
    out["_!=_"] = _fast_eq(out["_!=_"], negate=True)
    out["_[_]"] = _fast_index(out["_[_]"])
    out["_in_"] = _fast_in(out["_in_"])
    return out


_FUNCS = _functions()
# One Activation for every evaluation, only ever read: ChainMap(draguard's functions, celpy's base).
_ACTIVATION = Activation(functions=_FUNCS)
_TYPE_IDENTS = frozenset({"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type",
                          "dyn"})


def _type_error(fn: str, v: Any) -> _KErr:
    return _err(no_overload(fn, to_py(v)))


# --------------------------------------------------------------------------- tree helpers
_BINARY = {
    "relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_", "relation_ge": "_>=_", "relation_eq": "_==_",
    "relation_ne": "_!=_", "relation_in": "_in_", "addition_add": "_+_", "addition_sub": "_-_",
    "multiplication_mul": "_*_", "multiplication_div": "_/_", "multiplication_mod": "_%_",
}
_ONE_VAR_MACROS = frozenset({"all", "exists", "exists_one", "existsOne", "map", "filter"})
_TWO_VAR_QUANTIFIERS = frozenset({"all", "exists", "exists_one", "existsOne"})
_TRANSFORMS = frozenset({"transformList", "transformMap"})
_BIND_COST = 10  # cel-go charges a cel.bind like a comprehension's accumulator set-up


def _macro_vars(name: str, nargs: int) -> int:
    """How many iteration variables the macro call ``name`` with ``nargs`` arguments has (0: not a macro).

    The same expansion rules as the parser's (:func:`app.cel.parser`), which already rejected
    macro calls whose variables are not simple names.
    """
    if (name in _ONE_VAR_MACROS and nargs == 2) or (name == "map" and nargs == 3):
        return 1
    if (name in _TWO_VAR_QUANTIFIERS and nargs == 3) or (name in _TRANSFORMS and nargs in (3, 4)):
        return 2
    return 0


def _collapse(t: lark.Tree[Any]) -> lark.Tree[Any]:
    t = _skip(t)
    return lark.Tree(t.data, [_collapse(c) if isinstance(c, lark.Tree) else c for c in t.children], t.meta)


def _ident_name(t: Any) -> str | None:
    """The identifier a (collapsed) subtree consists of, if it is a bare identifier."""
    t = _skip(t)
    if isinstance(t, lark.Tree) and t.data == "primary":
        c = t.children[0]
        if isinstance(c, lark.Tree) and c.data == "ident":
            return str(c.children[0])
    return None


def _node_cost(t: lark.Tree[Any]) -> int:
    """Runtime cost of visiting ``t`` (cel-go units, as the test oracle charges them)."""
    d = t.data
    if d in ("member_dot", "member_dot_arg", "member_index"):
        return 1
    if d in ("relation", "addition", "multiplication", "unary"):
        return 1 if len(t.children) == 2 else 0
    if d == "primary":
        c = t.children[0]
        cd = c.data if isinstance(c, lark.Tree) else ""
        return {"ident": 1, "dot_ident": 1, "ident_arg": 1, "list_lit": 10, "map_lit": 30}.get(cd, 0)
    return 0


# --------------------------------------------------------------------------- program
@dataclass(frozen=True, eq=False)
class CelpyProgram:
    """A selector prepared for cel-python: the simplified Lark tree plus per-node constants."""

    tree: lark.Tree[Any]
    counting: bool
    consts: dict[int, Any] = field(default_factory=dict)  # id(literal node) → celtypes value
    costs: dict[int, int] = field(default_factory=dict)  # id(node) → runtime cost (counting only)


def prepare(tree: lark.Tree[Any], counting: bool) -> CelpyProgram:
    collapsed = _collapse(tree)
    program = CelpyProgram(collapsed, counting)
    for node in collapsed.iter_subtrees():
        if node.data == "literal":
            program.consts[id(node)] = to_cel(read_literal(cast(lark.Token, node.children[0])))
        if counting:
            cost = _node_cost(node)
            if cost:
                program.costs[id(node)] = cost
    return program


def run(program: CelpyProgram, device: CelDevice) -> Any:
    """Evaluate with cel-python; returns a draguard value or raises :class:`EvalError`."""
    cls = _CountingEvaluator if program.counting else _K8sEvaluator
    evaluator = cls(program, {"device": device_value(device)}, [0, 0])
    try:
        value = evaluator.evaluate()
    except _KErr as e:
        raise EvalError(e.message, e.missing_key) from None
    except CELEvalError as e:  # an error cel-python produced itself (not expected; kept readable)
        raise EvalError(str(e.args[0]) if e.args else "evaluation error") from None
    except _CostExceeded:
        raise EvalError("operation cancelled: actual cost limit exceeded") from None
    except _Escape as e:
        raise e.original from None
    return to_py(value)


# --------------------------------------------------------------------------- evaluator
class _K8sEvaluator(Evaluator):
    """cel-python's Evaluator with cel-go (Kubernetes) semantics where the two differ."""

    def __init__(self, program: CelpyProgram, variables: dict[str, Any], budget: list[int]) -> None:
        super().__init__(program.tree, _ACTIVATION)
        self.program = program
        self.variables = variables
        self.budget = budget

    def _sub(self) -> _K8sEvaluator:
        """An evaluator for a macro body: same program and budget, its own variable scope."""
        return self.__class__(self.program, dict(self.variables), self.budget)

    def _charge(self, cost: int) -> None:
        """Called once per comprehension step: every 256 steps, the review's budget is checked
        (:func:`app.k8s.check_budget`), so a long comprehension stops when its review must answer."""
        b = self.budget
        b[1] += 1
        if not b[1] & 0xFF:
            check_budget("CEL evaluation")

    # ---------------------------------------------------------------- names and literals
    def ident_value(self, name: str, root_scope: bool = False) -> Any:
        try:
            return self.variables[name]
        except KeyError:
            if name in _TYPE_IDENTS:
                return TypeValue(name)
            raise

    def literal(self, tree: lark.Tree[Any]) -> Any:
        return self.program.consts[id(tree)]

    # ---------------------------------------------------------------- operators and calls
    # Same dispatch as cel-python's (operator name → function from the Activation), without its
    # per-call ``typing.cast(Tuple[...])`` constructions, which dominate its run time,
    # and without its TypeError/ValueError relabelling (registered functions return error values).
    def _binary(self, tree: lark.Tree[Any]) -> Any:
        ch = tree.children
        if len(ch) == 1:
            return self.visit(ch[0])
        op, right = ch
        left = self.visit(op.children[0])
        rv = self.visit(right)
        return self.activation.resolve_function(_BINARY[op.data])(left, rv)

    relation = _binary
    addition = _binary
    multiplication = _binary

    def unary(self, tree: lark.Tree[Any]) -> Any:
        ch = tree.children
        if len(ch) == 1:
            return self.visit(ch[0])
        op, operand = ch
        v = self.visit(operand)
        return self.activation.resolve_function("!_" if op.data == "unary_not" else "-_")(v)

    def primary(self, tree: lark.Tree[Any]) -> Any:
        child = tree.children[0]
        d = child.data
        if d == "ident":
            name = str(child.children[0])
            try:
                return self.ident_value(name)
            except KeyError:
                return _KErr(f"undeclared reference to '{name}' (in container '')")
        if d in ("ident_arg", "dot_ident_arg"):  # `.f(x)` is a call in the root namespace, as `f(x)`
            name_token = cast(lark.Token, child.children[0])
            args = list(child.children[1].children) if len(child.children) > 1 else []
            if name_token.value == "has":
                return self.macro_has_eval(child.children[1])
            values = [self.visit(a) for a in args]
            if name_token.value == "dyn":
                return values[0]
            return self.function_eval(name_token, values)
        return super().primary(tree)

    def function_eval(self, name_token: lark.Token, exprlist: Iterable[Result] | None = None) -> Any:
        return self.activation.resolve_function(name_token.value)(*(exprlist or ()))

    def method_eval(
        self, object: Result, method_ident: lark.Token, exprlist: Iterable[Result] | None = None
    ) -> Any:
        return self.activation.resolve_function(method_ident.value)(object, *(exprlist or ()))

    # ---------------------------------------------------------------- logic
    def expr(self, tree: lark.Tree[Any]) -> Any:
        ch = tree.children
        if len(ch) == 1:
            return self.visit(ch[0])
        cond = self.visit(ch[0])
        if type(cond) is BoolType:
            return self.visit(ch[1] if cond else ch[2])
        if isinstance(cond, CELEvalError):
            return cond
        return _type_error("_?_:_", cond)

    def conditionalor(self, tree: lark.Tree[Any]) -> Any:
        ch = tree.children
        if len(ch) == 1:
            return self.visit(ch[0])
        return self._logic(ch[0], ch[1], True, "_||_")

    def conditionaland(self, tree: lark.Tree[Any]) -> Any:
        ch = tree.children
        if len(ch) == 1:
            return self.visit(ch[0])
        return self._logic(ch[0], ch[1], False, "_&&_")

    def _logic(self, left: Any, right: Any, decisive: bool, fn: str) -> Any:
        """cel-go's commutative ``&&``/``||``: a decisive operand wins over an error on either side,
        otherwise the left error, then the right one; the right side is skipped when the left decides."""
        lv = self.visit(left)
        err: Result | None = None
        if type(lv) is BoolType:
            if bool(lv) is decisive:
                return lv
        elif isinstance(lv, CELEvalError):
            err = lv
        else:
            err = _type_error(fn, lv)
        rv = self.visit(right)
        if type(rv) is BoolType:
            if bool(rv) is decisive or err is None:
                return rv
            return err
        if err is not None:
            return err
        if isinstance(rv, CELEvalError):
            return rv
        return _type_error(fn, rv)

    # ---------------------------------------------------------------- selection
    def member_dot(self, tree: lark.Tree[Any]) -> Any:
        member_tree, tok = tree.children
        m = self.visit(member_tree)
        if isinstance(m, CELEvalError):
            return m
        name = str(tok)
        if isinstance(m, MapType):
            try:
                return _getitem(m, name)
            except KeyError:
                return _KErr(f"no such key: {name}", name)
        return _KErr(f"type '{type_name(to_py(m))}' does not support field selection")

    def macro_has_eval(self, exprlist: lark.Tree[Any]) -> Any:
        sel = _skip(exprlist.children[0])
        m = self.visit(sel.children[0])
        if isinstance(m, CELEvalError):
            return m
        if isinstance(m, MapType):
            return TRUE if str(sel.children[1]) in m else FALSE
        return _KErr(f"invalid type for field selection: {type_name(to_py(m))}")

    def mapinits(self, tree: lark.Tree[Any]) -> Any:
        values = [self.visit(c) for c in tree.children]
        out = MapType()
        seen: set[Any] = set()
        for k, v in zip(values[0::2], values[1::2], strict=True):
            if isinstance(k, CELEvalError):
                return k
            pk = to_py(k)
            if pk in seen:
                return _KErr(f"Failed with repeated key: {pk}")
            seen.add(pk)
            if isinstance(v, CELEvalError):
                return v
            out[k] = v
        return out

    # ---------------------------------------------------------------- calls and macros
    def member_dot_arg(self, tree: lark.Tree[Any]) -> Any:
        ch = tree.children
        member_tree, tok = ch[0], cast(lark.Token, ch[1])
        name = str(tok)
        args = list(ch[2].children) if len(ch) > 2 else []
        nvars = _macro_vars(name, len(args))
        if nvars:
            return self._macro(name, member_tree, args, nvars)
        ns = _ident_name(member_tree)
        if ns == "cel" and name == "bind" and len(args) == 3:
            return self._bind(args)
        if ns is not None and ns not in self.variables:
            qualified = _FUNCS.get(f"{ns}.{name}")  # sets.contains(...): a namespaced global function
            if qualified is not None:
                return qualified(*[self.visit(a) for a in args])
        member = self.visit(member_tree)
        values = [self.visit(a) for a in args]
        return self.method_eval(member, tok, values)

    def _bind(self, args: list[Any]) -> Any:
        """``cel.bind(var, init, body)``: ``init`` once, then ``body`` with ``var`` naming it."""
        self._charge(_BIND_COST - 1)  # the call node itself already cost 1
        var = _ident_name(args[0])
        assert var is not None  # the parser accepted the macro, so its variable is an identifier
        init = self.visit(args[1])
        if isinstance(init, CELEvalError):
            return init
        sub = self._sub()
        sub.variables[var] = init
        return sub.visit(args[2])

    def _items(self, rng: Any, nvars: int) -> Iterable[Any] | _KErr:
        """One-variable: list elements / map keys; two-variable: (index, element) / (key, value)."""
        if isinstance(rng, ListType):
            return rng if nvars == 1 else [(int.__new__(IntType, i), x) for i, x in enumerate(rng)]
        if isinstance(rng, MapType):
            return list(rng) if nvars == 1 else list(rng.items())
        return _KErr(f"got '{go_type_name(to_py(rng))}', expected iterable type")

    def _macro(self, name: str, member_tree: Any, args: list[Any], nvars: int) -> Any:
        rng = self.visit(member_tree)
        if isinstance(rng, CELEvalError):
            return rng
        items = self._items(rng, nvars)
        if isinstance(items, _KErr):
            return items
        names = [_ident_name(a) for a in args[:nvars]]
        assert None not in names  # the parser accepted the macro, so its variables are identifiers
        sub = self._sub()
        scope = sub.variables
        if nvars == 1:
            var = cast(str, names[0])

            def assign(item: Any) -> None:
                scope[var] = item
        else:
            first, second = cast(list[str], names)

            def assign(item: Any) -> None:
                scope[first], scope[second] = item

        bodies = args[nvars:]
        pred = bodies[0]
        if name in ("all", "exists"):
            decisive = name == "exists"
            err: Result | None = None
            for item in items:
                self._charge(3)
                assign(item)
                v = sub.visit(pred)
                if type(v) is BoolType:
                    if bool(v) is decisive:
                        return v
                elif err is None:
                    err = v if isinstance(v, CELEvalError) else _type_error("_&&_", v)
            if err is not None:
                return err
            return FALSE if decisive else TRUE
        if name in ("exists_one", "existsOne"):
            n = 0
            for item in items:
                self._charge(3)
                assign(item)
                v = sub.visit(pred)
                if type(v) is BoolType:
                    n += bool(v)
                elif isinstance(v, CELEvalError):
                    return v
                else:
                    return _type_error("_?_:_", v)
            return TRUE if n == 1 else FALSE
        return self._collect(name, items, assign, sub, bodies)

    def _collect(
        self, name: str, items: Iterable[Any], assign: Callable[[Any], None], sub: _K8sEvaluator, bodies: list[Any]
    ) -> Any:
        """``filter``, ``map`` and the two-variable ``transformList`` / ``transformMap``."""
        out: Any = MapType() if name == "transformMap" else ListType()
        transform = bodies[-1]
        has_filter = name == "filter" or len(bodies) == 2
        for item in items:
            self._charge(3)
            assign(item)
            if has_filter:
                keep = sub.visit(bodies[0])
                if isinstance(keep, CELEvalError):
                    return keep
                if type(keep) is not BoolType:
                    return _type_error("_?_:_", keep)
                if not keep:
                    continue
                if name == "filter":
                    out.append(item)
                    continue
            t = sub.visit(transform)
            if isinstance(t, CELEvalError):
                return t
            if name == "transformMap":
                out[item[0]] = t
            else:
                out.append(t)
        return out


class _CountingEvaluator(_K8sEvaluator):
    """Charges every visited node's cost against the shared budget (runtime cost limit)."""

    def _charge(self, cost: int) -> None:
        b = self.budget
        b[0] += cost
        if b[0] > COST_LIMIT:
            raise _CostExceeded
        b[1] += 1
        if not b[1] & 0xFF:
            check_budget("CEL evaluation")

    def _visit_tree(self, tree: lark.Tree[Any]) -> Any:
        cost = self.program.costs.get(id(tree))
        if cost:
            self._charge(cost)
        return super()._visit_tree(tree)
