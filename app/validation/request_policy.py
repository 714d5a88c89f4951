"""Consumable-capacity ``requestPolicy`` rules of a ResourceSlice device (KEP-5075, Kubernetes 1.36).

Why a module of its own: these are the rules draguard exists for, and they have quirks that must
be reproduced exactly rather than "fixed" (decided by the 1.36 conformance sample and the
rows of ``app/validation/RULES.md``):

* "default is less than min" / "default is more than max" are reported on ``validRange.min`` /
  ``validRange.max``, not on ``default``;
* duplicate ``validValues`` and the step arithmetic use ``Quantity.Value()`` — whole units,
  rounded away from zero — so ``100m`` and ``200m`` are duplicates and a ``500m`` step acts as 1;
* more than 10 ``validValues`` short-circuits the per-option checks, so the default is then
  always reported as "not valid" as well;
* ``step`` ≤ 0 makes the 1.36 API server divide by zero (an internal error, the object can never
  be created).  draguard reports it as ``must be greater than zero`` (newer Kubernetes' wording)
  and skips the step-multiple checks.

Every message is byte-for-byte the API server's.
"""

from __future__ import annotations

from ..k8s import (
    INT64_MAX,
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    DeviceCapacity,
    FieldError,
    Memo,
    Path,
    Quantity,
    forbidden,
    invalid,
    required,
    whole_units,
    whole_units_off_step,
)
from .helpers import validate_set

__all__ = [
    "CAPACITY_REQUEST_POLICY_MAX_OPTIONS",
    "validate_multi_allocatable_capacity",
    "validate_request_policy",
    "validate_single_allocatable_capacity",
]

CAPACITY_REQUEST_POLICY_MAX_OPTIONS = 10  # resource.CapacityRequestPolicyDiscreteMaxOptions


def validate_single_allocatable_capacity(capacity: DeviceCapacity, path: Path) -> list[FieldError]:
    """A device without ``allowMultipleAllocations: true`` cannot be shared, so a policy is forbidden."""
    if capacity.request_policy is not None:
        return [forbidden(path.child("requestPolicy"), "allowMultipleAllocations must be true")]
    return []


def validate_multi_allocatable_capacity(capacity: DeviceCapacity, path: Path) -> list[FieldError]:
    """``validateMultiAllocatableDeviceCapacity``: only the policy is checked; any value is fine."""
    if capacity.request_policy is None:
        return []
    # ``value`` is a non-pointer Quantity in Go: a missing value is zero there too.
    value = capacity.value if capacity.value is not None else Quantity(0)
    return validate_request_policy(value, capacity.request_policy, path.child("requestPolicy"))


_PolicyKey = tuple[Quantity, Quantity | None, tuple[Quantity, ...], tuple[Quantity | None, ...] | None]
_VALID_POLICIES: Memo[_PolicyKey, bool] = Memo("valid request policies", 4096)
"""Capacities and request policies that passed :func:`validate_request_policy`, by their values.

Why: every device of a shareable model carries the same capacity and policy (8 GPUs a node, the
same 40Gi memory with the same range), and checking one is quantity arithmetic per option.  The
rules compare values only (``Cmp``, ``Value()``, sign, sum — never a quantity's spelling), and a
:class:`Quantity` is equal and hashes by its exact value, so equal keys have equal verdicts.
Only valid ones are remembered: errors carry their path and spell the values."""


def validate_request_policy(
    capacity: Quantity, policy: CapacityRequestPolicy, path: Path
) -> list[FieldError]:
    """``validateRequestPolicy``: at most one of validValues/validRange, then that one's rules.

    A policy with only ``default`` (or nothing) is accepted without any check.
    """
    rng = policy.valid_range
    key: _PolicyKey = (capacity, policy.default, tuple(policy.valid_values),
                       None if rng is None else (rng.min, rng.max, rng.step))
    if _VALID_POLICIES.get(key):
        return []
    errs = _request_policy_errors(capacity, policy, path)
    if not errs:
        _VALID_POLICIES.put(key, True)
    return errs


def _request_policy_errors(capacity: Quantity, policy: CapacityRequestPolicy, path: Path) -> list[FieldError]:
    if policy.valid_values and policy.valid_range is not None:
        return [
            forbidden(
                path,
                'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time',
            )
        ]
    if policy.valid_values:
        if policy.default is None:
            return [required(path.child("default"), "required when validValues is defined")]
        return _validate_valid_values(
            policy.default, capacity, policy.valid_values, path.child("validValues")
        )
    if policy.valid_range is not None:
        if policy.default is None:
            return [required(path.child("default"), "required when validRange is defined")]
        return _validate_range(policy.default, capacity, policy.valid_range, path.child("validRange"))
    return []


def _quantity_key(q: Quantity) -> int:
    """``quantityKeyInt``: duplicates are detected on the Go ``Value()`` (whole units, rounded up)."""
    return whole_units(q)


def _validate_valid_values(
    default: Quantity, capacity: Quantity, values: list[Quantity], path: Path
) -> list[FieldError]:
    """``validateRequestPolicyValidValues``: sorted, ≤ 10, ≤ capacity, unique by Value(), has default."""
    errs: list[FieldError] = []
    for i in range(len(values) - 1):
        if values[i].cmp(values[i + 1]) > 0:
            errs.append(
                invalid(path.index(i + 1), str(values[i + 1]), "values must be sorted in ascending order")
            )

    found_default = False

    def check_option(option: Quantity, option_path: Path) -> list[FieldError]:
        nonlocal found_default
        out: list[FieldError] = []
        if option.cmp(capacity) > 0:
            out.append(invalid(option_path, str(option), f"option is larger than capacity value: {capacity}"))
        if option.cmp(default) == 0:
            found_default = True
        return out

    errs.extend(
        validate_set(
            values, CAPACITY_REQUEST_POLICY_MAX_OPTIONS, check_option, _quantity_key, path, render_key=str
        )
    )
    if not found_default:
        errs.append(invalid(path, str(default), "default value is not valid according to the requestPolicy"))
    return errs


def _validate_range(
    default: Quantity, capacity: Quantity, rng: CapacityRequestPolicyRange, path: Path
) -> list[FieldError]:
    """``validateRequestPolicyRange`` with Kubernetes 1.36 paths (default errors on min/max)."""
    if rng.min is None:
        return [required(path.child("min"), "required when validRange is defined")]
    lo = rng.min
    errs: list[FieldError] = []
    if lo.cmp(capacity) > 0:
        errs.append(invalid(path.child("min"), str(lo), f"min is larger than capacity value: {capacity}"))
    if default.cmp(lo) < 0:
        errs.append(invalid(path.child("min"), str(default), f"default is less than min: {lo}"))
    if rng.max is not None:
        hi = rng.max
        if lo.cmp(hi) > 0:
            errs.append(invalid(path.child("max"), str(lo), f"min is larger than max: {hi}"))
        if hi.cmp(capacity) > 0:
            errs.append(invalid(path.child("max"), str(hi), f"max is larger than capacity value: {capacity}"))
        if default.cmp(hi) > 0:
            errs.append(invalid(path.child("max"), str(default), f"default is more than max: {hi}"))
    if rng.step is None:
        return errs
    step = rng.step
    step_path = path.child("step")
    if step.sign() <= 0:
        # 1.36 divides by zero (step 0) or accepts nonsense (negative); newer releases say this.
        errs.append(invalid(step_path, str(step), "must be greater than zero"))
        return errs
    added = lo.add(step)
    if added.cmp(capacity) > 0:
        errs.append(
            invalid(step_path, str(step), f"one step {added} is larger than capacity value: {capacity}")
        )
    if whole_units(step) == 0:
        # A positive step beyond int64 whose low 64 bits are zero: 1.36 would divide by zero.
        errs.append(invalid(step_path, str(step), f"must not be larger than {INT64_MAX}"))
        return errs
    errs.extend(_validate_step_multiple(default, lo, step, step_path))
    if rng.max is not None:
        errs.extend(_validate_step_multiple(rng.max, lo, step, step_path))
    return errs


def _validate_step_multiple(value: Quantity, lo: Quantity, step: Quantity, path: Path) -> list[FieldError]:
    """``validateRequestPolicyRangeStep`` on whole units (int64 ``Value()``, Go wrap-around)."""
    if whole_units_off_step(value, lo, step):
        return [invalid(path, str(value), f"value is not a multiple of a given step ({step}) from ({lo})")]
    return []
