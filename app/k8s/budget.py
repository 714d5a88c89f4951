"""A review's work budget: a monotonic deadline that CPU-bound loops check cooperatively.

Why cooperative: reviews run in worker threads, and Python cannot stop a thread from outside —
so a review that outlives its answer would keep burning CPU (and the GIL) that other reviews
need.  :class:`Budget` is the one object that says how long: the door that starts a review
opens a :func:`budget_scope` around it (the webhook: the request's deadline), and the review
makes one :class:`Budget` for its satisfiability checks from the deadline option, never past
the door's (:meth:`Budget.within`), and passes that object to every search.

How work stops: the searches (claim, pod, replica count, "now", explain) take the review's
budget as an argument and, once it is spent, stop and *answer* — a ``SatisfiabilityUnknown``
note whose ``fail_open`` says so, the one way a result says it was cut short.  Work that cannot
answer half-way and sits in layers that take no budget (CEL comprehensions, selector
compilation) reads the door's scope through :func:`check_budget`, which raises
:class:`BudgetExceeded`; the review turns that into the same kind of note (or, before any check
could run, a ``BudgetExceeded`` warning).  The review's budget ends no later than the scope's,
so the search never outlives the door.

:class:`BudgetExceeded` derives from ``BaseException`` on purpose: evaluators and checks have
``except Exception`` safety nets (a bug must not crash a review) that must not swallow it and
cache a wrong answer.  Without an open scope (the CLI) CEL and compilation never stop; the
searches stop where the deadline option (``--deadline-seconds``) ends the review's budget.
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

    @classmethod
    def within(cls, seconds: float | None, outer: Budget | None = None) -> Budget | None:
        """``seconds`` from now, but never past ``outer`` (the enclosing budget, which is returned
        itself when it ends first); None when neither bounds the work."""
        if seconds is None:
            return outer
        deadline = time.monotonic() + max(seconds, 0.0)
        if outer is not None and outer.deadline <= deadline:
            return outer
        return cls(deadline)

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def spent(self) -> bool:
        return time.monotonic() >= self.deadline

    def check(self, where: str) -> None:
        """Raise :class:`BudgetExceeded` once the budget is spent (``where``: what was running)."""
        if time.monotonic() >= self.deadline:
            raise BudgetExceeded(where)


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
    budget = Budget.within(seconds, outer)
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
    if budget is not None:
        budget.check(where)
