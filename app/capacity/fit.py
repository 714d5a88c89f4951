"""One request against one device: what it consumes of every capacity, and whether it fits.

Why the consumed amounts are computed once and the sum checked separately: what a request
consumes of a device never depends on what else is placed there, only whether it still fits
does.  The satisfiability search computes :func:`evaluate` once per (request, device) and then
only adds numbers while it backtracks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..k8s import DeviceCapacity, Quantity
from .names import resolve_capacity_name
from .policy import consumed_amount, policy_violation

__all__ = ["CapacityFit", "CapacityMiss", "evaluate", "fits_on_top"]

MissKind = Literal["missing", "max", "step", "values", "exceeds"]


@dataclass(frozen=True, slots=True)
class CapacityMiss:
    """Why a device cannot serve a request's capacity needs (on an empty device)."""

    kind: MissKind
    capacity: str
    requested: Quantity | None = None
    consumed: Quantity | None = None
    limit: Quantity | None = None
    step: Quantity | None = None
    valid_values: tuple[Quantity, ...] = ()

    def describe(self) -> str:
        """A short clause that completes "the device …" style sentences."""
        name = self.capacity
        if self.kind == "missing":
            return f"does not publish capacity {name}"
        asked = _asked(self)
        if self.kind == "max":
            return f"{asked} for {name} is above the policy maximum {self.limit}"
        if self.kind == "values":
            values = ", ".join(str(v) for v in self.valid_values)
            return f"{asked} for {name} is not one of the valid values ({values})"
        if self.kind == "step":
            return f"{asked} for {name} is off the policy's {self.step} step grid"
        return f"{asked} for {name} exceeds the device's {self.limit}"


def _asked(miss: CapacityMiss) -> str:
    if miss.requested is None:
        return f"the omitted request's default {miss.consumed}"
    if miss.consumed is not None and miss.consumed.cmp(miss.requested) != 0:
        how = f"up to the {miss.step} step" if miss.step is not None else "up"
        return f"{miss.consumed} after rounding {miss.requested} {how}"
    return str(miss.requested)


@dataclass(frozen=True, slots=True)
class CapacityFit:
    """What one allocation of the request on the device consumes, or why it cannot."""

    consumed: Mapping[str, Quantity] = field(default_factory=dict)
    miss: CapacityMiss | None = None
    rounded: tuple[tuple[str, Quantity, Quantity], ...] = ()
    defaulted: tuple[tuple[str, Quantity], ...] = ()

    @property
    def ok(self) -> bool:
        return self.miss is None


def evaluate(requests: Mapping[str, Quantity], driver: str, capacity: Mapping[str, DeviceCapacity]) -> CapacityFit:
    """Check the request against an otherwise empty device, as the allocator does.

    Every requested name must resolve to a published capacity; every published capacity is
    consumed (explicitly requested, defaulted, or whole); each amount must respect the policy
    and be at most the capacity's value.
    """
    resolved: dict[str, Quantity] = {}
    for name, amount in requests.items():
        key = resolve_capacity_name(name, driver, capacity)
        if key is None:
            return CapacityFit(miss=CapacityMiss("missing", name, requested=amount))
        resolved[key] = amount
    consumed: dict[str, Quantity] = {}
    rounded: list[tuple[str, Quantity, Quantity]] = []
    defaulted: list[tuple[str, Quantity]] = []
    for key, cap in capacity.items():
        asked = resolved.get(key)
        amount = consumed_amount(asked, cap)
        policy = cap.request_policy
        step = policy.valid_range.step if policy is not None and policy.valid_range is not None else None
        violation = policy_violation(amount, policy, defaulted=asked is None)
        if violation is not None:
            assert policy is not None
            limit = policy.valid_range.max if policy.valid_range is not None else None
            return CapacityFit(
                miss=CapacityMiss(
                    violation,  # type: ignore[arg-type]
                    key,
                    requested=asked,
                    consumed=amount,
                    limit=limit,
                    step=step,
                    valid_values=tuple(policy.valid_values),
                )
            )
        value = cap.value if cap.value is not None else Quantity(0)
        if amount.cmp(value) > 0:
            return CapacityFit(
                miss=CapacityMiss("exceeds", key, requested=asked, consumed=amount, limit=value, step=step)
            )
        consumed[key] = amount
        if asked is not None and amount.cmp(asked) > 0:
            rounded.append((key, asked, amount))
        if asked is None and policy is not None and policy.default is not None:
            defaulted.append((key, amount))
    return CapacityFit(consumed=consumed, rounded=tuple(rounded), defaulted=tuple(defaulted))


def fits_on_top(
    fit: CapacityFit, capacity: Mapping[str, DeviceCapacity], already: Mapping[str, Quantity]
) -> bool:
    """Whether ``fit`` still fits on a shared device that already carries ``already``."""
    for key, amount in fit.consumed.items():
        prior = already.get(key)
        if prior is None:
            continue
        value = capacity[key].value
        total = prior.add(amount)
        if value is None or total.cmp(value) > 0:
            return False
    return True
