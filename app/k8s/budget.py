"""A review's work budget: a monotonic deadline that CPU-bound loops check cooperatively.

Why cooperative and thread-local: reviews run in worker threads, and Python cannot stop a
thread from outside — so a review that outlives its answer would keep burning CPU (and the
GIL) that other reviews need.  Instead the door that starts a review opens a
:func:`budget_scope`; the loops that can run long (CEL comprehensions, selector compilation,
the satisfiability search) call :func:`check_budget`, which raises :class:`BudgetExceeded` once
the deadline has passed.  The door turns that into an allowed-with-warning answer, loudly.

:class:`BudgetExceeded` derives from ``BaseException`` on purpose: evaluators and checks have
``except Exception`` safety nets (a bug must not crash a review) that must not swallow it and
cache a wrong answer.  Code without an open scope (the CLI) never pays or stops.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Budget", "BudgetExceeded", "budget_scope", "check_budget", "current_budget", "exceeded_on_thread"]


class BudgetExceeded(BaseException):
    """The review's budget is spent; ``where`` says what was running (for the warning)."""

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where
        _local.exceeded = getattr(_local, "exceeded", 0) + 1  # seen even when a caller suppresses it


@dataclass(frozen=True, slots=True)
class Budget:
    """Work allowed until ``deadline`` (``time.monotonic()`` seconds)."""

    deadline: float

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def spent(self) -> bool:
        return time.monotonic() >= self.deadline


_local = threading.local()


def current_budget() -> Budget | None:
    """The budget of the review running on this thread, if any."""
    budget: Budget | None = getattr(_local, "budget", None)
    return budget


@contextlib.contextmanager
def budget_scope(seconds: float | None) -> Iterator[Budget | None]:
    """Run the block under a budget of ``seconds`` from now (None: unbounded); scopes nest, the
    tighter deadline wins."""
    outer = current_budget()
    budget = outer
    if seconds is not None:
        deadline = time.monotonic() + max(seconds, 0.0)
        if outer is None or deadline < outer.deadline:
            budget = Budget(deadline)
    _local.budget = budget
    try:
        yield budget
    finally:
        _local.budget = outer


def exceeded_on_thread() -> int:
    """How many times a :class:`BudgetExceeded` was made on this thread so far.

    Why: some checks suppress it on purpose ("not now" is only a hint: without time for it, say
    nothing), so a finished answer can be silently incomplete.  A caller that remembers answers
    (the webhook's answer memo) compares this count before and after and keeps only answers that
    nothing cut short.
    """
    count: int = getattr(_local, "exceeded", 0)
    return count


def check_budget(where: str) -> None:
    """Raise :class:`BudgetExceeded` when this thread's review has no time left."""
    budget: Budget | None = getattr(_local, "budget", None)
    if budget is not None and time.monotonic() >= budget.deadline:
        raise BudgetExceeded(where)
