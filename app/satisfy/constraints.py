"""``matchAttribute`` and ``distinctAttribute`` with Kubernetes 1.36's exact state semantics.

Why "exact state": 1.36 keeps the ``distinctAttribute`` state in a map keyed by *request
name* (a request's later device overwrites its earlier one; backtracking deletes the entry).
That is more permissive than the documentation ("all devices distinct"), and draguard must
never reject what the scheduler would allocate, so the search replays the same state machine.

List-typed attributes (DRAListTypeAttributes; ``ints``/``bools``/``strings``/``versions``) follow
the allocator the gate selects (``experimental``): every value is a set — a scalar one element —
and sets of different element types never meet; versions compare as strings.

* ``matchAttribute``: the devices' sets must have a common element: the running intersection
  stays non-empty (1.37 restores it when the search backtracks, #140325; 1.36 did not, which only
  refused more).  Without the gate (stable/incubating allocators) a list value matches nothing,
  not even an equal list, which refuses more again — so the set rule is sound for both.
* ``distinctAttribute``: pairwise disjoint sets.  Where scalar and list values of one attribute
  meet, the gate-less allocator differs (a scalar is never a duplicate of a list there); a pair
  conflicts here only when both allocators say so (:func:`conflicts`), so a claim is never refused
  for a pick either would make.  Two equal scalars, or a list and an overlapping one, conflict for
  both.
* An empty list (invalid in the API, kept safe here) can be the first device only.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ..cel import LIST_KINDS
from ..inventory import AttrValue, DeviceRecord
from ..k8s import DeviceConstraint, ResourceClaimSpec
from .plan import Alternative

__all__ = [
    "ConstraintState", "DistinctState", "MatchState", "as_set", "build_constraints", "conflicts", "in_scope", "is_list",
    "lookup_attribute",
]

_SET = "set"
"""The kind of a match state's running intersection once a list value took part:
``("set", (element kind, frozenset of values))``."""

ValueSet = tuple[str, frozenset[object]]
"""(element kind, values) of an attribute as the list-aware allocator compares it."""


def is_list(value: AttrValue) -> bool:
    """Whether ``value`` is a list-typed attribute (or a running intersection of one)."""
    return value[0] in LIST_KINDS or value[0] == _SET


def as_set(value: AttrValue) -> ValueSet:
    """``attributeAsSet``: a scalar is a one-element set; a list the set of its elements."""
    kind, v = value
    if kind == _SET:
        return v  # type: ignore[return-value]
    element = LIST_KINDS.get(kind)
    if element is None:
        return kind, frozenset((v,))
    return element, frozenset(v)  # type: ignore[call-overload]


def _intersection(a: ValueSet, b: ValueSet) -> frozenset[object]:
    return a[1] & b[1] if a[0] == b[0] else frozenset()


def conflicts(new: AttrValue, existing: AttrValue) -> bool:
    """Whether ``distinctAttribute`` refuses ``new`` next to ``existing`` under every allocator
    that may run (see the module docstring): equal scalars; a list overlapping the other value;
    an empty list next to anything.  A scalar next to a list it belongs to is a conflict only with
    the gate (the gate-less allocator compares scalars with scalars), so it is let through."""
    if not is_list(new):
        return not is_list(existing) and new == existing
    values = as_set(new)
    return not values[1] or bool(_intersection(values, as_set(existing)))


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


def _match_key(value: AttrValue) -> AttrValue:
    """What ``matchAttribute`` compares: a version without its build metadata (``1.2.3+abc`` and
    ``1.2.3+def`` are equal semantic versions; Kubernetes 1.38 compares them so, earlier
    allocators compared the whole text — ignoring it everywhere only lets more devices match, so
    no target gets a denial its allocator would not make)."""
    kind, v = value
    if kind == "version" and isinstance(v, str) and "+" in v:
        return kind, v.split("+", 1)[0]
    return value


def _match_set(value: AttrValue) -> ValueSet:
    """:func:`as_set` with versions compared as :func:`_match_key` compares them."""
    kind, members = as_set(value)
    if kind != "version":
        return kind, members
    return kind, frozenset(m.split("+", 1)[0] if isinstance(m, str) else m for m in members)


class MatchState(ConstraintState):
    def __init__(self, constraint: DeviceConstraint, attribute: str, claim: int = 0) -> None:
        super().__init__(constraint, attribute, claim)
        self.value: AttrValue | None = None
        self.count = 0
        self.stack: list[AttrValue] = []
        """Before each device after the first: the value the devices agreed on until then (a
        list's arrival turns it into a ``("set", …)`` running intersection), so removing a
        device restores the state before it."""

    def _admit(self, request: str, got: AttrValue) -> bool:
        agreed = self.value
        if self.count == 0 or agreed is None:
            self.value = got
        elif is_list(got) or is_list(agreed):
            current = _match_set(agreed)
            narrowed = _intersection(current, _match_set(got))
            if not narrowed:
                return False
            self.stack.append(agreed)
            self.value = (_SET, (current[0], narrowed))
        elif _match_key(got) != _match_key(agreed):
            return False
        else:
            self.stack.append(agreed)
        self.count += 1
        return True

    def remove(self, alt: Alternative, dev: DeviceRecord) -> None:
        if not self.covers(alt):
            return
        self.count -= 1
        self.value = self.stack.pop() if self.count > 0 else None

    def state_key(self) -> object:
        return (self.count, self.value)


class DistinctState(ConstraintState):
    def __init__(self, constraint: DeviceConstraint, attribute: str, claim: int = 0) -> None:
        super().__init__(constraint, attribute, claim)
        self.values: dict[str, AttrValue] = {}
        self.count = 0

    def _admit(self, request: str, got: AttrValue) -> bool:
        if self.count > 0 and any(conflicts(got, v) for v in self.values.values()):
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


def derived_names(spec: ResourceClaimSpec) -> frozenset[str]:
    """The names of the claim's derived attributes (``DRADerivedAttributes``, 1.37 alpha)."""
    names: set[str] = set()
    for request in spec.devices.requests:
        alternatives = [request.exactly] if request.exactly is not None else list(request.first_available)
        for alt in alternatives:
            names.update(d.name for d in getattr(alt, "derived_attributes", ()) if d.name)
    return frozenset(names)


def modelled_constraints(spec: ResourceClaimSpec) -> list[DeviceConstraint]:
    """The claim's constraints draguard evaluates: those on a derived attribute are left out.

    Why: a derived attribute is a CEL expression the scheduler evaluates per candidate device and
    compares in place of (or shadowing) a published attribute; draguard does not evaluate them.
    Leaving such a constraint out only makes a claim easier to satisfy, so every answer stays
    sound: never a denial the allocator would not make (a denial it would make may be missed)."""
    derived = derived_names(spec)
    if not derived:
        return list(spec.devices.constraints)
    return [c for c in spec.devices.constraints if (c.match_attribute or c.distinct_attribute or "") not in derived]


def build_constraints(constraints: Sequence[DeviceConstraint], claim: int = 0) -> list[ConstraintState]:
    out: list[ConstraintState] = []
    for c in constraints:
        if c.match_attribute:
            out.append(MatchState(c, c.match_attribute, claim))
        elif c.distinct_attribute:
            out.append(DistinctState(c, c.distinct_attribute, claim))
    return out
