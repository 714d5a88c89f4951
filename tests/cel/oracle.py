"""The differential-testing oracle: an independent CEL evaluator that compiles a checked tree into
Python closures and runs it with cel-go semantics.

Not production code: draguard evaluates selectors with cel-python's evaluator only
(:mod:`app.cel.celpy_engine`).  This closure compiler was written independently from the same
semantics, so running both on one corpus (``tests/cel/test_engine_differential.py``, and every
test under ``tests/cel`` through ``conftest.py``) catches a cel-python quirk that slipped past the
adapters.  It plugs into the same pipeline (parser, type checker, cost estimate, caches) through
the engine interface: :class:`OracleEngine`, swapped in with :func:`app.cel.engines.engine_scope`.

Evaluation state is a per-call ``frame`` list (slot 0: the running cost, slot 1: the device,
further slots: comprehension / ``cel.bind`` variables, allocated lexically at compile time).
Runtime cost: when the static estimate already bounds the cost below the limit, counting is
skipped; otherwise every node adds its cel-go cost to ``frame[0]`` and evaluation stops with
``operation cancelled: actual cost limit exceeded`` past 1,000,000.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from draguard.cel import ast as A
from draguard.cel import types as T
from draguard.cel.cost import COST_LIMIT
from draguard.cel.device import CelDevice
from draguard.cel.engines import Engine, ProgramSource, default_engine
from draguard.cel.errors import EvalError
from draguard.cel.library import FUNCTIONS
from draguard.cel.typecheck import DEVICE_FIELDS, Checked
from draguard.cel.values import TypeValue, go_type_name, no_overload, type_name

__all__ = ["ENGINES", "ORACLE", "PRODUCTION", "OracleEngine", "Program", "compile_program"]

Frame = list[Any]
Fn = Callable[[Frame], Any]

_PURE_FOLDABLE = frozenset({"quantity", "semver", "isQuantity", "isSemver", "_-_", "_+_", "-_", "_*_", "int",
                            "uint", "double", "string"})


class Program:
    """A compiled expression: ``run(device)`` returns the CEL value or raises EvalError."""

    __slots__ = ("_fn", "_slots")

    def __init__(self, fn: Fn, slots: int) -> None:
        self._fn = fn
        self._slots = slots

    def run(self, device: object) -> Any:
        frame: Frame = [0, device, *([None] * (self._slots - 2))]
        return self._fn(frame)


def _raise_cost() -> None:
    raise EvalError("operation cancelled: actual cost limit exceeded")


class _Compiler:
    def __init__(self, checked: Checked, counting: bool) -> None:
        self.checked = checked
        self.counting = counting
        self.scopes: list[dict[str, int]] = [{"device": 1}]
        self.next_slot = 2

    def slot(self, name: str) -> int:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        raise AssertionError(f"unbound {name}")  # pragma: no cover - checker guarantees scoping

    def new_slot(self) -> int:
        s = self.next_slot
        self.next_slot += 1
        return s

    def counted(self, fn: Fn, cost: int) -> Fn:
        if not self.counting or cost == 0:
            return fn

        def g(f: Frame) -> Any:
            f[0] += cost
            if f[0] > COST_LIMIT:
                _raise_cost()
            return fn(f)

        return g

    def type_of(self, e: A.Expr) -> T.CelType:
        return self.checked.types.get(e.id, T.DYN)

    # ----------------------------------------------------------------- nodes
    def compile(self, e: A.Expr) -> Fn:
        if isinstance(e, A.Const):
            v = e.value
            return lambda f: v
        if isinstance(e, A.Ident):
            if not any(e.name in scope for scope in self.scopes):  # a type name such as `int`
                tv = TypeValue(e.name)
                return lambda f: tv
            s = self.slot(e.name)
            return self.counted(operator.itemgetter(s), 1)
        if isinstance(e, A.Select):
            return self.select(e)
        if isinstance(e, A.Call):
            return self.call(e)
        if isinstance(e, A.ListLit):
            elems = [self.compile(x) for x in e.elems]
            return self.counted(lambda f: [x(f) for x in elems], 10)
        if isinstance(e, A.MapLit):
            entries = [(self.compile(k), self.compile(v)) for k, v in e.entries]

            def make_map(f: Frame) -> dict[Any, Any]:
                out: dict[Any, Any] = {}
                for kf, vf in entries:
                    k = kf(f)
                    if k in out:
                        raise EvalError(f"Failed with repeated key: {k}")
                    out[k] = vf(f)
                return out

            return self.counted(make_map, 30)
        if isinstance(e, A.Comp):
            return self.comprehension(e)
        if isinstance(e, A.Bind):
            init = self.compile(e.init)
            s = self.new_slot()
            self.scopes.append({e.var: s})
            body = self.compile(e.body)
            self.scopes.pop()

            def bind(f: Frame) -> Any:
                f[s] = init(f)
                return body(f)

            return self.counted(bind, 10)
        raise AssertionError(f"unknown node {e!r}")  # pragma: no cover

    def select(self, e: A.Select) -> Fn:
        operand = self.compile(e.operand)
        name = e.field
        ot = self.type_of(e.operand)
        if ot == T.DEVICE:
            if e.test_only:
                return lambda f: True
            get = operator.attrgetter(name)
            return self.counted(lambda f: get(operand(f)), 1)
        if e.test_only:

            def has(f: Frame) -> bool:
                m = operand(f)
                if isinstance(m, dict):
                    return name in m
                if type(m) is CelDevice:
                    return name in DEVICE_FIELDS
                raise EvalError(f"invalid type for field selection: {type_name(m)}")

            return self.counted(has, 1)

        def sel(f: Frame) -> Any:
            m = operand(f)
            if isinstance(m, dict):
                try:
                    return m[name]
                except KeyError:
                    raise EvalError(f"no such key: {name}", missing_key=name) from None
            if type(m) is CelDevice:
                try:
                    return getattr(m, name)
                except AttributeError:
                    raise EvalError(f"no such field: {name}") from None
            raise EvalError(f"type '{type_name(m)}' does not support field selection")

        return self.counted(sel, 1 if ot.name == "map" else 0)

    def call(self, e: A.Call) -> Fn:
        fn = e.fn
        if fn == "_&&_" or fn == "_||_":
            return self.logical(e)
        if fn == "_?_:_":
            return self.conditional(e)
        args = ([e.target] if e.target is not None else []) + list(e.args)
        impl = FUNCTIONS[fn].impl
        if fn in _PURE_FOLDABLE and all(isinstance(a, A.Const) for a in args):
            try:
                v = impl(*[a.value for a in args])  # type: ignore[attr-defined]
            except EvalError:
                pass  # stays a runtime error, raised on every evaluation like cel-go
            else:
                return self.counted(lambda f: v, 1)
        cs = [self.compile(a) for a in args]
        n = len(cs)
        out: Fn
        if fn == "_==_":
            a0, a1 = cs
            out = self._eq(a0, a1, impl)
        elif n == 1:
            (a0,) = cs
            out = lambda f: impl(a0(f))  # noqa: E731
        elif n == 2:
            a0, a1 = cs
            out = lambda f: impl(a0(f), a1(f))  # noqa: E731
        elif n == 3:
            a0, a1, a2 = cs
            out = lambda f: impl(a0(f), a1(f), a2(f))  # noqa: E731
        else:
            out = lambda f: impl(*[c(f) for c in cs])  # noqa: E731
        return self.counted(out, 1)

    @staticmethod
    def _eq(a0: Fn, a1: Fn, impl: Callable[[Any, Any], bool]) -> Fn:
        def eq(f: Frame) -> bool:
            x = a0(f)
            y = a1(f)
            tx = type(x)
            if tx is type(y) and (tx is str or tx is int or tx is bool):
                return bool(x == y)
            return impl(x, y)

        return eq

    def logical(self, e: A.Call) -> Fn:
        left, right = (self.compile(a) for a in e.args)
        decisive: bool = e.fn == "_||_"  # the value that short-circuits

        def logic(f: Frame) -> bool:
            err: EvalError | None = None
            try:
                lv = left(f)
            except EvalError as ex:
                if ex.message.startswith("operation cancelled"):
                    raise
                err = ex
            else:
                if lv is decisive:
                    return bool(decisive)
                if type(lv) is not bool:
                    err = no_overload(e.fn, lv)
            try:
                rv = right(f)
            except EvalError as ex:
                if ex.message.startswith("operation cancelled"):
                    raise
                raise err or ex from None
            if rv is decisive:
                return bool(decisive)
            if err is not None:
                raise err
            if type(rv) is not bool:
                raise no_overload(e.fn, rv)
            return not decisive

        return logic

    def conditional(self, e: A.Call) -> Fn:
        c, a, b = (self.compile(x) for x in e.args)

        def cond(f: Frame) -> Any:
            v = c(f)
            if v is True:
                return a(f)
            if v is False:
                return b(f)
            raise no_overload("_?_:_", v)

        return cond

    def comprehension(self, e: A.Comp) -> Fn:
        rng = self.compile(e.rng)
        s1 = self.new_slot()
        s2 = self.new_slot() if e.var2 else -1
        scope = {e.var: s1}
        if e.var2:
            scope[e.var2] = s2
        self.scopes.append(scope)
        bodies = [self.compile(a) for a in e.args]
        self.scopes.pop()
        kind = e.kind
        counting = self.counting
        two = e.var2 is not None

        def items(f: Frame) -> Any:
            r = rng(f)
            if type(r) in (list, tuple):
                return enumerate(r) if two else r
            if isinstance(r, dict):
                return r.items() if two else list(r)
            raise EvalError(f"got '{go_type_name(r)}', expected iterable type")

        def bump(f: Frame) -> None:
            f[0] += 3
            if f[0] > COST_LIMIT:
                _raise_cost()

        def assign(f: Frame, item: Any) -> None:
            if two:
                f[s1], f[s2] = item
            else:
                f[s1] = item

        pred = bodies[0]
        if kind in ("all", "all2", "exists", "exists2"):
            decisive: bool = kind.startswith("exists")

            def quantifier(f: Frame) -> bool:
                err: EvalError | None = None
                for item in items(f):
                    if counting:
                        bump(f)
                    assign(f, item)
                    try:
                        v = pred(f)
                    except EvalError as ex:
                        if ex.message.startswith("operation cancelled"):
                            raise
                        err = err or ex
                        continue
                    if v is decisive:
                        return bool(decisive)
                    if type(v) is not bool:
                        err = err or no_overload("_&&_", v)
                if err is not None:
                    raise err
                return not decisive

            return quantifier
        if kind in ("exists_one", "exists_one2"):

            def exists_one(f: Frame) -> bool:
                n = 0
                for item in items(f):
                    if counting:
                        bump(f)
                    assign(f, item)
                    v = pred(f)
                    if v is True:
                        n += 1
                    elif v is not False:
                        raise no_overload("_?_:_", v)
                return n == 1

            return exists_one
        has_filter = len(bodies) == 2
        transform = bodies[-1]

        def collect(f: Frame) -> Any:
            out_list: list[Any] = []
            out_map: dict[Any, Any] = {}
            for item in items(f):
                if counting:
                    bump(f)
                assign(f, item)
                if kind == "filter":
                    v = pred(f)
                    if v is True:
                        out_list.append(item)
                    elif v is not False:
                        raise no_overload("_?_:_", v)
                    continue
                if has_filter:
                    keep = pred(f)
                    if keep is False:
                        continue
                    if keep is not True:
                        raise no_overload("_?_:_", keep)
                if kind == "transformMap":
                    out_map[f[s1]] = transform(f)
                else:
                    out_list.append(transform(f))
            return out_map if kind == "transformMap" else out_list

        return collect


def compile_program(root: A.Expr, checked: Checked, counting: bool) -> Program:
    c = _Compiler(checked, counting)
    fn = c.compile(root)
    return Program(fn, c.next_slot)


class OracleEngine:
    """The oracle behind :class:`app.cel.engines.Engine`'s interface."""

    name = "compiled"

    def prepare(self, program: ProgramSource) -> Program:
        return compile_program(program.root, program.checked, counting=program.counting)

    def run(self, prepared: Program, device: CelDevice) -> Any:
        return prepared.run(device)


ORACLE = OracleEngine()
PRODUCTION = default_engine()
ENGINES: dict[str, Engine] = {PRODUCTION.name: PRODUCTION, ORACLE.name: ORACLE}
"""Both engines by name: production's cel-python engine and this oracle."""
