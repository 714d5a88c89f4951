"""ResourceSlice validation (``ValidateResourceSlice`` / ``ValidateResourceSliceUpdate``, Kubernetes 1.36
plus the deltas of 1.37 and 1.38 in :mod:`.deltas`).

Why each rule exists is in the docstrings; the order of checks follows upstream so the error list
reads the same as the API server's: driver, pool, (update: immutability), node selection,
sharedCounters-vs-devices, devices (1.38: then every device's node selection), sharedCounters.
"""

from __future__ import annotations

import re

from ..k8s import (
    Counter,
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceCounterConsumption,
    FieldError,
    Path,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
    byte_len,
    invalid,
    not_found,
    required,
    too_long,
)
from .deltas import (
    CAPACITY_RATCHET,
    DEVICE_LIST_RATCHET,
    DEVICE_NODE_SELECTOR_ONE_TERM,
    SEMVER_18_DIGITS,
    applies,
)
from .helpers import validate_map, validate_set, validate_slice
from .meta import validate_object_meta, validate_object_meta_update
from .names import (
    DNS1123_LABEL_MAX_LENGTH,
    is_dns1123_label,
    validate_dns1123_label,
    validate_driver_name,
    validate_node_name,
    validate_pool_name,
    validate_qualified_name,
)
from .node_selectors import validate_node_selector
from .request_policy import (
    validate_multi_allocatable_capacity,
    validate_single_allocatable_capacity,
)
from .taints import DEVICE_TAINTS_MAX_LENGTH, validate_binding_parameters, validate_device_taint

__all__ = [
    "RESOURCE_SLICE_MAX_DEVICES",
    "RESOURCE_SLICE_MAX_DEVICES_WITH_TAINTS_OR_COUNTERS",
    "validate_resource_slice",
    "validate_resource_slice_spec",
    "validate_resource_slice_update",
]

RESOURCE_SLICE_MAX_DEVICES = 128
RESOURCE_SLICE_MAX_DEVICES_WITH_TAINTS_OR_COUNTERS = 64
MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE = 32
DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH = 64
MAX_COUNTER_SETS = 8
MAX_COUNTERS_PER_COUNTER_SET = 32
MAX_COUNTER_CONSUMPTIONS_PER_DEVICE = 2
MAX_COUNTERS_PER_CONSUMPTION = 32
# attribute/capacity keys are shortened in paths beyond DeviceMaxDomainLength + 1 + DeviceMaxIDLength
_ATTRIBUTE_KEY_TRUNCATE = 63 + 1 + 32

_SEMVER_RE_NUM = r"(0|[1-9]\d*)"
# 1.38: numbers of at most 18 digits, so that they fit an int64 (blang/semver, CEL)
_SEMVER_RE_NUM_18 = r"(0|[1-9]\d{0,17})"
_SEMVER_RE_BUILD = r"[0-9a-zA-Z-]+"


def _semver_re(num: str) -> str:
    pre = "(" + num + r"|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
    return (
        "^"
        + num
        + r"\."
        + num
        + r"\."
        + num
        + "(-"
        + pre
        + r"(\."
        + pre
        + ")*)?"
        + r"(\+"
        + _SEMVER_RE_BUILD
        + r"(\."
        + _SEMVER_RE_BUILD
        + ")*)?"
        + r"\Z"
    )


_SEMVER = re.compile(_semver_re(_SEMVER_RE_NUM))
_SEMVER_18 = re.compile(_semver_re(_SEMVER_RE_NUM_18))


def validate_resource_slice(obj: ResourceSlice) -> list[FieldError]:
    """``ValidateResourceSlice``: metadata (cluster-scoped, DNS-subdomain name) and spec."""
    errs = validate_object_meta(obj.metadata, namespaced=False)
    errs.extend(validate_resource_slice_spec(obj.spec, None, Path.root("spec")))
    return errs


def validate_resource_slice_update(obj: ResourceSlice, old: ResourceSlice) -> list[FieldError]:
    """``ValidateResourceSliceUpdate``: metadata update rules, then the spec re-validated against the old one.

    Unchanged capacities and taints of a device are not re-validated (ratcheting), exactly as
    upstream does, so a slice stored under older rules can still be updated.
    """
    errs = validate_object_meta_update(obj.metadata, old.metadata)
    errs.extend(validate_resource_slice_spec(obj.spec, old.spec, Path.root("spec")))
    return errs


def validate_resource_slice_spec(
    spec: ResourceSliceSpec, old: ResourceSliceSpec | None, path: Path
) -> list[FieldError]:
    """``validateResourceSliceSpec``."""
    errs = validate_driver_name(spec.driver, path.child("driver"))
    errs.extend(_validate_pool(spec.pool, path.child("pool")))
    if old is not None:
        if spec.pool.name != old.pool.name:
            errs.append(invalid(path.child("pool", "name"), spec.pool.name, "field is immutable"))
        if spec.driver != old.driver:
            errs.append(invalid(path.child("driver"), spec.driver, "field is immutable"))
        if spec.node_name != old.node_name:
            errs.append(invalid(path.child("nodeName"), spec.node_name, "field is immutable"))
    errs.extend(_validate_node_selection(spec, path))
    if spec.shared_counters and spec.devices:
        errs.append(invalid(path, "", "only one of `sharedCounters` or `devices` is allowed"))

    errs.extend(_validate_devices(spec, old, path.child("devices")))
    errs.extend(
        validate_set(
            spec.shared_counters,
            MAX_COUNTER_SETS,
            _validate_counter_set,
            lambda c: c.name,
            path.child("sharedCounters"),
        )
    )
    return errs


def _validate_devices(spec: ResourceSliceSpec, old: ResourceSliceSpec | None, path: Path) -> list[FieldError]:
    """The device list, with the ratchets of the target.

    1.36: every device re-validated on update, except unchanged taints; 1.37: unchanged capacity
    maps are skipped too (kubernetes#140161); 1.38 (kubernetes#141644): an unchanged list is not
    validated at all, a changed one entirely — and node selection, which also depends on
    ``perDeviceNodeSelection``, is checked after the devices whenever either changed.
    """
    max_devices = RESOURCE_SLICE_MAX_DEVICES
    if any(d.taints or d.consumes_counters for d in spec.devices):
        max_devices = RESOURCE_SLICE_MAX_DEVICES_WITH_TAINTS_OR_COUNTERS
    per_device = bool(spec.per_device_node_selection)
    if applies(DEVICE_LIST_RATCHET):
        changed = old is None or spec.devices != old.devices
        errs: list[FieldError] = []
        if changed:
            errs = validate_set(
                spec.devices,
                max_devices,
                lambda d, p: _validate_device(d, None, p, per_device, node_selection=False),
                lambda d: d.name,
                path,
            )
        if changed or (old is not None and spec.per_device_node_selection != old.per_device_node_selection):
            for i, device in enumerate(spec.devices):
                errs.extend(_validate_device_node_selection(device, path.index(i), per_device))
        return errs
    old_devices = {d.name: d for d in old.devices} if old is not None else {}
    return validate_set(
        spec.devices,
        max_devices,
        lambda d, p: _validate_device(d, old_devices.get(d.name), p, per_device),
        lambda d: d.name,
        path,
    )


def _validate_pool(pool: ResourcePool, path: Path) -> list[FieldError]:
    """``validateResourcePool``: a pool name, a positive slice count, a non-negative generation."""
    errs = validate_pool_name(pool.name, path.child("name"))
    if pool.resource_slice_count <= 0:
        errs.append(
            invalid(path.child("resourceSliceCount"), pool.resource_slice_count, "must be greater than zero")
        )
    if pool.generation < 0:
        errs.append(
            invalid(path.child("generation"), pool.generation, "must be greater than or equal to zero")
        )
    return errs


_NODE_SELECTION = (
    "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
)


def _validate_node_selection(spec: ResourceSliceSpec, path: Path) -> list[FieldError]:
    """Exactly one way of saying which nodes can reach the devices; ``""``/``false`` are not "unset"."""
    errs: list[FieldError] = []
    set_fields: list[str] = []
    if spec.node_name is not None:
        if spec.node_name:
            set_fields.append("`nodeName`")
            errs.extend(validate_node_name(spec.node_name, path.child("nodeName")))
        else:
            errs.append(
                invalid(path.child("nodeName"), "", "must be either unset or set to a non-empty string")
            )
    if spec.node_selector is not None:
        set_fields.append("`nodeSelector`")
        errs.extend(validate_node_selector(spec.node_selector, path.child("nodeSelector")))
        terms = spec.node_selector.node_selector_terms
        if len(terms) != 1:
            errs.append(
                invalid(
                    path.child("nodeSelector", "nodeSelectorTerms"),
                    [t.model_dump(by_alias=True, exclude_defaults=True) for t in terms],
                    "must have exactly one node selector term",
                )
            )
    if spec.all_nodes is not None:
        if spec.all_nodes:
            set_fields.append("`allNodes`")
        else:
            errs.append(invalid(path.child("allNodes"), False, "must be either unset or set to true"))
    if spec.per_device_node_selection is not None:
        if spec.per_device_node_selection:
            set_fields.append("`perDeviceNodeSelection`")
        else:
            errs.append(
                invalid(path.child("perDeviceNodeSelection"), False, "must be either unset or set to true")
            )
    if not set_fields:
        errs.append(required(path, _NODE_SELECTION))
    elif len(set_fields) > 1:
        errs.append(
            invalid(
                path, "{" + ", ".join(set_fields) + "}", _NODE_SELECTION + ", but multiple fields are set"
            )
        )
    return errs


def _validate_device(
    device: Device, old: Device | None, path: Path, per_device_node_selection: bool, *, node_selection: bool = True
) -> list[FieldError]:
    """``validateDevice``: name, attribute/capacity budget and keys, request policies, taints,
    counter consumption, per-device node selection (unless the caller checks it: 1.38) and
    binding conditions."""
    if old is None and _plainly_valid(device, per_device_node_selection):
        return []
    return _validate_device_rules(device, old, path, per_device_node_selection, node_selection=node_selection)


def _validate_device_rules(
    device: Device, old: Device | None, path: Path, per_device_node_selection: bool, *, node_selection: bool = True
) -> list[FieldError]:
    """The device's rules the long way, every field path built (what the fast path stands in for).

    ``old``: the stored device of that name on update — its unchanged taints (all targets) and
    unchanged capacity map (1.37+) are not re-validated.
    """
    errs = validate_dns1123_label(device.name, path.child("name"))
    total = len(device.attributes) + len(device.capacity)
    if total > MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE:
        errs.append(
            invalid(
                path,
                total,
                f"the total number of attributes and capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE}",
            )
        )
    errs.extend(
        validate_map(
            device.attributes,
            -1,
            _ATTRIBUTE_KEY_TRUNCATE,
            validate_qualified_name,
            _validate_attribute,
            path.child("attributes"),
        )
    )
    if old is None or old.capacity != device.capacity or not applies(CAPACITY_RATCHET):
        item = (
            validate_multi_allocatable_capacity
            if device.allow_multiple_allocations
            else validate_single_allocatable_capacity
        )
        errs.extend(
            validate_map(
                device.capacity,
                -1,
                _ATTRIBUTE_KEY_TRUNCATE,
                validate_qualified_name,
                item,
                path.child("capacity"),
            )
        )
    if old is None or old.taints != device.taints:
        errs.extend(
            validate_slice(
                device.taints, DEVICE_TAINTS_MAX_LENGTH, validate_device_taint, path.child("taints")
            )
        )
    errs.extend(
        validate_set(
            device.consumes_counters,
            MAX_COUNTER_CONSUMPTIONS_PER_DEVICE,
            _validate_counter_consumption,
            lambda c: c.counter_set,
            path.child("consumesCounters"),
        )
    )
    if node_selection:
        errs.extend(_validate_device_node_selection(device, path, per_device_node_selection))
    errs.extend(
        validate_binding_parameters(device.binding_conditions, device.binding_failure_conditions, path)
    )
    errs.extend(_validate_node_allocatable_mappings(device, path.child("nodeAllocatableResourceMappings")))
    return errs


_NOWHERE = Path()
"""The path the fast path hands to item validators: only errors carry a path, and it returns
``True`` only where they return none."""


def _plainly_valid(device: Device, per_device_node_selection: bool) -> bool:
    """Whether :func:`_validate_device` would certainly find nothing, decided without building a
    field path for every attribute.

    Why: most devices are plain — a name, scalar attributes, a capacity or two — and 10,000
    linted objects spent a quarter of their time building the paths of errors that were not there
    (~15 paths per device).  This answers ``True`` only for the plain shape it checks completely
    (no taints, counters, binding conditions, node selection, allocatable mappings or list-typed
    attributes) and only when every rule :func:`_validate_device` applies to that shape holds,
    through the same functions and memo tables; anything else answers ``False`` and the device is
    validated the long way, which then names the field.  A test compares both on random devices.
    """
    if (
        per_device_node_selection
        or device.taints
        or device.consumes_counters
        or device.binding_conditions
        or device.binding_failure_conditions
        or device.node_allocatable_resource_mappings
        or device.node_name is not None
        or device.node_selector is not None
        or device.all_nodes is not None
    ):
        return False
    attributes, capacity = device.attributes, device.capacity
    if len(attributes) + len(capacity) > MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE:
        return False
    if is_dns1123_label(device.name):
        return False
    for key, attribute in attributes.items():
        if validate_qualified_name(key, _NOWHERE) or not _plain_attribute(attribute):
            return False
    if capacity:
        item = (
            validate_multi_allocatable_capacity
            if device.allow_multiple_allocations
            else validate_single_allocatable_capacity
        )
        for key, cap in capacity.items():
            if validate_qualified_name(key, _NOWHERE) or item(cap, _NOWHERE):
                return False
    return True


def _plain_attribute(attribute: DeviceAttribute) -> bool:
    """One scalar value that :func:`_validate_attribute` accepts (list-typed values: ``False``)."""
    if (
        attribute.int_values is not None
        or attribute.bool_values is not None
        or attribute.string_values is not None
        or attribute.version_values is not None
    ):
        return False
    text, version = attribute.string_value, attribute.version_value
    if (attribute.int_value is not None) + (attribute.bool_value is not None) + (text is not None) + (
        version is not None
    ) != 1:
        return False
    if text is not None:
        return byte_len(text) <= DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH
    if version is not None:
        return not _version_value_errors(version, _NOWHERE)
    return True


_PER_DEVICE = (
    "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` "
    "is set to true in the ResourceSlice spec"
)


def _validate_device_node_selection(device: Device, path: Path, per_device: bool) -> list[FieldError]:
    """With ``perDeviceNodeSelection`` each device says where it is reachable; otherwise it must not."""
    errs: list[FieldError] = []
    if per_device:
        set_fields: list[str] = []
        if device.node_name is not None:
            if device.node_name:
                set_fields.append("`nodeName`")
                errs.extend(validate_node_name(device.node_name, path.child("nodeName")))
            else:
                errs.append(invalid(path.child("nodeName"), "", "must not be empty"))
        if device.node_selector is not None:
            set_fields.append("`nodeSelector`")
            errs.extend(validate_node_selector(device.node_selector, path.child("nodeSelector")))
            terms = device.node_selector.node_selector_terms
            if len(terms) != 1 and applies(DEVICE_NODE_SELECTOR_ONE_TERM):
                # as for spec.nodeSelector: the allocator can only merge single-term selectors
                errs.append(
                    invalid(
                        path.child("nodeSelector", "nodeSelectorTerms"),
                        [t.model_dump(by_alias=True, exclude_defaults=True) for t in terms],
                        "must have exactly one node selector term",
                    )
                )
        if device.all_nodes is not None:
            if device.all_nodes:
                set_fields.append("`allNodes`")
            else:
                errs.append(invalid(path.child("allNodes"), False, "must be either unset or set to true"))
        if not set_fields:
            errs.append(required(path, _PER_DEVICE))
        elif len(set_fields) > 1:
            errs.append(invalid(path, "{" + ", ".join(set_fields) + "}", _PER_DEVICE))
    elif device.node_name is not None or device.node_selector is not None or device.all_nodes is not None:
        errs.append(
            invalid(
                path,
                None,
                "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` "
                "is set to true in the ResourceSlice spec",
            )
        )
    return errs


def _validate_attribute(attribute: DeviceAttribute, path: Path) -> list[FieldError]:
    """``validateDeviceAttribute``: exactly one value; strings ≤ 64 bytes; versions semver.

    The list-typed values (``bools``/``ints``/``strings``/``versions``, DRAListTypeAttributes)
    only reach here when their gate is on (they are dropped otherwise); each counts as one value,
    must not be empty, and its strings and versions follow the scalar rules item by item.
    """
    errs: list[FieldError] = []
    if attribute.string_value is not None:
        errs.extend(_string_value_errors(attribute.string_value, path.child("string")))
    if attribute.version_value is not None:
        errs.extend(_version_value_errors(attribute.version_value, path.child("version")))
    for name, values in (
        ("bools", attribute.bool_values), ("ints", attribute.int_values),
        ("strings", attribute.string_values), ("versions", attribute.version_values),
    ):
        if values is None:
            continue
        if not values:
            errs.append(invalid(path.child(name), [], "must not be empty if specified"))
        for i, item in enumerate(values):
            if name == "strings":
                errs.extend(_string_value_errors(str(item), path.child(name).index(i)))
            elif name == "versions":
                errs.extend(_version_value_errors(str(item), path.child(name).index(i)))
    count = attribute.values_set()
    if count == 0:
        errs.append(invalid(path, "", "exactly one value must be specified"))
    elif count > 1:
        errs.append(invalid(path, _go_attribute_struct(attribute), "exactly one value must be specified"))
    return errs


def _go_attribute_struct(attribute: DeviceAttribute) -> dict[str, object]:
    """The internal Go struct as ``field.Invalid`` prints it: Go field names, nulls included."""
    return {
        "IntValue": attribute.int_value,
        "BoolValue": attribute.bool_value,
        "StringValue": attribute.string_value,
        "VersionValue": attribute.version_value,
        "IntValues": attribute.int_values,
        "BoolValues": attribute.bool_values,
        "StringValues": attribute.string_values,
        "VersionValues": attribute.version_values,
    }


def _string_value_errors(value: str, path: Path) -> list[FieldError]:
    return [_too_long(path)] if byte_len(value) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH else []


def _version_value_errors(value: str, path: Path) -> list[FieldError]:
    """Semantic versions; from 1.38 on, numbers have at most 18 digits (they must fit an int64)."""
    errs: list[FieldError] = []
    if applies(SEMVER_18_DIGITS):
        if not _SEMVER_18.match(value):
            errs.append(
                invalid(path, value, "must be a string compatible with semver.org spec 2.0.0, with at most 18 digits in numbers")
            )
    elif not _SEMVER.match(value):
        errs.append(invalid(path, value, "must be a string compatible with semver.org spec 2.0.0"))
    if byte_len(value) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
        errs.append(_too_long(path))
    return errs


def _validate_node_allocatable_mappings(device: Device, path: Path) -> list[FieldError]:
    """``nodeAllocatableResourceMappings`` (DRANodeAllocatableResources, alpha in 1.36).

    Rules as a 1.36.2 API server applies them (it was the reference: the upstream code has
    changed since): the key must be a node allocatable resource — an extended resource name
    with a domain (``nvidia.com/gpu``) is not; ``capacityKey`` must not be empty and must name
    one of the device's capacities (NotFound otherwise); ``allocationMultiplier`` must be > 0.
    """
    errs: list[FieldError] = []
    for name in sorted(device.node_allocatable_resource_mappings):
        mapping = device.node_allocatable_resource_mappings[name]
        here = path.key(name)
        if "/" in name:
            errs.append(invalid(here, name, "must be a node allocatable resource name"))
        if mapping.capacity_key is not None:
            if mapping.capacity_key == "":
                errs.append(invalid(here.child("capacityKey"), "", "capacityKey must not be an empty string"))
            elif mapping.capacity_key not in device.capacity:
                errs.append(not_found(here.child("capacityKey"), mapping.capacity_key))
        multiplier = mapping.allocation_multiplier
        if multiplier is not None and multiplier.sign() <= 0:
            errs.append(invalid(here.child("allocationMultiplier"), str(multiplier), "must be positive"))
    return errs


def _too_long(path: Path) -> FieldError:
    return too_long(path, DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH)


def _validate_counter_name_key(name: str, path: Path) -> list[FieldError]:
    return validate_dns1123_label(name, path)


def _no_counter_check(counter: Counter, path: Path) -> list[FieldError]:
    """Any parsed quantity is a valid counter value."""
    return []


def _validate_counter_set(counter_set: CounterSet, path: Path) -> list[FieldError]:
    """``validateCounterSet``: a DNS-label name and 1..32 DNS-label-named counters."""
    errs: list[FieldError] = []
    if not counter_set.name:
        errs.append(required(path.child("name")))
    else:
        errs.extend(validate_dns1123_label(counter_set.name, path.child("name")))
    if not counter_set.counters:
        errs.append(required(path.child("counters")))
    else:
        errs.extend(
            validate_map(
                counter_set.counters,
                MAX_COUNTERS_PER_COUNTER_SET,
                DNS1123_LABEL_MAX_LENGTH,
                _validate_counter_name_key,
                _no_counter_check,
                path.child("counters"),
            )
        )
    return errs


def _validate_counter_consumption(consumption: DeviceCounterConsumption, path: Path) -> list[FieldError]:
    """``validateDeviceCounterConsumption``: a counter set name and 1..32 consumed counters."""
    errs: list[FieldError] = []
    if not consumption.counter_set:
        errs.append(required(path.child("counterSet")))
    else:
        errs.extend(validate_dns1123_label(consumption.counter_set, path.child("counterSet")))
    if not consumption.counters:
        errs.append(required(path.child("counters")))
    else:
        errs.extend(
            validate_map(
                consumption.counters,
                MAX_COUNTERS_PER_CONSUMPTION,
                DNS1123_LABEL_MAX_LENGTH,
                _validate_counter_name_key,
                _no_counter_check,
                path.child("counters"),
            )
        )
    return errs
