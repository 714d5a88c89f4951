"""Consumable capacity (KEP-5075) as Kubernetes 1.36's allocator applies it: pure functions.

Public surface: :func:`evaluate` (one request vs one device), :func:`fits_on_top` (with what is
already placed on a shared device), :func:`resolve_capacity_name`, and the policy arithmetic.
"""

from .fit import CapacityFit, CapacityMiss, evaluate, fits_on_top
from .names import (
    capacity_names_for,
    capacity_request_conflict,
    qualified_capacity_names,
    resolve_capacity_name,
    target_qualifies_names,
)
from .policy import consumed_amount, policy_violation, round_up_range, round_up_valid_values

__all__ = [
    "CapacityFit",
    "CapacityMiss",
    "capacity_names_for",
    "capacity_request_conflict",
    "consumed_amount",
    "evaluate",
    "fits_on_top",
    "policy_violation",
    "qualified_capacity_names",
    "resolve_capacity_name",
    "round_up_range",
    "round_up_valid_values",
    "target_qualifies_names",
]
