"""Static satisfiability: could Kubernetes 1.36's allocator ever allocate this claim, this pod?

Entry points: :func:`check_claim_spec` (one claim), and :func:`policy_defaults` (which omitted
capacity requests the mutating webhook may fill with the policy default).  The per-pod question
(all of a pod's claims on one node the pod may use) speaks the types of :mod:`.pod`:
:class:`PodRequest` in, :class:`PodVerdict` / :class:`ReplicaCount` out.  The inventory
(:mod:`app.inventory`) supplies classes, devices and node classes; :mod:`app.capacity` the
per-device capacity arithmetic; CEL selectors come from :mod:`app.cel`.
"""

from typing import TYPE_CHECKING

from ..lazy import lazy_exports
from .check import SEARCH_DEADLINE, check_claim_spec, spec_text
from .defaults import DefaultFill, policy_defaults
from .now import (
    HeldFigures,
    capacity_in_use,
    held_figures,
    holders_phrase,
    now_not_checked,
    pod_capacity_in_use,
)
from .plan import Alternative, RequestPlan, plan_claim
from .usage import CapacityUse, ClassUsage, UsageRow, class_usage, real_devices
from .versions import sound_for_target

if TYPE_CHECKING:
    from .gang import GangMember, gang_notes, with_group_claims
    from .joint import SharedClaims, SharingPod
    from .pod import (
        ClassVerdict,
        ContainerResources,
        PodClaim,
        PodPlacement,
        PodRequest,
        PodVerdict,
        ReplicaCount,
    )
    from .podcheck import check_pod, claims_key, distinct_infos, placement_effect
    from .replicas import count_replicas
    from .reserved import reserved_for_full
__getattr__ = lazy_exports(__name__, {
    ".pod": ("ClassVerdict", "ContainerResources", "PodClaim", "PodPlacement", "PodRequest", "PodVerdict", "ReplicaCount"),
    ".podcheck": ("check_pod", "claims_key", "distinct_infos", "placement_effect"),
    ".replicas": ("count_replicas",),
    ".joint": ("SharedClaims", "SharingPod"),
    ".gang": ("GangMember", "gang_notes", "with_group_claims"),
    ".reserved": ("reserved_for_full",),
})
"""The per-pod engine (:mod:`.pod`, :mod:`.podcheck`, :mod:`.replicas`) loads with its first use
(:mod:`app.lazy` says why)."""

__all__ = [
    "SEARCH_DEADLINE",
    "Alternative",
    "CapacityUse",
    "ClassUsage",
    "ClassVerdict",
    "ContainerResources",
    "DefaultFill",
    "GangMember",
    "HeldFigures",
    "PodClaim",
    "PodPlacement",
    "PodRequest",
    "PodVerdict",
    "ReplicaCount",
    "RequestPlan",
    "SharedClaims",
    "SharingPod",
    "UsageRow",
    "capacity_in_use",
    "check_claim_spec",
    "check_pod",
    "claims_key",
    "class_usage",
    "count_replicas",
    "distinct_infos",
    "gang_notes",
    "held_figures",
    "holders_phrase",
    "now_not_checked",
    "placement_effect",
    "plan_claim",
    "pod_capacity_in_use",
    "policy_defaults",
    "real_devices",
    "reserved_for_full",
    "sound_for_target",
    "spec_text",
    "with_group_claims",
]
