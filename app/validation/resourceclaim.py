"""ResourceClaim and ResourceClaimTemplate validation (Kubernetes 1.36).

Why one module for both kinds: a template's ``spec.spec`` *is* a claim spec, validated by the
same code with the prefix ``spec.spec.``.  Covered here: requests (exactly / firstAvailable),
device class names, CEL selectors, allocation mode and count, tolerations, constraints (with the
1.36 "exactly one of matchAttribute or distinctAttribute" rule), opaque config, the claim status
(allocation results, ``shareID`` UUIDs, ``status.devices``), and the update rules (the spec is
immutable).  ``capacity.requests`` is not validated by Kubernetes 1.36 and 1.37 (any key, any
amount; draguard's lints speak about it instead); 1.38 checks its *keys* as qualified names
(kubernetes#142202, :data:`.deltas.CAPACITY_REQUEST_NAMES`), sparing a template update whose
requests did not change, and the keys of an allocation result's ``consumedCapacity``.  1.38's
declarative limits on the *amounts* of both maps (≤ 32 entries, none negative) live in
:mod:`.capacity_requests` and are added after every handwritten error, as the API server does.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from ..k8s import (
    AllocatedDeviceStatus,
    AllocationResult,
    CapacityRequirements,
    DeviceAllocationConfiguration,
    DeviceClaim,
    DeviceClaimConfiguration,
    DeviceConstraint,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    DeviceToleration,
    ExactDeviceRequest,
    FieldError,
    NetworkDeviceData,
    Path,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourceClaimTemplate,
    byte_len,
    equal,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from .capacity_requests import allocation_capacity_errors, claim_spec_capacity_errors
from .config import validate_device_configuration, validate_raw_extension
from .deltas import CAPACITY_REQUEST_NAMES, applies
from .device_selectors import validate_selectors
from .helpers import validate_map, validate_set, validate_slice
from .meta import (
    validate_object_meta,
    validate_object_meta_update,
    validate_template_object_meta,
)
from .names import (
    validate_dns1123_label,
    validate_dns1123_subdomain,
    validate_driver_name,
    validate_fully_qualified_name,
    validate_pool_name,
    validate_qualified_name,
    validate_uid,
)
from .node_selectors import validate_node_selector
from .taints import validate_binding_parameters, validate_device_toleration
from .target import gate_enabled

__all__ = [
    "ADMIN_ACCESS_LABEL",
    "admin_access_paths",
    "validate_claim_spec",
    "validate_claim_status",
    "validate_resource_claim",
    "validate_resource_claim_template",
    "validate_resource_claim_template_update",
    "validate_resource_claim_update",
]

DEVICE_REQUESTS_MAX_SIZE = 32  # = AllocationResultsMaxSize
DEVICE_CONSTRAINTS_MAX_SIZE = 32
DEVICE_CONFIG_MAX_SIZE = 32
FIRST_AVAILABLE_MAX_SIZE = 8
RESERVED_FOR_MAX_SIZE = 256
ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS = 8
ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH = 10 * 1024
NETWORK_DEVICE_DATA_MAX_IPS = 16
NETWORK_INTERFACE_NAME_MAX_LENGTH = 256
NETWORK_HARDWARE_ADDRESS_MAX_LENGTH = 128
ALLOCATION_MODES = ("All", "ExactCount")
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"

# keys are shortened in paths beyond DeviceMaxDomainLength + 1 + DeviceMaxIDLength (as for slices)
_CAPACITY_KEY_TRUNCATE = 63 + 1 + 32

_REQUEST_REF = (
    "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
)

# request name -> sub-request names (None: a request with `exactly`)
RequestNames = Mapping[str, frozenset[str] | None]


# ---------------------------------------------------------------------------- objects
def validate_resource_claim(obj: ResourceClaim) -> list[FieldError]:
    """``ValidateResourceClaim`` (+ the status, checked as a status update from an empty one would be)."""
    errs = validate_object_meta(obj.metadata, namespaced=True)
    errs.extend(validate_claim_spec(obj.spec, Path.root("spec")))
    if obj.status is not None:
        errs.extend(validate_claim_status(obj.status, None, obj.spec, Path.root("status")))
    errs.extend(claim_spec_capacity_errors(obj.spec, None, Path.root("spec")))
    errs.extend(allocation_capacity_errors(obj.status, None, Path.root("status")))
    return errs


def validate_resource_claim_update(obj: ResourceClaim, old: ResourceClaim) -> list[FieldError]:
    """``ValidateResourceClaimUpdate``: metadata, then only immutability — the spec cannot change,
    so re-validating it would only repeat errors the user cannot act on.  A changed status is
    checked like a status update (an allocation, once set, is immutable)."""
    errs = validate_object_meta(obj.metadata, namespaced=True)
    errs.extend(validate_object_meta_update(obj.metadata, old.metadata))
    if not equal(obj.spec, old.spec):
        errs.append(invalid(Path.root("spec"), _dump(obj.spec), "field is immutable"))
    if obj.status is not None and not equal(obj.status, old.status):
        errs.extend(validate_claim_status(obj.status, old.status, obj.spec, Path.root("status")))
    # declarative (1.38): a changed spec stops at `Immutable`, an unchanged one is ratcheted
    errs.extend(allocation_capacity_errors(obj.status, old.status, Path.root("status")))
    return errs


def validate_resource_claim_template(
    obj: ResourceClaimTemplate, old_spec: ResourceClaimSpec | None = None
) -> list[FieldError]:
    """``ValidateResourceClaimTemplate``: metadata, ``spec.metadata`` (labels/annotations only), ``spec.spec``.

    ``old_spec``: the stored template's claim spec on update (rules added later spare what it had).
    """
    errs = _validate_template_handwritten(obj, old_spec)
    errs.extend(claim_spec_capacity_errors(obj.spec.spec, old_spec, Path.root("spec", "spec")))
    return errs


def _validate_template_handwritten(
    obj: ResourceClaimTemplate, old_spec: ResourceClaimSpec | None
) -> list[FieldError]:
    errs = validate_object_meta(obj.metadata, namespaced=True)
    spec_path = Path.root("spec")
    if obj.spec.metadata is not None:
        errs.extend(validate_template_object_meta(obj.spec.metadata, spec_path.child("metadata")))
    errs.extend(validate_claim_spec(obj.spec.spec, spec_path.child("spec"), old_spec))
    return errs


def validate_resource_claim_template_update(
    obj: ResourceClaimTemplate, old: ResourceClaimTemplate
) -> list[FieldError]:
    """The template strategy re-runs full validation, then the update rules (spec immutable).

    1.38 passes the old claim spec down, so unchanged ``capacity.requests`` keep names that were
    stored before they were checked (a spec is immutable: the user could not fix them).
    """
    errs = _validate_template_handwritten(obj, old.spec.spec)
    errs.extend(validate_object_meta_update(obj.metadata, old.metadata))
    if not equal(obj.spec, old.spec):
        errs.append(invalid(Path.root("spec"), _dump(obj.spec), "field is immutable"))
    # declarative (1.38), last; the template's spec has no `Immutable` tag, so a change is walked
    errs.extend(claim_spec_capacity_errors(obj.spec.spec, old.spec.spec, Path.root("spec", "spec")))
    return errs


def _dump(model: Any) -> Any:
    """The model as JSON-shaped data for an Invalid value.  Python mode, because pydantic's JSON
    mode gives up on opaque parameters nested ~1,000 deep; the value is rendered without
    recursion (:func:`app.k8s.field.go_json`), Quantities are already strings."""
    return model.model_dump(by_alias=True, exclude_defaults=True)


# ---------------------------------------------------------------------------- admin access
def admin_access_paths(obj: ResourceClaim | ResourceClaimTemplate) -> list[Path]:
    """Where the API server reports missing admin-access permission (at most one spec path).

    Upstream (``AuthorizedForAdmin``) stops at the first ``exactly.adminAccess: true`` and uses
    the path ``spec.devices.requests[i].adminAccess`` — without ``exactly`` and, for templates,
    without the ``spec.spec`` prefix.  A claim's status gets the analogous check on
    ``status.allocation.devices.results[i].adminAccess``.
    """
    spec = obj.spec if isinstance(obj, ResourceClaim) else obj.spec.spec
    paths: list[Path] = []
    for i, request in enumerate(spec.devices.requests):
        if request.exactly is not None and request.exactly.admin_access:
            paths.append(Path.root("spec", "devices", "requests").index(i).child("adminAccess"))
            break
    if isinstance(obj, ResourceClaim) and obj.status is not None and obj.status.allocation is not None:
        for i, result in enumerate(obj.status.allocation.devices.results):
            if result.admin_access:
                paths.append(
                    Path.root("status", "allocation", "devices", "results").index(i).child("adminAccess")
                )
                break
    return paths


# ---------------------------------------------------------------------------- spec
def _gather_request_names(claim: DeviceClaim) -> dict[str, frozenset[str] | None]:
    names: dict[str, frozenset[str] | None] = {}
    for request in claim.requests:
        if not request.first_available:
            names[request.name] = None
        else:
            names[request.name] = frozenset(sub.name for sub in request.first_available)
    return names


def _has_request(names: RequestNames, ref: str) -> bool:
    segments = ref.split("/")
    if len(segments) > 2 or segments[0] not in names:
        return False
    if len(segments) == 1:
        return True
    subs = names[segments[0]]
    return subs is not None and segments[1] in subs


def validate_claim_spec(
    spec: ResourceClaimSpec, path: Path, old: ResourceClaimSpec | None = None
) -> list[FieldError]:
    """``validateResourceClaimSpec`` → ``validateDeviceClaim``: requests, constraints, config.

    ``old``: the stored spec when a template is updated (requests are matched by name).
    """
    claim = spec.devices
    devices_path = path.child("devices")
    names = _gather_request_names(claim)
    old_requests = {r.name: r for r in old.devices.requests} if old is not None else {}
    errs = validate_set(
        claim.requests,
        DEVICE_REQUESTS_MAX_SIZE,
        lambda r, p: _validate_request(r, p, old_requests.get(r.name)),
        lambda r: r.name,
        devices_path.child("requests"),
    )
    errs.extend(
        validate_slice(
            claim.constraints,
            DEVICE_CONSTRAINTS_MAX_SIZE,
            lambda c, p: _validate_constraint(c, p, names),
            devices_path.child("constraints"),
        )
    )
    errs.extend(
        validate_slice(
            claim.config,
            DEVICE_CONFIG_MAX_SIZE,
            lambda c, p: _validate_claim_config(c, p, names),
            devices_path.child("config"),
        )
    )
    return errs


def _validate_request(request: DeviceRequest, path: Path, old: DeviceRequest | None = None) -> list[FieldError]:
    """``validateDeviceRequest``: a DNS-label name and exactly one of ``exactly`` / ``firstAvailable``.

    ``old``: the stored request of that name (template update), for the capacity-name ratchet.
    """
    errs = validate_dns1123_label(request.name, path.child("name"))
    has_first = bool(request.first_available)
    has_exactly = request.exactly is not None
    if not has_first and not has_exactly:
        errs.append(required(path, "exactly one of `exactly` or `firstAvailable` is required"))
    elif has_first and has_exactly:
        errs.append(
            invalid(
                path,
                None,
                "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
            )
        )
    elif has_first:
        errs.extend(
            validate_set(
                request.first_available,
                FIRST_AVAILABLE_MAX_SIZE,
                lambda sub, p: _validate_sub_request(sub, p, _old_sub_capacity(old, sub.name)),
                lambda s: s.name,
                path.child("firstAvailable"),
            )
        )
    elif request.exactly is not None:
        old_capacity = old.exactly.capacity if old is not None and old.exactly is not None else None
        errs.extend(_validate_exact_request(request.exactly, path.child("exactly"), old_capacity))
    return errs


def _old_sub_capacity(old: DeviceRequest | None, name: str) -> CapacityRequirements | None:
    if old is None:
        return None
    return next((sub.capacity for sub in old.first_available if sub.name == name), None)


def _validate_exact_request(
    request: ExactDeviceRequest | DeviceSubRequest, path: Path, old_capacity: CapacityRequirements | None = None
) -> list[FieldError]:
    """``validateExactDeviceRequest`` (``adminAccess`` is not validated here; ``capacity`` only by
    1.38, its keys); a subrequest shares these fields and these rules."""
    errs = _validate_device_class_name(request.device_class_name, path.child("deviceClassName"))
    errs.extend(validate_selectors(request.selectors, path.child("selectors")))
    errs.extend(_validate_allocation_mode(request.allocation_mode, request.count, path))
    errs.extend(_validate_tolerations(request.tolerations, path.child("tolerations")))
    errs.extend(_validate_capacity_requirements(request.capacity, old_capacity, path.child("capacity")))
    return errs


def _validate_sub_request(
    sub: DeviceSubRequest, path: Path, old_capacity: CapacityRequirements | None = None
) -> list[FieldError]:
    """``validateDeviceSubRequest``: the exact-request rules plus a DNS-label name."""
    return validate_dns1123_label(sub.name, path.child("name")) + _validate_exact_request(sub, path, old_capacity)


def _validate_capacity_requirements(
    capacity: CapacityRequirements | None, old: CapacityRequirements | None, path: Path
) -> list[FieldError]:
    """``validateCapacityRequirements`` (1.38): the request names, unless a stored request kept them.

    Amounts are declarative rules (:mod:`.capacity_requests`).  ``<name>`` and ``<driver>/<name>``
    are both fine — the allocator resolves the short form in the device's driver domain.
    """
    if capacity is None or not applies(CAPACITY_REQUEST_NAMES):
        return []
    if old is not None and old.requests == capacity.requests:
        return []
    return _validate_capacity_names(capacity.requests, path.child("requests"))


def _validate_capacity_names(names: Mapping[str, object], path: Path) -> list[FieldError]:
    """``validateCapacityNames``: every key a qualified name, errors at the map's own path."""
    return validate_map(names, -1, _CAPACITY_KEY_TRUNCATE, validate_qualified_name, _no_value_check, path)


def _no_value_check(value: object, path: Path) -> list[FieldError]:
    return []


def _validate_tolerations(tolerations: list[DeviceToleration], path: Path) -> list[FieldError]:
    return [e for i, t in enumerate(tolerations) for e in validate_device_toleration(t, path.index(i))]


def _validate_device_class_name(name: str, path: Path) -> list[FieldError]:
    """``validateDeviceClass``: required, a DNS subdomain."""
    if not name:
        return [required(path)]
    return validate_dns1123_subdomain(name, path)


def _validate_allocation_mode(mode: str, count: int, path: Path) -> list[FieldError]:
    """``validateDeviceAllocationMode`` (after defaulting: "" → ExactCount, count 0 → 1)."""
    if mode == "All":
        if count != 0:
            return [invalid(path.child("count"), count, "must not be specified when allocationMode is 'All'")]
        return []
    if mode == "ExactCount":
        if count <= 0:
            return [invalid(path.child("count"), count, "must be greater than zero")]
        return []
    return [not_supported(path.child("allocationMode"), mode, ALLOCATION_MODES)]


def _validate_request_ref(ref: str, path: Path, names: RequestNames) -> list[FieldError]:
    """``validateRequestNameRef``: ``req`` or ``req/sub`` naming a request of this claim."""
    segments = ref.split("/")
    if len(segments) > 2:
        return [invalid(path, ref, _REQUEST_REF)]
    errs: list[FieldError] = []
    for segment in segments:
        errs.extend(validate_dns1123_label(segment, path))
    if not _has_request(names, ref):
        errs.append(invalid(path, ref, _REQUEST_REF))
    return errs


def _validate_request_refs(refs: list[str], path: Path, names: RequestNames) -> list[FieldError]:
    return validate_set(
        refs, DEVICE_REQUESTS_MAX_SIZE, lambda r, p: _validate_request_ref(r, p, names), lambda r: r, path
    )


def _validate_constraint(constraint: DeviceConstraint, path: Path, names: RequestNames) -> list[FieldError]:
    """``validateDeviceConstraint``: references, then ``matchAttribute`` *or else* ``distinctAttribute``.

    With both set only ``matchAttribute`` is validated and nothing is reported (upstream's
    if/else-if chain); with neither, the message says "multiple fields are set" — upstream's text.
    Without DRAConsumableCapacity there is no union: ``matchAttribute`` is simply required (a
    1.35 API server, where a ``distinctAttribute`` was dropped, says exactly that).
    """
    errs = _validate_request_refs(constraint.requests, path.child("requests"), names)
    if constraint.match_attribute is not None:
        errs.extend(validate_fully_qualified_name(constraint.match_attribute, path.child("matchAttribute")))
    elif constraint.distinct_attribute is not None:
        errs.extend(
            validate_fully_qualified_name(constraint.distinct_attribute, path.child("distinctAttribute"))
        )
    elif not gate_enabled("DRAConsumableCapacity"):
        errs.append(required(path.child("matchAttribute")))
    else:
        errs.append(
            required(
                path,
                'exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set',
            )
        )
    return errs


def _validate_claim_config(
    config: DeviceClaimConfiguration, path: Path, names: RequestNames
) -> list[FieldError]:
    """``validateDeviceClaimConfiguration``: references and opaque configuration."""
    errs = _validate_request_refs(config.requests, path.child("requests"), names)
    errs.extend(validate_device_configuration(config.opaque, path, stored=False))
    return errs


# ---------------------------------------------------------------------------- status
def _shared_device_id(driver: str, pool: str, device: str, share_id: str | None) -> tuple[str, str, str, str]:
    return (driver, pool, device, share_id or "")


def _render_shared_device_id(key: tuple[str, str, str, str]) -> dict[str, str]:
    return {"Driver": key[0], "Pool": key[1], "Device": key[2], "ShareID": key[3]}


def validate_claim_status(
    status: ResourceClaimStatus, old: ResourceClaimStatus | None, spec: ResourceClaimSpec, path: Path
) -> list[FieldError]:
    """``validateResourceClaimStatusUpdate``: reservedFor, status.devices, then the allocation.

    ``status.devices`` entries must name an allocated device — with ``shareID`` part of the
    identity, so an entry without ``shareID`` does not match a shared allocation.
    """
    names = _gather_request_names(spec.devices)
    errs = validate_set(
        status.reserved_for,
        RESERVED_FOR_MAX_SIZE,
        _validate_consumer_ref,
        lambda r: r.uid,
        path.child("reservedFor"),
    )
    allocated: set[tuple[str, str, str, str]] = set()
    if status.allocation is not None:
        allocated = {
            _shared_device_id(r.driver, r.pool, r.device, r.share_id)
            for r in status.allocation.devices.results
        }
    errs.extend(
        validate_set(
            status.devices,
            -1,
            lambda d, p: _validate_device_status(d, p, allocated),
            lambda d: _shared_device_id(d.driver, d.pool, d.device, d.share_id),
            path.child("devices"),
            render_key=_render_shared_device_id,
        )
    )
    if status.reserved_for and status.allocation is None:
        errs.append(forbidden(path.child("reservedFor"), "may not be specified when `allocated` is not set"))
    old_allocation = old.allocation if old is not None else None
    if old_allocation is not None and status.allocation is not None:
        if not equal(old_allocation, status.allocation):
            errs.append(invalid(path.child("allocation"), _dump(status.allocation), "field is immutable"))
    elif status.allocation is not None:
        errs.extend(_validate_allocation(status.allocation, path.child("allocation"), names))
    return errs


def _validate_consumer_ref(ref: ResourceClaimConsumerReference, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if not ref.resource:
        errs.append(required(path.child("resource")))
    if not ref.name:
        errs.append(required(path.child("name")))
    if not ref.uid:
        errs.append(required(path.child("uid")))
    return errs


def _validate_allocation(allocation: AllocationResult, path: Path, names: RequestNames) -> list[FieldError]:
    """``validateAllocationResult``: results (≤ 32), config (≤ 64: class + claim), node selector."""
    devices_path = path.child("devices")
    errs = validate_slice(
        allocation.devices.results,
        DEVICE_REQUESTS_MAX_SIZE,
        lambda r, p: _validate_allocation_result(r, p, names),
        devices_path.child("results"),
    )
    errs.extend(
        validate_slice(
            allocation.devices.config,
            2 * DEVICE_CONFIG_MAX_SIZE,
            lambda c, p: _validate_allocation_config(c, p, names),
            devices_path.child("config"),
        )
    )
    if allocation.node_selector is not None:
        errs.extend(validate_node_selector(allocation.node_selector, path.child("nodeSelector")))
    return errs


def _validate_allocation_result(
    result: DeviceRequestAllocationResult, path: Path, names: RequestNames
) -> list[FieldError]:
    """``validateDeviceRequestAllocationResult`` (``consumedCapacity``: its keys from 1.38 on)."""
    errs = _validate_request_ref(result.request, path.child("request"), names)
    errs.extend(validate_driver_name(result.driver, path.child("driver")))
    errs.extend(validate_pool_name(result.pool, path.child("pool")))
    errs.extend(validate_dns1123_label(result.device, path.child("device")))
    errs.extend(
        validate_binding_parameters(result.binding_conditions, result.binding_failure_conditions, path)
    )
    errs.extend(_validate_tolerations(result.tolerations, path.child("tolerations")))
    if result.share_id is not None:
        errs.extend(validate_uid(result.share_id, path.child("shareID")))
    if applies(CAPACITY_REQUEST_NAMES):
        errs.extend(_validate_capacity_names(result.consumed_capacity, path.child("consumedCapacity")))
    return errs


def _validate_allocation_config(
    config: DeviceAllocationConfiguration, path: Path, names: RequestNames
) -> list[FieldError]:
    errs: list[FieldError] = []
    if not config.source:
        errs.append(required(path.child("source")))
    elif config.source not in ("FromClaim", "FromClass"):
        errs.append(not_supported(path.child("source"), config.source, ("FromClaim", "FromClass")))
    errs.extend(_validate_request_refs(config.requests, path.child("requests"), names))
    errs.extend(validate_device_configuration(config.opaque, path, stored=False))
    return errs


def _validate_device_status(
    device: AllocatedDeviceStatus, path: Path, allocated: set[tuple[str, str, str, str]]
) -> list[FieldError]:
    """``validateDeviceStatus``: names, shareID, membership in the allocation, conditions, data."""
    errs = validate_driver_name(device.driver, path.child("driver"))
    errs.extend(validate_pool_name(device.pool, path.child("pool")))
    errs.extend(validate_dns1123_label(device.device, path.child("device")))
    if device.share_id is not None:
        errs.extend(validate_uid(device.share_id, path.child("shareID")))
    key = _shared_device_id(device.driver, device.pool, device.device, device.share_id)
    if key not in allocated:
        errs.append(invalid(path, _render_shared_device_id(key), "must be an allocated device in the claim"))
    if len(device.conditions) > ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS:
        errs.append(
            too_many(path.child("conditions"), len(device.conditions), ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS)
        )
    if device.data is not None:
        errs.extend(
            validate_raw_extension(
                device.data, path.child("data"), False, ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH
            )
        )
    if device.network_data is not None:
        errs.extend(_validate_network_data(device.network_data, path.child("networkData")))
    return errs


def _validate_network_data(data: NetworkDeviceData, path: Path) -> list[FieldError]:
    """``validateNetworkDeviceData``: length limits and unique interface addresses in CIDR form."""
    errs: list[FieldError] = []
    if byte_len(data.interface_name) > NETWORK_INTERFACE_NAME_MAX_LENGTH:
        errs.append(too_long(path.child("interfaceName"), NETWORK_INTERFACE_NAME_MAX_LENGTH))
    if byte_len(data.hardware_address) > NETWORK_HARDWARE_ADDRESS_MAX_LENGTH:
        errs.append(too_long(path.child("hardwareAddress"), NETWORK_HARDWARE_ADDRESS_MAX_LENGTH))

    def check_ip(address: str, p: Path) -> list[FieldError]:
        try:
            ipaddress.ip_interface(address)
        except ValueError:
            return [
                invalid(
                    p, address, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)"
                )
            ]
        if "/" not in address:
            return [
                invalid(
                    p, address, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)"
                )
            ]
        return []

    errs.extend(validate_set(data.ips, NETWORK_DEVICE_DATA_MAX_IPS, check_ip, lambda a: a, path.child("ips")))
    return errs
