"""The collector thresholds used while big object trees are built."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from draguard.k8s.collector import BULK_THRESHOLDS, bulk_allocation


@pytest.fixture(autouse=True)
def _restore_thresholds() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_thresholds_are_raised_inside_and_restored_after() -> None:
    gc.set_threshold(700, 10, 10)
    with bulk_allocation():
        assert gc.get_threshold() == BULK_THRESHOLDS
    assert gc.get_threshold() == (700, 10, 10)


def test_thresholds_are_restored_when_the_block_raises() -> None:
    gc.set_threshold(700, 10, 10)
    with pytest.raises(ValueError), bulk_allocation():
        raise ValueError("boom")
    assert gc.get_threshold() == (700, 10, 10)


def test_higher_thresholds_already_in_force_are_kept() -> None:
    gc.set_threshold(1_000_000, 5, 1_000)
    with bulk_allocation():
        assert gc.get_threshold() == (1_000_000, BULK_THRESHOLDS[1], 1_000)
    assert gc.get_threshold() == (1_000_000, 5, 1_000)


def test_cyclic_garbage_is_still_collected_inside() -> None:
    class Node:
        partner: object = None

    with bulk_allocation():
        collected_before = sum(s["collected"] for s in gc.get_stats())
        for _ in range(BULK_THRESHOLDS[0] * 2):
            a, b = Node(), Node()
            a.partner, b.partner = b, a
        collected_after = sum(s["collected"] for s in gc.get_stats())
    assert collected_after > collected_before
