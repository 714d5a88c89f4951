"""draguard's own checks — things Kubernetes 1.36 accepts but that are almost certainly mistakes.

Why separate from the parity rules: "what the API server would reject" must stay exactly the set
of ``FieldValue*`` errors, so these come back as :class:`~app.k8s.finding.Note` of the ``lint`` family
(severity warning; ``--strict`` makes them errors).  Each lint is written so
that it never repeats a problem the API server already reports: policies on devices that are
not multi-allocatable, ``step`` ≤ 0 and max values the step check rejects are left alone.
"""

from __future__ import annotations

from ..k8s import (
    CapacityRequirements,
    DeviceCapacity,
    Note,
    Path,
    Quantity,
    Reason,
    ResourceClaimSpec,
    ResourceSliceSpec,
    Severity,
    canonical_string,
    whole_units,
    whole_units_off_step,
)
from .deltas import CAPACITY_REQUEST_AMOUNTS, applies

__all__ = [
    "lint_claim_spec",
    "lint_resource_slice_spec",
]

_NANO = 10**9


def _note(reason: Reason, message: str, path: Path) -> Note:
    return Note(reason=reason, message=message, path=path, severity=Severity.WARNING)


# ---------------------------------------------------------------------------- claims
def lint_claim_spec(spec: ResourceClaimSpec, path: Path) -> list[Note]:
    """``capacity.requests`` amounts are not validated by Kubernetes before 1.38 (1.38 refuses negative
    ones itself); a zero or negative amount asks for nothing."""
    notes: list[Note] = []
    requests_path = path.child("devices", "requests")
    for i, request in enumerate(spec.devices.requests):
        if request.exactly is not None:
            notes.extend(
                _lint_capacity(request.exactly.capacity, requests_path.index(i).child("exactly", "capacity"))
            )
        for k, sub in enumerate(request.first_available):
            notes.extend(
                _lint_capacity(
                    sub.capacity, requests_path.index(i).child("firstAvailable").index(k).child("capacity")
                )
            )
    return notes


def _lint_capacity(capacity: CapacityRequirements | None, path: Path) -> list[Note]:
    if capacity is None:
        return []
    notes: list[Note] = []
    negatives_rejected = applies(CAPACITY_REQUEST_AMOUNTS)  # 1.38's API server refuses them itself
    for name, amount in capacity.requests.items():
        if amount.sign() < 0 and negatives_rejected:
            continue  # a FieldValueInvalid already says it, as the API server does
        if amount.sign() <= 0:
            what = "zero" if amount.is_zero() else "negative"
            notes.append(
                _note(
                    Reason.LINT_NEGATIVE_CAPACITY_REQUEST,
                    f"capacity request {name}: {amount} is {what}; Kubernetes accepts it without checking, "
                    "but a request must be greater than zero to reserve anything (the device's requestPolicy "
                    "may then round it to its minimum or default)",
                    path.child("requests").key(name),
                )
            )
    return notes


# ---------------------------------------------------------------------------- slices
def lint_resource_slice_spec(spec: ResourceSliceSpec, path: Path) -> list[Note]:
    """Request-policy lints for the capacities of multi-allocatable devices."""
    notes: list[Note] = []
    for i, device in enumerate(spec.devices):
        if not device.allow_multiple_allocations:
            continue  # a policy there is already an API error
        for name, capacity in device.capacity.items():
            notes.extend(_lint_policy(capacity, path.child("devices").index(i).child("capacity").key(name)))
    return notes


def _fmt(nanos: int, like: Quantity) -> str:
    return canonical_string(nanos, like.format)


def _lint_policy(capacity: DeviceCapacity, path: Path) -> list[Note]:
    policy = capacity.request_policy
    if policy is None:
        return []
    ppath = path.child("requestPolicy")
    notes: list[Note] = []
    if policy.default is not None and not policy.valid_values and policy.valid_range is None:
        notes.append(
            _note(
                Reason.LINT_DEFAULT_WITHOUT_RANGE,
                f"default {policy.default} is not constrained by validValues or validRange: Kubernetes does not "
                "check it (not even against the capacity value), and any request amount is accepted as is; "
                "add validRange (e.g. min: "
                f"{policy.default}) or validValues to make the policy mean something",
                ppath.child("default"),
            )
        )
    rng = policy.valid_range
    if policy.valid_values or rng is None or rng.step is None or rng.step.sign() <= 0:
        return notes
    step = rng.step
    if not step.is_integer():
        effective = whole_units(step)
        notes.append(
            _note(
                Reason.LINT_FRACTIONAL_STEP,
                f"step {step} is not a whole number of units: Kubernetes 1.36 checks and rounds requests on "
                f"whole units (Quantity.Value()), so this step behaves like {effective}; use a whole-unit step "
                "or a smaller unit for the capacity",
                ppath.child("validRange", "step"),
            )
        )
    lo, hi = rng.min, rng.max
    if lo is None or hi is None or hi.cmp(lo) < 0 or whole_units(step) == 0:
        return notes
    api_rejects = whole_units_off_step(hi, lo, step)
    span = hi.nanos - lo.nanos
    if not api_rejects and span % step.nanos != 0:
        rounded = lo.nanos + (span // step.nanos) * step.nanos
        notes.append(
            _note(
                Reason.LINT_MAX_OFF_GRID,
                f"max {hi} is not on the grid min + k·step (min {lo}, step {step}), so no request can ever be "
                f"rounded to it; Kubernetes accepts it because it compares whole units only; "
                f"round max down to {_fmt(rounded, hi)}",
                ppath.child("validRange", "max"),
            )
        )
    return notes
