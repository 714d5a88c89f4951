"""``compile_selector`` / ``CompiledSelector.evaluate``: the public face of the DRA CEL engine.

Pipeline: length limit → parse (cel-python's grammar; the plainest selectors by
:mod:`app.cel.quickparse` into the same tree, without loading Lark) → type check → result-type
check → cost estimate → engine ``prepare`` (:mod:`app.cel.engines`; cel-python's evaluator).  Each step
produces the API server's message on failure; everything before the engine is
engine-independent, so the test oracle accepts and rejects exactly the same selectors.

Speed model (why it is fast enough for 10,000-device inventories):

* compiled selectors are cached by expression text (LRU-bounded);
* devices are converted once (:class:`~app.cel.device.CelDevice`); the cel-python engine's own
  ``celtypes`` conversion is made lazily, only for devices that are really evaluated;
* results are cached per *projection*: the checker-typed tree tells exactly which
  ``device.attributes[dom].id`` / ``device.capacity[dom].id`` / ``device.driver`` /
  ``device.allowMultipleAllocations`` an expression can read (constant keys, possibly through
  ``cel.bind`` aliases).  Devices that agree on those values — e.g. that differ only in
  ``uuid``/``index`` — share one evaluation.  Expressions whose reads cannot be bounded
  (iterating over ``device.attributes``, computed keys, ``device`` passed whole) are evaluated
  per device;
* each device also remembers the last results per selector (a small bounded memo), which makes
  repeated passes over an inventory a dictionary lookup per device.

Thread safety: prepared programs hold no mutable state (evaluation state lives in per-call
frames / evaluator objects, see the engine modules), the compile cache is guarded by a lock, and the result caches are plain dicts whose
individual get/set operations are atomic under the GIL; a race can only cause the same pure
evaluation to run twice, never a wrong answer.  Parsing is serialised inside
:mod:`app.cel.parser`.  No cel-python ``Environment`` is created, so nothing here touches the
interpreter's recursion limit.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..k8s import BudgetExceeded, current_budget
from . import ast as A
from . import types as T
from .cost import COST_LIMIT, estimate_cost
from .device import CelDevice
from .engines import Engine, ProgramSource, UnsupportedExpression, default_engine
from .errors import CelRuntimeError, CompileFailure, EvalError, format_error
from .parser import ParseError, parse_source
from .typecheck import check
from .values import type_name

__all__ = ["MAX_EXPRESSION_LENGTH", "CompiledSelector", "clear_caches", "compile_selector"]

MAX_EXPRESSION_LENGTH = 10 * 1024  # CELSelectorExpressionMaxLength
_COMPILE_CACHE_SIZE = 4096
_RESULT_CACHE_SIZE = 65536
_DEVICE_MEMO_SIZE = 64

_MISSING = object()
_serials = itertools.count(1)

ReadPath = tuple[str, ...]  # ("driver",) | ("allowMultipleAllocations",) | ("attributes"|"capacity", dom, id)


# --------------------------------------------------------------------------- read-set analysis
class _Unbounded(Exception):
    pass


def _read_set(root: A.Expr) -> frozenset[ReadPath] | None:
    """The device values ``root`` can read, or None when that set cannot be bounded statically."""
    reads: set[ReadPath] = set()
    aliases: list[dict[str, ReadPath | None]] = []

    def alias(name: str) -> tuple[bool, ReadPath | None]:
        for scope in reversed(aliases):
            if name in scope:
                return True, scope[name]
        return False, None

    def path(e: A.Expr) -> ReadPath | None:
        """Device path denoted by ``e`` using only constant keys, else None."""
        if isinstance(e, A.Ident):
            found, p = alias(e.name)
            if found:
                return p
            return () if e.name == "device" else None
        if isinstance(e, A.Select) and not e.test_only:
            p = path(e.operand)
            return None if p is None or len(p) >= 3 else (*p, e.field)
        if isinstance(e, A.Call) and e.fn == "_[_]" and isinstance(e.args[1], A.Const) and e.args[1].kind == "string":
            p = path(e.args[0])
            return None if p is None or len(p) >= 3 or not p else (*p, str(e.args[1].value))
        return None

    def record(p: ReadPath) -> None:
        if p in (("driver",), ("allowMultipleAllocations",)) or (len(p) == 3 and p[0] in ("attributes", "capacity")):
            reads.add(p)
        else:
            raise _Unbounded

    def visit(e: A.Expr) -> None:
        p = path(e)
        if p is not None:
            record(p)  # a complete read used as a value
            return
        # `"id" in device.attributes["dom"]` and has(device.attributes["dom"].id) read one key.
        if isinstance(e, A.Call) and e.fn == "@in" and isinstance(e.args[0], A.Const) and e.args[0].kind == "string":
            container = path(e.args[1])
            if container is not None and len(container) == 2:
                record((*container, str(e.args[0].value)))
                return
        if isinstance(e, A.Select) and e.test_only:
            container = path(e.operand)
            if container is not None and len(container) == 2:
                record((*container, e.field))
                return
        if isinstance(e, A.Bind):
            visit(e.init) if path(e.init) is None else None
            aliases.append({e.var: path(e.init)})
            try:
                visit(e.body)
            finally:
                aliases.pop()
            return
        if isinstance(e, A.Comp):
            visit(e.rng)
            scope: dict[str, ReadPath | None] = {e.var: None}
            if e.var2:
                scope[e.var2] = None
            aliases.append(scope)
            try:
                for a in e.args:
                    visit(a)
            finally:
                aliases.pop()
            return
        # Any other use of a partial device path (device, device.attributes, a domain map)
        # reads an unbounded set of values.
        for child in A.children(e):
            cp = path(child)
            if cp is not None and not (len(cp) == 3 or cp in (("driver",), ("allowMultipleAllocations",))):
                raise _Unbounded
            visit(child)

    try:
        visit(root)
    except (_Unbounded, RecursionError):
        return None
    return frozenset(reads)


def _key_fn(reads: frozenset[ReadPath]) -> Callable[[CelDevice], tuple[Any, ...]]:
    """A fast projection of a device onto ``reads``; values are tagged with their type so
    that, e.g., ``1`` and ``true`` never share a cache entry (nor ``[1]`` and ``[true]``: the
    elements of a list-typed attribute are tagged too)."""
    getters: list[Callable[[CelDevice], Any]] = []
    for p in sorted(reads):
        if p == ("driver",):
            getters.append(lambda d: d.driver)
        elif p == ("allowMultipleAllocations",):
            getters.append(lambda d: d.allowMultipleAllocations)
        else:
            kind, dom, ident = p

            def get(d: CelDevice, kind: str = kind, dom: str = dom, ident: str = ident) -> Any:
                v = getattr(d, kind).get(dom, _EMPTY).get(ident, _MISSING)
                if type(v) is tuple:  # a list-typed attribute: (1,) == (True,) in Python, not in CEL
                    return (tuple, tuple((type(x), x) for x in v))
                return (type(v), v)

            getters.append(get)
    if len(getters) == 1:
        g0 = getters[0]
        return lambda d: (g0(d),)
    if len(getters) == 2:
        g0, g1 = getters
        return lambda d: (g0(d), g1(d))
    return lambda d: tuple(g(d) for g in getters)


_EMPTY: dict[str, Any] = {}


def _is_device_driver(e: A.Expr) -> bool:
    return isinstance(e, A.Select) and not e.test_only and e.field == "driver" and isinstance(e.operand, A.Ident) \
        and e.operand.name == "device"


def required_driver(root: A.Expr) -> str | None:
    """``"x"`` when ``device.driver == "x"`` (either side) is a top-level ``&&`` conjunct of ``root``.

    Only that shape counts: it is a necessary condition for the selector to be true, so a device
    of another driver can never match, whatever its attributes.
    """
    stack = [root]
    while stack:
        e = stack.pop()
        if isinstance(e, A.Call) and e.target is None and e.fn == "_&&_":
            stack.extend(e.args)
        elif isinstance(e, A.Call) and e.target is None and e.fn == "_==_" and len(e.args) == 2:
            left, right = e.args
            for a, b in ((left, right), (right, left)):
                if _is_device_driver(a) and isinstance(b, A.Const) and b.kind == "string":
                    return str(b.value)
    return None


# --------------------------------------------------------------------------- selector
class CompiledSelector:
    """A compiled, type-checked selector.  ``evaluate`` never raises."""

    __slots__ = ("_cache", "_engine", "_key", "_prepared", "_serial", "driver", "expression", "max_cost", "reads")

    def __init__(
        self, expression: str, engine: Engine, prepared: Any, max_cost: int, reads: frozenset[ReadPath] | None,
        driver: str | None = None,
    ) -> None:
        self.expression = expression
        self.max_cost = max_cost
        self.reads = reads
        self.driver = driver
        """The driver every matching device must have (``device.driver == "x"`` is a top-level
        conjunct), or None when the expression does not pin one.  Lets the satisfiability check
        tell which incomplete pools could still matter to a claim."""
        self._engine = engine
        self._prepared = prepared
        self._serial = next(_serials)
        self._cache: dict[tuple[Any, ...], bool | CelRuntimeError] = {}
        self._key = _key_fn(reads) if reads is not None else None

    def __repr__(self) -> str:
        return f"CompiledSelector({self.expression!r})"

    def evaluate(self, device: CelDevice) -> bool | CelRuntimeError:
        memo = device.memo
        hit = memo.get(self._serial, _MISSING)
        if hit is not _MISSING:
            return hit  # type: ignore[no-any-return]
        if device.error is not None:
            result: bool | CelRuntimeError = CelRuntimeError(device.error)
        elif self._key is not None:
            key = self._key(device)
            cached = self._cache.get(key)
            if cached is None:
                cached = self._run(device)
                if len(self._cache) >= _RESULT_CACHE_SIZE:
                    self._cache.clear()
                self._cache[key] = cached
            result = cached
        else:
            result = self._run(device)
        if len(memo) >= _DEVICE_MEMO_SIZE:
            memo.clear()
        memo[self._serial] = result
        return result

    def _run(self, device: CelDevice) -> bool | CelRuntimeError:
        _refuse_over_budget(self.max_cost)
        try:
            value = self._engine.run(self._prepared, device)
        except EvalError as e:
            return _runtime_error(e)
        except RecursionError:
            return CelRuntimeError("expression recursion limit exceeded")
        except Exception as e:  # never leak a raw Python exception to callers
            return CelRuntimeError(f"internal error evaluating CEL expression: {type(e).__name__}: {e}")
        if type(value) is bool:
            return value
        tn = type_name(value)
        return CelRuntimeError(
            f"CEL result of type {tn} could not be converted to bool: unsupported native conversion from {tn} to 'bool'"
        )


CELPY_COST_UNITS_PER_SECOND = 300_000
"""What cel-python really evaluates here, in Kubernetes cost units per second (measured by
``benchmarks/bench_cel_cost.py``: medians 360k–540k on the 2-core VM, ~175k at worst under
load; the figure sits below the medians).
The 1,000,000 cost limit assumes cel-go, which is two to three orders of magnitude faster: a
selector at the limit runs about two seconds per device in cel-python, the whole budget of a
review.  So a review refuses, before starting, an evaluation its remaining budget cannot pay."""


def estimated_seconds(cost: int) -> float:
    """How long one evaluation of a selector with static cost ``cost`` may take in cel-python."""
    return cost / CELPY_COST_UNITS_PER_SECOND


def _refuse_over_budget(cost: int) -> None:
    budget = current_budget()
    if budget is None:
        return
    left = budget.remaining()
    seconds = estimated_seconds(cost)
    if seconds > left:
        raise BudgetExceeded(
            f"a CEL selector of estimated cost {cost:,}, ~{seconds:.1f}s per device in cel-python, more than the "
            f"{max(left, 0.0):.2f}s left"
        )


def _runtime_error(e: EvalError) -> CelRuntimeError:
    key = e.missing_key
    hint = None
    if key is not None:
        hint = f'guard with "{key}" in <map> (e.g. "{key}" in device.attributes["<domain>"]) or has(<map>.{key})'
    return CelRuntimeError(e.message, key, hint)


def _hint_for(expression: str, err: CelRuntimeError, device: CelDevice | None = None) -> CelRuntimeError:
    """Make the missing-key hint concrete when the expression names the map literally.

    A lookup in a domain the device does not publish (``device.attributes["gpu.acme.oi"]`` reads
    as an empty map, so the error is about the *name*) is most often a typo: say so and name the
    nearest domain the device does publish; likewise for a name its domain does not have.  The
    guard hint is for names that are really optional."""
    key = err.missing_key
    if key is None:
        return err
    import re

    m = re.search(r'device\.(attributes|capacity)\["([^"]+)"\]\s*(?:\.\s*' + re.escape(key) + r'\b|\[\s*"'
                  + re.escape(key) + r'"\s*\])', expression)
    if m:
        typo = _typo_hint(device, m.group(1), m.group(2), key) if device is not None else None
        return CelRuntimeError(err.message, key, typo or f'guard with "{key}" in device.{m.group(1)}["{m.group(2)}"]')
    return err


def _typo_hint(device: CelDevice, field: str, domain: str, key: str) -> str | None:
    """``the device publishes no attribute domain gpu.acme.oi; did you mean gpu.acme.io?`` (or
    the same for a name in a published domain); None when nothing published is near."""
    import difflib

    published = getattr(device, field, None)
    if not isinstance(published, dict) or not published:
        return None
    what = "attribute" if field == "attributes" else "capacity"
    if domain not in published:
        near = difflib.get_close_matches(domain, sorted(published), n=1, cutoff=0.6)
        if near:
            return f"the device publishes no {what} domain {domain}; did you mean {near[0]}?"
        return None
    names = published.get(domain)
    if isinstance(names, dict) and names and key not in names:
        near = difflib.get_close_matches(key, sorted(names), n=1, cutoff=0.6)
        if near:
            return f"the device publishes no {what} {key} in {domain}; did you mean {near[0]}?"
    return None


class _HintingSelector(CompiledSelector):
    __slots__ = ()

    def _run(self, device: CelDevice) -> bool | CelRuntimeError:
        r = super()._run(device)
        return _hint_for(self.expression, r, device) if isinstance(r, CelRuntimeError) else r


# --------------------------------------------------------------------------- compilation
_cache: OrderedDict[tuple[str, bool, str, bool, bool, bool | None], CompiledSelector | CompileFailure] = OrderedDict()
_cache_lock = threading.Lock()


_OPTIONAL_SYNTAX = re.compile(r"\.\s*\?|\[\s*\?|[{,]\s*\?")
_STRING_LITERAL = re.compile(
    r"(?s)[rRbB]{0,2}(?:'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\")"
)


def uses_optional_syntax(expression: str) -> bool:
    """Whether the text uses CEL optional syntax outside string literals (cel-python cannot parse it)."""
    return bool(_OPTIONAL_SYNTAX.search(_STRING_LITERAL.sub('""', expression)))


def _compile(
    expression: str, enforce_cost_limit: bool, engine: Engine | None = None, *, consumable_capacity: bool = True,
    list_type_attributes: bool = True, includes: bool | None = None,
) -> CompiledSelector | CompileFailure:
    if engine is None:
        engine = default_engine()
    if len(expression.encode("utf-8", "surrogatepass")) > MAX_EXPRESSION_LENGTH:  # lone surrogates: 3 bytes
        return CompileFailure("too_long", f"may not be more than {MAX_EXPRESSION_LENGTH} bytes")
    try:
        root, tree = parse_source(expression)
    except ParseError as e:
        if uses_optional_syntax(expression):
            return CompileFailure(
                "unsupported", "optional field selection (`.?`, `[?`, `{?`) is valid CEL in Kubernetes but draguard "
                "cannot evaluate it; the selector was not checked"
            )
        return CompileFailure("invalid", "compilation failed: " + e.message)
    checked = check(
        root, consumable_capacity=consumable_capacity, list_type_attributes=list_type_attributes, includes=includes
    )
    if checked.unsupported:
        names = ", ".join(sorted(set(checked.unsupported)))
        return CompileFailure(
            "unsupported", f"uses {names}, which Kubernetes' CEL environment has but draguard does not evaluate; "
            "the selector was not checked"
        )
    if checked.errors:
        errors = sorted(checked.errors, key=lambda x: x[0])
        return CompileFailure(
            "invalid", "compilation failed: " + "\n".join(format_error(expression, p, m) for p, m in errors)
        )
    result_type = checked.types.get(root.id, T.DYN)
    if result_type != T.BOOL and not T.is_dyn(result_type):
        return CompileFailure("invalid", f"must evaluate to bool or the unknown type, not {result_type}")
    cost = estimate_cost(root, checked)
    try:
        prepared = engine.prepare(ProgramSource(expression, root, checked, tree, counting=cost > COST_LIMIT))
    except UnsupportedExpression as e:
        return CompileFailure("unsupported", f"the expression {e.reason}; the selector was not checked")
    except RecursionError:
        return CompileFailure("unsupported", "the expression nests too deeply for draguard to evaluate; not checked")
    selector = _HintingSelector(expression, engine, prepared, cost, _read_set(root), required_driver(root))
    if cost > COST_LIMIT and enforce_cost_limit:
        return CompileFailure("cost", "too complex, exceeds cost limit")
    return selector


def compile_selector(
    expression: str, enforce_cost_limit: bool = True, *, consumable_capacity: bool = True,
    list_type_attributes: bool = True, includes: bool | None = None,
) -> CompiledSelector | CompileFailure:
    """Compile a DRA CEL selector like the API server would; cached by expression text.

    ``consumable_capacity=False`` compiles in the environment of an API server without the
    DRAConsumableCapacity gate, where ``device.allowMultipleAllocations`` is an undefined field.
    ``list_type_attributes=False``: without DRAListTypeAttributes, where an attribute value is
    ``any`` (no comprehension over it) and ``includes`` is undeclared unless ``includes=True``
    (a 1.38 API server declares it for every new expression).  The defaults are the environment
    the scheduler compiles stored expressions in, where both exist.

    ``enforce_cost_limit=False`` mirrors the scheduler, which compiles stored expressions without
    estimating cost: a too-expensive selector then comes back runnable and fails at evaluation
    with ``operation cancelled: actual cost limit exceeded`` once it really exceeds the budget.
    """
    engine = default_engine()
    key = (expression, enforce_cost_limit, engine.name, consumable_capacity, list_type_attributes, includes)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    result = _compile(
        expression, enforce_cost_limit, engine, consumable_capacity=consumable_capacity,
        list_type_attributes=list_type_attributes, includes=includes,
    )
    with _cache_lock:
        _cache[key] = result
        if len(_cache) > _COMPILE_CACHE_SIZE:
            _cache.popitem(last=False)
    return result


def clear_caches() -> None:
    """Forget compiled selectors (tests and long-running processes after config changes)."""
    with _cache_lock:
        _cache.clear()
