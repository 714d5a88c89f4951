"""The target API server's feature gates, as seen by validation rules that depend on them.

Why a context variable: a handful of rules differ by gate (the CEL environment loses
``device.allowMultipleAllocations`` without DRAConsumableCapacity; a constraint without
``matchAttribute`` is reported differently).  Threading a target through every rule's signature
would touch all of them for three branches.  :func:`target_scope` is entered by
:func:`app.validation.validate` for the duration of one call; the variable is per thread and per
task, so concurrent reviews with different targets never see each other's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from ..k8s import DEFAULT_TARGET, Target

__all__ = ["current_target", "gate_enabled", "target_scope"]

_TARGET: ContextVar[Target] = ContextVar("draguard_validation_target", default=DEFAULT_TARGET)


@contextmanager
def target_scope(target: Target) -> Iterator[None]:
    """Validate as ``target``'s API server while the block runs."""
    token = _TARGET.set(target)
    try:
        yield
    finally:
        _TARGET.reset(token)


def current_target() -> Target:
    return _TARGET.get()


def gate_enabled(gate: str) -> bool:
    """Whether ``gate`` is on at the target being validated for (1.36 defaults outside a scope)."""
    return _TARGET.get().enabled(gate)
