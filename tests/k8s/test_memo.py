"""Memo tables: bounded, emptied when full, all listed by name."""

from __future__ import annotations

import pytest
from draguard.k8s import Memo, memo_tables, parse_quantity


def test_a_full_table_empties_itself() -> None:
    table: Memo[int, int] = Memo("test: a full table", 3)
    for i in range(3):
        table.put(i, i * i)
    assert len(table) == 3 and table.get(2) == 4
    table.put(3, 9)
    assert len(table) == 1 and table.get(0) is None and table.get(3) == 9


def test_every_process_wide_table_is_listed_and_bounded() -> None:
    parse_quantity("40Gi")
    tables = memo_tables()
    assert {"quantities", "semantic versions", "regular expressions"} <= set(tables)
    assert len(tables["quantities"]) >= 1
    assert all(0 < t.limit <= 65536 for t in tables.values())


def test_a_name_is_taken_once() -> None:
    Memo("test: taken once", 1)
    with pytest.raises(ValueError, match="exists already"):
        Memo("test: taken once", 1)
