"""Kubernetes ``resource.Quantity``: parsing, exact arithmetic and canonical formatting.

Why a re-implementation: every capacity check, request-policy rule and CEL ``quantity()`` call
must agree with apimachinery to the last digit (``validValues`` duplicates are keyed on
``Value()``, messages print ``String()``).  Floats cannot do that, so the value is held as an
exact integer number of nano-units — the finest precision a parsed Kubernetes quantity keeps
(``ParseQuantity`` rounds anything finer *up*, away from zero).

Semantics carried over from apimachinery (``pkg/api/resource/quantity.go``, ``suffix.go``,
``amount.go``): the grammar ``^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$``, the three formats
(BinarySI ``Ki``…``Ei``, DecimalSI ``n``…``E``, DecimalExponent ``e3``), the 2^63-1 cap for
BinarySI, ``Value()``/``MilliValue()`` rounding away from zero, and ``String()`` — including the
re-use of the original text when apimachinery's fast path keeps it.
"""

from __future__ import annotations

import enum
import re
from functools import total_ordering

from .errors import DraguardError
from .golang import INT64_MAX
from .memo import Memo

__all__ = ["Format", "Quantity", "QuantityError", "parse_quantity"]

_NANO = 10**9
_MAX_DIGITS = 1000  # digits kept exactly; far beyond int64, far below a denial of service

ERR_FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

_EXPONENT_SUFFIX = re.compile(r"^[eE][+-]?[0-9]+$")

_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXPONENT = {v: k for k, v in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXPONENT = {v: k for k, v in _BINARY_SUFFIXES.items()}
_BINARY_BY_EXPONENT[0] = ""


class QuantityError(DraguardError, ValueError):
    """A string that apimachinery's ``ParseQuantity`` would refuse; the message is upstream's."""


class Format(enum.Enum):
    """How a quantity prints; the format of the text it was parsed from."""

    DECIMAL_SI = "DecimalSI"
    BINARY_SI = "BinarySI"
    DECIMAL_EXPONENT = "DecimalExponent"


def _ceil_div(n: int, d: int) -> int:
    return -(-n // d)


def _away_from_zero_div(n: int, d: int) -> int:
    """Integer division rounding away from zero, as apimachinery's ``AsScaledInt64`` does."""
    if n >= 0:
        return _ceil_div(n, d)
    return -_ceil_div(-n, d)


@total_ordering
class Quantity:
    """An exact Kubernetes quantity.  Immutable; ``==`` and ordering compare values."""

    __slots__ = ("_format", "_nanos", "_text")

    def __init__(self, nanos: int, fmt: Format = Format.DECIMAL_SI, text: str | None = None) -> None:
        self._nanos = nanos
        self._format = fmt
        self._text = text

    # ------------------------------------------------------------------ construction
    @classmethod
    def parse(cls, text: str) -> Quantity:
        """Parse like ``resource.ParseQuantity``; raises :class:`QuantityError`."""
        return parse_quantity(text)

    @classmethod
    def from_int(cls, value: int, fmt: Format = Format.DECIMAL_SI) -> Quantity:
        """Like ``resource.NewQuantity(value, format)``."""
        return cls(value * _NANO, fmt)

    @classmethod
    def from_milli(cls, milli: int, fmt: Format = Format.DECIMAL_SI) -> Quantity:
        """Like ``resource.NewMilliQuantity``."""
        return cls(milli * 10**6, fmt)

    # ------------------------------------------------------------------ accessors
    @property
    def nanos(self) -> int:
        """The exact value in units of 10^-9."""
        return self._nanos

    @property
    def format(self) -> Format:
        return self._format

    def value(self) -> int:
        """``Quantity.Value()``: whole units, rounded away from zero (so ``100m`` → 1)."""
        return _away_from_zero_div(self._nanos, _NANO)

    def milli_value(self) -> int:
        """``Quantity.MilliValue()``: milli-units, rounded away from zero."""
        return _away_from_zero_div(self._nanos, 10**6)

    def sign(self) -> int:
        return (self._nanos > 0) - (self._nanos < 0)

    def is_zero(self) -> bool:
        return self._nanos == 0

    def is_integer(self) -> bool:
        return self._nanos % _NANO == 0

    def as_float(self) -> float:
        return self._nanos / _NANO

    # ------------------------------------------------------------------ arithmetic
    def add(self, other: Quantity) -> Quantity:
        """``q.Add(y)``: exact; keeps this quantity's format (the other's when this is zero)."""
        fmt = other._format if self._nanos == 0 else self._format
        return Quantity(self._nanos + other._nanos, fmt)

    def sub(self, other: Quantity) -> Quantity:
        fmt = other._format if self._nanos == 0 else self._format
        return Quantity(self._nanos - other._nanos, fmt)

    def neg(self) -> Quantity:
        return Quantity(-self._nanos, self._format)

    def cmp(self, other: Quantity) -> int:
        """``q.Cmp(y)``: -1, 0 or 1."""
        return (self._nanos > other._nanos) - (self._nanos < other._nanos)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self._nanos == other._nanos
        return NotImplemented

    def __lt__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self._nanos < other._nanos
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._nanos)

    def __add__(self, other: Quantity) -> Quantity:
        return self.add(other)

    def __sub__(self, other: Quantity) -> Quantity:
        return self.sub(other)

    # ------------------------------------------------------------------ formatting
    def __str__(self) -> str:
        if self._text is not None:
            return self._text
        return canonical_string(self._nanos, self._format)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def short(self) -> str:
        """For messages: the text as written when there is one, else the shortest exact form with a
        decimal or binary suffix (``10G``, ``1500M``, ``10Gi``).

        Why not ``str``: that is apimachinery's canonical form *in the quantity's format*, and
        arithmetic gives the allocator's results BinarySI (``NewQuantity(v, BinarySI)``), so 10G
        consumed prints ``9765625Ki`` and 1500M prints ``1500000000`` — exact, right for a patch,
        unreadable in a sentence.  On equal length the quantity's own format wins."""
        if self._text is not None:
            return self._text
        own = canonical_string(self._nanos, self._format)
        forms = [own] + [canonical_string(self._nanos, f) for f in (Format.DECIMAL_SI, Format.BINARY_SI)]
        return min(forms, key=len)


def _strip_factors(amount: int, base: int) -> tuple[int, int]:
    times = 0
    if amount == 0:
        return 0, 0
    while amount % base == 0:
        amount //= base
        times += 1
    return amount, times


def _strip_decimal_zeros(amount: int) -> tuple[int, int]:
    """Remove trailing decimal zeros in one pass over the digits (not one division per zero)."""
    text = str(amount)
    stripped = text.rstrip("0")
    return int(stripped or "0"), len(text) - len(stripped)


_CANONICAL: Memo[tuple[int, Format], str] = Memo("canonical quantity texts", 4096)
"""What :func:`canonical_string` printed, by value and format: an inventory prints the same few
capacities (``80Gi``) once per device when it keys device profiles by their JSON."""


def canonical_string(nanos: int, fmt: Format) -> str:
    """``Quantity.String()`` without a cached text: apimachinery's ``CanonicalizeBytes``."""
    key = (nanos, fmt)
    text = _CANONICAL.get(key)
    if text is None:
        text = _canonical_string(nanos, fmt)
        if abs(nanos) < 10**40:  # a short text: huge values are rare and not worth a slot
            _CANONICAL.put(key, text)
    return text


def _canonical_string(nanos: int, fmt: Format) -> str:
    if nanos == 0:
        return "0"
    if fmt is Format.BINARY_SI:
        if -1024 * _NANO < nanos < 1024 * _NANO or nanos % _NANO != 0:
            fmt = Format.DECIMAL_SI  # small or fractional binary values print as decimal
        else:
            sign = "-" if nanos < 0 else ""
            amount, times = _strip_factors(abs(nanos) // _NANO, 1024)
            if times <= 6:
                return f"{sign}{amount}{_BINARY_BY_EXPONENT[times * 10]}"
            fmt = Format.DECIMAL_SI  # past Ei there is no binary suffix: exact decimal instead
    sign = "-" if nanos < 0 else ""
    amount, times = _strip_decimal_zeros(abs(nanos))
    exponent = times - 9
    remainder = exponent % 3  # Python's % floors, so the exponent goes *down* to a multiple of 3
    if remainder:
        amount *= 10**remainder
        exponent -= remainder
    if fmt is Format.DECIMAL_EXPONENT:
        return f"{sign}{amount}" + (f"e{exponent}" if exponent else "")
    suffix = _DECIMAL_BY_EXPONENT.get(exponent)
    if suffix is None:  # above exa: apimachinery has no SI suffix; use an exponent instead
        return f"{sign}{amount}e{exponent}"
    return f"{sign}{amount}{suffix}"


def _symbolic_canonical(digit_text: str, exp10: int, fmt: Format, negative: bool) -> str:
    """``String()`` of ``digit_text × 10^exp10`` computed on the digits, for huge exponents."""
    stripped = digit_text.rstrip("0")
    exponent = exp10 + (len(digit_text) - len(stripped))
    remainder = exponent % 3
    amount = stripped + "0" * remainder
    exponent -= remainder
    sign = "-" if negative else ""
    if fmt is Format.DECIMAL_SI and exponent in _DECIMAL_BY_EXPONENT:
        return f"{sign}{amount}{_DECIMAL_BY_EXPONENT[exponent]}"
    return f"{sign}{amount}e{exponent}"


_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")


def _parse_quantity_string(text: str) -> tuple[bool, str, str, str]:
    """(positive, integer digits, fraction digits, suffix) as apimachinery's ``parseQuantityString``.

    Faithful to its quirks: leading zeros are dropped, a number with no digits at all (``-``,
    ``.``, ``.Ki``) reads as zero, and ``1.`` is accepted.
    """
    pos, end = 0, len(text)
    positive = True
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    integer = text[start:pos] or "0"
    fraction = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        fraction = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT_WRONG)
    return positive, integer, fraction, text[suffix_start:]


def _has_digits(text: str) -> bool:
    return any(ch in _DIGITS for ch in text)


def _takes_slow_path(integer: str, fraction: str, fmt: Format, binary_exp: int | None, decimal_exp: int) -> bool:
    """Whether apimachinery's ``ParseQuantity`` leaves its int64 fast path for ``inf.Dec``."""
    num = integer.lstrip("0") or "0"
    if fmt is Format.BINARY_SI:
        assert binary_exp is not None
        if fraction:
            return True
        return 15 - len(num) - int(binary_exp * 3 / 10) - 1 < 0
    if 18 - (len(num) + len(fraction)) < 0:
        return True
    return decimal_exp - len(fraction) < -9


_PARSED: Memo[str, Quantity] = Memo("quantities", 4096)
_PARSED_TEXT_MAX = 64


def parse_quantity(text: str) -> Quantity:
    """Parse a quantity string exactly as apimachinery's ``ParseQuantity`` does.

    Inventories repeat a handful of quantities (``40Gi``, ``5Gi``) thousands of times, and a
    :class:`Quantity` is immutable, so parses are remembered: a bounded table of short texts
    (emptied when full; errors are not remembered).
    """
    got = _PARSED.get(text) if isinstance(text, str) else None
    if got is not None:  # a new object all the same: callers may tell two parsed requests apart by identity
        return Quantity(got._nanos, got._format, got._text)
    value = _parse_quantity(text)
    if len(text) <= _PARSED_TEXT_MAX:
        _PARSED.put(text, value)
    return value


def _parse_quantity(text: str) -> Quantity:
    if not isinstance(text, str) or not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    if text == "0":
        return Quantity(0, Format.DECIMAL_SI, "0")
    positive, integer, fraction, suffix = _parse_quantity_string(text)
    negative = not positive

    binary_exp: int | None = None
    decimal_exp: int
    if suffix in _BINARY_SUFFIXES:
        fmt = Format.BINARY_SI
        binary_exp = _BINARY_SUFFIXES[suffix]
        decimal_exp = 0
    elif suffix in _DECIMAL_SUFFIXES:
        fmt = Format.DECIMAL_SI
        decimal_exp = _DECIMAL_SUFFIXES[suffix]
    elif _EXPONENT_SUFFIX.match(suffix):
        fmt = Format.DECIMAL_EXPONENT
        try:
            decimal_exp = int(suffix[1:])
        except ValueError as exc:  # pragma: no cover - regex guarantees digits
            raise QuantityError(ERR_SUFFIX) from exc
        if not -(2**31) < decimal_exp < 2**31:
            raise QuantityError(ERR_SUFFIX)
    else:
        raise QuantityError(ERR_SUFFIX)

    if not _has_digits(text) and _takes_slow_path(integer, fraction, fmt, binary_exp, decimal_exp):
        # apimachinery hands digit-less text ("Ei", ".Pi") to its decimal parser, which refuses it
        raise QuantityError(ERR_NUMERIC)
    digit_text = ((integer or "0") + fraction).lstrip("0")
    if len(digit_text) > _MAX_DIGITS:
        raise QuantityError(f"{ERR_NUMERIC}: more than {_MAX_DIGITS} digits")
    digits = int(digit_text or "0")
    # exact value = digits * 10^(decimal_exp - len(fraction)) * 2^binary_exp, in nano units
    scale = decimal_exp - len(fraction) + 9
    numerator = digits * (2**binary_exp if binary_exp else 1)
    if digits and len(digit_text) + scale > _MAX_DIGITS:
        # Astronomically large (e.g. 1e2147483647): exact digits would take gigabytes.  The value
        # saturates (it still compares above every realistic capacity) and prints as written.
        nanos = 10 ** (_MAX_DIGITS + 9)
        canonical = _symbolic_canonical(digit_text, scale - 9, fmt, negative)
        return Quantity(-nanos if negative else nanos, fmt, canonical)
    if digits and scale < 0 and -scale > len(str(numerator)) + 1:
        scale = -(len(str(numerator)) + 1)  # below one nano either way: rounds up to 1n
    # below the nano, round up (away from zero, the sign comes later), like inf.RoundUp
    nanos = numerator * 10**scale if scale >= 0 else _ceil_div(numerator, 10**-scale)
    if fmt is Format.BINARY_SI and nanos > INT64_MAX * _NANO:
        nanos = INT64_MAX * _NANO
    if fmt is Format.BINARY_SI and 0 < nanos < _NANO:
        fmt = Format.DECIMAL_SI
    if negative:
        nanos = -nanos

    return Quantity(nanos, fmt, _reused_text(text, integer, fraction, fmt, binary_exp, decimal_exp, nanos))


def _reused_text(
    text: str,
    integer: str,
    fraction: str,
    fmt: Format,
    binary_exp: int | None,
    decimal_exp: int,
    nanos: int,
) -> str | None:
    """The original text when apimachinery's fast path would keep it as the cached ``String()``.

    This matters only for odd spellings such as ``+5``: Kubernetes echoes them back verbatim.
    """
    num = integer.lstrip("0") or "0"
    if fmt is Format.BINARY_SI:
        assert binary_exp is not None
        if fraction:
            return None
        precision = 15 - len(num) - int(binary_exp * 3 / 10) - 1
        value = int(num)
        if precision < 0 or value.bit_length() > 63:
            return None
        if binary_exp % 10 == 0 and value & 0x07 != 0:
            return text
        return None
    precision = 18 - (len(num) + len(fraction))
    if precision < 0:
        return None
    scale = decimal_exp - len(fraction)
    if scale < -9:
        return None
    shifted = num + fraction
    if not shifted or abs(int(shifted)) > INT64_MAX:
        return None
    if scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
        return text
    return None
