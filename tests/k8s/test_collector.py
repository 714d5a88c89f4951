"""The cyclic collector is paused while big object trees are built (``bulk_allocation``)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from draguard.collector import bulk_allocation


@pytest.fixture(autouse=True)
def _restore_collector() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_the_collector_is_paused_inside_and_resumed_after() -> None:
    gc.enable()
    with bulk_allocation():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_the_collector_is_resumed_when_the_block_raises() -> None:
    gc.enable()
    with pytest.raises(ValueError), bulk_allocation():
        raise ValueError("boom")
    assert gc.isenabled()


def test_a_collector_paused_before_stays_paused() -> None:
    gc.disable()
    with bulk_allocation():
        assert not gc.isenabled()
    assert not gc.isenabled()


class _Node:
    partner: object = None


def test_no_collection_runs_inside_and_the_cycles_left_are_freed_after() -> None:
    gc.enable()
    gc.collect()
    freed_before = sum(s["collected"] for s in gc.get_stats())
    with bulk_allocation():
        runs_before = sum(s["collections"] for s in gc.get_stats())
        for _ in range(100_000):  # well past every threshold
            a, b = _Node(), _Node()
            a.partner, b.partner = b, a
        assert sum(s["collections"] for s in gc.get_stats()) == runs_before
    gc.collect()  # (or the automatic collection that may run as soon as the collector is back)
    assert sum(s["collected"] for s in gc.get_stats()) - freed_before >= 199_000  # the last pair is alive
