"""Function declarations (for the checker) and implementations (for the evaluator).

Why one table for both: a function the checker accepts must be one the evaluator can run, with
the same receiver style.  Covered: the CEL standard functions, cross-type numeric comparisons,
the Kubernetes quantity, semver, regex (``find``/``findAll``) and lists libraries, the cel-go
strings extension (v2), lists extension (subset) and sets extension.  ``matches``/``find`` use
RE2 (google-re2) so patterns behave — and run in linear time — as in Kubernetes.

Each implementation receives the receiver first for member calls and dispatches on the
runtime Python types, because ``dyn`` operands (every attribute value) are only resolved at
run time.  Failures raise :class:`~app.cel.errors.EvalError` with cel-go's message.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import re2

from ..k8s import INT64_MAX, Format, Memo, Quantity, QuantityError, fits_int64, fits_uint64, parse_quantity
from . import types as T
from .errors import EvalError
from .semver import Semver, SemverError, parse_semver
from .values import (
    TypeValue,
    UInt,
    cel_equal,
    no_overload,
    type_name,
)

__all__ = ["FUNCTIONS", "UNSUPPORTED", "Function", "Overload", "compile_regex"]

A = T.param("A")
B = T.param("B")
LA = T.list_of(A)
MAB = T.map_of(A, B)
S, I, U, D, BO, BY, Q, V, DYN = T.STRING, T.INT, T.UINT, T.DOUBLE, T.BOOL, T.BYTES, T.QUANTITY, T.SEMVER, T.DYN  # noqa: E741


@dataclass(frozen=True, slots=True)
class Overload:
    """One signature of a library function: its cel-go overload id, receiver style, parameter and result types."""

    id: str
    member: bool
    params: tuple[T.CelType, ...]
    result: T.CelType


@dataclass(frozen=True, slots=True)
class Function:
    """A library function of Kubernetes' CEL environment: its overloads and draguard's implementation."""

    name: str
    overloads: tuple[Overload, ...]
    impl: Callable[..., Any]


FUNCTIONS: dict[str, Function] = {}

# Kubernetes CEL functions draguard knows exist but does not implement: a clear compile error
# naming the construct beats "undeclared reference" (which would wrongly suggest a typo).
UNSUPPORTED = frozenset({
    "url", "isURL", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath", "getQuery",
    "ip", "isIP", "cidr", "isCIDR", "containsIP", "containsCIDR", "isCanonical", "family", "isUnspecified",
    "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "masked", "prefixLength",
    "format.named", "validate", "timestamp", "duration", "getFullYear", "getMonth", "getDate", "getHours",
    "getMinutes", "getSeconds", "getMilliseconds", "getDayOfWeek", "getDayOfYear", "getDayOfMonth",
    "optional.of", "optional.none", "optional.ofNonZeroValue", "orValue", "hasValue", "value", "or",
    "strings.quote", "format", "sortBy", "lists.range", "first", "last", "mul", "div", "divInt",
    "authorizer", "reverse",
})


def _fn(name: str, overloads: list[tuple[str, bool, list[T.CelType], T.CelType]], impl: Callable[..., Any]) -> None:
    FUNCTIONS[name] = Function(name, tuple(Overload(i, m, tuple(p), r) for i, m, p, r in overloads), impl)


# --------------------------------------------------------------------------- helpers
def _check_int(v: int) -> int:
    if not fits_int64(v):
        raise EvalError("integer overflow")
    return v


def _check_uint(v: int) -> UInt:
    if not fits_uint64(v):
        raise EvalError("unsigned integer overflow")
    return UInt(v)


def _is_num(v: object) -> bool:
    t = type(v)
    return t is int or t is UInt or t is float


_REGEXES: Memo[str, Any] = Memo("regular expressions", 4096)


def compile_regex(pattern: str) -> Any:
    """Compile (and cache) an RE2 pattern; invalid ones raise EvalError like cel-go."""
    r = _REGEXES.get(pattern)
    if r is None:
        try:
            opts = re2.Options()
            opts.log_errors = False
            r = re2.compile(pattern, options=opts)
        except re2.error as e:
            raise EvalError(f"error parsing regexp: {e}") from None
        _REGEXES.put(pattern, r)
    return r


# --------------------------------------------------------------------------- lists
def _includes(target: Any, item: Any) -> bool:
    """``<dyn>.includes(<dyn>)``: a list includes ``item`` when an element equals it; any other
    value when it equals ``item`` — so one selector works on a scalar and a list-typed attribute.
    CEL heterogeneous equality (``[1].includes(1.0)`` is true); never an error — 1.37's library.
    (1.36's own version failed on lists longer than 48 values: no device attribute is that long,
    only a literal in the selector could be; answering there only misses a rejection.)"""
    if type(target) in (list, tuple):
        return any(cel_equal(x, item) for x in target)
    return cel_equal(target, item)


# --------------------------------------------------------------------------- operators
def _ne(a: object, b: object) -> bool:
    return not cel_equal(a, b)


def _cmp(fn: str) -> Callable[[Any, Any], bool]:
    import operator

    op = {"_<_": operator.lt, "_<=_": operator.le, "_>_": operator.gt, "_>=_": operator.ge}[fn]

    def impl(a: Any, b: Any) -> bool:
        ta, tb = type(a), type(b)
        if (ta is tb and ta in (int, UInt, float, str, bytes, bool)) or (_is_num(a) and _is_num(b)):
            return bool(op(a, b))
        raise no_overload(fn, a, b)

    return impl


def _add(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is int:
            return _check_int(a + b)
        if ta is UInt:
            return _check_uint(a + b)
        if ta in (float, str, bytes):
            return a + b
    if ta in (list, tuple) and tb in (list, tuple):
        return [*a, *b]
    raise no_overload("_+_", a, b)


def _sub(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is int:
            return _check_int(a - b)
        if ta is UInt:
            return _check_uint(a - b)
        if ta is float:
            return a - b
    raise no_overload("_-_", a, b)


def _mul(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is int:
            return _check_int(a * b)
        if ta is UInt:
            return _check_uint(a * b)
        if ta is float:
            return a * b
    raise no_overload("_*_", a, b)


def _div(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is int or ta is UInt:
            if b == 0:
                raise EvalError("division by zero")
            q = abs(a) // abs(b)
            q = q if (a >= 0) == (b >= 0) else -q  # truncate toward zero like Go
            return _check_int(q) if ta is int else UInt(q)
        if ta is float:
            if b == 0:
                return math.copysign(math.inf, a) * math.copysign(1, b) if a != 0 else math.nan
            return a / b
    raise no_overload("_/_", a, b)


def _mod(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb and (ta is int or ta is UInt):
        if b == 0:
            raise EvalError("modulus by zero")
        r = abs(a) % abs(b)
        r = r if a >= 0 else -r  # sign follows the dividend, like Go
        return r if ta is int else UInt(r)
    raise no_overload("_%_", a, b)


def _neg(a: Any) -> Any:
    if type(a) is int:
        return _check_int(-a)
    if type(a) is float:
        return -a
    raise no_overload("-_", a)


def _not(a: Any) -> bool:
    if type(a) is bool:
        return not a
    raise no_overload("!_", a)


def _in(elem: Any, container: Any) -> bool:
    t = type(container)
    if t in (list, tuple):
        return any(cel_equal(elem, x) for x in container)
    if isinstance(container, dict):
        te = type(elem)
        if te is str:
            return elem in container
        if te is bool:
            return any(type(k) is bool and k == elem for k in container)
        if te in (int, UInt) or (te is float and elem.is_integer()):
            return any(type(k) in (int, UInt) and k == elem for k in container)
        return False
    raise no_overload("@in", elem, container)


def _index(container: Any, key: Any) -> Any:
    t = type(container)
    if t in (list, tuple):
        if type(key) in (int, UInt) or (type(key) is float and key.is_integer()):
            i = int(key)
            if 0 <= i < len(container):
                return container[i]
            raise EvalError(f"index out of bounds: {i}")
        raise no_overload("_[_]", container, key)
    if isinstance(container, dict):
        if type(key) in (str, int, UInt, bool):
            try:
                return container[key]
            except KeyError:
                pass
        raise EvalError(f"no such key: {key}", missing_key=key if isinstance(key, str) else None)
    raise no_overload("_[_]", container, key)


# --------------------------------------------------------------------------- conversions
def _size(v: Any) -> int:
    if type(v) in (str, bytes, list, tuple) or isinstance(v, dict):
        return len(v)
    raise no_overload("size", v)


def _int(v: Any) -> int:
    t = type(v)
    if t is int:
        return int(v)
    if t is UInt:
        if v > INT64_MAX:
            raise EvalError("integer overflow")
        return int(v)
    if t is float:
        if math.isnan(v) or not -9.223372036854775808e18 < v < 9.223372036854775807e18:
            raise EvalError("integer overflow")
        return int(v)
    if t is str:
        return _check_int(_decimal(v, "int"))
    raise no_overload("int", v)


def _decimal(v: str, target: str) -> int:
    """A base-10 integer literal in a string, as cel-go's ``int("…")`` / ``uint("…")`` parse it."""
    try:
        return int(v, 10)
    except ValueError:
        raise EvalError(f"cannot convert string '{v}' to {target}") from None


def _uint(v: Any) -> UInt:
    t = type(v)
    if t is int or t is UInt:
        return _check_uint(v)
    if t is float:
        if math.isnan(v) or not -1 < v < 1.8446744073709552e19:
            raise EvalError("unsigned integer overflow")
        return UInt(int(v))
    if t is str:
        return _check_uint(_decimal(v, "uint"))
    raise no_overload("uint", v)


def _double(v: Any) -> float:
    t = type(v)
    if t in (int, UInt, float):
        return float(v)
    if t is str:
        try:
            return float(v)
        except ValueError:
            raise EvalError(f"cannot convert string '{v}' to double") from None
    raise no_overload("double", v)


def _format_double(v: float) -> str:
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if math.isnan(v):
        return "NaN"
    r = repr(v)
    if r.endswith(".0"):
        r = r[:-2]
    return r


def _string(v: Any) -> str:
    t = type(v)
    if t is str:
        return str(v)
    if t is bool:
        return "true" if v else "false"
    if t is int or t is UInt:
        return str(int(v))
    if t is float:
        return _format_double(v)
    if t is bytes:
        try:
            return str(v.decode("utf-8"))
        except UnicodeDecodeError:
            raise EvalError("invalid UTF-8 in bytes, cannot convert to string") from None
    raise no_overload("string", v)


def _bytes(v: Any) -> bytes:
    if type(v) is bytes:
        return v
    if type(v) is str:
        return v.encode("utf-8", errors="surrogatepass")
    raise no_overload("bytes", v)


def _bool(v: Any) -> bool:
    if type(v) is bool:
        return v
    if type(v) is str:
        if v in ("true", "True", "TRUE", "t", "1"):
            return True
        if v in ("false", "False", "FALSE", "f", "0"):
            return False
        raise EvalError("type conversion error from 'string' to 'bool'")
    raise no_overload("bool", v)


def _type(v: Any) -> TypeValue:
    return TypeValue(type_name(v))


# --------------------------------------------------------------------------- strings
def _str_method(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def impl(s: Any, *args: Any) -> Any:
        if type(s) is not str:
            raise no_overload(name, s, *args)
        return fn(s, *args)

    return impl


def _contains(s: str, sub: Any) -> bool:
    return sub in s


def _matches(s: Any, pattern: Any) -> bool:
    if type(s) is not str or type(pattern) is not str:
        raise no_overload("matches", s, pattern)
    return compile_regex(pattern).search(s) is not None


def _find(s: Any, pattern: Any) -> str:
    if type(s) is not str or type(pattern) is not str:
        raise no_overload("find", s, pattern)
    m = compile_regex(pattern).search(s)
    return "" if m is None else str(m.group(0))


def _find_all(s: Any, pattern: Any, limit: Any = -1) -> list[str]:
    if type(s) is not str or type(pattern) is not str or type(limit) is not int:
        raise no_overload("findAll", s, pattern)
    if limit == 0:
        return []
    out = [str(m.group(0)) for m in compile_regex(pattern).finditer(s)]
    return out if limit < 0 else out[:limit]


def _char_at(s: str, i: Any) -> str:
    if type(i) is not int:
        raise no_overload("charAt", s, i)
    if not 0 <= i <= len(s):
        raise EvalError(f"index out of range: {i}")
    return s[i : i + 1]


def _index_of(s: Any, sub: Any, start: Any = None) -> int:
    if type(s) in (list, tuple):  # Kubernetes lists library: list.indexOf(elem)
        for i, x in enumerate(s):
            if cel_equal(x, sub):
                return i
        return -1
    if type(s) is not str or type(sub) is not str:
        raise no_overload("indexOf", s, sub)
    begin = 0 if start is None else start
    if not 0 <= begin <= len(s):
        raise EvalError(f"index out of range: {begin}")
    return s.find(sub, begin)


def _last_index_of(s: Any, sub: Any, start: Any = None) -> int:
    if type(s) in (list, tuple):
        for i in range(len(s) - 1, -1, -1):
            if cel_equal(s[i], sub):
                return i
        return -1
    if type(s) is not str or type(sub) is not str:
        raise no_overload("lastIndexOf", s, sub)
    end = len(s) if start is None else start
    if not 0 <= end <= len(s):
        raise EvalError(f"index out of range: {end}")
    return s.rfind(sub, 0, end + len(sub))


def _lower(s: str) -> str:
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def _upper(s: str) -> str:
    return "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in s)


def _replace(s: str, old: Any, new: Any, n: Any = -1) -> str:
    if type(old) is not str or type(new) is not str or type(n) is not int:
        raise no_overload("replace", s, old, new)
    return s.replace(old, new, n if n >= 0 else -1)


def _split(s: str, sep: Any, n: Any = -1) -> list[str]:
    if type(sep) is not str or type(n) is not int:
        raise no_overload("split", s, sep)
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        if n > 0 and len(chars) > n:
            chars = [*chars[: n - 1], "".join(chars[n - 1 :])]
        return chars
    return s.split(sep, n - 1 if n > 0 else -1)


def _substring(s: str, start: Any, end: Any = None) -> str:
    stop = len(s) if end is None else end
    if type(start) is not int or type(stop) is not int:
        raise no_overload("substring", s, start)
    if not 0 <= start <= len(s):
        raise EvalError(f"index out of range: {start}")
    if not 0 <= stop <= len(s):
        raise EvalError(f"index out of range: {stop}")
    if start > stop:
        raise EvalError(f"invalid substring range. start: {start}, end: {stop}")
    return s[start:stop]


_UNICODE_SPACE = " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _trim(s: str) -> str:
    return s.strip(_UNICODE_SPACE)


def _join(lst: Any, sep: Any = "") -> str:
    if type(lst) not in (list, tuple) or type(sep) is not str or any(type(x) is not str for x in lst):
        raise no_overload("join", lst)
    return str(sep).join(lst)


# --------------------------------------------------------------------------- lists
def _list_method(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def impl(lst: Any, *args: Any) -> Any:
        if type(lst) not in (list, tuple):
            raise no_overload(name, lst, *args)
        return fn(lst, *args)

    return impl


def _comparable(lst: Any, name: str) -> None:
    if (lst and not (all(_is_num(x) for x in lst) or len({type(x) for x in lst}) == 1)) or any(
        type(x) not in (int, UInt, float, str, bytes, bool) for x in lst
    ):
        raise no_overload(name, lst)


def _is_sorted(lst: Any) -> bool:
    _comparable(lst, "isSorted")
    return all(lst[i] <= lst[i + 1] for i in range(len(lst) - 1))


def _sum(lst: Any) -> Any:
    if not lst:
        return 0
    total = lst[0]
    for x in lst[1:]:
        total = _add(total, x)
    return total


def _min_max(name: str) -> Callable[[Any], Any]:
    def impl(lst: Any) -> Any:
        if not lst:
            raise EvalError(f"{name}(list) called on empty list")
        _comparable(lst, name)
        return min(lst) if name == "min" else max(lst)

    return impl


def _slice(lst: Any, start: Any, end: Any) -> list[Any]:
    if type(start) is not int or type(end) is not int:
        raise no_overload("slice", lst, start, end)
    if start < 0 or end < 0:
        raise EvalError(f"cannot slice(${start}, ${end}), negative indexes not supported")
    if start > end:
        raise EvalError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if end > len(lst):
        raise EvalError(f"cannot slice({start}, {end}), list is length {len(lst)}")
    return list(lst[start:end])


def _flatten(lst: Any, depth: Any = 1) -> list[Any]:
    if type(depth) is not int:
        raise no_overload("flatten", lst, depth)
    if depth < 0:
        raise EvalError("level must be non-negative")
    out: list[Any] = []
    for x in lst:
        if type(x) in (list, tuple) and depth > 0:
            out.extend(_flatten(x, depth - 1))
        else:
            out.append(x)
    return out


def _distinct(lst: Any) -> list[Any]:
    out: list[Any] = []
    for x in lst:
        if not any(cel_equal(x, y) for y in out):
            out.append(x)
    return out


def _sort(lst: Any) -> list[Any]:
    _comparable(lst, "sort")
    return sorted(lst)


def _sets(name: str) -> Callable[[Any, Any], bool]:
    def impl(a: Any, b: Any) -> bool:
        if type(a) not in (list, tuple) or type(b) not in (list, tuple):
            raise no_overload(name, a, b)
        a_in_b = all(any(cel_equal(x, y) for y in a) for x in b)  # every element of b is in a
        if name == "sets.contains":
            return a_in_b
        if name == "sets.equivalent":
            return a_in_b and all(any(cel_equal(x, y) for y in b) for x in a)
        return any(any(cel_equal(x, y) for y in b) for x in a)

    return impl


# --------------------------------------------------------------------------- Kubernetes quantity
def _quantity(s: Any) -> Quantity:
    if type(s) is not str:
        raise no_overload("quantity", s)
    try:
        return parse_quantity(s)
    except QuantityError as e:
        raise EvalError(str(e)) from None


def _is_quantity(s: Any) -> bool:
    if type(s) is not str:
        raise no_overload("isQuantity", s)
    try:
        parse_quantity(s)
    except QuantityError:
        return False
    return True


def _q(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def impl(q: Any, *args: Any) -> Any:
        if type(q) is not Quantity:
            raise no_overload(name, q, *args)
        return fn(q, *args)

    return impl


def _q_as_int64(q: Quantity) -> int | None:
    """``Quantity.AsInt64``: the value when it is a whole number that fits in int64."""
    if not q.is_integer():
        return None
    v = q.nanos // 10**9
    return v if fits_int64(v) else None


def _q_as_integer(q: Quantity) -> int:
    v = _q_as_int64(q)
    if v is None:
        raise EvalError("cannot convert value to integer")
    return v


def _q_arith(name: str) -> Callable[[Any, Any], Quantity]:
    def impl(q: Any, other: Any) -> Quantity:
        if type(q) is not Quantity:
            raise no_overload(name, q, other)
        if type(other) is int:
            other = Quantity.from_int(other, Format.DECIMAL_EXPONENT)
        elif type(other) is not Quantity:
            raise no_overload(name, q, other)
        return q.add(other) if name == "add" else q.sub(other)

    return impl


def _compare(name: str, result: Callable[[int], Any]) -> Callable[[Any, Any], Any]:
    """``compareTo``/``isGreaterThan``/``isLessThan``: Quantity×Quantity or Semver×Semver."""

    def impl(a: Any, b: Any) -> Any:
        ta = type(a)
        if ta is Quantity and type(b) is Quantity:
            return result(a.cmp(b))
        if ta is Semver and type(b) is Semver:
            return result(a.compare(b))
        raise no_overload(name, a, b)

    return impl


# --------------------------------------------------------------------------- Kubernetes semver
def _semver(s: Any, normalize: Any = False) -> Semver:
    if type(s) is not str or type(normalize) is not bool:
        raise no_overload("semver", s)
    try:
        return parse_semver(s, normalize)
    except SemverError as e:
        raise EvalError(str(e)) from None


def _is_semver(s: Any, normalize: Any = False) -> bool:
    if type(s) is not str or type(normalize) is not bool:
        raise no_overload("isSemver", s)
    try:
        parse_semver(s, normalize)
    except SemverError:
        return False
    return True


def _v(name: str, attr: str) -> Callable[[Any], int]:
    def impl(v: Any) -> int:
        if type(v) is not Semver:
            raise no_overload(name, v)
        return int(getattr(v, attr))

    return impl


# --------------------------------------------------------------------------- declarations
_NUMS = [I, U, D]
_ORDERED = [I, U, D, S, BY, BO]


def _register() -> None:
    for op in ("_<_", "_<=_", "_>_", "_>=_"):
        ovs = [(f"{op}_{t}", False, [t, t], BO) for t in _ORDERED]
        ovs += [(f"{op}_{a}_{b}", False, [a, b], BO) for a in _NUMS for b in _NUMS if a != b]
        _fn(op, ovs, _cmp(op))
    _fn("_==_", [("equals", False, [A, A], BO)], cel_equal)
    _fn("_!=_", [("not_equals", False, [A, A], BO)], _ne)
    _fn("_+_", [(f"add_{t}", False, [t, t], t) for t in (I, U, D, S, BY)] + [("add_list", False, [LA, LA], LA)], _add)
    _fn("_-_", [(f"subtract_{t}", False, [t, t], t) for t in _NUMS], _sub)
    _fn("_*_", [(f"multiply_{t}", False, [t, t], t) for t in _NUMS], _mul)
    _fn("_/_", [(f"divide_{t}", False, [t, t], t) for t in _NUMS], _div)
    _fn("_%_", [(f"modulo_{t}", False, [t, t], t) for t in (I, U)], _mod)
    _fn("-_", [("negate_int", False, [I], I), ("negate_double", False, [D], D)], _neg)
    _fn("!_", [("logical_not", False, [BO], BO)], _not)
    _fn("@in", [("in_list", False, [A, LA], BO), ("in_map", False, [A, MAB], BO)], _in)
    _fn("_[_]", [("index_list", False, [LA, I], A), ("index_map", False, [MAB, A], B)], _index)
    _fn("size", [(f"size_{t}", m, [t], I) for t in (S, BY, LA, MAB) for m in (False, True)], _size)
    _fn("int", [(f"int_{t}", False, [t], I) for t in (I, U, D, S)], _int)
    _fn("uint", [(f"uint_{t}", False, [t], U) for t in (I, U, D, S)], _uint)
    _fn("double", [(f"double_{t}", False, [t], D) for t in (I, U, D, S)], _double)
    _fn("string", [(f"string_{t}", False, [t], S) for t in (I, U, D, S, BY, BO)], _string)
    _fn("bytes", [(f"bytes_{t}", False, [t], BY) for t in (S, BY)], _bytes)
    _fn("bool", [(f"bool_{t}", False, [t], BO) for t in (S, BO)], _bool)
    _fn("dyn", [("to_dyn", False, [A], DYN)], lambda v: v)
    _fn("type", [("type", False, [A], T.type_of(A))], _type)
    # strings
    _fn("contains", [("contains_string", True, [S, S], BO)], _str_method("contains", _contains))
    _fn("startsWith", [("starts_with_string", True, [S, S], BO)],
        _str_method("startsWith", lambda s, p: type(p) is str and s.startswith(p)))
    _fn("endsWith", [("ends_with_string", True, [S, S], BO)],
        _str_method("endsWith", lambda s, p: type(p) is str and s.endswith(p)))
    _fn("matches", [("matches", False, [S, S], BO), ("matches_string", True, [S, S], BO)], _matches)
    _fn("find", [("find", True, [S, S], S)], _find)
    _fn("findAll", [("find_all", True, [S, S], T.list_of(S)), ("find_all_n", True, [S, S, I], T.list_of(S))], _find_all)
    _fn("charAt", [("string_char_at_int", True, [S, I], S)], _str_method("charAt", _char_at))
    _fn("indexOf", [("string_index_of_string", True, [S, S], I), ("string_index_of_string_int", True, [S, S, I], I),
                    ("list_index_of", True, [LA, A], I)], _index_of)
    _fn("lastIndexOf", [("string_last_index_of_string", True, [S, S], I),
                        ("string_last_index_of_string_int", True, [S, S, I], I),
                        ("list_last_index_of", True, [LA, A], I)], _last_index_of)
    _fn("lowerAscii", [("string_lower_ascii", True, [S], S)], _str_method("lowerAscii", _lower))
    _fn("upperAscii", [("string_upper_ascii", True, [S], S)], _str_method("upperAscii", _upper))
    _fn("replace", [("string_replace_string_string", True, [S, S, S], S),
                    ("string_replace_string_string_int", True, [S, S, S, I], S)], _str_method("replace", _replace))
    _fn("split", [("string_split_string", True, [S, S], T.list_of(S)),
                  ("string_split_string_int", True, [S, S, I], T.list_of(S))], _str_method("split", _split))
    _fn("substring", [("string_substring_int", True, [S, I], S), ("string_substring_int_int", True, [S, I, I], S)],
        _str_method("substring", _substring))
    _fn("trim", [("string_trim", True, [S], S)], _str_method("trim", _trim))
    _fn("join", [("list_join", True, [T.list_of(S)], S), ("list_join_string", True, [T.list_of(S), S], S)], _join)
    # lists (Kubernetes lists library + cel-go lists extension)
    _fn("isSorted", [("list_is_sorted", True, [LA], BO)], _list_method("isSorted", _is_sorted))
    _fn("sum", [(f"list_sum_{t}", True, [T.list_of(t)], t) for t in _NUMS], _list_method("sum", _sum))
    _fn("min", [("list_min", True, [LA], A)], _list_method("min", _min_max("min")))
    _fn("max", [("list_max", True, [LA], A)], _list_method("max", _min_max("max")))
    _fn("slice", [("list_slice", True, [LA, I, I], LA)], _list_method("slice", _slice))
    _fn("flatten", [("list_flatten", True, [T.list_of(LA)], LA), ("list_flatten_int", True, [T.list_of(DYN), I], T.list_of(DYN))],
        _list_method("flatten", _flatten))
    _fn("distinct", [("list_distinct", True, [LA], LA)], _list_method("distinct", _distinct))
    _fn("sort", [("list_sort", True, [LA], LA)], _list_method("sort", _sort))
    # Kubernetes lists library v1 (1.37; in 1.36 and 1.37 declared by DRAListTypeAttributes for selectors)
    _fn("includes", [("list_includes_dyn_dyn", True, [DYN, DYN], BO)], _includes)
    for name in ("sets.contains", "sets.equivalent", "sets.intersects"):
        _fn(name, [(name.replace(".", "_"), False, [LA, LA], BO)], _sets(name))
    # Kubernetes quantity library (sign is a *global* function there, not a method)
    _fn("quantity", [("string_to_quantity", False, [S], Q)], _quantity)
    _fn("isQuantity", [("is_quantity_string", False, [S], BO)], _is_quantity)
    _fn("sign", [("quantity_sign", False, [Q], I)], _q("sign", lambda q: q.sign()))
    _fn("asApproximateFloat", [("quantity_get_float", True, [Q], D)], _q("asApproximateFloat", lambda q: q.as_float()))
    _fn("asInteger", [("quantity_get_int", True, [Q], I)], _q("asInteger", _q_as_integer))
    _fn("isInteger", [("quantity_is_integer", True, [Q], BO)], _q("isInteger", lambda q: _q_as_int64(q) is not None))
    _fn("add", [("quantity_add", True, [Q, Q], Q), ("quantity_add_int", True, [Q, I], Q)], _q_arith("add"))
    _fn("sub", [("quantity_sub", True, [Q, Q], Q), ("quantity_sub_int", True, [Q, I], Q)], _q_arith("sub"))
    _fn("compareTo", [("quantity_compare_to", True, [Q, Q], I), ("semver_compare_to", True, [V, V], I)],
        _compare("compareTo", lambda c: c))
    _fn("isGreaterThan", [("quantity_is_greater_than", True, [Q, Q], BO), ("semver_is_greater_than", True, [V, V], BO)],
        _compare("isGreaterThan", lambda c: c == 1))
    _fn("isLessThan", [("quantity_is_less_than", True, [Q, Q], BO), ("semver_is_less_than", True, [V, V], BO)],
        _compare("isLessThan", lambda c: c == -1))
    # Kubernetes semver library
    _fn("semver", [("string_to_semver", False, [S], V), ("string_bool_to_semver", False, [S, BO], V)], _semver)
    _fn("isSemver", [("is_semver_string", False, [S], BO), ("is_semver_string_bool", False, [S, BO], BO)], _is_semver)
    _fn("major", [("semver_major", True, [V], I)], _v("major", "major"))
    _fn("minor", [("semver_minor", True, [V], I)], _v("minor", "minor"))
    _fn("patch", [("semver_patch", True, [V], I)], _v("patch", "patch"))


_register()
