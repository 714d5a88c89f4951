"""``scheduling.k8s.io`` Workload and PodGroup: what gang scheduling and PodGroup claims need of them.

Why a model of its own: a gang (``PodGroup.spec.schedulingPolicy.gang.minCount``) turns "6 of 8
pods fit" from a warning into "the gang never starts", and a PodGroup's ``resourceClaims`` are made
once for the whole group instead of once per pod.  draguard reads exactly those fields — the
policy, the claims, which Workload template a PodGroup came from — and checks of them only what the
API server checks (the declarative rules of ``k8s.io/api`` ``scheduling/v1beta1`` ``types.go`` in
1.37, as ``zz_generated.validations.go`` runs them: a union of ``basic``/``gang``, ``minCount``
required (0 is unset) and at least 1, at most 4 claims with unique names, each naming exactly one of
a claim or a template; a Workload's ``podGroupTemplates`` — a union with
``compositePodGroupTemplates`` — at most 8, with unique names).  Bad input is a field error naming the field, never an exception.

Which targets: ``GenericWorkload`` on (beta, off by default, in 1.37 and 1.38), the API as
``scheduling.k8s.io/v1beta1``.  1.36 served PodGroup as ``v1alpha2`` (the same fields), but its
scheduler gang-scheduled only with the alpha ``GangScheduling`` gate as well (removed in 1.37,
kubernetes#139520), which the target's gate table does not carry: gangs are ignored there, as in
1.35 (``v1alpha1``, no PodGroup object) and 1.34.  Where a target lacks the API a pod's
``spec.schedulingGroup`` is dropped by the API server, and draguard ignores gangs — unless the
workload asks for draguard's own gang treatment with the annotation :data:`GANG_MIN_COUNT_ANNOTATION`.

How a pod joins a group: ``spec.schedulingGroup.podGroupName`` (1.36 on; it replaced
``spec.workloadRef``), also in a workload's pod template — every pod of the workload then joins
that PodGroup.  No I/O here; :mod:`app.review` collects the objects of a run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .features import Target, minor_key
from .field import FieldError, Path, duplicate, invalid, required, too_many, type_invalid

__all__ = [
    "GANG_MIN_COUNT_ANNOTATION",
    "MAX_POD_GROUP_RESOURCE_CLAIMS",
    "WORKLOAD_MAX_POD_GROUP_TEMPLATES",
    "GangAnnotation",
    "GroupClaim",
    "PodGroupModel",
    "PodGroupTemplateModel",
    "WorkloadModel",
    "gang_annotation",
    "pod_group_name",
    "read_pod_group",
    "read_workload_object",
    "scheduling_api_served",
]

GANG_MIN_COUNT_ANNOTATION = "draguard.io/gang-min-count"
"""draguard's own: on a workload (its ``metadata.annotations``), "treat my pods as a gang of at
least N" — for targets without the Workload API, or gangs scheduled by another scheduler
(JobSet, LeaderWorkerSet, MPIJob with Kueue or Volcano).  The scheduler never reads it."""

MAX_POD_GROUP_RESOURCE_CLAIMS = 4
"""``MaxPodGroupResourceClaims`` (``scheduling/v1beta1``): ``+k8s:maxItems=4``."""
WORKLOAD_MAX_POD_GROUP_TEMPLATES = 8
"""``WorkloadMaxPodGroupTemplates``: ``+k8s:maxItems=8``."""

_GROUP = "scheduling.k8s.io"
_SERVED: tuple[tuple[str, str], ...] = (("1.37", "v1beta1"),)
"""From which minor which version of the API carries PodGroup (the newest row at or below the target wins)."""


def scheduling_api_served(api_version: str, target: Target) -> bool:
    """Whether ``target`` serves Workload/PodGroup at ``api_version`` (``GenericWorkload`` on)."""
    if not target.enabled("GenericWorkload"):
        return False
    served = None
    for since, version in _SERVED:
        if minor_key(target.version) >= minor_key(since):
            served = version
    return served is not None and api_version == f"{_GROUP}/{served}"


@dataclass(frozen=True, slots=True)
class GroupClaim:
    """One ``PodGroupResourceClaim``: a pod's claim entry equal to it in all three fields is made
    (or named) once for the group and reserved for the PodGroup (``resourceclaim.BindTo``)."""

    name: str
    resource_claim_name: str | None
    resource_claim_template_name: str | None


@dataclass(frozen=True, slots=True)
class PodGroupTemplateModel:
    """A Workload's ``podGroupTemplates[i]``: the policy and claims its PodGroups are made with."""

    name: str
    min_count: int | None
    """``gang.minCount``; None for the ``basic`` policy (pods scheduled one by one)."""
    claims: tuple[GroupClaim, ...] = ()


@dataclass(frozen=True, slots=True)
class PodGroupModel:
    """A PodGroup: its gang policy and group claims, and the Workload template it came from."""

    namespace: str
    name: str
    min_count: int | None
    claims: tuple[GroupClaim, ...] = ()
    workload: str = ""
    template: str = ""

    @property
    def is_gang(self) -> bool:
        return self.min_count is not None


@dataclass(frozen=True, slots=True)
class WorkloadModel:
    """A Workload: its PodGroup templates (read to check them; a pod names a PodGroup, not a Workload)."""

    namespace: str
    name: str
    templates: tuple[PodGroupTemplateModel, ...] = ()


# ---------------------------------------------------------------------------- reading
def _mapping(value: Any, path: Path, errors: list[FieldError], *, needed: bool) -> Mapping[str, Any] | None:
    if value is None:
        if needed:
            errors.append(required(path))
        return None
    if not isinstance(value, Mapping):
        errors.append(type_invalid(path, value, "expected an object"))
        return None
    return value


def _policy(raw: Any, path: Path, errors: list[FieldError]) -> int | None:
    """``schedulingPolicy`` (a struct, not a pointer: absent is empty): exactly one of ``basic`` and
    ``gang`` (``validate.Union``), ``gang.minCount`` required (0 is unset) and at least 1."""
    policy = _mapping(raw, path, errors, needed=False) if raw is not None else {}
    if policy is None:
        return None
    set_members = [m for m in ("basic", "gang") if policy.get(m) is not None]
    if not set_members:
        errors.append(invalid(path, "", "must specify one of: `basic`, `gang`"))
        return None
    if len(set_members) > 1:
        errors.append(invalid(path, "{basic, gang}", "must specify exactly one of: `basic`, `gang`"))
        return None
    if set_members == ["basic"]:
        _mapping(policy.get("basic"), path.child("basic"), errors, needed=False)
        return None
    gang = _mapping(policy.get("gang"), path.child("gang"), errors, needed=False)
    if gang is None:
        return None
    where = path.child("gang", "minCount")
    count = gang.get("minCount")
    if count is not None and (not isinstance(count, int) or isinstance(count, bool)):
        errors.append(type_invalid(where, count, "expected an integer"))
        return None
    if not count:  # validate.RequiredValue: the zero value is unset
        errors.append(required(where))
        return None
    if count < 1:
        errors.append(invalid(where, count, "must be greater than or equal to 1"))
        return None
    return count


def _optional_name(entry: Mapping[str, Any], key: str, path: Path, errors: list[FieldError]) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        errors.append(type_invalid(path.child(key), value, "expected a string"))
        return None
    return value


def _named_entries(raw: Any, path: Path, errors: list[FieldError], limit: int) -> Iterator[tuple[Path, Mapping[str, Any], str]]:
    """The entries of a list of named objects (``listType=map`` keyed by ``name``): at most
    ``limit``, each an object with a non-empty, unique ``name`` — what fails is a field error and
    is skipped; the rest are yielded with their path and name."""
    if raw is None:
        return
    if not isinstance(raw, list):
        errors.append(type_invalid(path, raw, "expected a list"))
        return
    if len(raw) > limit:
        errors.append(too_many(path, len(raw), limit))
    seen: set[str] = set()
    for i, item in enumerate(raw):
        where = path.index(i)
        entry = _mapping(item, where, errors, needed=True)
        if entry is None:
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            errors.append(required(where.child("name")) if not name else type_invalid(where.child("name"), name,
                                                                                      "expected a string"))
            continue
        if name in seen:
            errors.append(duplicate(where.child("name"), name))
            continue
        seen.add(name)
        yield where, entry, name


def _claims(raw: Any, path: Path, errors: list[FieldError]) -> tuple[GroupClaim, ...]:
    """``resourceClaims``: at most 4, unique names, each exactly one of a claim and a template."""
    out: list[GroupClaim] = []
    for where, entry, name in _named_entries(raw, path, errors, MAX_POD_GROUP_RESOURCE_CLAIMS):
        by_claim = _optional_name(entry, "resourceClaimName", where, errors)
        by_template = _optional_name(entry, "resourceClaimTemplateName", where, errors)
        if (by_claim is None) == (by_template is None):
            detail = ("must specify one of: `resourceClaimName`, `resourceClaimTemplateName`" if by_claim is None
                      else "must specify exactly one of: `resourceClaimName`, `resourceClaimTemplateName`")
            errors.append(invalid(where, "", detail))
            continue
        out.append(GroupClaim(name, by_claim, by_template))
    return tuple(out)


def _meta_name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else ""


def read_pod_group(obj: Mapping[str, Any], namespace: str) -> tuple[PodGroupModel | None, list[FieldError]]:
    """The PodGroup's model, or None with the field errors that make the API server refuse it."""
    errors: list[FieldError] = []
    raw = obj.get("spec")
    spec = _mapping(raw, Path.root("spec"), errors, needed=False) if raw is not None else {}
    if spec is None:
        return None, errors
    base = Path.root("spec")
    min_count = _policy(spec.get("schedulingPolicy"), base.child("schedulingPolicy"), errors)
    claims = _claims(spec.get("resourceClaims"), base.child("resourceClaims"), errors)
    workload = template = ""
    ref = _mapping(spec.get("workloadRef"), base.child("workloadRef"), errors, needed=False)
    if ref is not None:
        w, t = ref.get("workloadName"), ref.get("templateName")
        workload, template = (w if isinstance(w, str) else ""), (t if isinstance(t, str) else "")
    if errors:
        return None, errors
    return PodGroupModel(namespace, _meta_name(obj), min_count, claims, workload, template), []


def read_workload_object(obj: Mapping[str, Any], namespace: str) -> tuple[WorkloadModel | None, list[FieldError]]:
    """The Workload's model (its PodGroup templates), or None with the field errors."""
    errors: list[FieldError] = []
    raw_spec = obj.get("spec")
    spec = _mapping(raw_spec, Path.root("spec"), errors, needed=False) if raw_spec is not None else {}
    if spec is None:
        return None, errors
    path = Path.root("spec", "podGroupTemplates")
    raw = spec.get("podGroupTemplates")
    members = [m for m in ("podGroupTemplates", "compositePodGroupTemplates") if spec.get(m)]
    if not members:  # WorkloadSpec is a union of the two lists (set: not empty)
        errors.append(invalid(Path.root("spec"), "", "must specify one of: `podGroupTemplates`, "
                                                     "`compositePodGroupTemplates`"))
    elif len(members) > 1:
        errors.append(invalid(Path.root("spec"), "{podGroupTemplates, compositePodGroupTemplates}",
                              "must specify exactly one of: `podGroupTemplates`, `compositePodGroupTemplates`"))
    templates: list[PodGroupTemplateModel] = []
    for where, entry, name in _named_entries(raw, path, errors, WORKLOAD_MAX_POD_GROUP_TEMPLATES):
        min_count = _policy(entry.get("schedulingPolicy"), where.child("schedulingPolicy"), errors)
        claims = _claims(entry.get("resourceClaims"), where.child("resourceClaims"), errors)
        templates.append(PodGroupTemplateModel(name, min_count, claims))
    if errors:
        return None, errors
    return WorkloadModel(namespace, _meta_name(obj), tuple(templates)), []


# ---------------------------------------------------------------------------- pods
def pod_group_name(pod_spec: Any) -> str | None:
    """The PodGroup a pod (or every pod of a template) joins: ``spec.schedulingGroup.podGroupName``."""
    if not isinstance(pod_spec, Mapping):
        return None
    group = pod_spec.get("schedulingGroup")
    name = group.get("podGroupName") if isinstance(group, Mapping) else None
    return name if isinstance(name, str) and name else None


@dataclass(frozen=True, slots=True)
class GangAnnotation:
    """:data:`GANG_MIN_COUNT_ANNOTATION` as written: its minimum, or why it cannot be read."""

    min_count: int | None
    problem: str = ""


def gang_annotation(metadata: Any) -> GangAnnotation | None:
    """The workload's own gang request, or None when it makes none."""
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    if not isinstance(annotations, Mapping) or GANG_MIN_COUNT_ANNOTATION not in annotations:
        return None
    raw = annotations[GANG_MIN_COUNT_ANNOTATION]
    text = raw.strip() if isinstance(raw, str) else ""
    if not text.isdecimal() or int(text) < 1:
        return GangAnnotation(None, f'annotation {GANG_MIN_COUNT_ANNOTATION}: "{raw}" is not a whole number of at '
                                    "least 1 (the fewest pods the workload runs with)")
    return GangAnnotation(int(text))
