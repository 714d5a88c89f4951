"""One audit pass: the stored objects (+ the inventory snapshot) → findings per object, through the
one pipeline every door uses (:func:`app.review.review_documents`).

What is audited, and why only that:

* **ResourceClaims that are not allocated** (and not being deleted).  An allocated claim holds its
  devices; asking "could it be allocated?" again would count its own allocation against it.
  Claims a controller generated from a template (an owner reference with ``controller: true``)
  are left out: their template and their pod carry the same answer once.
* **ResourceClaimTemplates**, every one: a template is checked when it is created, and nothing
  notices when the node pool that alone could serve it is removed — the audit does.
* **Pods not yet scheduled** (no ``spec.nodeName``, phase Pending) that use DRA
  (``spec.resourceClaims`` or an extended resource, which a DeviceClass may back).
* **Workloads** (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob) whose pod
  template uses DRA, unless another audited workload owns them (a Deployment's ReplicaSet, a
  CronJob's Job): the owner is the object users edit.
* **DeviceClasses** (cluster-scoped): a class no device of the inventory can serve any more — a
  one-device probe claim of the class goes through the same pipeline.

Why a pass is cheap when little changed (the performance issue's incremental pass): an object's
review depends on its content and the snapshot only.  Objects are grouped by *content key*
(namespace, kind, apiVersion and a digest of the spec; never across namespaces, because a
message may name objects of the object's own namespace) and one representative per group is
reviewed; the answer is kept with the snapshot it was computed against and reused while both
are unchanged.  Pods of one ReplicaSet, or 10,000 pods from a few manifests, cost a handful of
reviews.

Why a new snapshot (a ResourceSlice changed) does not cost every distinct content a review: a
plain pending Pod's findings are made of its content, of what its claims resolve to, and of two
engine answers — could it ever run, does it fit now; a claim's, a template's or a class probe's of
its spec and the same two questions asked of the spec (:mod:`app.review.rechecks`).  The engine
keeps, per content, those answers and the request or spec they were asked of (a :class:`Check`);
on a new snapshot that reads alike outside the two answers (:func:`reads_alike`: the same extended
resource names; :func:`refs_alike`: the same cluster claims and templates behind the object's own
references — allocations elsewhere do not count) it asks them again of what it kept — the
engine's own memory serves every pod with the same claims and the same placement effect, and every
equal spec, at once — and keeps the findings when both answers are equal, which is exactly what a
review from scratch would give.  When an answer changed, the findings are made again from the new
answers and the findings that never read the devices (:func:`remade_findings`, the pipeline's own
last step).  A content whose answers could not be had in time, or that shares another namespace's
clean answer and is not clean any more, goes through the pipeline again; so do workloads (replica
counts) and pods the engine could not fully read.  Why this and not per-class answers carried by
content keys: the per-class searches are already shared by every pod with the same claims within a
snapshot; what a new snapshot cost was each pod's pipeline (decoding, validation, resolving, the
walk over ~20 node classes), and that is what is skipped.  Memory: one :class:`Check` per audited
content of the last pass (the kept request or spec, its notes and the findings made before them),
dropped with it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...inventory import Inventory
from ...k8s import Document, Finding, Reason, Severity, find_pod_templates, workload_kind_for
from ...review import (
    Check,
    Ref,
    ReviewOptions,
    object_refs,
    reads_alike,
    recheck,
    recording,
    refs_alike,
    remade_findings,
    review_documents,
)

__all__ = ["AuditEngine", "AuditFinding", "AuditResult", "Subject", "audited"]

WORKLOAD_KINDS = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob"})
_CLASS_PROBE_REASONS = frozenset({Reason.UNSATISFIABLE, Reason.SATISFIABILITY_UNKNOWN, Reason.SELECTOR_RUNTIME_ERROR})
_PROBE_NAMESPACE = "draguard-audit-probe"
_PROBE_REQUEST = "any-device"
_CHUNK = 256  # documents per review_documents call


@dataclass(frozen=True, slots=True)
class Subject:
    """The object a result is about (``namespace`` empty for cluster-scoped ones)."""

    kind: str
    namespace: str
    name: str
    uid: str = ""
    api_version: str = ""


@dataclass(frozen=True, slots=True)
class AuditFinding:
    """One finding of the pipeline about one audited object."""

    subject: Subject
    reason: str
    severity: Severity
    message: str
    field: str = ""
    fail_open: str = ""

    @property
    def identity(self) -> tuple[str, ...]:
        """What stays the same while the finding persists (the message may change its figures)."""
        s = self.subject
        return (s.kind, s.namespace, s.name, s.uid, self.reason, self.field)


@dataclass
class AuditResult:
    """One audit pass: its findings and how many objects were looked at, reviewed, carried or redecided."""

    findings: list[AuditFinding] = field(default_factory=list)
    audited: int = 0
    """Objects the pass looked at (after the filters above)."""
    reviewed: int = 0
    """Distinct contents that went through the pipeline this pass (the rest came from memory)."""
    carried: int = 0
    """Distinct contents whose answer was carried to a new snapshot: their engine answers, asked
    again, were equal (module docstring)."""
    redecided: int = 0
    """Distinct contents whose findings were made again from new engine answers, without the rest
    of the pipeline (module docstring)."""


def _owned_by_workload(meta: Mapping[str, Any]) -> bool:
    owners = meta.get("ownerReferences")
    if not isinstance(owners, list):
        return False
    return any(isinstance(o, dict) and o.get("controller") and o.get("kind") in WORKLOAD_KINDS for o in owners)


def _controlled(meta: Mapping[str, Any]) -> bool:
    owners = meta.get("ownerReferences")
    return isinstance(owners, list) and any(isinstance(o, dict) and o.get("controller") for o in owners)


def _pod_specs(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The pod specs of a Pod or of a workload's templates, found as the review finds them (the
    workload-kind table: ``find_pod_templates``), so audit and review agree on what a pod is."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    if obj.get("kind") == "Pod":
        return [spec]
    row = workload_kind_for(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
    if row is None:
        return []
    return [t.spec for t in find_pod_templates(obj, row) if isinstance(t.spec, dict)]


def _uses_dra(pod: Mapping[str, Any]) -> bool:
    """Claims, or an extended resource (a name with a ``/``) a DeviceClass may serve."""
    if pod.get("resourceClaims"):
        return True
    for group in ("containers", "initContainers"):
        for c in pod.get(group) or ():
            resources = c.get("resources") if isinstance(c, dict) else None
            if not isinstance(resources, dict):
                continue
            for section in ("requests", "limits"):
                names = resources.get(section)
                if isinstance(names, dict) and any("/" in str(n) and not str(n).startswith("kubernetes.io/")
                                                   for n in names):
                    return True
    return False


def audited(obj: Mapping[str, Any]) -> bool:
    """Whether the audit re-evaluates this object (module docstring)."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or meta.get("deletionTimestamp"):
        return False
    kind = obj.get("kind")
    if kind == "ResourceClaimTemplate":
        return True
    if kind == "ResourceClaim":
        status = obj.get("status")
        allocated = isinstance(status, dict) and "allocation" in status
        return not allocated and not _controlled(meta)
    if kind == "Pod":
        spec = obj.get("spec")
        status = obj.get("status")
        phase = status.get("phase") if isinstance(status, dict) else None
        if not isinstance(spec, dict) or spec.get("nodeName") or phase not in (None, "Pending"):
            return False
        return _uses_dra(spec)
    if kind in WORKLOAD_KINDS:
        if _owned_by_workload(meta):
            return False
        return any(_uses_dra(pod) for pod in _pod_specs(obj))
    return False


def _subject(obj: Mapping[str, Any]) -> Subject:
    meta = obj.get("metadata") or {}
    return Subject(kind=str(obj.get("kind")), namespace=str(meta.get("namespace") or "default"),
                   name=str(meta.get("name")), uid=str(meta.get("uid") or ""),
                   api_version=str(obj.get("apiVersion") or ""))


def _content_key(obj: Mapping[str, Any], subject: Subject) -> tuple[str, str, str, bytes]:
    """Equal for objects whose reviews must be equal: same namespace, kind, version and spec."""
    text = json.dumps(obj.get("spec"), sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.blake2b(text.encode(), digest_size=16).digest()
    return (subject.namespace, subject.kind, subject.api_version, digest)


def _probe_claim(class_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": class_name, "namespace": _PROBE_NAMESPACE},  # one name per class: answers map by name
        "spec": {"devices": {"requests": [{"name": _PROBE_REQUEST, "exactly": {"deviceClassName": class_name}}]}},
    }


@dataclass
class _Answer:
    """A remembered answer: the findings of one content against one snapshot."""

    snapshot: Inventory | None
    findings: tuple[Finding, ...]


@dataclass
class _Known:
    """An object the audit has seen: its version, subject, content key and whether this pass audited it."""

    resource_version: str
    subject: Subject
    key: tuple[str, str, str, bytes]
    obj: Mapping[str, Any]
    audited: bool
    seen: int


class AuditEngine:
    """Re-evaluates audited objects; remembers answers per content and snapshot (bounded by the
    objects of the last pass: answers nothing refers to any more are dropped)."""

    def __init__(self, options: ReviewOptions | None = None, *, deadline_seconds: float = 2.0,
                 classes: bool = True) -> None:
        self.options = dataclasses.replace(options or ReviewOptions(), admission=True, mutate=False, show_mutations=False,
                                           deadline_seconds=(options or ReviewOptions()).deadline_seconds or deadline_seconds)
        self.classes = classes
        self._known: dict[tuple[Any, Any, Any], _Known] = {}
        self._answers: dict[Any, _Answer] = {}
        self._pass = 0
        self._clean: dict[Any, Any] = {}
        """Namespace-free contents whose review had nothing to say against ``_clean_snapshot`` → the
        content key that was reviewed for them."""
        self._clean_snapshot: Inventory | None = None
        self._checks: dict[Any, tuple[Check, bool, tuple[Ref, ...]]] = {}
        """Content key → the engine answers its findings were made of, on ``_checks_snapshot``,
        whether they are its own (False: a clean answer shared from another namespace's review), and
        the cluster's claims and templates its own review looks up (:func:`object_refs`).
        Plain Pods, claims, templates and class probes (:mod:`app.review.rechecks`); bounded like
        ``_answers``: the contents of the last pass."""
        self._checks_snapshot: Inventory | None = None
        self._rendered: dict[int, tuple[Subject, tuple[Finding, ...], list[AuditFinding]]] = {}
        """``id`` of a subject with findings → it, the answer's findings and the audit findings made
        of them in the last pass (the subject is held, so its ``id`` is not reused meanwhile)."""

    def evaluate(self, objects: Iterable[Mapping[str, Any]], inventory: Inventory | None) -> AuditResult:
        """Findings for every audited object of ``objects`` against ``inventory`` (the function
        the benchmark times: call it again with the same objects and a new snapshot for the
        incremental figure)."""
        self._pass += 1
        groups: dict[Any, list[Subject]] = {}
        representative: dict[Any, Mapping[str, Any]] = {}
        for obj in objects:
            known = self._identify(obj)
            if known is None:
                continue
            members = groups.get(known.key)
            if members is None:
                groups[known.key] = [known.subject]
                representative[known.key] = known.obj
            else:
                members.append(known.subject)
        if len(self._known) > 2 * sum(len(m) for m in groups.values()) + 1024:  # objects gone: forget them
            self._known = {i: k for i, k in self._known.items() if k.seen == self._pass}
        if self.classes and inventory is not None:
            for name in sorted(inventory.classes):
                key = ("", "DeviceClass", name)
                groups[key] = [Subject("DeviceClass", "", name, api_version="resource.k8s.io/v1")]
                representative[key] = _probe_claim(name)
        stale = [k for k in groups if (a := self._answers.get(k)) is None or a.snapshot is not inventory]
        result = AuditResult(audited=sum(len(m) for m in groups.values()))
        carried = self._carry(stale, inventory, result)
        result.reviewed = self._review_stale([k for k in stale if k not in carried], representative, inventory)
        self._answers = {k: self._answers[k] for k in groups}
        self._checks = {k: c for k, c in self._checks.items() if k in groups}
        self._checks_snapshot = inventory
        rendered: dict[int, tuple[Subject, tuple[Finding, ...], list[AuditFinding]]] = {}
        for key, subjects in groups.items():
            answer = self._answers[key]
            if not answer.findings:
                continue
            probe = key[1] == "DeviceClass" and not key[0]
            for subject in subjects:
                # an unchanged subject whose answer was carried (the same findings tuple) has the
                # findings it had: the frozen ones of the last pass, not thousands made again
                kept = self._rendered.get(id(subject))
                if kept is not None and kept[0] is subject and kept[1] is answer.findings:
                    found = kept[2]
                else:
                    found = _for_subject(answer.findings, subject, probe=probe)
                if not probe:  # a probe's subject is made anew each pass
                    rendered[id(subject)] = (subject, answer.findings, found)
                result.findings.extend(found)
        self._rendered = rendered
        return result

    def _identify(self, obj: Mapping[str, Any]) -> _Known | None:
        """The object's subject and content key (None when it is not audited), remembered per
        ``resourceVersion``: an unchanged object costs two dictionary look-ups."""
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            return None
        rv = meta.get("resourceVersion")
        ident = (obj.get("kind"), meta.get("namespace"), meta.get("name"))
        known = self._known.get(ident)
        if known is not None and rv and known.resource_version == rv:
            known.seen = self._pass
            return known if known.audited else None
        subject = _subject(obj)
        is_audited = audited(obj)
        key = _content_key(obj, subject) if is_audited else ("", "", "", b"")
        known = _Known(str(rv or ""), subject, key, obj, is_audited, self._pass)
        self._known[ident] = known
        return known if is_audited else None

    def _carry(self, stale: list[Any], inventory: Inventory | None, result: AuditResult) -> set[Any]:
        """The stale contents answered on ``inventory`` from their kept engine answers, asked again
        on it (module docstring): kept when equal, made again from the new answers when not.  Each
        distinct :class:`Check` is asked once (contents sharing a clean answer share their
        representative's; when it is not clean any more, they are reviewed: the findings would
        name the representative's namespace)."""
        before = self._checks_snapshot
        if inventory is None or before is None or not self._checks or not reads_alike(before, inventory):
            self._checks = {}
            return set()
        done: set[Any] = set()
        asked: dict[int, tuple[Check, Check | None]] = {}  # holds the check: its id stays its own
        same_refs: dict[Ref, bool] = {}
        options = self.options
        for key in stale:
            kept = self._checks.get(key)
            answer = self._answers.get(key)
            if kept is None or answer is None:
                continue
            check, own, refs = kept
            if not refs_alike(refs, before, inventory, same_refs):  # what its references resolve to changed
                del self._checks[key]
                continue
            hit = asked.get(id(check))
            if hit is not None and hit[0] is check:
                again = hit[1]
            else:
                again = recheck(check, inventory, deadline_seconds=options.deadline_seconds, strict=options.strict,
                                target=options.target)
                asked[id(check)] = (check, again)
            if again == check:
                answer.snapshot = inventory  # the same findings, now this snapshot's (one _Answer per key)
                result.carried += 1
            elif again is not None and own and again.doc is not None:
                found = tuple(f for f in remade_findings(again, options) if f.severity is not Severity.INFO)
                self._answers[key] = _Answer(inventory, found)
                self._checks[key] = (again, True, refs)
                result.redecided += 1
            else:
                del self._checks[key]
                continue
            done.add(key)
        return done

    def _review_stale(self, stale: list[Any], representative: Mapping[Any, Mapping[str, Any]],
                      inventory: Inventory | None) -> int:
        """Answers for every stale content; returns how many went through the pipeline.

        Contents of several namespaces that are equal apart from the namespace (same spec, and
        for Pods and workloads the same specs behind the templates and claims they name) share a
        *clean* answer: one of them is reviewed first, and when the pipeline has nothing to say
        about it, nothing is said about the others either — an empty answer names no object, so
        sharing it leaks nothing.  An answer with findings is never shared across namespaces
        (its messages may name objects of its own namespace): each namespace's is its own review.
        """
        if self._clean_snapshot is not inventory:
            self._clean, self._clean_snapshot = {}, inventory
        index = _ReferenceIndex(k for k in self._known.values() if k.seen == self._pass) if len(stale) > 1 else None
        first: dict[Any, Any] = {}
        rest: list[tuple[Any, Any]] = []
        for key in stale:
            shared = _shared_key(key, representative[key], index)
            if shared is not None and shared in self._clean:
                self._share_clean(key, self._clean[shared], representative[key], inventory)
            elif shared is not None and shared not in first:
                first[shared] = key
            else:
                rest.append((key, shared))
        self._review(list(first.values()), representative, inventory)
        for shared, key in first.items():
            if not self._answers[key].findings:
                self._clean[shared] = key
        later = []
        for key, shared in rest:
            if shared is not None and shared in self._clean:
                self._share_clean(key, self._clean[shared], representative[key], inventory)
            else:
                later.append(key)
        self._review(later, representative, inventory)
        return len(first) + len(later)

    def _share_clean(self, key: Any, reviewed: Any, obj: Mapping[str, Any], inventory: Inventory | None) -> None:
        """``key``'s answer is the empty one of ``reviewed`` (equal content in another namespace);
        so is what it is made of: on a later snapshot, ``reviewed``'s engine answers asked again
        decide for both — while what ``key``'s own references (``obj``'s) resolve to is unchanged."""
        self._answers[key] = _Answer(inventory, ())
        kept = self._checks.get(reviewed)
        if kept is not None:
            self._checks[key] = (kept[0], False, object_refs(obj, key[0]))
        else:
            self._checks.pop(key, None)

    def _review(self, keys: list[Any], representative: Mapping[Any, Mapping[str, Any]],
                inventory: Inventory | None) -> None:
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start:start + _CHUNK]
            docs = [Document(obj=_fresh(representative[k])) for k in chunk]
            with recording() as log:
                review = review_documents(docs, inventory=inventory, options=self.options,
                                          merge_inventory_objects=False)
            for key, doc in zip(chunk, docs, strict=True):
                check = log.get(id(doc))
                if check is not None and check.doc is not None:
                    self._checks[key] = (check, True, object_refs(representative[key], key[0]))
                else:
                    self._checks.pop(key, None)
            by_ref: dict[tuple[str, str, str], list[Finding]] = {}
            for obj_review in review.objects:
                ref = obj_review.ref
                by_ref.setdefault((ref.kind, ref.namespace, ref.name), []).extend(obj_review.findings)
            for key, doc in zip(chunk, docs, strict=True):
                meta = doc.obj.get("metadata") or {}
                ident = (str(doc.obj.get("kind")), str(meta.get("namespace") or "default"), str(meta.get("name")))
                found = tuple(f for f in by_ref.get(ident, ()) if f.severity is not Severity.INFO)
                self._answers[key] = _Answer(inventory, found)


_REF_KINDS = ("ResourceClaimTemplate", "ResourceClaim")


class _ReferenceIndex:
    """(kind, namespace, name) → digest of the claims and templates among the audited objects,
    so that a Pod's namespace-free key can include what its references resolve to."""

    def __init__(self, known: Iterable[_Known]) -> None:
        self.digests: dict[tuple[str, str, str], bytes] = {}
        for k in known:
            if k.audited and k.subject.kind in _REF_KINDS:
                self.digests[(k.subject.kind, k.subject.namespace, k.subject.name)] = k.key[3]


def _claim_refs(pod: Mapping[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for entry in pod.get("resourceClaims") or ():
        if not isinstance(entry, dict):
            continue
        if entry.get("resourceClaimTemplateName"):
            out.append(("ResourceClaimTemplate", str(entry["resourceClaimTemplateName"])))
        elif entry.get("resourceClaimName"):
            out.append(("ResourceClaim", str(entry["resourceClaimName"])))
    return out


def _shared_key(key: Any, obj: Mapping[str, Any], index: _ReferenceIndex | None) -> Any:
    """The content without its namespace, or None when it cannot be shared (DeviceClass probes;
    objects naming claims, whose allocation is the namespace's own state; references not among
    the audited objects)."""
    kind = key[1]
    if kind in _REF_KINDS:
        return key[1:]
    if kind == "DeviceClass" and not key[0]:
        return None
    pods = _pod_specs(obj)
    if not pods or index is None:
        return None
    resolved: list[tuple[str, str, bytes]] = []
    for ref_kind, name in (ref for pod in pods for ref in _claim_refs(pod)):
        if ref_kind == "ResourceClaim":
            return None  # a shared claim: allocated or not is this namespace's state
        digest = index.digests.get((ref_kind, key[0], name))
        if digest is None:
            return None  # missing here: ReferenceNotFound, worded per namespace
        resolved.append((ref_kind, name, digest))
    return (*key[1:], tuple(resolved))


def _fresh(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A shallow copy the pipeline may annotate (it sets ``kind``/namespace defaults on its own copy)."""
    return dict(obj)


def _for_subject(findings: Iterable[Finding], subject: Subject, *, probe: bool) -> list[AuditFinding]:
    out: list[AuditFinding] = []
    for f in findings:
        if probe:
            if f.reason not in _CLASS_PROBE_REASONS:
                continue
            text = f.message.replace(f'request "{_PROBE_REQUEST}": ', "").replace(f'request "{_PROBE_REQUEST}"', "it")
            message = f"no device of the inventory can be allocated for DeviceClass {subject.name}: {text}"
            # a class nothing serves is worth a warning, never a failure: devices may come back
            out.append(AuditFinding(subject, f.reason, Severity.WARNING, message, "", str(f.extra.get("fail_open", ""))))
            continue
        out.append(AuditFinding(subject, f.reason, f.severity, f.message, f.field, str(f.extra.get("fail_open", ""))))
    return out
