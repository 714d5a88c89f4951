"""Go's integer and string semantics, written once.

Why one module: Kubernetes is written in Go, and draguard reproduces its answers to the byte.
Go integers are 64 bits and wrap silently, ``/`` truncates toward zero where Python's ``//``
floors, ``%`` takes the dividend's sign, ``len(s)`` counts UTF-8 bytes and ``%q`` escapes the
way ``strconv.Quote`` does.  Each of these was once written in several places; a fix to one
copy left the others wrong.  Everything that needs Go's arithmetic or Go's strings imports it
from here.

**The whole-unit rule of Kubernetes 1.36** lives here too (:func:`whole_units` and the two
functions built on it): request policies are checked and rounded on ``Quantity.Value()`` — int64
whole units, rounded away from zero, truncated to the low 64 bits beyond int64 — with int64
wrap-around in every step of the arithmetic.  The validation rules, the lints and the
allocator's rounding all call these functions, so they cannot disagree.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the Quantity type only annotates; quantity.py itself imports from here
    from .quantity import Quantity

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "UINT64_MAX",
    "byte_len",
    "fits_int64",
    "fits_uint64",
    "go_div",
    "go_mod",
    "go_quote",
    "round_up_to_step",
    "whole_units",
    "whole_units_off_step",
    "wrap_int64",
]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1


# --------------------------------------------------------------------------- integers
def fits_int64(n: int) -> bool:
    """Whether ``n`` is representable as a Go ``int64`` (CEL reports overflow when it is not)."""
    return INT64_MIN <= n <= INT64_MAX


def fits_uint64(n: int) -> bool:
    """Whether ``n`` is representable as a Go ``uint64``."""
    return 0 <= n <= UINT64_MAX


def wrap_int64(n: int) -> int:
    """Wrap an integer to int64 two's complement, as Go arithmetic silently does."""
    n &= UINT64_MAX
    return n - 2**64 if n > INT64_MAX else n


def go_div(a: int, b: int) -> int:
    """Go's integer ``/``: truncates toward zero (Python's ``//`` floors).  ``b`` must not be 0."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def go_mod(a: int, b: int) -> int:
    """Go's ``%``: the remainder has the dividend's sign.  ``b`` must not be 0."""
    return a - b * go_div(a, b)


# --------------------------------------------------------------------------- whole units (1.36)
def whole_units(q: Quantity) -> int:
    """``Quantity.Value()`` as Go returns it: rounded away from zero, *then* truncated to int64.

    Beyond int64 Go keeps the low 64 bits of the magnitude (``big.Int.Int64``), so e.g. a
    multiple of 2^64 reads back as 0 — the source of the 1.36 division-by-zero panic.
    """
    v = q.value()
    if fits_int64(v):
        return v
    r = wrap_int64(abs(v))
    return wrap_int64(-r) if v < 0 else r


def whole_units_off_step(value: Quantity, base: Quantity, step: Quantity) -> bool:
    """Whether ``value`` is off the grid ``base + k·step``, judged on whole units as 1.36 does.

    ``step`` must not be zero in whole units (callers check: Go would divide by zero).
    """
    diff = wrap_int64(whole_units(value) - whole_units(base))
    return go_mod(diff, whole_units(step)) != 0


def round_up_to_step(value: Quantity, base: Quantity, step: Quantity) -> int:
    """The allocator's ``min + step·⌈(value − min) / step⌉`` in whole units, with int64 wrap-around.

    ``step`` must not be zero in whole units.
    """
    lo, step_v = whole_units(base), whole_units(step)
    added = wrap_int64(whole_units(value) - lo)
    n = go_div(added, step_v)
    if go_mod(added, step_v) != 0:
        n = wrap_int64(n + 1)
    return wrap_int64(lo + wrap_int64(step_v * n))


# --------------------------------------------------------------------------- strings
def byte_len(value: str) -> int:
    """Go's ``len(string)``: UTF-8 bytes — what every Kubernetes length limit counts.

    An ASCII string (``isascii`` reads a flag) has as many bytes as characters: no encoded copy
    (~160,000 calls in a 10,000-object lint)."""
    if value.isascii():
        return len(value)
    return len(value.encode("utf-8", "surrogatepass"))


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
               "\v": "\\v", '"': '\\"', "\\": "\\\\"}


def _go_printable(ch: str) -> bool:
    """Go's ``unicode.IsPrint``: letters, marks, numbers, punctuation, symbols and ASCII space."""
    return ch == " " or unicodedata.category(ch)[0] in "LMNPS"


def go_quote(s: str) -> str:
    """Go's ``strconv.Quote`` (what ``%q`` prints): escapes as Go writes them, printable runes kept."""
    out = ['"']
    for ch in s:
        code = ord(ch)
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif _go_printable(ch):
            out.append(ch)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\\ufffd")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)
