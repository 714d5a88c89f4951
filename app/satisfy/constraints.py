"""``matchAttribute`` and ``distinctAttribute`` with Kubernetes 1.36's exact state semantics.

Why "exact state": 1.36 keeps the ``distinctAttribute`` state in a map keyed by *request
name* (a request's later device overwrites its earlier one; backtracking deletes the entry).
That is more permissive than the documentation ("all devices distinct"), and draguard must
never reject what the scheduler would allocate, so the search replays the same state machine.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ..inventory import AttrValue, DeviceRecord
from ..k8s import DeviceConstraint
from .plan import Alternative

__all__ = ["ConstraintState", "DistinctState", "MatchState", "build_constraints", "in_scope", "lookup_attribute"]


def in_scope(scope: Collection[str], alt: Alternative) -> bool:
    """Whether a constraint (or config) listing ``scope`` covers ``alt``: an empty list covers
    every request; ``req`` covers the request and all its subrequests; ``req/sub`` one subrequest.
    The one implementation: the search, the quick bounds and the explanations all ask here."""
    if not scope or alt.request in scope:
        return True
    return alt.sub is not None and f"{alt.request}/{alt.sub}" in scope


def lookup_attribute(dev: DeviceRecord, name: str) -> AttrValue | None:
    """Fully qualified lookup; unqualified device attributes live in the driver's domain."""
    return dev.attributes.get(name)


class ConstraintState:
    """Common scope handling: an empty ``requests`` list covers every request."""

    def __init__(self, constraint: DeviceConstraint, attribute: str, claim: int = 0) -> None:
        self.requests = frozenset(constraint.requests)
        self.attribute = attribute
        self.claim = claim
        """Constraints are per claim: nothing relates devices of different claims of a pod."""

    def covers(self, alt: Alternative) -> bool:
        return alt.claim == self.claim and in_scope(self.requests, alt)

    def add(self, alt: Alternative, dev: DeviceRecord) -> bool:
        """Whether ``dev`` may be picked for ``alt`` (and record it); out of scope: always."""
        if not self.covers(alt):
            return True
        got = lookup_attribute(dev, self.attribute)
        return got is not None and self._admit(alt.request, got)

    def _admit(self, request: str, value: AttrValue) -> bool:
        """Record a device with attribute ``value`` picked for ``request``, if the constraint allows it."""
        raise NotImplementedError

    def remove(self, alt: Alternative, dev: DeviceRecord) -> None:
        raise NotImplementedError

    def state_key(self) -> object:
        """A hashable snapshot of the state (the search memoises failed states with it)."""
        raise NotImplementedError


class MatchState(ConstraintState):
    def __init__(self, constraint: DeviceConstraint, attribute: str, claim: int = 0) -> None:
        super().__init__(constraint, attribute, claim)
        self.value: AttrValue | None = None
        self.count = 0

    def _admit(self, request: str, got: AttrValue) -> bool:
        if self.count == 0:
            self.value = got
        elif got != self.value:
            return False
        self.count += 1
        return True

    def remove(self, alt: Alternative, dev: DeviceRecord) -> None:
        if not self.covers(alt):
            return
        self.count -= 1
        if self.count == 0:
            self.value = None

    def state_key(self) -> object:
        return (self.count, self.value)


class DistinctState(ConstraintState):
    def __init__(self, constraint: DeviceConstraint, attribute: str, claim: int = 0) -> None:
        super().__init__(constraint, attribute, claim)
        self.values: dict[str, AttrValue] = {}
        self.count = 0

    def _admit(self, request: str, got: AttrValue) -> bool:
        if self.count > 0 and any(v == got for v in self.values.values()):
            return False
        self.values[request] = got
        self.count += 1
        return True

    def remove(self, alt: Alternative, dev: DeviceRecord) -> None:
        if not self.covers(alt):
            return
        self.values.pop(alt.request, None)
        self.count -= 1

    def state_key(self) -> object:
        return (self.count, tuple(sorted(self.values.items(), key=lambda kv: kv[0])))


def build_constraints(constraints: Sequence[DeviceConstraint], claim: int = 0) -> list[ConstraintState]:
    out: list[ConstraintState] = []
    for c in constraints:
        if c.match_attribute:
            out.append(MatchState(c, c.match_attribute, claim))
        elif c.distinct_attribute:
            out.append(DistinctState(c, c.distinct_attribute, claim))
    return out
