"""DeviceTaintRule validation (``ValidateDeviceTaintRule`` and its status update), Kubernetes 1.35–1.38.

Why its own module: a DeviceTaintRule is a cluster-scoped object of its own (v1alpha3 from 1.33,
v1beta2 from 1.36, v1 from 1.37) whose rules share only the taint with a ResourceSlice.  The rule
set is the same in every served version and minor (read from ``pkg/apis/resource/validation``
of 1.36.3, 1.37.2 and 1.38.0-beta.0): metadata with a DNS-subdomain name; the selector's
``driver`` (a CSI driver name), ``pool`` (a pool name) and ``device`` (a DNS label), each only when
set; the taint as a ResourceSlice's (key a label name, value a label value, effect required and
one of NoExecute/NoSchedule/None).  ``status`` is cleared on create (``PrepareForCreate``), so
its rule — at most 8 conditions, each a valid ``metav1.Condition`` — only applies to a status
update (:func:`validate_device_taint_rule_status`).

A rule without ``deviceSelector`` is valid; what it matches is the scheduler's business (none
from 1.37.1/1.38 on, all before: :mod:`app.inventory.taintrules`).
"""

from __future__ import annotations

from typing import Any

from ..k8s import (
    DeviceTaintRule,
    DeviceTaintSelector,
    FieldError,
    Path,
    invalid,
    not_supported,
    required,
    too_many,
)
from .meta import validate_object_meta, validate_object_meta_update
from .names import validate_dns1123_label, validate_driver_name, validate_pool_name
from .taints import validate_device_taint

__all__ = [
    "DEVICE_TAINT_RULE_MAX_CONDITIONS",
    "validate_device_taint_rule",
    "validate_device_taint_rule_status",
    "validate_device_taint_rule_update",
]

DEVICE_TAINT_RULE_MAX_CONDITIONS = 8  # resource.DeviceTaintRuleStatusMaxConditions
_CONDITION_STATUSES = ("False", "True", "Unknown")


def validate_device_taint_rule(obj: DeviceTaintRule) -> list[FieldError]:
    """``ValidateDeviceTaintRule``: metadata (cluster-scoped), selector, taint."""
    errs = validate_object_meta(obj.metadata, namespaced=False, check_generate_name=False)
    errs.extend(_validate_spec(obj, None))
    return errs


def validate_device_taint_rule_update(obj: DeviceTaintRule, old: DeviceTaintRule) -> list[FieldError]:
    """``ValidateDeviceTaintRuleUpdate``: the taint's effect is only re-checked when it changed."""
    errs = validate_object_meta(obj.metadata, namespaced=False, check_generate_name=False)
    errs.extend(validate_object_meta_update(obj.metadata, old.metadata))
    errs.extend(_validate_spec(obj, old))
    return errs


def _validate_spec(obj: DeviceTaintRule, old: DeviceTaintRule | None) -> list[FieldError]:
    path = Path.root("spec")
    errs = _validate_selector(obj.spec.device_selector, path.child("deviceSelector"))
    taint = obj.spec.taint
    taint_errs = validate_device_taint(taint, path.child("taint"))
    if old is not None and old.spec.taint.effect == taint.effect:  # the effect is ratcheted
        effect = str(path.child("taint").child("effect"))
        taint_errs = [e for e in taint_errs if str(e.path) != effect]
    errs.extend(taint_errs)
    return errs


def _validate_selector(selector: DeviceTaintSelector | None, path: Path) -> list[FieldError]:
    """``validateDeviceTaintSelector``: each criterion that is set must be a valid name."""
    if selector is None:
        return []
    errs: list[FieldError] = []
    if selector.driver is not None:
        errs.extend(validate_driver_name(selector.driver, path.child("driver")))
    if selector.pool is not None:
        errs.extend(validate_pool_name(selector.pool, path.child("pool")))
    if selector.device is not None:
        errs.extend(validate_dns1123_label(selector.device, path.child("device")))
    return errs


def validate_device_taint_rule_status(conditions: list[dict[str, Any]]) -> list[FieldError]:
    """``ValidateDeviceTaintRuleStatusUpdate``'s status part: at most 8 conditions, each with a
    type and reason and a known status (the cheap part of ``metav1validation.ValidateConditions``)."""
    path = Path.root("status", "conditions")
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, cond in enumerate(conditions):
        here = path.index(i)
        kind = cond.get("type")
        if not isinstance(kind, str) or not kind:
            errs.append(required(here.child("type"), "must be set"))
        elif kind in seen:
            errs.append(invalid(here.child("type"), kind, "must be unique"))
        else:
            seen.add(kind)
        status = cond.get("status")
        if status not in _CONDITION_STATUSES:
            errs.append(not_supported(here.child("status"), status, _CONDITION_STATUSES))
        if not isinstance(cond.get("reason"), str) or not cond.get("reason"):
            errs.append(required(here.child("reason"), "must be set"))
    if len(conditions) > DEVICE_TAINT_RULE_MAX_CONDITIONS:
        errs.append(too_many(path, len(conditions), DEVICE_TAINT_RULE_MAX_CONDITIONS))
    return errs
