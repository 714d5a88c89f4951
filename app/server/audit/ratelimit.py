"""A client-side token bucket for the audit's API writes.

Why: after an inventory change the audit may have hundreds of namespaces' reports and Events to
write at once; API Priority and Fairness would queue or 429 them, and every other controller of
the cluster shares that budget.  Writes wait for a token (``rate`` per second, up to ``burst``
at once), so the audit's write rate is bounded whatever the pass found.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

__all__ = ["TokenBucket"]


class TokenBucket:
    def __init__(self, rate: float, burst: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a token bucket needs rate > 0 and burst >= 1")
        self.rate = rate
        self.burst = float(burst)
        self._tokens = float(burst)
        self._clock = clock
        self._stamp = clock()
        self.waited = 0.0  # seconds spent waiting for tokens, in total

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    def try_take(self) -> bool:
        """Take a token if one is there now."""
        self._refill()
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        return False

    async def take(self) -> None:
        """Wait until a token is there, then take it."""
        while not self.try_take():
            delay = (1 - self._tokens) / self.rate
            self.waited += delay
            await asyncio.sleep(delay)
