"""Pydantic v2 models of ``resource.k8s.io/v1`` DRA objects and core Node/Namespace metadata.

AdmissionReview is not modelled: the webhook reads the few request fields it needs by hand
(:mod:`app.server.webhook`), because a malformed review must become a precise 400, not a
pydantic error.

Why pydantic: strict structural decoding for free — an unknown field (a typo such as
``capacty``) and a wrong JSON type are reported with their exact path before any rule runs,
the way ``kubectl apply`` with strict field validation would refuse them.  Every field of the
v1 API is present; all are optional here because *required-ness* is a validation rule with its
own Kubernetes message (``Required value``), not a decoding failure.

Conventions: field names are the JSON names (camelCase) through aliases; lists default to
empty (Go treats nil and empty alike for these fields); pointers are ``None`` when absent.
``resource.k8s.io/v1beta2`` has the same shape; ``v1beta1`` differs (the ``basic`` device wrapper,
flat requests) and has its own models in :mod:`app.k8s.v1beta1`, converted to these by
:mod:`app.k8s.versions` as the API server converts to its internal type.

No ``from __future__ import annotations`` in this module (nor in :mod:`.pod`): with it, pydantic
reads every field's annotation back from a string (a ``ForwardRef`` compiled and evaluated per
field) while the classes are made at import — ~9 ms of every start-up, a quarter of building
these models.  Annotations here are evaluated as written, so a class refers only to classes above it.
"""

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer

from .quantity import Quantity, QuantityError, parse_quantity

__all__ = [
    "DRA_API_VERSIONS",
    "KIND_MODELS",
    "AllocatedDeviceStatus",
    "AllocationResult",
    "CELDeviceSelector",
    "CapacityRequestPolicy",
    "CapacityRequestPolicyRange",
    "CapacityRequirements",
    "CounterSet",
    "DRAObject",
    "Device",
    "DeviceAllocationResult",
    "DeviceAttribute",
    "DeviceCapacity",
    "DeviceClaim",
    "DeviceClass",
    "DeviceConstraint",
    "DeviceDerivedAttribute",
    "DeviceRequest",
    "DeviceSelector",
    "DeviceSubRequest",
    "DeviceTaint",
    "DeviceTaintRule",
    "DeviceTaintRuleSpec",
    "DeviceTaintSelector",
    "DeviceToleration",
    "ExactDeviceRequest",
    "Namespace",
    "Node",
    "NodeAllocatableMapping",
    "NodeAllocatableOverhead",
    "NodeAllocatableResource",
    "NodeAllocatableResourceMapping",
    "NodeSelector",
    "ObjectMeta",
    "QuantityField",
    "ResourceClaim",
    "ResourceClaimSpec",
    "ResourceClaimTemplate",
    "ResourceSlice",
    "ResourceSliceSpec",
]

DRA_API_VERSIONS = ("resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1")


def _to_quantity(value: Any) -> Quantity:
    """Accept what Kubernetes' ``Quantity.UnmarshalJSON`` accepts: a string or a bare number.

    A string — nearly every value — is tried first (~100,000 calls in a 10,000-object lint)."""
    if isinstance(value, str):
        try:
            return parse_quantity(value)
        except QuantityError as exc:
            raise ValueError(str(exc)) from exc
    if isinstance(value, Quantity):
        return value
    if isinstance(value, bool):
        raise ValueError("quantity must be a string or a number")
    if isinstance(value, int):
        return parse_quantity(str(value))
    if isinstance(value, float):
        text = repr(value)
        if text.endswith(".0"):
            text = text[:-2]
        try:
            return parse_quantity(text.replace("e+", "e"))
        except QuantityError as exc:
            raise ValueError(str(exc)) from exc
    raise ValueError("quantity must be a string or a number")


QuantityField = Annotated[
    Quantity,
    BeforeValidator(_to_quantity),
    PlainSerializer(lambda q: str(q), return_type=str),
]


def empty_list() -> list[Any]:
    """``[]``, as a list field's default factory.

    Why not ``list`` itself: pydantic asks ``inspect.signature`` of every default factory whether
    it takes the validated data, and for a builtin that means parsing its text signature —
    ~60 µs against ~4 µs for a Python function; 43 list fields made it ~3 ms of every start-up."""
    return []


class _Model(BaseModel):
    """Strict, typo-catching base: unknown fields are errors, no silent type coercion."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        populate_by_name=True,
        arbitrary_types_allowed=True,
        frozen=True,
        revalidate_instances="never",
    )


class _Loose(BaseModel):
    """For objects draguard reads only partly (Node, Namespace): extra fields are fine."""

    model_config = ConfigDict(extra="allow", strict=True, populate_by_name=True, frozen=True)


# ---------------------------------------------------------------------------- metadata
class ObjectMeta(_Model):
    name: str | None = None
    generate_name: str | None = Field(None, alias="generateName")
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = Field(None, alias="resourceVersion")
    generation: int | None = None
    creation_timestamp: str | None = Field(None, alias="creationTimestamp")
    deletion_timestamp: str | None = Field(None, alias="deletionTimestamp")
    deletion_grace_period_seconds: int | None = Field(None, alias="deletionGracePeriodSeconds")
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    owner_references: list[dict[str, Any]] = Field(default_factory=empty_list, alias="ownerReferences")
    finalizers: list[str] = Field(default_factory=empty_list)
    managed_fields: list[dict[str, Any]] = Field(default_factory=empty_list, alias="managedFields")
    self_link: str | None = Field(None, alias="selfLink")


# ---------------------------------------------------------------------------- node selection
class NodeSelectorRequirement(_Model):
    key: str = ""
    operator: str = ""
    values: list[str] = Field(default_factory=empty_list)


class NodeSelectorTerm(_Model):
    match_expressions: list[NodeSelectorRequirement] = Field(default_factory=empty_list, alias="matchExpressions")
    match_fields: list[NodeSelectorRequirement] = Field(default_factory=empty_list, alias="matchFields")


class NodeSelector(_Model):
    node_selector_terms: list[NodeSelectorTerm] = Field(default_factory=empty_list, alias="nodeSelectorTerms")


# ---------------------------------------------------------------------------- selectors, config
class CELDeviceSelector(_Model):
    expression: str = ""


class DeviceSelector(_Model):
    cel: CELDeviceSelector | None = None


class OpaqueDeviceConfiguration(_Model):
    driver: str = ""
    parameters: Any = None


class DeviceClassConfiguration(_Model):
    opaque: OpaqueDeviceConfiguration | None = None


# ---------------------------------------------------------------------------- DeviceClass
class DeviceClassSpec(_Model):
    selectors: list[DeviceSelector] = Field(default_factory=empty_list)
    config: list[DeviceClassConfiguration] = Field(default_factory=empty_list)
    extended_resource_name: str | None = Field(None, alias="extendedResourceName")


class DeviceClass(_Model):
    api_version: str = Field("", alias="apiVersion")
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: DeviceClassSpec = Field(default_factory=DeviceClassSpec)


# ---------------------------------------------------------------------------- ResourceSlice
class DeviceAttribute(_Model):
    int_value: int | None = Field(None, alias="int")
    bool_value: bool | None = Field(None, alias="bool")
    string_value: str | None = Field(None, alias="string")
    version_value: str | None = Field(None, alias="version")
    # list-typed values (DRAListTypeAttributes, alpha in 1.36); None = absent, [] = set but empty
    int_values: list[int] | None = Field(None, alias="ints")
    bool_values: list[bool] | None = Field(None, alias="bools")
    string_values: list[str] | None = Field(None, alias="strings")
    version_values: list[str] | None = Field(None, alias="versions")

    def kind_and_value(self) -> tuple[str | None, object]:
        """(kind, value) of the one value set; (None, None) when none is (a broken attribute).

        List-typed values (``DRAListTypeAttributes``) come first, as upstream reads them, as
        tuples (the inventory hashes these pairs)."""
        if self.int_values is not None:
            return "ints", tuple(self.int_values)
        if self.bool_values is not None:
            return "bools", tuple(self.bool_values)
        if self.string_values is not None:
            return "strings", tuple(self.string_values)
        if self.version_values is not None:
            return "versions", tuple(self.version_values)
        if self.int_value is not None:
            return "int", self.int_value
        if self.bool_value is not None:
            return "bool", self.bool_value
        if self.string_value is not None:
            return "string", self.string_value
        if self.version_value is not None:
            return "version", self.version_value
        return None, None

    def values_set(self) -> int:
        # a tuple's count, not a generator: validation asks this of every attribute of every device
        values = (self.int_value, self.bool_value, self.string_value, self.version_value,
                  self.int_values, self.bool_values, self.string_values, self.version_values)
        return 8 - values.count(None)


class CapacityRequestPolicyRange(_Model):
    min: QuantityField | None = None
    max: QuantityField | None = None
    step: QuantityField | None = None


class CapacityRequestPolicy(_Model):
    default: QuantityField | None = None
    valid_values: list[QuantityField] = Field(default_factory=empty_list, alias="validValues")
    valid_range: CapacityRequestPolicyRange | None = Field(None, alias="validRange")


class DeviceCapacity(_Model):
    value: QuantityField | None = None
    request_policy: CapacityRequestPolicy | None = Field(None, alias="requestPolicy")


class Counter(_Model):
    value: QuantityField | None = None


class CounterSet(_Model):
    name: str = ""
    counters: dict[str, Counter] = Field(default_factory=dict)


class DeviceCounterConsumption(_Model):
    counter_set: str = Field("", alias="counterSet")
    counters: dict[str, Counter] = Field(default_factory=dict)
    # DRADeviceCompatibilityGroups (alpha, 1.37+)
    compatibility_groups: list[str] = Field(default_factory=empty_list, alias="compatibilityGroups")


class DeviceTaint(_Model):
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: str | None = Field(None, alias="timeAdded")


class NodeAllocatableResourceMapping(_Model):
    """How a device maps to a node allocatable resource (DRANodeAllocatableResources, alpha in 1.36)."""

    capacity_key: str | None = Field(None, alias="capacityKey")
    allocation_multiplier: QuantityField | None = Field(None, alias="allocationMultiplier")


class NodeAllocatableMapping(_Model):
    """``nodeAllocatableResources[*].mapping`` (1.37+): the device models the resource itself."""

    capacity_key: str | None = Field(None, alias="capacityKey")
    capacity_multiplier: QuantityField | None = Field(None, alias="capacityMultiplier")
    device_multiplier: QuantityField | None = Field(None, alias="deviceMultiplier")


class NodeAllocatableOverhead(_Model):
    """``nodeAllocatableResources[*].overhead`` (1.37+): what allocating the device costs the node."""

    per_pod: QuantityField | None = Field(None, alias="perPod")
    per_container: QuantityField | None = Field(None, alias="perContainer")


class NodeAllocatableResource(_Model):
    """One entry of ``nodeAllocatableResources`` (1.37's replacement of 1.36's ``nodeAllocatableResourceMappings``)."""

    mapping: NodeAllocatableMapping | None = None
    overhead: NodeAllocatableOverhead | None = None


class Device(_Model):
    name: str = ""
    attributes: dict[str, DeviceAttribute] = Field(default_factory=dict)
    capacity: dict[str, DeviceCapacity] = Field(default_factory=dict)
    consumes_counters: list[DeviceCounterConsumption] = Field(default_factory=empty_list, alias="consumesCounters")
    node_name: str | None = Field(None, alias="nodeName")
    node_selector: NodeSelector | None = Field(None, alias="nodeSelector")
    all_nodes: bool | None = Field(None, alias="allNodes")
    taints: list[DeviceTaint] = Field(default_factory=empty_list)
    binds_to_node: bool | None = Field(None, alias="bindsToNode")
    binding_conditions: list[str] = Field(default_factory=empty_list, alias="bindingConditions")
    binding_failure_conditions: list[str] = Field(default_factory=empty_list, alias="bindingFailureConditions")
    allow_multiple_allocations: bool | None = Field(None, alias="allowMultipleAllocations")
    node_allocatable_resource_mappings: dict[str, NodeAllocatableResourceMapping] = Field(
        default_factory=dict, alias="nodeAllocatableResourceMappings"
    )  # 1.36 only (app.k8s.versions.ABSENT_FIELDS)
    node_allocatable_resources: dict[str, NodeAllocatableResource] = Field(
        default_factory=dict, alias="nodeAllocatableResources"
    )  # 1.37+


class ResourcePool(_Model):
    name: str = ""
    generation: int = 0
    resource_slice_count: int = Field(0, alias="resourceSliceCount")


class ResourceSliceSpec(_Model):
    driver: str = ""
    pool: ResourcePool = Field(default_factory=ResourcePool)
    node_name: str | None = Field(None, alias="nodeName")
    node_selector: NodeSelector | None = Field(None, alias="nodeSelector")
    all_nodes: bool | None = Field(None, alias="allNodes")
    per_device_node_selection: bool | None = Field(None, alias="perDeviceNodeSelection")
    devices: list[Device] = Field(default_factory=empty_list)
    shared_counters: list[CounterSet] = Field(default_factory=empty_list, alias="sharedCounters")
    # 1.37+: DRAPartitionableDevicesType, DRAOptionalNodeOperations
    partition_type_attribute: str | None = Field(None, alias="partitionTypeAttribute")
    skip_node_operations: list[str] = Field(default_factory=empty_list, alias="skipNodeOperations")


class ResourceSlice(_Model):
    api_version: str = Field("", alias="apiVersion")
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ResourceSliceSpec = Field(default_factory=ResourceSliceSpec)


# ---------------------------------------------------------------------------- claims
class DeviceToleration(_Model):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = Field(None, alias="tolerationSeconds")


class CapacityRequirements(_Model):
    requests: dict[str, QuantityField] = Field(default_factory=dict)


class DeviceDerivedAttribute(_Model):
    """A request's virtual attribute computed by CEL (DRADerivedAttributes, alpha, 1.37+)."""

    name: str = ""
    expression: str = ""


class ExactDeviceRequest(_Model):
    device_class_name: str = Field("", alias="deviceClassName")
    selectors: list[DeviceSelector] = Field(default_factory=empty_list)
    allocation_mode: str = Field("", alias="allocationMode")
    count: int = 0
    admin_access: bool | None = Field(None, alias="adminAccess")
    tolerations: list[DeviceToleration] = Field(default_factory=empty_list)
    capacity: CapacityRequirements | None = None
    derived_attributes: list[DeviceDerivedAttribute] = Field(default_factory=empty_list, alias="derivedAttributes")


class DeviceSubRequest(_Model):
    name: str = ""
    device_class_name: str = Field("", alias="deviceClassName")
    selectors: list[DeviceSelector] = Field(default_factory=empty_list)
    allocation_mode: str = Field("", alias="allocationMode")
    count: int = 0
    tolerations: list[DeviceToleration] = Field(default_factory=empty_list)
    capacity: CapacityRequirements | None = None
    derived_attributes: list[DeviceDerivedAttribute] = Field(default_factory=empty_list, alias="derivedAttributes")


class DeviceRequest(_Model):
    name: str = ""
    exactly: ExactDeviceRequest | None = None
    first_available: list[DeviceSubRequest] = Field(default_factory=empty_list, alias="firstAvailable")


class DeviceConstraint(_Model):
    requests: list[str] = Field(default_factory=empty_list)
    match_attribute: str | None = Field(None, alias="matchAttribute")
    distinct_attribute: str | None = Field(None, alias="distinctAttribute")


class DeviceClaimConfiguration(_Model):
    requests: list[str] = Field(default_factory=empty_list)
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClaim(_Model):
    requests: list[DeviceRequest] = Field(default_factory=empty_list)
    constraints: list[DeviceConstraint] = Field(default_factory=empty_list)
    config: list[DeviceClaimConfiguration] = Field(default_factory=empty_list)


class ResourceClaimSpec(_Model):
    devices: DeviceClaim = Field(default_factory=DeviceClaim)


class DeviceRequestAllocationResult(_Model):
    request: str = ""
    driver: str = ""
    pool: str = ""
    device: str = ""
    admin_access: bool | None = Field(None, alias="adminAccess")
    tolerations: list[DeviceToleration] = Field(default_factory=empty_list)
    binding_conditions: list[str] = Field(default_factory=empty_list, alias="bindingConditions")
    binding_failure_conditions: list[str] = Field(default_factory=empty_list, alias="bindingFailureConditions")
    share_id: str | None = Field(None, alias="shareID")
    consumed_capacity: dict[str, QuantityField] = Field(default_factory=dict, alias="consumedCapacity")
    skip_node_operations: list[str] = Field(default_factory=empty_list, alias="skipNodeOperations")  # 1.37+


class DeviceAllocationConfiguration(_Model):
    source: str = ""
    requests: list[str] = Field(default_factory=empty_list)
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceAllocationResult(_Model):
    results: list[DeviceRequestAllocationResult] = Field(default_factory=empty_list)
    config: list[DeviceAllocationConfiguration] = Field(default_factory=empty_list)


class AllocationResult(_Model):
    devices: DeviceAllocationResult = Field(default_factory=DeviceAllocationResult)
    node_selector: NodeSelector | None = Field(None, alias="nodeSelector")
    allocation_timestamp: str | None = Field(None, alias="allocationTimestamp")


class ResourceClaimConsumerReference(_Model):
    api_group: str = Field("", alias="apiGroup")
    resource: str = ""
    name: str = ""
    uid: str = ""


class NetworkDeviceData(_Model):
    interface_name: str = Field("", alias="interfaceName")
    ips: list[str] = Field(default_factory=empty_list)
    hardware_address: str = Field("", alias="hardwareAddress")


class AllocatedDeviceStatus(_Model):
    driver: str = ""
    pool: str = ""
    device: str = ""
    share_id: str | None = Field(None, alias="shareID")
    conditions: list[dict[str, Any]] = Field(default_factory=empty_list)
    data: Any = None
    network_data: NetworkDeviceData | None = Field(None, alias="networkData")


class ResourceClaimStatus(_Model):
    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] = Field(default_factory=empty_list, alias="reservedFor")
    devices: list[AllocatedDeviceStatus] = Field(default_factory=empty_list)


class ResourceClaim(_Model):
    api_version: str = Field("", alias="apiVersion")
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ResourceClaimSpec = Field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus | None = None


class ResourceClaimTemplateSpec(_Model):
    metadata: ObjectMeta | None = None
    spec: ResourceClaimSpec = Field(default_factory=ResourceClaimSpec)


class ResourceClaimTemplate(_Model):
    api_version: str = Field("", alias="apiVersion")
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ResourceClaimTemplateSpec = Field(default_factory=ResourceClaimTemplateSpec)


# ---------------------------------------------------------------------------- DeviceTaintRule
class DeviceTaintSelector(_Model):
    """Which devices a DeviceTaintRule taints: all criteria set must match (none set: every device)."""

    driver: str | None = None
    pool: str | None = None
    device: str | None = None
    # Kubernetes 1.34 only (v1alpha3; tombstoned in 1.35: app.k8s.versions.ABSENT_FIELDS); never evaluated
    device_class_name: str | None = Field(None, alias="deviceClassName")
    selectors: list[Any] | None = None


class DeviceTaintRuleSpec(_Model):
    device_selector: DeviceTaintSelector | None = Field(None, alias="deviceSelector")
    taint: DeviceTaint = Field(default_factory=DeviceTaint)


class DeviceTaintRuleStatus(_Model):
    conditions: list[dict[str, Any]] = Field(default_factory=empty_list)


class DeviceTaintRule(_Model):
    """``resource.k8s.io`` DeviceTaintRule (v1alpha3 1.33+, v1beta2 1.36+, v1 1.37+; one shape)."""

    api_version: str = Field("", alias="apiVersion")
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: DeviceTaintRuleSpec = Field(default_factory=DeviceTaintRuleSpec)
    status: DeviceTaintRuleStatus | None = None


# ---------------------------------------------------------------------------- core (partial)
class LooseMeta(_Loose):
    name: str | None = None
    namespace: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)


class Toleration(_Loose):
    """core/v1 ``Toleration`` of a Pod (not the device toleration of a claim request): the
    scheduler's TaintToleration and NodeUnschedulable filters match it against Node taints."""

    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = Field(None, alias="tolerationSeconds")


class Taint(_Loose):
    """core/v1 ``Taint`` of a Node (``spec.taints``); ``timeAdded`` is irrelevant to scheduling."""

    key: str = ""
    value: str = ""
    effect: str = ""


class NodeSpec(_Loose):
    """What scheduling reads of a Node's spec: its taints and whether it is cordoned."""

    taints: list[Taint] = Field(default_factory=empty_list)
    unschedulable: bool = False


class NodeStatus(_Loose):
    """What scheduling reads of a Node's status: allocatable resources (device-plugin extended
    resources decide whether DRA backs an extended resource on that node)."""

    allocatable: dict[str, str | int | float] = Field(default_factory=dict)
    """As written: the API server always sends strings, hand-written inventory files may not."""


class Node(_Loose):
    api_version: str = Field("", alias="apiVersion")
    kind: str = ""
    metadata: LooseMeta = Field(default_factory=LooseMeta)
    spec: NodeSpec = Field(default_factory=NodeSpec)
    status: NodeStatus = Field(default_factory=NodeStatus)


class Namespace(_Loose):
    api_version: str = Field("", alias="apiVersion")
    kind: str = ""
    metadata: LooseMeta = Field(default_factory=LooseMeta)


DRAObject = DeviceClass | ResourceSlice | ResourceClaim | ResourceClaimTemplate | DeviceTaintRule

KIND_MODELS: dict[
    str,
    type[DeviceClass] | type[ResourceSlice] | type[ResourceClaim] | type[ResourceClaimTemplate] | type[DeviceTaintRule],
] = {
    "DeviceClass": DeviceClass,
    "ResourceSlice": ResourceSlice,
    "ResourceClaim": ResourceClaim,
    "ResourceClaimTemplate": ResourceClaimTemplate,
    "DeviceTaintRule": DeviceTaintRule,
}
