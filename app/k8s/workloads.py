"""Which objects carry pods, where their pod templates are, and how many pods each makes.

Why a table rather than code per kind: the controllers draguard knows (Deployment, Job, …) and
the custom resources people run DRA workloads with (JobSet, LeaderWorkerSet, MPIJob…) differ
only in *where* the pod template sits and *which* fields say how many pods run at once.  One
row per kind says that; an operator adds rows for their CRDs with ``--workload-kinds FILE``
(README "Workloads"), in the same shape as the built-in rows below.

A row has one or more pod sources.  A source names the path of a PodTemplateSpec (``()`` for a
Pod, whose own ``metadata``/``spec`` play that part), optionally inside each item of a list or
map (``each``: JobSet's ``spec.replicatedJobs``), and the fields that count its pods at once:
``replicas`` paths are multiplied (each defaults to 1), and a Job-like ``parallelism`` is capped
by ``completions`` when that is set.  A DaemonSet has no count: one pod per eligible node.

No I/O here: the CLI reads the file and hands the decoded object to :func:`parse_workload_kinds`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import DraguardError
from .field import Path
from .podgroup import pod_group_name

__all__ = [
    "BUILTIN_WORKLOAD_KINDS",
    "WORKLOAD_KIND_NAMES",
    "PodSource",
    "PodTemplateRef",
    "WorkloadKind",
    "WorkloadKindsError",
    "api_group",
    "find_pod_templates",
    "mentions_dra",
    "parse_workload_kinds",
    "workload_kind_for",
]

FieldPath = tuple[str, ...]


class WorkloadKindsError(DraguardError, ValueError):
    """A ``--workload-kinds`` file that does not describe kinds; the message says where."""


@dataclass(frozen=True, slots=True)
class PodSource:
    """One pod template of a kind and how many pods of it run at once."""

    template: FieldPath
    """Path of the PodTemplateSpec (``metadata`` + ``spec``) from the item; ``()`` = the object itself (a Pod)."""
    each: FieldPath = ()
    """A list (or map) whose every item holds a template; empty: the object holds one."""
    replicas: tuple[FieldPath, ...] = ()
    """Integer fields multiplied together, each 1 when absent."""
    parallelism: FieldPath | None = None
    """A Job's ``parallelism`` (default 1), capped by ``completions`` when that is set."""
    completions: FieldPath | None = None
    per_node: bool = False
    """One pod per eligible node (DaemonSet): no replica count."""
    counted: bool = True
    """False when the kind makes no pods of its own (PodTemplate): no replica count."""


@dataclass(frozen=True, slots=True)
class WorkloadKind:
    """A kind that carries pod templates (built in, or an operator's ``--workload-kinds`` row) and where its templates and replica counts are."""

    group: str
    kind: str
    sources: tuple[PodSource, ...]


def _p(dotted: str) -> FieldPath:
    return tuple(dotted.split(".")) if dotted else ()


_REPLICATED = PodSource(template=_p("spec.template"), replicas=(_p("spec.replicas"),))

BUILTIN_WORKLOAD_KINDS: tuple[WorkloadKind, ...] = (
    WorkloadKind("", "Pod", (PodSource(template=()),)),
    WorkloadKind("apps", "Deployment", (_REPLICATED,)),
    WorkloadKind("apps", "ReplicaSet", (_REPLICATED,)),
    WorkloadKind("apps", "StatefulSet", (_REPLICATED,)),
    WorkloadKind("apps", "DaemonSet", (PodSource(template=_p("spec.template"), per_node=True),)),
    WorkloadKind("batch", "Job", (PodSource(template=_p("spec.template"), parallelism=_p("spec.parallelism"),
                                            completions=_p("spec.completions")),)),
    WorkloadKind("batch", "CronJob", (PodSource(template=_p("spec.jobTemplate.spec.template"),
                                                parallelism=_p("spec.jobTemplate.spec.parallelism"),
                                                completions=_p("spec.jobTemplate.spec.completions")),)),
    WorkloadKind("", "ReplicationController", (_REPLICATED,)),
    WorkloadKind("", "PodTemplate", (PodSource(template=_p("template"), counted=False),)),
)

WORKLOAD_KIND_NAMES = frozenset(k.kind for k in BUILTIN_WORKLOAD_KINDS)
"""Kinds of the built-in rows (the decoder keeps documents of these kinds as checked)."""


def api_group(api_version: str) -> str:
    """``apps/v1`` → ``apps``; ``v1`` → ``""`` (the core group)."""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


_BUILTIN_BY_KEY = {(row.group, row.kind): row for row in BUILTIN_WORKLOAD_KINDS}


def workload_kind_for(
    api_version: str, kind: str, extra: Sequence[WorkloadKind] = ()
) -> WorkloadKind | None:
    """The row for an object, operator rows first (they may refine a built-in kind)."""
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    for row in extra:
        if row.kind == kind and row.group == group:
            return row
    return _BUILTIN_BY_KEY.get((group, kind))


@dataclass(frozen=True, slots=True)
class PodTemplateRef:
    """One pod template found in an object: where its pod spec is, and its pods at once."""

    spec_path: Path
    """Field path of the pod spec (``spec`` for a Pod, ``spec.template.spec`` for a Deployment…)."""
    spec: Any
    """The raw pod spec (a mapping when well formed)."""
    metadata: Any
    replicas: int | None
    """Pods of this template at once; None when not counted (DaemonSet, PodTemplate)."""
    per_node: bool = False

    @property
    def pod_group(self) -> str | None:
        """The PodGroup every pod of this template joins (``spec.schedulingGroup.podGroupName``),
        read from the raw spec: a workload's membership is its pod template's."""
        return pod_group_name(self.spec)


def _get(obj: Any, path: FieldPath) -> Any:
    for name in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(name)
    return obj


def _int(obj: Any, path: FieldPath | None, default: int) -> int:
    if path is None:
        return default
    value = _get(obj, path)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _count(item: Any, source: PodSource) -> int | None:
    if source.per_node or not source.counted:
        return None
    n = 1
    for path in source.replicas:
        n *= _int(item, path, 1)
    if source.parallelism is not None:
        parallel = _int(item, source.parallelism, 1)
        value = _get(item, source.completions) if source.completions is not None else None
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            parallel = min(parallel, value)
        n *= parallel
    return n


def _items(obj: Any, each: FieldPath) -> Iterator[tuple[Path, Any]]:
    base = Path.root(*each) if each else Path()
    if not each:
        yield base, obj
        return
    holder = _get(obj, each)
    if isinstance(holder, list):
        for i, item in enumerate(holder):
            yield base.index(i), item
    elif isinstance(holder, Mapping):
        for key, item in holder.items():
            yield base.child(str(key)), item


def _under(base: Path, path: FieldPath) -> Path:
    return base.child(*path) if path else base


def find_pod_templates(obj: Mapping[str, Any], row: WorkloadKind) -> list[PodTemplateRef]:
    """Every pod template of ``obj`` by its kind's row, in source order."""
    out: list[PodTemplateRef] = []
    for source in row.sources:
        for base, item in _items(obj, source.each):
            template = _get(item, source.template) if source.template else item
            if not isinstance(template, Mapping):
                continue
            out.append(PodTemplateRef(
                spec_path=_under(_under(base, source.template), ("spec",)),
                spec=template.get("spec"),
                metadata=template.get("metadata"),
                replicas=_count(item, source),
                per_node=source.per_node,
            ))
    return out


# ---------------------------------------------------------------------------- operator rows
_SOURCE_KEYS = frozenset({"template", "each", "replicas", "parallelism", "completions", "perNode"})


def _dotted(value: Any, where: str) -> FieldPath:
    if not isinstance(value, str) or not all(value.split(".")):
        raise WorkloadKindsError(f"{where}: expected a dotted field path such as spec.template, got {value!r}")
    return _p(value)


def _source(raw: Any, where: str) -> PodSource:
    if not isinstance(raw, Mapping):
        raise WorkloadKindsError(f"{where}: expected a mapping with template (and each, replicas, …)")
    unknown = sorted(set(raw) - _SOURCE_KEYS)
    if unknown:
        raise WorkloadKindsError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_SOURCE_KEYS))})")
    if "template" not in raw:
        raise WorkloadKindsError(f"{where}: template is required (the path of the PodTemplateSpec)")
    replicas = raw.get("replicas", [])
    if isinstance(replicas, str):
        replicas = [replicas]
    if not isinstance(replicas, list):
        raise WorkloadKindsError(f"{where}.replicas: expected a path or a list of paths")
    per_node = raw.get("perNode", False)
    if not isinstance(per_node, bool):
        raise WorkloadKindsError(f"{where}.perNode: expected true or false")
    return PodSource(
        template=_dotted(raw["template"], f"{where}.template"),
        each=_dotted(raw["each"], f"{where}.each") if "each" in raw else (),
        replicas=tuple(_dotted(r, f"{where}.replicas[{i}]") for i, r in enumerate(replicas)),
        parallelism=_dotted(raw["parallelism"], f"{where}.parallelism") if "parallelism" in raw else None,
        completions=_dotted(raw["completions"], f"{where}.completions") if "completions" in raw else None,
        per_node=per_node,
    )


def parse_workload_kinds(doc: Any, source: str = "") -> list[WorkloadKind]:
    """Rows from a decoded ``--workload-kinds`` document::

        kinds:
        - apiVersion: jobset.x-k8s.io/v1alpha2     # the group counts; any version of it matches
          kind: JobSet
          podTemplates:
          - each: spec.replicatedJobs
            template: template.spec.template
            replicas: [replicas]
            parallelism: template.spec.parallelism
            completions: template.spec.completions
    """
    prefix = f"{source}: " if source else ""
    kinds = doc.get("kinds") if isinstance(doc, Mapping) else None
    if not isinstance(kinds, list):
        raise WorkloadKindsError(f"{prefix}expected a mapping with a list `kinds`")
    rows: list[WorkloadKind] = []
    for i, raw in enumerate(kinds):
        where = f"{prefix}kinds[{i}]"
        if not isinstance(raw, Mapping):
            raise WorkloadKindsError(f"{where}: expected a mapping with apiVersion, kind, podTemplates")
        api_version, kind, templates = raw.get("apiVersion"), raw.get("kind"), raw.get("podTemplates")
        if not isinstance(api_version, str) or not api_version:
            raise WorkloadKindsError(f"{where}.apiVersion: required (e.g. jobset.x-k8s.io/v1alpha2)")
        if not isinstance(kind, str) or not kind:
            raise WorkloadKindsError(f"{where}.kind: required")
        if not isinstance(templates, list) or not templates:
            raise WorkloadKindsError(f"{where}.podTemplates: a non-empty list is required")
        sources = tuple(_source(t, f"{where}.podTemplates[{j}]") for j, t in enumerate(templates))
        rows.append(WorkloadKind(api_group(api_version), kind, sources))
    return rows


_DRA_KEYS = frozenset({"resourceClaims", "claims"})
_IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"


def mentions_dra(value: Any) -> bool:
    """Whether a raw document has any key DRA reads in a pod (``resourceClaims``, ``claims``, an
    implicit DeviceClass resource) — a cheap over-approximation for the decoder, which must decide
    before any model whether a workload's own decoding problems are draguard's business."""
    stack: list[Any] = [value]
    seen = 0
    while stack and seen < 100_000:
        item = stack.pop()
        seen += 1
        if isinstance(item, Mapping):
            for key, child in item.items():
                if key in _DRA_KEYS or (isinstance(key, str) and key.startswith(_IMPLICIT_PREFIX)):
                    return True
                if isinstance(child, Mapping | list):
                    stack.append(child)
        elif isinstance(item, list):
            stack.extend(c for c in item if isinstance(c, Mapping | list))
    return False
