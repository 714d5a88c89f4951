"""Consumable-capacity ``requestPolicy`` rules of a ResourceSlice device (KEP-5075), per target.

Why a module of its own: these are the rules draguard exists for, and they have quirks that must
be reproduced exactly rather than "fixed" (decided by the 1.36 conformance sample, the rows of
``app/validation/RULES.md`` and the deltas of :mod:`.deltas`):

* 1.36: "default is less than min" / "default is more than max" are reported on
  ``validRange.min`` / ``validRange.max``; from 1.37 on ``validRange.default``;
* duplicate ``validValues`` and the step arithmetic use ``Quantity.Value()`` — whole units,
  rounded away from zero — so ``100m`` and ``200m`` are duplicates and a ``500m`` step acts as 1.
  That stays so in 1.37 with DRAFractionalCapacityRange off (the default): fractional values are
  neither rejected nor rounded in the object, only *read* as whole units (coerced).  With the gate
  on (1.37 opt-in, 1.38 GA) a fractional range or default is checked in milli-units (values finer
  than 1m or beyond the int64 milli range are ``value cannot be represented as a milli value``)
  and validValues are unique by their exact decimal (``AsDec().String()``);
* more than 10 ``validValues`` short-circuits the per-option checks, so the default is then
  always reported as "not valid" as well;
* ``step: 0``: the 1.36 API server (1.36.2 and 1.36.3 alike: kubernetes#139698 was not
  backported) divides by zero — an internal error, so the object can never be created there
  either.  draguard therefore rejects ``step: 0`` at *every* target, with 1.37's wording
  ``must be greater than zero``; a *negative* step is accepted by 1.36 (its whole-unit modulo
  works) and rejected from 1.37 on;
* from 1.37 on, with a positive step on the whole-unit path, default/min/max/step outside
  ``[0, 9223372036854775807]`` are rejected before the arithmetic (kubernetes#140666).

Every message is byte-for-byte the API server's.
"""

from __future__ import annotations

import re

from ..k8s import (
    INT64_MAX,
    INT64_MIN,
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    DeviceCapacity,
    FieldError,
    Memo,
    Path,
    Quantity,
    forbidden,
    go_mod,
    invalid,
    required,
    whole_units,
    whole_units_off_step,
    wrap_int64,
)
from .deltas import DEFAULT_ERRORS_ON_DEFAULT, INT64_BOUNDS, STEP_POSITIVE, applies
from .helpers import validate_set
from .target import current_target, gate_enabled

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


_PolicyKey = tuple[
    object, Quantity, Quantity | None, tuple[Quantity, ...], tuple[Quantity | None, ...] | None
]
_VALID_POLICIES: Memo[_PolicyKey, bool] = Memo("valid request policies", 4096)
"""Capacities and request policies that passed :func:`validate_request_policy`, by their values.

Why: every device of a shareable model carries the same capacity and policy (8 GPUs a node, the
same 40Gi memory with the same range), and checking one is quantity arithmetic per option.  The
rules compare values only (``Cmp``, ``Value()``, sign, sum — never a quantity's spelling), and a
:class:`Quantity` is equal and hashes by its exact value, so equal keys have equal verdicts.
Only valid ones are remembered: errors carry their path and spell the values.  The target's key
is part of the key: what is valid depends on the version and on DRAFractionalCapacityRange.  (With
that gate on, duplicates depend on spellings; only *valid* verdicts are kept, and a spelling can
only make a duplicate of values that are equal, which a valid list has none of unless both were
spelled differently — such lists are re-checked, never remembered: see :func:`_dec_key`.)"""


def validate_request_policy(
    capacity: Quantity, policy: CapacityRequestPolicy, path: Path
) -> list[FieldError]:
    """``validateRequestPolicy``: at most one of validValues/validRange, then that one's rules.

    A policy with only ``default`` (or nothing) is accepted without any check.
    """
    rng = policy.valid_range
    key: _PolicyKey = (current_target().key, capacity, policy.default, tuple(policy.valid_values),
                       None if rng is None else (rng.min, rng.max, rng.step))
    if _VALID_POLICIES.get(key):
        return []
    errs = _request_policy_errors(capacity, policy, path)
    if not errs and len(set(policy.valid_values)) == len(policy.valid_values):
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


_DECIMAL_EXPONENTS = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_SPELLING = re.compile(r"^[+-]?(\d*)(?:\.(\d*))?([a-zA-Z]*|[eE][+-]?\d+)$")


def _dec_key(q: Quantity) -> object:
    """``quantityKeyAsDec`` (DRAFractionalCapacityRange on): ``AsDec().String()`` of the parsed quantity.

    That string keeps the scale the value was *spelled* with: ``1.5`` → ``1.5`` but ``1500m`` →
    ``1.500``, ``2`` → ``2`` but ``2000m`` → ``2.000`` — so equal values spelled differently are
    not duplicates upstream.  draguard's :class:`Quantity` keeps the spelling only when
    apimachinery would reuse it as the cached text (``str()`` then differs from nothing we can
    see, so the private slot is read); when the spelling is gone the key is the quantity object
    itself, unique by identity: a duplicate the API server might see is then missed, never invented.
    """
    text = getattr(q, "_text", None)
    match = _SPELLING.match(text) if isinstance(text, str) else None
    if match is None:
        return q if text != "0" else "0"
    fraction, suffix = match.group(2) or "", match.group(3)
    if suffix.endswith("i"):
        scale = 0  # a reused binary text has no fraction: an integer amount
    elif suffix[:1] in ("e", "E"):
        scale = int(suffix[1:]) - len(fraction)
    elif suffix in _DECIMAL_EXPONENTS:
        scale = _DECIMAL_EXPONENTS[suffix] - len(fraction)
    else:
        return q
    sign = "-" if q.sign() < 0 else ""
    nanos = abs(q.nanos)
    if scale >= 0:
        return sign + str(nanos // 10**9)
    digits = -scale
    unscaled = nanos // 10 ** (9 - digits)
    whole, frac = divmod(unscaled, 10**digits)
    return f"{sign}{whole}.{frac:0{digits}d}"


def _validate_valid_values(
    default: Quantity, capacity: Quantity, values: list[Quantity], path: Path
) -> list[FieldError]:
    """``validateRequestPolicyValidValues``: sorted, ≤ 10, ≤ capacity, unique (by ``Value()``; by
    exact decimal with DRAFractionalCapacityRange), has the default."""
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

    if gate_enabled("DRAFractionalCapacityRange"):
        errs.extend(
            validate_set(values, CAPACITY_REQUEST_POLICY_MAX_OPTIONS, check_option, _dec_key, path, render_key=str)
        )
    else:
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
    """``validateRequestPolicyRange`` of the target: bounds, then (gate on) milli safety, then the step."""
    if rng.min is None:
        return [required(path.child("min"), "required when validRange is defined")]
    lo = rng.min
    default_path = path.child("default") if applies(DEFAULT_ERRORS_ON_DEFAULT) else None
    errs: list[FieldError] = []
    if lo.cmp(capacity) > 0:
        errs.append(invalid(path.child("min"), str(lo), f"min is larger than capacity value: {capacity}"))
    if default.cmp(lo) < 0:
        errs.append(invalid(default_path or path.child("min"), str(default), f"default is less than min: {lo}"))
    if rng.max is not None:
        hi = rng.max
        if lo.cmp(hi) > 0:
            errs.append(invalid(path.child("max"), str(lo), f"min is larger than max: {hi}"))
        if hi.cmp(capacity) > 0:
            errs.append(invalid(path.child("max"), str(hi), f"max is larger than capacity value: {capacity}"))
        if default.cmp(hi) > 0:
            errs.append(invalid(default_path or path.child("max"), str(default), f"default is more than max: {hi}"))
    bounds = (("default", default), ("min", lo), ("max", rng.max), ("step", rng.step))
    use_milli = False
    if gate_enabled("DRAFractionalCapacityRange"):
        # the default is not part of the range, but a fractional default alone takes the milli path too
        use_milli = any(q is not None and not q.is_integer() for _, q in bounds)
        if use_milli:
            unsafe = [
                invalid(path.child(name), str(q), "value cannot be represented as a milli value")
                for name, q in bounds
                if q is not None and not _milli_representable(q)
            ]
            if unsafe:
                return errs + unsafe
    if rng.step is None:
        return errs
    if applies(STEP_POSITIVE):
        return errs + _validate_step(default, lo, rng.max, rng.step, capacity, use_milli, bounds, path)
    return errs + _validate_step_136(default, lo, rng.max, rng.step, capacity, path.child("step"))


def _validate_step(
    default: Quantity,
    lo: Quantity,
    hi: Quantity | None,
    step: Quantity,
    capacity: Quantity,
    use_milli: bool,
    bounds: tuple[tuple[str, Quantity | None], ...],
    path: Path,
) -> list[FieldError]:
    """The step of Kubernetes 1.37+: positive, one step within the capacity, bounds readable, on the grid."""
    step_path = path.child("step")
    if step.sign() <= 0:
        return [invalid(step_path, str(step), "must be greater than zero")]
    errs: list[FieldError] = []
    added = lo.add(step)
    if added.cmp(capacity) > 0:
        errs.append(invalid(step_path, str(step), f"one step {added} is larger than capacity value: {capacity}"))
    if not use_milli and applies(INT64_BOUNDS):
        unreadable = [e for name, q in bounds if q is not None for e in _int64_range(q, path.child(name))]
        if unreadable:
            return errs + unreadable
    for value in (default, hi):
        if value is None:
            continue
        off = _milli_off_step(value, lo, step) if use_milli else whole_units_off_step(value, lo, step)
        if off:
            errs.append(invalid(step_path, str(value), f"value is not a multiple of a given step ({step}) from ({lo})"))
    return errs


def _validate_step_136(
    default: Quantity, lo: Quantity, hi: Quantity | None, step: Quantity, capacity: Quantity, step_path: Path
) -> list[FieldError]:
    """The step of Kubernetes 1.34–1.36: whole units only, no sign check.

    A step whose whole units are 0 (``0``, or a multiple of 2^64 that Go's ``Value()`` wraps to 0)
    makes the API server divide by zero: an internal error, never a stored object — reported with
    1.37's words.  A negative step is fine for that arithmetic and so is accepted.
    """
    units = whole_units(step)
    if step.sign() == 0 or (units == 0 and step.sign() < 0):
        return [invalid(step_path, str(step), "must be greater than zero")]
    errs: list[FieldError] = []
    added = lo.add(step)
    if added.cmp(capacity) > 0:
        errs.append(invalid(step_path, str(step), f"one step {added} is larger than capacity value: {capacity}"))
    if units == 0:
        errs.append(invalid(step_path, str(step), f"must not be larger than {INT64_MAX}"))
        return errs
    errs.extend(_validate_step_multiple(default, lo, step, step_path))
    if hi is not None:
        errs.extend(_validate_step_multiple(hi, lo, step, step_path))
    return errs


def _int64_range(q: Quantity, path: Path) -> list[FieldError]:
    """``validateInt64Range``: where ``Value()`` reads a bound faithfully, ``[0, MaxInt64]``."""
    if q.sign() < 0:
        return [invalid(path, str(q), "must be greater than or equal to 0")]
    if q.cmp(Quantity.from_int(INT64_MAX)) > 0:
        return [invalid(path, str(q), f"must not be larger than {INT64_MAX}")]
    return []


def _milli_representable(q: Quantity) -> bool:
    """Whether ``NewMilliQuantity(q.MilliValue())`` equals ``q``: whole milli-units within int64."""
    milli, rest = divmod(q.nanos, 10**6)
    return rest == 0 and INT64_MIN <= milli <= INT64_MAX


def _milli_off_step(value: Quantity, lo: Quantity, step: Quantity) -> bool:
    """``(value − min) % step != 0`` on ``MilliValue()``s, with Go's int64 wrap-around."""
    diff = wrap_int64(value.milli_value() - lo.milli_value())
    return go_mod(diff, step.milli_value()) != 0


def _validate_step_multiple(value: Quantity, lo: Quantity, step: Quantity, path: Path) -> list[FieldError]:
    """``validateRequestPolicyRangeStep`` on whole units (int64 ``Value()``, Go wrap-around)."""
    if whole_units_off_step(value, lo, step):
        return [invalid(path, str(value), f"value is not a multiple of a given step ({step}) from ({lo})")]
    return []
