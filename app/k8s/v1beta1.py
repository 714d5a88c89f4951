"""Pydantic models of the ``resource.k8s.io/v1beta1`` shapes that differ from v1.

Why separate models: strict decoding happens on the *versioned* type, so an unknown field or a
wrong type in a v1beta1 object is reported at its v1beta1 path
(``spec.devices[0].basic.atributes``, ``spec.devices.requests[0].cuont``), exactly as the API
server's strict decoder reports it.  Only two structures differ from v1 (read from
``staging/src/k8s.io/api/resource/v1beta1/types.go`` and checked against a 1.36 API server's
OpenAPI): a ResourceSlice device keeps everything but its name under ``basic``, and a claim
request carries the ``exactly`` fields flat beside ``firstAvailable``.  Everything else is
shared with :mod:`app.k8s.models`.

Validation errors keep the v1 (internal) paths, 1.38 included: its ``ResourceNormalizationRules``
(``requests[i].capacity`` → ``requests[i].exactly.capacity``, ``devices[i].basic.`` → ``devices[i].``)
only pair handwritten with declarative errors for the migration checks, they rewrite no reported
path.  Declarative errors are computed on the *versioned* object and would carry v1beta1 paths
(``requests[0].capacity.requests[k]``), but 1.38 no longer serves v1beta1 (``APILifecycleRemoved``
1.38; a real 1.38.0-beta.0 API server answers 404), so no such path can be reported.
"""

from __future__ import annotations

from pydantic import Field

from .models import (
    CapacityRequirements,
    CounterSet,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaimConfiguration,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceDerivedAttribute,
    DeviceSelector,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    NodeAllocatableResource,
    NodeAllocatableResourceMapping,
    NodeSelector,
    ObjectMeta,
    ResourceClaimStatus,
    ResourcePool,
    _Model,
)

__all__ = [
    "BasicDevice",
    "V1Beta1Device",
    "V1Beta1DeviceRequest",
    "V1Beta1ResourceClaim",
    "V1Beta1ResourceClaimTemplate",
    "V1Beta1ResourceSlice",
]


class BasicDevice(_Model):
    """Everything a v1 Device has except its name."""

    attributes: dict[str, DeviceAttribute] = Field(default_factory=dict)
    capacity: dict[str, DeviceCapacity] = Field(default_factory=dict)
    consumes_counters: list[DeviceCounterConsumption] = Field(default_factory=list, alias="consumesCounters")
    node_name: str | None = Field(None, alias="nodeName")
    node_selector: NodeSelector | None = Field(None, alias="nodeSelector")
    all_nodes: bool | None = Field(None, alias="allNodes")
    taints: list[DeviceTaint] = Field(default_factory=list)
    binds_to_node: bool | None = Field(None, alias="bindsToNode")
    binding_conditions: list[str] = Field(default_factory=list, alias="bindingConditions")
    binding_failure_conditions: list[str] = Field(default_factory=list, alias="bindingFailureConditions")
    allow_multiple_allocations: bool | None = Field(None, alias="allowMultipleAllocations")
    node_allocatable_resource_mappings: dict[str, NodeAllocatableResourceMapping] = Field(
        default_factory=dict, alias="nodeAllocatableResourceMappings"
    )  # 1.36 only
    node_allocatable_resources: dict[str, NodeAllocatableResource] = Field(
        default_factory=dict, alias="nodeAllocatableResources"
    )  # 1.37+


class V1Beta1Device(_Model):
    name: str = ""
    basic: BasicDevice | None = None


class V1Beta1ResourceSliceSpec(_Model):
    driver: str = ""
    pool: ResourcePool = Field(default_factory=ResourcePool)
    node_name: str | None = Field(None, alias="nodeName")
    node_selector: NodeSelector | None = Field(None, alias="nodeSelector")
    all_nodes: bool | None = Field(None, alias="allNodes")
    per_device_node_selection: bool | None = Field(None, alias="perDeviceNodeSelection")
    devices: list[V1Beta1Device] = Field(default_factory=list)
    shared_counters: list[CounterSet] = Field(default_factory=list, alias="sharedCounters")
    partition_type_attribute: str | None = Field(None, alias="partitionTypeAttribute")  # 1.37+
    skip_node_operations: list[str] = Field(default_factory=list, alias="skipNodeOperations")  # 1.37+


class V1Beta1ResourceSlice(_Model):
    api_version: str = Field("", alias="apiVersion")
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: V1Beta1ResourceSliceSpec = Field(default_factory=V1Beta1ResourceSliceSpec)


class V1Beta1DeviceRequest(_Model):
    """A v1beta1 request: the v1 ``exactly`` fields sit flat beside ``firstAvailable``."""

    name: str = ""
    device_class_name: str = Field("", alias="deviceClassName")
    selectors: list[DeviceSelector] | None = None
    allocation_mode: str = Field("", alias="allocationMode")
    count: int = 0
    admin_access: bool | None = Field(None, alias="adminAccess")
    first_available: list[DeviceSubRequest] = Field(default_factory=list, alias="firstAvailable")
    tolerations: list[DeviceToleration] | None = None
    capacity: CapacityRequirements | None = None
    derived_attributes: list[DeviceDerivedAttribute] | None = Field(None, alias="derivedAttributes")  # 1.37+


class V1Beta1DeviceClaim(_Model):
    requests: list[V1Beta1DeviceRequest] = Field(default_factory=list)
    constraints: list[DeviceConstraint] = Field(default_factory=list)
    config: list[DeviceClaimConfiguration] = Field(default_factory=list)


class V1Beta1ResourceClaimSpec(_Model):
    devices: V1Beta1DeviceClaim = Field(default_factory=V1Beta1DeviceClaim)


class V1Beta1ResourceClaim(_Model):
    api_version: str = Field("", alias="apiVersion")
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: V1Beta1ResourceClaimSpec = Field(default_factory=V1Beta1ResourceClaimSpec)
    status: ResourceClaimStatus | None = None


class V1Beta1ResourceClaimTemplateSpec(_Model):
    metadata: ObjectMeta | None = None
    spec: V1Beta1ResourceClaimSpec = Field(default_factory=V1Beta1ResourceClaimSpec)


class V1Beta1ResourceClaimTemplate(_Model):
    api_version: str = Field("", alias="apiVersion")
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: V1Beta1ResourceClaimTemplateSpec = Field(default_factory=V1Beta1ResourceClaimTemplateSpec)
