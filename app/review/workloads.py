"""Pods and the objects that make them: from a manifest to what DRA scheduling will make of it.

Why its own module: a Deployment is not a DRA object, but its pods are what DRA serves.  This
module reads each pod template of a workload (:mod:`app.k8s.workloads` says where), checks its
DRA parts as the API server does (:mod:`app.validation`), resolves the claims and templates it
names, and hands the pod — all its claims, its extended resources, where it may run — to the
engine (:mod:`app.satisfy`).  Everything it finds is reported on the workload itself, with field
paths into its template (``spec.template.spec.resourceClaims[0]``).

What counts as "uses DRA": an entry in ``resourceClaims``, a container's ``resources.claims``, or
a container request for a DeviceClass-backed extended resource (the implicit
``deviceclass.resource.kubernetes.io/<class>`` name, or a class's ``extendedResourceName``).
Other pods are skipped as before: draguard has nothing to say about them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..inventory import ClusterState, ObjectKey
from ..k8s import (
    GANG_MIN_COUNT_ANNOTATION,
    AllocationResult,
    FieldError,
    GroupClaim,
    Note,
    Path,
    PodGroupModel,
    PodSpec,
    PodTemplateRef,
    Quantity,
    Reason,
    ResourceClaimSpec,
    Severity,
    Target,
    Toleration,
    WorkloadKind,
    decode_pod_spec,
    find_pod_templates,
    gang_annotation,
    workload_kind_for,
)
from ..satisfy import ContainerResources, PodClaim, PodPlacement, PodRequest
from ..validation import IMPLICIT_EXTENDED_PREFIX, effective_requests, is_extended_resource, validate_pod_spec

__all__ = [
    "DAEMONSET_TOLERATIONS",
    "ClaimIndex",
    "Gang",
    "GangIndex",
    "KnownClaim",
    "PodTemplateReview",
    "ResolvedClaim",
    "WorkloadReview",
    "extended_resource_names",
    "gang_of",
    "group_claim_names",
    "pod_request",
    "read_workload",
]


# ---------------------------------------------------------------------------- references
@dataclass(frozen=True, slots=True)
class KnownClaim:
    """A ResourceClaim or ResourceClaimTemplate a pod may name, wherever it was found."""

    spec: ResourceClaimSpec | None
    """The claim's spec (a template's ``spec.spec``); None when it cannot be read."""
    allocation: AllocationResult | None = None
    rejected: str = ""
    """Why the API server would refuse the object itself (then it never exists in the cluster)."""


@dataclass(frozen=True)
class ClaimIndex:
    """The claims and templates references resolve against, and whether absence is a fact.

    In lint the run's files and the inventory folder *are* the cluster being described, so a
    name found in none of them is reported (a warning: GitOps tools apply in any order, the
    object may come later).  At the webhook only the cluster counts, and only when its claims
    were read completely (``serve --kube``): without that draguard cannot tell "absent" from
    "not known" and says nothing about references.
    """

    claims: Mapping[ObjectKey, KnownClaim] = field(default_factory=dict)
    templates: Mapping[ObjectKey, KnownClaim] = field(default_factory=dict)
    complete: bool = False
    scope: str = "the cluster"
    """Words for messages: where the name was looked for."""

    @classmethod
    def build(cls, files_claims: Mapping[ObjectKey, KnownClaim], files_templates: Mapping[ObjectKey, KnownClaim],
              cluster: ClusterState, *, lint: bool) -> ClaimIndex:
        # the files describe what is about to be applied: they win over the cluster's objects
        claims = _FilesOverCluster(files_claims, cluster.claims, lambda held: KnownClaim(held.spec, held.allocation))
        templates = _FilesOverCluster(files_templates, cluster.templates, KnownClaim)
        if lint:
            return cls(claims, templates, True, "the linted files or the inventory")
        return cls(claims, templates, cluster.known, "the cluster")


class _FilesOverCluster(Mapping[ObjectKey, KnownClaim]):
    """The files' claims (or templates) over the cluster's, each cluster entry made on lookup.

    Why not one merged dict: at the webhook every Pod or workload review builds an index, and with
    ``serve --kube`` the cluster holds tens of thousands of claims — copying them all for the one
    to three a pod names was O(claims) of every review.  Lookups are all the index is used for.
    """

    __slots__ = ("_cluster", "_files", "_known")

    def __init__(self, files: Mapping[ObjectKey, KnownClaim], cluster: Mapping[ObjectKey, Any],
                 known: Callable[[Any], KnownClaim]) -> None:
        self._files, self._cluster, self._known = files, cluster, known

    def __getitem__(self, key: ObjectKey) -> KnownClaim:
        found = self._files.get(key)
        if found is not None:
            return found
        return self._known(self._cluster[key])  # KeyError when in neither: Mapping.get says None

    def __iter__(self) -> Iterator[ObjectKey]:
        yield from self._files
        yield from (key for key in self._cluster if key not in self._files)

    def __len__(self) -> int:
        return len(self._files) + sum(1 for key in self._cluster if key not in self._files)


@dataclass(frozen=True, slots=True)
class ResolvedClaim:
    """One entry of the pod's ``resourceClaims`` with the spec it names (the engine's input)."""

    name: str
    spec: ResourceClaimSpec
    origin: str
    """``template "gpu"`` / ``claim "shared-gpu"``: how messages name it."""
    path: Path
    shared: bool
    allocation: AllocationResult | None = None
    key: str = ""


# ---------------------------------------------------------------------------- reading
def extended_resource_names(classes: Iterable[Any]) -> frozenset[str]:
    """The explicit ``extendedResourceName`` of every DeviceClass given (models or raw objects)."""
    names: set[str] = set()
    for dc in classes:
        spec = getattr(dc, "spec", None)
        name = getattr(spec, "extended_resource_name", None) if spec is not None else None
        if name is None and isinstance(dc, Mapping):
            raw = dc.get("spec")
            name = raw.get("extendedResourceName") if isinstance(raw, Mapping) else None
        if isinstance(name, str) and name:
            names.add(name)
    return frozenset(names)


def _resources_use_dra(resources: Any, extended: frozenset[str]) -> bool:
    if not isinstance(resources, Mapping):
        return False
    if resources.get("claims"):
        return True
    for table in (resources.get("requests"), resources.get("limits")):
        if isinstance(table, Mapping):
            for name in table:
                if isinstance(name, str) and (name.startswith(IMPLICIT_EXTENDED_PREFIX) or name in extended):
                    return True
    return False


def uses_dra(spec: Any, extended: frozenset[str]) -> bool:
    """Whether a raw pod spec asks anything of DRA (a cheap look before any decoding)."""
    if not isinstance(spec, Mapping):
        return False
    if spec.get("resourceClaims"):
        return True
    if _resources_use_dra(spec.get("resources"), extended):
        return True
    for key in ("containers", "initContainers"):
        containers = spec.get(key)
        if isinstance(containers, list):
            for c in containers:
                if isinstance(c, Mapping) and _resources_use_dra(c.get("resources"), extended):
                    return True
    return False


@dataclass
class PodTemplateReview:
    """What one pod template (or a Pod's own spec) gives, before the engine is asked."""

    template: PodTemplateRef
    spec: PodSpec | None = None
    unknown_fields: list[Path] = field(default_factory=list)
    type_errors: list[FieldError] = field(default_factory=list)
    errors: list[FieldError] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    claims: list[ResolvedClaim] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    """Entries whose claim or template could not be read: the pod's claims are not all known."""
    unknown: list[str] = field(default_factory=list)
    """Objects named that draguard cannot look up (no complete source of claims): ``ResourceClaimTemplate "x"``."""

    @property
    def valid(self) -> bool:
        return self.spec is not None and not self.errors and not self.type_errors


@dataclass
class WorkloadReview:
    """A workload (or a Pod) that uses DRA: its row and the review of each pod template."""

    row: WorkloadKind
    namespace: str
    templates: list[PodTemplateReview]

    @property
    def is_pod(self) -> bool:
        return self.row.kind == "Pod" and self.row.group == ""


def read_workload(
    obj: Mapping[str, Any],
    api_version: str,
    kind: str,
    namespace: str,
    *,
    extra_kinds: Sequence[WorkloadKind],
    extended: frozenset[str],
    index: ClaimIndex,
) -> WorkloadReview | None:
    """The workload's DRA review, or None when it is not a workload or uses no DRA."""
    row = workload_kind_for(api_version, kind, extra_kinds)
    if row is None:
        return None
    templates = find_pod_templates(obj, row)
    if not any(uses_dra(t.spec, extended) for t in templates):
        return None
    is_pod = row.kind == "Pod" and row.group == ""
    out = WorkloadReview(row, namespace, [])
    for template in templates:
        if not uses_dra(template.spec, extended):
            continue
        out.templates.append(_review_template(template, namespace, index, pod_meta=obj.get("metadata") if is_pod else None))
    return out


def _annotations(meta: Any) -> dict[str, str] | None:
    if not isinstance(meta, Mapping):
        return {}
    raw = meta.get("annotations")
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}


def _review_template(template: PodTemplateRef, namespace: str, index: ClaimIndex, pod_meta: Any) -> PodTemplateReview:
    review = PodTemplateReview(template)
    decoded = decode_pod_spec(template.spec, template.spec_path)
    review.unknown_fields = decoded.unknown_fields
    review.type_errors = decoded.type_errors
    if decoded.model is None:
        return review
    review.spec = decoded.model
    annotations = _annotations(pod_meta) if pod_meta is not None else None
    review.errors = validate_pod_spec(decoded.model, template.spec_path, annotations=annotations)
    if not review.errors and not review.unknown_fields:  # the API server refuses it: nothing to resolve
        _resolve(review, decoded.model, namespace, index)
    return review


def _resolve(review: PodTemplateReview, spec: PodSpec, namespace: str, index: ClaimIndex) -> None:
    """Find what each entry names; report the missing and the impossible request references."""
    base = review.template.spec_path.child("resourceClaims")
    by_entry: dict[str, ResourceClaimSpec] = {}
    for i, entry in enumerate(spec.resource_claims):
        path = base.index(i)
        by_name, by_template = entry.resource_claim_name, entry.resource_claim_template_name
        if (by_name is None) == (by_template is None) or not entry.name:
            review.unresolved.append(entry.name)
            continue  # invalid entry: validation says so
        shared = by_name is not None
        target = by_name if by_name is not None else by_template
        assert target is not None
        table = index.claims if shared else index.templates
        what = "ResourceClaim" if shared else "ResourceClaimTemplate"
        field_path = path.child("resourceClaimName" if shared else "resourceClaimTemplateName")
        known = table.get((namespace, target))
        if known is None or known.rejected:
            review.unresolved.append(entry.name)
            if known is not None:
                review.notes.append(Note(
                    Reason.REFERENCE_NOT_FOUND,
                    f"{what} \"{target}\" is among {index.scope} but the API server would reject it "
                    f"({known.rejected}), so it will never exist: pod claim \"{entry.name}\" waits for it forever",
                    field_path, Severity.WARNING))
            elif not index.complete:
                review.unknown.append(f'{what} "{target}"')
            else:
                review.notes.append(Note(
                    Reason.REFERENCE_NOT_FOUND,
                    f"{what} \"{target}\" (namespace {namespace}) is in none of {index.scope}: pods wait without an "
                    f"event from the scheduler until it is created" if shared else
                    f"{what} \"{target}\" (namespace {namespace}) is in none of {index.scope}: no claim can be made "
                    f"for pod claim \"{entry.name}\", and the pods wait (event FailedResourceClaimCreation)",
                    field_path, Severity.WARNING))
            continue
        if known.spec is None:
            review.unresolved.append(entry.name)
            continue
        by_entry[entry.name] = known.spec
        origin = f'claim "{target}"' if shared else f'template "{target}"'
        review.claims.append(ResolvedClaim(entry.name, known.spec, origin, path, shared,
                                           known.allocation if shared else None,
                                           f"{namespace}/{target}" if shared else ""))
    _request_references(review, spec, by_entry)


def _request_references(review: PodTemplateReview, spec: PodSpec, by_entry: Mapping[str, ResourceClaimSpec]) -> None:
    """A container that names a request its claim's (immutable) spec does not have can never run."""
    base = review.template.spec_path
    for field_name, containers in (("containers", spec.containers), ("initContainers", spec.init_containers)):
        for i, container in enumerate(containers):
            if container.resources is None:
                continue
            for j, ref in enumerate(container.resources.claims):
                claim = by_entry.get(ref.name)
                if not ref.request or claim is None:
                    continue
                names = [r.name for r in claim.devices.requests]
                if ref.request in names:
                    continue
                path = base.child(field_name).index(i).child("resources", "claims").index(j).child("request")
                have = ", ".join(f'"{n}"' for n in names) or "none"
                review.notes.append(Note(
                    Reason.REFERENCE_NOT_FOUND,
                    f"container \"{container.name}\" asks for request \"{ref.request}\" of pod claim \"{ref.name}\", whose "
                    f"spec has no such request (requests: {have}); claim specs are immutable, so this never resolves",
                    path, Severity.ERROR))


# ---------------------------------------------------------------------------- the engine's request
DAEMONSET_TOLERATIONS: tuple[Toleration, ...] = tuple(
    Toleration(key=f"node.kubernetes.io/{key}", operator="Exists", effect=effect)
    for key, effect in (("not-ready", "NoExecute"), ("unreachable", "NoExecute"), ("disk-pressure", "NoSchedule"),
                        ("memory-pressure", "NoSchedule"), ("pid-pressure", "NoSchedule"), ("unschedulable", "NoSchedule"))
)
"""What the DaemonSet controller adds to every pod it makes (``AddOrUpdateDaemonPodTolerations``;
``network-unavailable`` only with ``hostNetwork``, which draguard does not read)."""


def _extended(requests: Mapping[str, Quantity]) -> dict[str, Quantity]:
    return {k: v for k, v in requests.items() if k.startswith(IMPLICIT_EXTENDED_PREFIX) or is_extended_resource(k)}


def pod_request(review: PodTemplateReview) -> PodRequest | None:
    """The engine's view of the template's pod: its readable claims, extended resources, placement.

    None when there is nothing DRA to ask (every claim unreadable and no extended resource).
    Containers are numbered init containers first, as the scheduler's extended-resource claim does.
    """
    spec = review.spec
    if spec is None:
        return None
    base = review.template.spec_path
    claims = tuple(PodClaim(c.name, c.spec, c.origin, c.path, c.shared, c.allocation, c.key) for c in review.claims)
    containers = container_resources(spec, base)
    if not claims and not any(c.requests for c in containers):
        return None
    return PodRequest(claims, containers, pod_placement(spec, per_node=review.template.per_node), base)


def container_resources(spec: PodSpec, base: Path) -> tuple[ContainerResources, ...]:
    """The pod's containers as the scheduler's extended-resource claim numbers them (init
    containers first), with their extended-resource requests.  One function for every door
    (lint, the webhook, ``explain``), so an implicit claim is asked everywhere or nowhere."""
    containers: list[ContainerResources] = []
    index = 0
    for field_name, items, init in (("initContainers", spec.init_containers, True), ("containers", spec.containers, False)):
        for i, container in enumerate(items):
            containers.append(ContainerResources(
                container.name, index, _extended(effective_requests(container)), init,
                init and container.restart_policy == "Always", base.child(field_name).index(i)))
            index += 1
    return tuple(containers)


def pod_placement(spec: PodSpec, *, per_node: bool = False) -> PodPlacement:
    """The pod's own node constraints; ``per_node`` (a DaemonSet's pods) adds the tolerations its
    controller gives every pod it makes."""
    tolerations = tuple(spec.tolerations) + (DAEMONSET_TOLERATIONS if per_node else ())
    return PodPlacement(spec.node_name or "", dict(spec.node_selector), spec.required_affinity, tolerations)


# ---------------------------------------------------------------------------- gangs
@dataclass(frozen=True, slots=True)
class _Member:
    """A pod template that names a PodGroup: which workload, which template, how many pods."""

    label: str
    owner: int
    """``id`` of the workload's document (its templates are told apart by ``spec_path``)."""
    spec_path: str
    replicas: int | None


@dataclass
class GangIndex:
    """The PodGroups of a lint run and every pod template that names one, for a target that serves
    the Workload API (``GenericWorkload``; :func:`~app.k8s.scheduling_api_served`).

    Why the run: in lint the files (and the inventory) *are* the cluster described, as for claims
    (:class:`ClaimIndex`): a group's pods are the pods the run makes that name it, DRA or not.  The
    webhook has no PodGroups (gangs there come from draguard's annotation only)."""

    target: Target
    groups: dict[ObjectKey, PodGroupModel] = field(default_factory=dict)
    members: dict[ObjectKey, list[_Member]] = field(default_factory=dict)

    def add_group(self, group: PodGroupModel) -> None:
        self.groups[(group.namespace, group.name)] = group

    def add_workload(self, obj: Mapping[str, Any], row: WorkloadKind, namespace: str, label: str) -> None:
        """Every pod template of ``obj`` that joins a PodGroup (``spec.schedulingGroup.podGroupName``)."""
        for template in find_pod_templates(obj, row):
            group = template.pod_group
            if group is not None:
                self.members.setdefault((namespace, group), []).append(
                    _Member(label, id(obj), str(template.spec_path), template.replicas))

    def group_of(self, template: PodTemplateRef, namespace: str) -> PodGroupModel | None:
        group = template.pod_group
        return self.groups.get((namespace, group)) if group is not None else None


def group_claim_names(review: PodTemplateReview, group: PodGroupModel | None, target: Target) -> frozenset[str]:
    """The pod's claim entries made once for its PodGroup: equal in name, claim and template to one
    of the PodGroup's ``resourceClaims`` (``resourceclaim.BindTo``; ``DRAWorkloadResourceClaims`` on)."""
    if group is None or not group.claims or review.spec is None or not target.enabled("DRAWorkloadResourceClaims"):
        return frozenset()
    listed = set(group.claims)
    return frozenset(e.name for e in review.spec.resource_claims
                     if GroupClaim(e.name, e.resource_claim_name, e.resource_claim_template_name) in listed)


@dataclass(frozen=True)
class Gang:
    """The gang a workload's pods belong to: its PodGroup's (``gang.minCount``) or draguard's own
    (:data:`~app.k8s.GANG_MIN_COUNT_ANNOTATION`), which of the workload's templates are in it, and
    the group's other pods (other templates, other workloads: counted as if they all ran)."""

    label: str
    min_count: int | None
    path: Path | None
    templates: frozenset[str] = frozenset()
    """``spec_path`` of the workload's DRA templates in the gang (their pods are counted)."""
    others: tuple[tuple[str, int], ...] = ()
    """The group's other pod templates: (label, pods)."""
    whole: bool = True
    closed: bool = False
    problem: str = ""

    def includes(self, t: PodTemplateReview) -> bool:
        return str(t.template.spec_path) in self.templates


def gang_of(obj: Mapping[str, Any], workload: WorkloadReview, label: str, gangs: GangIndex | None,
            target: Target) -> Gang | None:
    """The gang of a workload whose pods DRA serves, or None.  A PodGroup with a gang policy (the
    target serves it, and the run holds it) wins over the annotation: it is what the scheduler does."""
    ns = workload.namespace
    dra = {str(t.template.spec_path) for t in workload.templates}
    if gangs is not None:
        for t in workload.templates:
            group = gangs.group_of(t.template, ns)
            if group is None or group.min_count is None:
                continue
            members = gangs.members.get((ns, group.name), [])
            mine = frozenset(m.spec_path for m in members if m.owner == id(obj) and m.spec_path in dra)
            rest = [m for m in members if not (m.owner == id(obj) and m.spec_path in mine)]
            others = tuple((m.label, m.replicas or 0) for m in rest)
            # a member whose pods are not counted (a DaemonSet's) leaves the group's size unknown
            return Gang(f'PodGroup "{group.name}"', group.min_count, t.template.spec_path.child("schedulingGroup"),
                        mine, others, whole=all(m.replicas is not None for m in rest))
    row = workload.row
    if workload.is_pod:
        return None  # one pod is no gang of its own
    wanted = gang_annotation(obj.get("metadata"))
    if wanted is None:
        return None
    path = Path.root("metadata", "annotations").key(GANG_MIN_COUNT_ANNOTATION)
    if wanted.min_count is None:
        return Gang(f"the gang of {label}", None, path, problem=wanted.problem)
    templates = find_pod_templates(obj, row)
    if any(t.replicas is None for t in templates):
        return None  # a DaemonSet or a PodTemplate: no count of pods to hold a gang to
    others = tuple((f"{label} {t.spec_path}", t.replicas or 0) for t in templates if str(t.spec_path) not in dra)
    return Gang(f"the gang of {label} ({GANG_MIN_COUNT_ANNOTATION}: {wanted.min_count})", wanted.min_count, path,
                frozenset(dra), others, closed=True)
