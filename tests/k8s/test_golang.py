"""Go's integer and string semantics: each helper against what Go itself answers."""

from __future__ import annotations

import pytest
from draguard.k8s.golang import (
    INT64_MAX,
    INT64_MIN,
    UINT64_MAX,
    byte_len,
    fits_int64,
    fits_uint64,
    go_div,
    go_mod,
    round_up_to_step,
    whole_units,
    whole_units_off_step,
    wrap_int64,
)
from draguard.k8s.quantity import Quantity

Q = Quantity.parse


def test_int64_bounds_accept_the_edges_and_reject_one_beyond() -> None:
    assert fits_int64(INT64_MAX) and fits_int64(INT64_MIN)
    assert not fits_int64(INT64_MAX + 1) and not fits_int64(INT64_MIN - 1)
    assert fits_uint64(0) and fits_uint64(UINT64_MAX)
    assert not fits_uint64(-1) and not fits_uint64(UINT64_MAX + 1)


@pytest.mark.parametrize(
    ("n", "wrapped"),
    [(0, 0), (INT64_MAX, INT64_MAX), (INT64_MAX + 1, INT64_MIN), (2**64, 0), (-(2**64) - 1, -1), (INT64_MIN - 1, INT64_MAX)],
)
def test_wrap_int64_keeps_the_low_64_bits(n: int, wrapped: int) -> None:
    assert wrap_int64(n) == wrapped


@pytest.mark.parametrize(
    ("a", "b", "quotient", "remainder"),
    [(7, 2, 3, 1), (-7, 2, -3, -1), (7, -2, -3, 1), (-7, -2, 3, -1), (6, 3, 2, 0), (-6, 3, -2, 0)],
)
def test_division_truncates_toward_zero_and_modulo_takes_the_dividends_sign(
    a: int, b: int, quotient: int, remainder: int
) -> None:
    assert go_div(a, b) == quotient
    assert go_mod(a, b) == remainder
    assert a == b * go_div(a, b) + go_mod(a, b)


def test_whole_units_round_away_from_zero_then_truncate_to_int64() -> None:
    assert whole_units(Q("100m")) == 1
    assert whole_units(Q("-100m")) == -1
    assert whole_units(Q("2Ki")) == 2048
    assert whole_units(Q("18446744073709551616")) == 0  # 2^64: low 64 bits are zero
    assert whole_units(Q("9223372036854775808")) == INT64_MIN  # 2^63 wraps negative


def test_off_step_is_judged_on_whole_units() -> None:
    assert whole_units_off_step(Q("5Gi"), Q("1Gi"), Q("2Gi")) is False
    assert whole_units_off_step(Q("4Gi"), Q("1Gi"), Q("2Gi")) is True
    # a 500m step behaves like 1 in 1.36: 1500m rounds to 2, on the grid from 0
    assert whole_units_off_step(Q("1500m"), Q("0"), Q("500m")) is False


def test_round_up_to_step_lands_on_the_grid_from_min() -> None:
    assert round_up_to_step(Q("17Gi"), Q("4Gi"), Q("4Gi")) == 20 * 2**30
    assert round_up_to_step(Q("16Gi"), Q("4Gi"), Q("4Gi")) == 16 * 2**30
    assert round_up_to_step(Q("1"), Q("1"), Q("3")) == 1


def test_byte_len_counts_utf8_bytes() -> None:
    assert byte_len("abc") == 3
    assert byte_len("é") == 2
    assert byte_len("😀") == 4
    assert byte_len("\udc80") == 3  # a lone surrogate as Go's WTF-8 would carry it
