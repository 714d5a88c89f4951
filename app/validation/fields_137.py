"""The rules of the DRA fields Kubernetes 1.37 added (and 1.38 changed), in one place.

Why apart from the per-kind modules: these fields exist only from 1.37 on (an older target
rejects them as unknown fields before validation, :func:`app.k8s.versions.absent_fields`) and
are alpha (dropped unless their gate is on, :mod:`app.k8s.gated`), so a field that reaches
these rules exists and is enabled at the target.  Read from 1.37.2's and 1.38.0-beta.0's
``pkg/apis/resource/validation/validation.go`` and the declarative tags of ``k8s.io/api``
``resource/v1/types.go`` (``zz_generated.validations.go``): only the cheap ones — limits,
names, enum values, required parts; a derived attribute's CEL expression is not compiled (its
cost budget is the API server's), so an invalid expression passes here.

* ResourceSlice ``spec.partitionTypeAttribute``: a fully qualified name; only on a slice whose
  devices consume counters; every such device must carry it as a string attribute.
* ``spec.skipNodeOperations`` (and an allocation result's copy): a set of ``*``,
  ``NodePrepareResources``, ``NodeUnprepareResources``; Prepare only together with Unprepare or ``*``.
* ``consumesCounters[].compatibilityGroups``: at most 2, DNS labels, unique.
* ``nodeAllocatableResources``: keys ``cpu``, ``memory`` or ``hugepages-*``; ``mapping`` or
  ``overhead``; a ``capacityKey`` with its ``capacityMultiplier`` (> 0) and a key of the device's
  capacity (1.38: a malformed key is reported as such instead of as not found); ``deviceMultiplier``
  > 0; overheads ≥ 0 and at least one of them.
* a request's ``derivedAttributes``: at most 32, each with a fully qualified ``name`` (unique) and
  an ``expression``, and the name referenced by a ``matchAttribute``/``distinctAttribute``
  constraint that targets the request.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..k8s import (
    Device,
    DeviceClaim,
    DeviceDerivedAttribute,
    FieldError,
    NodeAllocatableMapping,
    NodeAllocatableOverhead,
    Path,
    ResourceSliceSpec,
    duplicate,
    invalid,
    not_found,
    not_supported,
    required,
    too_many,
)
from .helpers import validate_slice
from .names import validate_dns1123_label, validate_fully_qualified_name, validate_qualified_name
from .target import current_target

__all__ = [
    "COMPATIBILITY_GROUPS_MAX_SIZE",
    "DERIVED_ATTRIBUTES_MAX_SIZE",
    "SKIP_NODE_OPERATIONS",
    "validate_claim_spec_137",
    "validate_skip_node_operations",
    "validate_slice_spec_137",
]

COMPATIBILITY_GROUPS_MAX_SIZE = 2  # resource.DeviceCompatibilityGroupsMaxSize (the KEP draft said 8)
DERIVED_ATTRIBUTES_MAX_SIZE = 32  # resource.DeviceDerivedAttributesMaxSize
SKIP_NODE_OPERATIONS = ("*", "NodePrepareResources", "NodeUnprepareResources")  # sorted, as sets.List prints them
_PREPARE, _UNPREPARE, _ALL = "NodePrepareResources", "NodeUnprepareResources", "*"


# ---------------------------------------------------------------------------- ResourceSlice
def validate_slice_spec_137(spec: ResourceSliceSpec, path: Path) -> list[FieldError]:
    """The 1.37 fields of a ResourceSlice spec (``path`` is ``spec``)."""
    errs: list[FieldError] = []
    if spec.partition_type_attribute is not None:
        errs.extend(_validate_partition_type_attribute(spec, path))
    errs.extend(validate_skip_node_operations(spec.skip_node_operations, path.child("skipNodeOperations")))
    for i, device in enumerate(spec.devices):
        here = path.child("devices").index(i)
        for j, use in enumerate(device.consumes_counters):
            if use.compatibility_groups:
                errs.extend(_validate_compatibility_groups(
                    use.compatibility_groups, here.child("consumesCounters").index(j).child("compatibilityGroups")))
        if device.node_allocatable_resources:
            errs.extend(_validate_node_allocatable_resources(device, here.child("nodeAllocatableResources")))
    return errs


def _validate_partition_type_attribute(spec: ResourceSliceSpec, path: Path) -> list[FieldError]:
    name = spec.partition_type_attribute or ""
    field_path = path.child("partitionTypeAttribute")
    format_errs = validate_fully_qualified_name(name, field_path)  # declarative format
    if not any(d.consumes_counters for d in spec.devices):
        return [*format_errs, invalid(field_path, name,
                                      "may only be set on a slice which declares devices that consume counters")]
    if format_errs:
        return format_errs  # no device can carry a malformed name: that one error says it
    bare = name.removeprefix(spec.driver + "/") if name.startswith(spec.driver + "/") else ""
    errs: list[FieldError] = []
    for i, device in enumerate(spec.devices):
        if not device.consumes_counters:
            continue
        here = path.child("devices").index(i).child("attributes").key(name)
        attribute = device.attributes.get(name)
        if attribute is None and bare:
            attribute = device.attributes.get(bare)
        if attribute is None:
            errs.append(required(here, "device consumes counters and `partitionTypeAttribute` names this attribute, "
                                       "so it must be set"))
        elif attribute.string_value is None:
            errs.append(invalid(here, attribute.model_dump(by_alias=True, exclude_none=True),
                                "must be a string value because `partitionTypeAttribute` names this attribute"))
    return errs


def validate_skip_node_operations(operations: Sequence[str], path: Path) -> list[FieldError]:
    """``skipNodeOperations``: a set of known values (declarative), then ``validateSkipNodeOperations``."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, op in enumerate(operations):
        if op in seen:
            errs.append(duplicate(path.index(i), op))
        seen.add(op)
    for i, op in enumerate(operations):
        if op not in SKIP_NODE_OPERATIONS:
            errs.append(not_supported(path.index(i), op, SKIP_NODE_OPERATIONS))
    if _PREPARE in seen and _UNPREPARE not in seen and _ALL not in seen:
        errs.append(invalid(path, list(operations),
                            "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped"))
    return errs


def _validate_compatibility_groups(groups: list[str], path: Path) -> list[FieldError]:
    if len(groups) > COMPATIBILITY_GROUPS_MAX_SIZE:
        return [too_many(path, len(groups), COMPATIBILITY_GROUPS_MAX_SIZE)]  # short-circuits the rest
    errs: list[FieldError] = []
    for i, group in enumerate(groups):
        errs.extend(validate_dns1123_label(group, path.index(i)))
    seen: set[str] = set()
    for i, group in enumerate(groups):
        if group in seen:
            errs.append(duplicate(path.index(i), group))
        seen.add(group)
    return errs


def _node_allocatable(name: str) -> bool:
    """``IsNodeAllocatableResourceName``: cpu, memory or a huge-page size."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def _validate_node_allocatable_resources(device: Device, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for name in sorted(device.node_allocatable_resources):
        entry = device.node_allocatable_resources[name]
        here = path.key(name)
        if not _node_allocatable(name):
            errs.append(invalid(here, name, "must be a node allocatable resource name"))
        if entry.mapping is None and entry.overhead is None:
            errs.append(required(here, "at least one of mapping or overhead must be set"))
        if entry.mapping is not None:
            errs.extend(_validate_mapping(entry.mapping, device, here.child("mapping")))
        if entry.overhead is not None:
            errs.extend(_validate_overhead(entry.overhead, here.child("overhead")))
    return errs


def _validate_mapping(mapping: NodeAllocatableMapping, device: Device, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    key = mapping.capacity_key
    if key is not None:
        key_path = path.child("capacityKey")
        if key == "":
            errs.append(invalid(key_path, "", "capacityKey must not be an empty string"))
        elif _at_least(current_target().version, 1, 38) and (name_errs := validate_qualified_name(key, key_path)):
            errs.extend(name_errs)  # 1.38: a malformed key is named as such, not "not found"
        elif key not in device.capacity:
            errs.append(not_found(key_path, key))
        if mapping.capacity_multiplier is None:
            errs.append(required(path.child("capacityMultiplier"), "capacityMultiplier is required when capacityKey is set"))
        elif mapping.capacity_multiplier.sign() <= 0:
            errs.append(invalid(path.child("capacityMultiplier"), str(mapping.capacity_multiplier), "must be positive"))
    if mapping.device_multiplier is not None and mapping.device_multiplier.sign() <= 0:
        errs.append(invalid(path.child("deviceMultiplier"), str(mapping.device_multiplier), "must be positive"))
    if mapping.capacity_multiplier is not None and key is None:
        errs.append(required(path.child("capacityKey"), "capacityKey is required when capacityMultiplier is set"))
    return errs


def _at_least(version: str, major: int, minor: int) -> bool:
    got = tuple(int(p) for p in version.split(".")[:2])
    return got >= (major, minor)


def _validate_overhead(overhead: NodeAllocatableOverhead, path: Path) -> list[FieldError]:
    if overhead.per_pod is None and overhead.per_container is None:
        return [invalid(path, "", "at least one of perPod or perContainer must be set")]
    errs: list[FieldError] = []
    if overhead.per_pod is not None and overhead.per_pod.sign() < 0:
        errs.append(invalid(path.child("perPod"), str(overhead.per_pod), "must be non-negative"))
    if overhead.per_container is not None and overhead.per_container.sign() < 0:
        errs.append(invalid(path.child("perContainer"), str(overhead.per_container), "must be non-negative"))
    return errs


# ---------------------------------------------------------------------------- claims
def validate_claim_spec_137(devices: DeviceClaim, path: Path) -> list[FieldError]:
    """The 1.37 fields of a claim's ``devices`` (``path`` is ``spec.devices`` or ``spec.spec.devices``):
    every request's and subrequest's ``derivedAttributes``."""
    used = _constraint_attributes(devices)
    errs: list[FieldError] = []
    for i, request in enumerate(devices.requests):
        here = path.child("requests").index(i)
        if request.exactly is not None and request.exactly.derived_attributes:
            errs.extend(_validate_derived(request.exactly.derived_attributes, here.child("exactly")
                                          .child("derivedAttributes"), used, request.name, ""))
        for j, sub in enumerate(request.first_available):
            if sub.derived_attributes:
                errs.extend(_validate_derived(sub.derived_attributes, here.child("firstAvailable").index(j)
                                              .child("derivedAttributes"), used, request.name, sub.name))
    return errs


def _constraint_attributes(devices: DeviceClaim) -> list[tuple[str, tuple[str, ...]]]:
    """(attribute, requests it targets — empty: all) of every matchAttribute/distinctAttribute constraint."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for constraint in devices.constraints:  # (gatherConstraintAttributes: matchAttribute first)
        name = constraint.match_attribute if constraint.match_attribute is not None else constraint.distinct_attribute
        if name is not None:
            out.append((name, tuple(constraint.requests)))
    return out


def _targets(requests: tuple[str, ...], request: str, sub: str) -> bool:
    """Whether a constraint naming ``requests`` applies to the (sub)request: all when empty; a
    parent's name covers its subrequests, ``parent/sub`` names one subrequest."""
    if not requests:
        return True
    return request in requests or (bool(sub) and f"{request}/{sub}" in requests)


def _validate_derived(attrs: list[DeviceDerivedAttribute], path: Path, used: list[tuple[str, tuple[str, ...]]],
                      request: str, sub: str) -> list[FieldError]:
    def one(attr: DeviceDerivedAttribute, here: Path) -> list[FieldError]:
        errs: list[FieldError] = []
        if not attr.name:
            errs.append(required(here.child("name")))
        else:
            errs.extend(validate_fully_qualified_name(attr.name, here.child("name")))
            if not any(name == attr.name and _targets(reqs, request, sub) for name, reqs in used):
                errs.append(invalid(here.child("name"), attr.name, "must be referenced by at least one matchAttribute "
                                                                   "or distinctAttribute constraint targeting this request"))
        if not attr.expression:
            errs.append(required(here.child("expression")))
        return errs

    errs = validate_slice(attrs, DERIVED_ATTRIBUTES_MAX_SIZE, one, path)
    if len(attrs) <= DERIVED_ATTRIBUTES_MAX_SIZE:
        seen: set[str] = set()
        for i, attr in enumerate(attrs):
            if attr.name in seen:
                errs.append(duplicate(path.index(i), attr.name))
            seen.add(attr.name)
    return errs
