"""The parts of a Pod's spec that DRA scheduling reads, as strict-where-it-matters models.

Why only parts: a PodSpec has some hundred fields (volumes, probes, security contexts…) that
draguard neither checks nor needs, and a workload manifest in CI is full of them.  Reporting an
``UnknownField`` on a field draguard merely does not model would be noise, so the pod spec, its
containers and its affinity *ignore* what they do not declare.  The DRA parts — the entries of
``spec.resourceClaims``, a container's ``resources`` (``limits``, ``requests``, ``claims``) and its
claim references, tolerations and the required node selector — are modelled completely and
strictly: there a typo (``resourceClaimTemplate:``) changes what the pod gets and is reported.

Field names are the JSON names through aliases, as in :mod:`.models`; lists default to empty.
No ``from __future__ import annotations``: see :mod:`.models` (start-up).
"""

from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .field import ErrorType, FieldError, Path
from .models import NodeSelector, QuantityField, Toleration, empty_list
from .structure import loc_to_path, type_error
from .tree import deep_copy

__all__ = [
    "Affinity",
    "Container",
    "ContainerClaimRef",
    "NodeAffinity",
    "PodResourceClaim",
    "PodSpec",
    "PodSpecDecode",
    "ResourceRequirements",
    "decode_pod_spec",
]


class _Strict(BaseModel):
    """DRA parts: every field of the API is declared, an unknown one is a typo."""

    model_config = ConfigDict(
        extra="forbid", strict=True, populate_by_name=True, arbitrary_types_allowed=True, frozen=True,
        revalidate_instances="never",
    )


class _Lax(BaseModel):
    """Core parts draguard reads only partly: undeclared fields are kept out and ignored."""

    model_config = ConfigDict(
        extra="ignore", strict=True, populate_by_name=True, arbitrary_types_allowed=True, frozen=True,
        revalidate_instances="never",
    )


class ContainerClaimRef(_Strict):
    """``core/v1.ResourceClaim``: a container's use of a pod claim (optionally one request of it)."""

    name: str = ""
    request: str = ""


class ResourceRequirements(_Strict):
    limits: dict[str, QuantityField] = Field(default_factory=dict)
    requests: dict[str, QuantityField] = Field(default_factory=dict)
    claims: list[ContainerClaimRef] = Field(default_factory=empty_list)


class Container(_Lax):
    name: str = ""
    resources: ResourceRequirements | None = None
    restart_policy: str | None = Field(None, alias="restartPolicy")


class PodResourceClaim(_Strict):
    """``core/v1.PodResourceClaim``: exactly one of the two sources is meant to be set."""

    name: str = ""
    resource_claim_name: str | None = Field(None, alias="resourceClaimName")
    resource_claim_template_name: str | None = Field(None, alias="resourceClaimTemplateName")


class NodeAffinity(_Lax):
    required: NodeSelector | None = Field(None, alias="requiredDuringSchedulingIgnoredDuringExecution")


class Affinity(_Lax):
    node_affinity: NodeAffinity | None = Field(None, alias="nodeAffinity")


class PodSpec(_Lax):
    containers: list[Container] = Field(default_factory=empty_list)
    init_containers: list[Container] = Field(default_factory=empty_list, alias="initContainers")
    ephemeral_containers: list[Container] = Field(default_factory=empty_list, alias="ephemeralContainers")
    resource_claims: list[PodResourceClaim] = Field(default_factory=empty_list, alias="resourceClaims")
    resources: ResourceRequirements | None = None
    """Pod-level resources (PodLevelResources); ``claims`` there is forbidden by validation."""
    node_name: str | None = Field(None, alias="nodeName")
    node_selector: dict[str, str] = Field(default_factory=dict, alias="nodeSelector")
    affinity: Affinity | None = None
    tolerations: list[Toleration] = Field(default_factory=empty_list)
    scheduler_name: str | None = Field(None, alias="schedulerName")

    @property
    def required_affinity(self) -> NodeSelector | None:
        na = self.affinity.node_affinity if self.affinity is not None else None
        return na.required if na is not None else None


@dataclass
class PodSpecDecode:
    """A pod spec decoded the way the API server's strict decoder sees its DRA parts."""

    model: PodSpec | None
    unknown_fields: list[Path] = dc_field(default_factory=list)
    type_errors: list[FieldError] = dc_field(default_factory=list)


def decode_pod_spec(raw: Any, base: Path) -> PodSpecDecode:
    """Decode the pod spec at ``base``: unknown fields of the DRA parts are reported and dropped
    (the rest is decoded again, so one typo hides nothing else), wrong JSON types end it."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return PodSpecDecode(None, type_errors=[FieldError(ErrorType.TYPE_INVALID, base, "<" + type(raw).__name__ + ">",
                                                           "must be of type object")])
    try:
        return PodSpecDecode(PodSpec.model_validate(raw))
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    out = PodSpecDecode(None)
    unknown_raw: list[list[str | int]] = []
    for err in errors:
        path, segments = loc_to_path(PodSpec, err["loc"], base)
        if err["type"] == "extra_forbidden":
            out.unknown_fields.append(path)
            unknown_raw.append(segments)
        else:
            out.type_errors.append(type_error(path, err))
    if out.type_errors:
        return out
    data = deep_copy(raw)
    for segments in unknown_raw:
        _delete(data, segments)
    try:
        out.model = PodSpec.model_validate(data)
    except ValidationError:  # pragma: no cover - only unknown fields were wrong
        out.model = None
    return out


def _delete(obj: Any, segments: list[str | int]) -> None:
    for part in segments[:-1]:
        try:
            obj = obj[part]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(obj, dict) and isinstance(segments[-1], str):
        obj.pop(segments[-1], None)
