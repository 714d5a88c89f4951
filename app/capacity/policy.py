"""``requestPolicy`` arithmetic: what a request consumes of one capacity, and whether that
amount is allowed.

Why exact and why "whole units": Kubernetes 1.36's allocator rounds ranges with
``Quantity.Value()`` (int64 whole units, rounded away from zero), so a ``500m`` step rounds
coarsely; draguard must reproduce that to the unit or it would accept claims the scheduler
refuses (or worse, the reverse).  Everything else compares exact :class:`Quantity` values.
"""

from __future__ import annotations

from ..k8s import (
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    DeviceCapacity,
    Format,
    Quantity,
    round_up_to_step,
    whole_units,
    whole_units_off_step,
)

__all__ = ["consumed_amount", "policy_violation", "round_up_range", "round_up_valid_values"]


def round_up_range(requested: Quantity, valid_range: CapacityRequestPolicyRange) -> Quantity:
    """Below ``min`` → ``min``; with ``step`` → next ``min + k·step`` (in whole units)."""
    minimum = valid_range.min
    if minimum is None:
        return requested
    if requested.cmp(minimum) < 0:
        return minimum
    step = valid_range.step
    if step is None:
        return requested
    if whole_units(step) == 0:
        return requested
    rounded = round_up_to_step(requested, minimum, step)
    return Quantity.from_int(rounded, Format.BINARY_SI)  # as NewQuantity(val, BinarySI)


def round_up_valid_values(requested: Quantity, values: list[Quantity]) -> Quantity:
    """The smallest valid value ≥ the request; the request itself when it is above them all."""
    for value in values:
        if requested.cmp(value) <= 0:
            return value
    return requested


def consumed_amount(requested: Quantity | None, capacity: DeviceCapacity) -> Quantity:
    """What one allocation consumes of ``capacity`` when the request asks ``requested``.

    An omitted request consumes the policy default, or the *whole* value when there is no
    default (so two requests that omit a policy-less capacity cannot share the device).
    """
    policy = capacity.request_policy
    total = capacity.value if capacity.value is not None else Quantity(0)
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return total
    if policy is None:
        return requested
    if policy.valid_range is not None and policy.valid_range.min is not None:
        return round_up_range(requested, policy.valid_range)
    if policy.valid_values:
        return round_up_valid_values(requested, list(policy.valid_values))
    return requested


def policy_violation(consumed: Quantity, policy: CapacityRequestPolicy | None, *, defaulted: bool) -> str | None:
    """Why ``consumed`` breaks the policy (``"max"``, ``"step"``, ``"values"``), or ``None``.

    ``defaulted`` is true when the amount is the policy default filled in for an omitted
    request: Kubernetes accepts that without further checks.
    """
    if policy is None or defaulted:
        return None
    rng = policy.valid_range
    if rng is not None:
        if rng.max is not None and consumed.cmp(rng.max) > 0:
            return "max"
        if (
            rng.step is not None
            and rng.min is not None
            and whole_units(rng.step) != 0
            and whole_units_off_step(consumed, rng.min, rng.step)
        ):
            return "step"
        return None
    if policy.valid_values and not any(consumed.cmp(v) == 0 for v in policy.valid_values):
        return "values"
    return None
