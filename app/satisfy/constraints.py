"""``matchAttribute`` and ``distinctAttribute`` with Kubernetes 1.36's exact state semantics.

Why "exact state": 1.36 keeps the ``distinctAttribute`` state in a map keyed by *request
name* (a request's later device overwrites its earlier one; backtracking deletes the entry).
That is more permissive than the documentation ("all devices distinct"), and draguard must
never reject what the scheduler would allocate, so the search replays the same state machine.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..inventory import AttrValue, DeviceRecord
from ..k8s import DeviceConstraint

__all__ = ["ConstraintState", "DistinctState", "MatchState", "build_constraints", "lookup_attribute"]


def lookup_attribute(dev: DeviceRecord, name: str) -> AttrValue | None:
    """Fully qualified lookup; unqualified device attributes live in the driver's domain."""
    return dev.attributes.get(name)


class ConstraintState:
    """Common scope handling: an empty ``requests`` list covers every request."""

    def __init__(self, constraint: DeviceConstraint, attribute: str) -> None:
        self.requests = frozenset(constraint.requests)
        self.attribute = attribute

    def in_scope(self, request: str, sub: str | None) -> bool:
        if not self.requests:
            return True
        if request in self.requests:
            return True
        return sub is not None and f"{request}/{sub}" in self.requests

    def add(self, request: str, sub: str | None, dev: DeviceRecord) -> bool:
        """Whether ``dev`` may be picked for ``request`` (and record it); out of scope: always."""
        if not self.in_scope(request, sub):
            return True
        got = lookup_attribute(dev, self.attribute)
        return got is not None and self._admit(request, got)

    def _admit(self, request: str, value: AttrValue) -> bool:
        """Record a device with attribute ``value`` picked for ``request``, if the constraint allows it."""
        raise NotImplementedError

    def remove(self, request: str, sub: str | None, dev: DeviceRecord) -> None:
        raise NotImplementedError

    def state_key(self) -> object:
        """A hashable snapshot of the state (the search memoises failed states with it)."""
        raise NotImplementedError


class MatchState(ConstraintState):
    def __init__(self, constraint: DeviceConstraint, attribute: str) -> None:
        super().__init__(constraint, attribute)
        self.value: AttrValue | None = None
        self.count = 0

    def _admit(self, request: str, got: AttrValue) -> bool:
        if self.count == 0:
            self.value = got
        elif got != self.value:
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub: str | None, dev: DeviceRecord) -> None:
        if not self.in_scope(request, sub):
            return
        self.count -= 1
        if self.count == 0:
            self.value = None

    def state_key(self) -> object:
        return (self.count, self.value)


class DistinctState(ConstraintState):
    def __init__(self, constraint: DeviceConstraint, attribute: str) -> None:
        super().__init__(constraint, attribute)
        self.values: dict[str, AttrValue] = {}
        self.count = 0

    def _admit(self, request: str, got: AttrValue) -> bool:
        if self.count > 0 and any(v == got for v in self.values.values()):
            return False
        self.values[request] = got
        self.count += 1
        return True

    def remove(self, request: str, sub: str | None, dev: DeviceRecord) -> None:
        if not self.in_scope(request, sub):
            return
        self.values.pop(request, None)
        self.count -= 1

    def state_key(self) -> object:
        return (self.count, tuple(sorted(self.values.items(), key=lambda kv: kv[0])))


def build_constraints(constraints: Sequence[DeviceConstraint]) -> list[ConstraintState]:
    out: list[ConstraintState] = []
    for c in constraints:
        if c.match_attribute:
            out.append(MatchState(c, c.match_attribute))
        elif c.distinct_attribute:
            out.append(DistinctState(c, c.distinct_attribute))
    return out
