"""The root of draguard's own exceptions.

Why one root: "something draguard refused or could not do" is one idea — a bad flag, an
unreadable path, a quantity or CEL text that does not parse, the API server saying no — and a
caller that only needs that much catches :class:`DraguardError`.  Each class keeps its meaning
and a second base where callers catch it by that too (``QuantityError`` is still a
``ValueError``, so pydantic validators and ``except ValueError`` keep working).

Deliberately not under it:

* :class:`~app.k8s.budget.BudgetExceeded` — a ``BaseException`` so that no ``except Exception``
  inside a check can swallow the signal to stop;
* private control-flow signals that never leave their module (the CEL evaluator's escape and
  cost signals, the parser's conversion signal, the search's abort): they are not errors
  anybody reports.
"""

from __future__ import annotations

__all__ = ["DraguardError"]


class DraguardError(Exception):
    """Base of every exception draguard raises for others to catch."""
