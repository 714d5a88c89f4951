"""The declarative limits of claim capacity amounts (Kubernetes 1.38): at most 32 entries, none negative.

Why a module of its own: these rules are not in ``validation.go``.  ``k8s.io/api`` v0.38.0-beta.0
tags ``CapacityRequirements.Requests`` and ``DeviceRequestAllocationResult.ConsumedCapacity``
with ``+k8s:maxProperties=32`` and ``+k8s:eachVal=+k8s:minimum=0`` (1.37.2 has neither), and the
generated ``zz_generated.validations.go`` of ``k8s.io/kubernetes`` v1.38.0-beta.0 enforces them.
Declarative validation differs from the handwritten rules in three ways reproduced here:

* **when**: its errors are *standard* (no ``+k8s:beta`` prefix), so always enforced, and the API
  server appends them after every handwritten error of the object
  (``rest.ValidateDeclarativelyWithMigrationChecks``) — callers add them last;
* **what**: ``MaxProperties`` is ``field.TooMany(path, n, 32)`` (``Too many: 33: must have at
  most 32 items``) on the map and stops there; ``MinimumQuantity`` is ``field.Invalid`` on the
  entry (``requests[memory]``) with the quantity's canonical ``String()`` and
  ``content.MinError("0")`` (``must be greater than or equal to 0``).  Both are plain
  ``field.Error`` values, so they reach ``details.causes`` exactly like handwritten ones;
* **ratcheting** on update: a map equal (``Semantic.DeepEqual``) to the old one is skipped, and
  within a changed map every entry whose key holds an equal old value.  The old value is found
  through the generated walk: requests and subrequests by name (list-map keys), the rest by
  position of the pointer fields.  A claim's spec is immutable (the ``Immutable`` check
  short-circuits a changed spec), so only templates and newly set allocations are checked on
  update; an allocation's ``results`` are an atomic list, matched to nothing.

Lists over their own ``maxItems`` (requests > 32, firstAvailable > 8, results > 32)
short-circuit the walk: no entry of theirs is checked, as the generated code returns early.
The object's version matters only for a v1beta1 object, whose flat request would be reported
without ``exactly`` — but 1.38 no longer serves v1beta1 (``APILifecycleRemoved`` 1.38), so the
v1 paths are the ones a 1.38 API server gives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

from ..k8s import (
    CapacityRequirements,
    DeviceRequest,
    DeviceSubRequest,
    FieldError,
    Path,
    Quantity,
    ResourceClaimSpec,
    ResourceClaimStatus,
    equal,
    invalid,
    too_many,
)
from .deltas import CAPACITY_REQUEST_AMOUNTS, applies

__all__ = [
    "CAPACITY_ENTRIES_MAX",
    "allocation_capacity_errors",
    "claim_spec_capacity_errors",
    "quantity_map_errors",
]

CAPACITY_ENTRIES_MAX = 32  # +k8s:maxProperties=32 of both maps
_REQUESTS_MAX = 32  # DeviceClaim.requests +k8s:maxItems (short-circuits the walk)
_FIRST_AVAILABLE_MAX = 8
_RESULTS_MAX = 32
_Named = TypeVar("_Named", DeviceRequest, DeviceSubRequest)
_NOT_NEGATIVE = "must be greater than or equal to 0"  # content.MinError(resource.MustParse("0").String())


def quantity_map_errors(
    values: Mapping[str, Quantity], old: Mapping[str, Quantity] | None, path: Path
) -> list[FieldError]:
    """One tagged map: ratchet, ``maxProperties=32`` (short-circuits), then ``minimum=0`` per entry.

    ``old``: the correlated old map on update (``None``: a create, or nothing to correlate with).
    """
    if old is not None and equal(dict(values), dict(old)):
        return []
    if len(values) > CAPACITY_ENTRIES_MAX:
        return [too_many(path, len(values), CAPACITY_ENTRIES_MAX)]
    errs: list[FieldError] = []
    for key, amount in values.items():
        prior = old.get(key) if old is not None else None
        if prior is not None and prior == amount:
            continue
        if amount.sign() < 0:
            errs.append(invalid(path.key(key), str(amount), _NOT_NEGATIVE))
    return errs


def _capacity_errors(
    capacity: CapacityRequirements | None, old: CapacityRequirements | None, path: Path
) -> list[FieldError]:
    if capacity is None:
        return []
    old_requests = old.requests if old is not None else None
    return quantity_map_errors(capacity.requests, old_requests, path.child("requests"))


def _by_name(items: Sequence[_Named], name: str) -> _Named | None:
    """The generated list-map lookup: the first old item with that name."""
    return next((item for item in items if item.name == name), None)


def claim_spec_capacity_errors(
    spec: ResourceClaimSpec, old: ResourceClaimSpec | None, path: Path
) -> list[FieldError]:
    """Every ``capacity.requests`` of a claim spec (``path``: ``spec`` or a template's ``spec.spec``).

    ``old``: the stored spec on a template update (ratchets unchanged requests and entries).
    """
    if not applies(CAPACITY_REQUEST_AMOUNTS) or (old is not None and equal(spec, old)):
        return []
    requests = spec.devices.requests
    if len(requests) > _REQUESTS_MAX:
        return []
    old_requests = old.devices.requests if old is not None else []
    requests_path = path.child("devices", "requests")
    errs: list[FieldError] = []
    for i, request in enumerate(requests):
        prior = _by_name(old_requests, request.name)
        if prior is not None and equal(request, prior):
            continue
        request_path = requests_path.index(i)
        if request.exactly is not None:
            old_exact = prior.exactly if prior is not None else None
            errs.extend(
                _capacity_errors(
                    request.exactly.capacity,
                    old_exact.capacity if old_exact is not None else None,
                    request_path.child("exactly", "capacity"),
                )
            )
        if len(request.first_available) > _FIRST_AVAILABLE_MAX:
            continue
        old_subs = prior.first_available if prior is not None else []
        for k, sub in enumerate(request.first_available):
            old_sub = _by_name(old_subs, sub.name)
            if old_sub is not None and equal(sub, old_sub):
                continue
            errs.extend(
                _capacity_errors(
                    sub.capacity,
                    old_sub.capacity if old_sub is not None else None,
                    request_path.child("firstAvailable").index(k).child("capacity"),
                )
            )
    return errs


def allocation_capacity_errors(
    status: ResourceClaimStatus | None, old: ResourceClaimStatus | None, path: Path
) -> list[FieldError]:
    """``consumedCapacity`` of every allocation result (``path``: ``status``).

    Only a newly set allocation is checked: an unchanged one is ratcheted and a changed one
    stops at ``NoModify`` (handwritten validation says "field is immutable").
    """
    if not applies(CAPACITY_REQUEST_AMOUNTS) or status is None or status.allocation is None:
        return []
    if old is not None and old.allocation is not None:
        return []
    results = status.allocation.devices.results
    if len(results) > _RESULTS_MAX:
        return []
    results_path = path.child("allocation", "devices", "results")
    errs: list[FieldError] = []
    for i, result in enumerate(results):
        errs.extend(quantity_map_errors(result.consumed_capacity, None, results_path.index(i).child("consumedCapacity")))
    return errs
