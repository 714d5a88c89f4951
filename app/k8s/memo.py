"""Bounded memo tables: the one kind of process-wide cache draguard keeps for parsed texts.

Why process-wide: the same short texts — quantities (``40Gi``), versions (``1.2.3``), regular
expressions — come back in every review and every inventory, and what they parse to is
immutable, so one table per process serves every review at once.  Why bounded: a webhook runs
for months on input it does not control, so a table that only grew would be a memory leak a
client could drive.  A table empties itself when full: cheaper on the hit path than least-recently-
used bookkeeping, and a refill costs one parse per entry.  Errors are never remembered.

Every table registers under a name (:func:`memo_tables`), so that the list of process-wide
caches is one lookup (README "Architecture", "Process-wide state") and tests can empty them.
The compiled-selector cache of :mod:`app.cel.selector` is the one other cache: least recently
used, because a compile costs milliseconds rather than microseconds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping
from typing import Generic, TypeVar

__all__ = ["Memo", "memo_tables"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_TABLES: dict[str, Memo[object, object]] = {}


class Memo(Generic[K, V]):
    """A table of at most ``limit`` entries, emptied when full; reads take no lock."""

    __slots__ = ("_data", "_lock", "get", "limit", "name")

    def __init__(self, name: str, limit: int) -> None:
        if name in _TABLES:
            raise ValueError(f"memo table {name!r} exists already")
        self.name = name
        self.limit = limit
        self._data: dict[K, V] = {}
        self.get: Callable[[K], V | None] = self._data.get
        """The entry for a key, or None: the table's own ``dict.get`` (the dict is emptied, never
        replaced), with no Python frame in between — ~230,000 reads in a 10,000-object lint."""
        self._lock = threading.Lock()
        _TABLES[name] = self  # type: ignore[assignment]

    def put(self, key: K, value: V) -> None:
        with self._lock:
            if len(self._data) >= self.limit:
                self._data.clear()
            self._data[key] = value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


def memo_tables() -> Mapping[str, Memo[object, object]]:
    """Every memo table of the process, by name."""
    return dict(_TABLES)
