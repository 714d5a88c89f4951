"""Consumable capacity (KEP-5075) as Kubernetes 1.36's allocator applies it: pure functions.

Public surface: :func:`evaluate` (one request vs one device), :func:`fits_on_top` (with what is
already placed on a shared device), :func:`resolve_capacity_name`, and the policy arithmetic.
"""

from .fit import CapacityFit, CapacityMiss, evaluate, fits_on_top
from .names import resolve_capacity_name
from .policy import consumed_amount, policy_violation, round_up_range, round_up_valid_values

__all__ = [
    "CapacityFit",
    "CapacityMiss",
    "consumed_amount",
    "evaluate",
    "fits_on_top",
    "policy_violation",
    "resolve_capacity_name",
    "round_up_range",
    "round_up_valid_values",
]
