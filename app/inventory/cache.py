"""A bounded, thread-safe LRU for data derived from one inventory snapshot.

Why bounded by weight, not by count: what the satisfiability check remembers per claim shape
ranges from a few notes to one verdict per device profile (and, for selectors whose reads
cannot be bounded, one per device).  Each value is put with a weight proportional to its size,
and the least recently used values go once the total passes the budget, so a stream of distinct
claims — an adversary's or a busy cluster's — keeps memory flat instead of growing with every
claim ever reviewed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable

__all__ = ["DEFAULT_BUDGET", "BoundedCache"]

DEFAULT_BUDGET = 1 << 18
"""Weight units per snapshot; a unit is about one cached device verdict (a few hundred bytes)."""


class BoundedCache:
    """``get``/``put`` with least-recently-used eviction once the summed weights exceed ``budget``."""

    def __init__(self, budget: int = DEFAULT_BUDGET) -> None:
        self.budget = budget
        self._items: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()
        self.evictions = 0

    def __reduce__(self) -> tuple[type[BoundedCache], tuple[int]]:
        """Pickled empty (same budget): what is remembered here is derived and rebuilt on use
        (a built inventory kept on disk, :mod:`.filecache`)."""
        return (BoundedCache, (self.budget,))

    def get(self, key: Hashable) -> object | None:
        with self._lock:
            got = self._items.get(key)
            if got is None:
                return None
            self._items.move_to_end(key)
            return got[0]

    def put(self, key: Hashable, value: object, weight: int = 1) -> None:
        """Remember ``value``; a value heavier than the whole budget is not kept at all."""
        weight = max(1, weight)
        if weight > self.budget:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._weight -= old[1]
            self._items[key] = (value, weight)
            self._weight += weight
            while self._weight > self.budget:
                _, (_, w) = self._items.popitem(last=False)
                self._weight -= w
                self.evictions += 1

    @property
    def weight(self) -> int:
        return self._weight

    def __len__(self) -> int:
        return len(self._items)
