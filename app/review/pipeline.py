"""The pipeline: decoded objects (+ inventory) → findings (+ mutation patches).

Why one function for three doors: the webhook, the lint endpoint and the CLI must say the
same thing about the same object.  They only translate in (bytes, AdmissionReview) and out
(text, JSON, JUnit, SARIF, AdmissionResponse); everything in between happens here:

1. the structural pass (apiVersion, unknown fields, JSON types, quantities) with defaulting;
2. API-server-parity validation (:mod:`app.validation`) and draguard's own ``Lint*`` checks;
3. for claims and templates that passed validation, static satisfiability against the
   inventory (:mod:`app.satisfy`) — never decided when the inventory is missing or unsynced;
4. for ResourceClaim CREATE, the default-filling JSONPatch (:mod:`app.review.mutate`).

Inventory objects found among the linted documents (DeviceClass, ResourceSlice, Node) join the
inventory only when an inventory was given at all, and only when they are valid themselves:
an inventory is a statement that "this is the cluster"; a stray slice in a folder is not.
Namespace objects supply namespace labels for the admin-access rule.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..capacity import capacity_names_for
from ..inventory import EMPTY_CLUSTER, Inventory, InventoryBuilder, carry_cluster
from ..k8s import (
    DEFAULT_TARGET,
    DRA_KINDS,
    INVENTORY_KINDS,
    NOT_CHECKED_KINDS,
    V1,
    V1BETA2,
    Budget,
    BudgetExceeded,
    DeviceClass,
    Document,
    DraguardError,
    Family,
    FieldError,
    Finding,
    Note,
    ObjectRef,
    Path,
    Reason,
    ResourceClaim,
    ResourceClaimTemplate,
    Severity,
    Structural,
    Target,
    WorkloadKind,
    current_budget,
    equal,
    family_of,
    find_pod_templates,
    source_path,
    structural_pass,
    to_internal_shape,
    workload_kind_for,
)
from ..satisfy import (
    capacity_in_use,
    check_claim_spec,
    now_not_checked,
    sound_for_target,
)
from ..validation import (
    ValidationContext,
    ValidationResult,
    validate,
    validate_not_checked_kind,
    validate_update,
)
from . import rechecks
from .mutate import default_fill_patch

if TYPE_CHECKING:
    from ..satisfy import PodRequest, PodVerdict, ReplicaCount, SharedClaims, SharingPod
    from .workloads import ClaimIndex, Gang, GangIndex, KnownClaim, PodTemplateReview, WorkloadReview
# The pod and workload half of this module imports :mod:`.workloads` and the pod engine where
# it first needs them: a lint of claims alone never loads them (app/lazy.py says why).

__all__ = [
    "DEFAULT_DENY",
    "DenyPolicyError",
    "ObjectReview",
    "Review",
    "ReviewOptions",
    "parse_deny",
    "remade_findings",
    "review_admission",
    "review_documents",
]

NAMESPACED_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate"})
CLUSTER_SCOPED_KINDS = frozenset({"DeviceClass", "ResourceSlice", "DeviceTaintRule", "ResourcePoolStatusRequest", "Node",
                                  "Namespace"})
INVENTORY_OBJECT_KINDS = frozenset({"DeviceClass", "ResourceSlice", "DeviceTaintRule", "Node"})


DEFAULT_DENY: frozenset[str] = frozenset({Reason.UNSATISFIABLE, Reason.SELECTOR_RUNTIME_ERROR})
"""What denies at the webhook unless the operator says otherwise (``--deny``).  A proven
``SelectorRuntimeError`` (error severity: the device the selector fails on is in a complete pool
the class reaches, and no order of the search avoids it) blocks every scheduling attempt of the
pod — as final as ``Unsatisfiable``."""

_DENIABLE = frozenset({Reason.UNSATISFIABLE, Reason.SELECTOR_RUNTIME_ERROR})


def _is_lint(reason: str) -> bool:
    return family_of(reason) is Family.LINT


def _api_checked(reason: str) -> bool:
    """The API server decided this already (it validated and decoded the object before the webhook)."""
    return family_of(reason) in (Family.PARITY, Family.DECODE)


class DenyPolicyError(DraguardError, ValueError):
    """A ``--deny`` value that cannot be a denial reason; the message says why."""


def parse_deny(text: str) -> frozenset[str]:
    """``Unsatisfiable,LintMaxOffGrid`` → the reasons that may deny at the webhook.

    Only draguard's own proofs (``Unsatisfiable``, a certain ``SelectorRuntimeError``) and its
    lint policies (the ``lint`` family) may deny: API-parity reasons were already checked by the API server (a
    finding there means version skew, and denying it would only add false denials), and
    ``SatisfiabilityUnknown`` is by definition not known.  ``none`` (or empty) denies nothing.
    """
    reasons = {r.strip() for r in text.split(",") if r.strip()}
    if reasons == {"none"}:
        return frozenset()
    for reason in sorted(reasons):
        if reason in _DENIABLE or _is_lint(reason):
            continue
        if _api_checked(reason):
            why = "API-parity findings never deny at the webhook: the API server validated the object first"
        elif reason == Reason.SATISFIABILITY_UNKNOWN:
            why = "an undecided check must not deny (it would fail closed on what is not known)"
        else:
            unknown = "draguard has no such reason; " if family_of(reason) is None else ""
            why = f"{unknown}use {', '.join(sorted(_DENIABLE))} or a Lint* reason"
        raise DenyPolicyError(f"{reason!r} cannot deny: {why}")
    return frozenset(reasons)


@dataclass(frozen=True)
class ReviewOptions:
    """What the caller wants; every door builds one from its flags."""

    strict: bool = False
    deny: frozenset[str] = DEFAULT_DENY
    """Reasons that deny at the webhook (admission only; lint reports errors as errors)."""
    mutate: bool = True
    deadline_seconds: float | None = None
    """How long one object's satisfiability checks may take (None: unbounded): each review makes
    one :class:`Budget` of it (:func:`_review_budget`) that every search of that object shares."""
    admission: bool = False
    show_mutations: bool = False
    target: Target = DEFAULT_TARGET  # Kubernetes version + feature gates to answer for
    workload_kinds: tuple[WorkloadKind, ...] = ()
    """Operator rows for custom resources that embed pod templates (``--workload-kinds``)."""
    version_notice: str | None = None
    """Set by ``serve`` when its cluster runs a Kubernetes newer than every version draguard knows
    (:mod:`app.inventory.clusterversion`): its answers follow the newest known rules, so a proof
    is not one for that cluster's allocator — admission turns every denial into a
    ``SatisfiabilityUnknown`` warning carrying this text (:func:`unproven_for_newer_cluster`)."""


@dataclass
class ObjectReview:
    """Everything draguard says about one object."""

    ref: ObjectRef
    findings: list[Finding] = field(default_factory=list)
    patch: list[dict[str, Any]] = field(default_factory=list)
    patch_descriptions: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0

    @property
    def denied(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def fail_open(self) -> str:
        """What stopped a check before it could decide (budget, deadline); empty when none did."""
        return next((str(f.extra["fail_open"]) for f in self.findings if f.extra.get("fail_open")), "")


@dataclass
class Review:
    """The result for a batch of documents: per-object reviews plus file-level findings."""

    objects: list[ObjectReview] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    skipped: list[ObjectRef] = field(default_factory=list)
    """Documents of kinds draguard neither checks nor reads as inventory (a ConfigMap…): counted,
    so that a report on a folder of other things cannot pass for a report on DRA objects."""
    notices: list[str] = field(default_factory=list)
    """What the run as a whole could not do (satisfiability not checked…), said once in the
    summary rather than once per object."""

    def summary(self) -> dict[str, int]:
        return {
            "objects": len(self.objects),
            "errors": sum(f.severity is Severity.ERROR for f in self.findings),
            "warnings": sum(f.severity is Severity.WARNING for f in self.findings),
            "notes": sum(f.severity is Severity.INFO for f in self.findings),
            "skipped": len(self.skipped),
        }


# ---------------------------------------------------------------------------- helpers
def _ref(doc: Document) -> ObjectRef:
    """Which object; its file position is left to :func:`_at` (positions are computed on demand,
    and most objects never need one)."""
    namespace = doc.namespace
    if doc.kind not in CLUSTER_SCOPED_KINDS and not namespace:
        namespace = "default"
    return ObjectRef(
        kind=doc.kind,
        namespace=namespace,
        name=doc.name,
        api_version=doc.api_version,
        file=doc.source,
    )


def _at(doc: Document, path: Path | None, *, key: bool = False, versioned: bool = False) -> tuple[int, int]:
    """File position of a field; ``path`` is v1-shaped unless ``versioned`` (structural-pass findings)."""
    if not doc.source:
        return (0, 0)
    if path is None:
        return (doc.line, doc.column)
    if not versioned:
        path = source_path(doc.kind, doc.api_version, path)
    return doc.position_of(path.json_pointer_parts(), key=key)


def _field_finding(doc: Document, ref: ObjectRef, err: FieldError, *, versioned: bool = False) -> Finding:
    """A field error as an error finding; ``versioned``: its path is the written version's (decode)."""
    line, col = _at(doc, err.path, versioned=versioned)
    return Finding.for_object(ref, Severity.ERROR, err.reason, err.body(), str(err.path), line, col)


def _note_finding(doc: Document, ref: ObjectRef, note: Note, options: ReviewOptions) -> Finding:
    severity = note.severity
    if options.strict and _is_lint(note.reason):
        severity = Severity.ERROR
    line, col = _at(doc, note.path)
    extra = {"fail_open": note.fail_open} if note.fail_open else {}
    return Finding.for_object(ref, severity, note.reason, note.message, str(note.path or ""), line, col,
                              brief=note.brief, details=dict(note.details or {}), **extra)


_SKEW = "version skew? (the API server accepted it) "


def _demoted(f: Finding) -> Finding:
    """An error that may not deny, as a warning; API-parity ones say why they are not denials."""
    if not _api_checked(f.reason):
        return replace(f, severity=Severity.WARNING)
    return replace(f, severity=Severity.WARNING, message=_SKEW + f.message, brief=_SKEW + f.brief if f.brief else "")


def admission_policy(findings: Sequence[Finding], deny: frozenset[str]) -> list[Finding]:
    """Webhook severities: only reasons in ``deny`` deny; every other error travels as a warning.

    A lint reason in ``deny`` turns its warning into a denial (an operator's policy); other
    reasons deny only when they are errors (a proof).  Demoted API-parity errors say why they
    are not denials: the API server validated the object before calling the webhook.
    """
    out: list[Finding] = []
    for f in findings:
        if f.reason in deny and (f.severity is Severity.ERROR or _is_lint(f.reason)):
            out.append(f if f.severity is Severity.ERROR else replace(f, severity=Severity.ERROR))
        elif f.severity is Severity.ERROR:
            out.append(_demoted(f))
        else:
            out.append(f)
    return out


def unproven_for_newer_cluster(findings: Sequence[Finding], notice: str | None) -> list[Finding]:
    """Admission findings for a cluster newer than draguard knows: what would deny becomes a
    ``SatisfiabilityUnknown`` warning naming the version gap ("not now" is never "never", and a
    newer allocator's "never" is not known); every other finding stands."""
    if not notice:
        return list(findings)
    out: list[Finding] = []
    for f in findings:
        if f.severity is Severity.ERROR:
            # the decisive fact first: an AdmissionReview warning shows the first 120 characters
            text = f"not decided for this cluster ({notice}) — {f.message}"
            out.append(replace(f, severity=Severity.WARNING, reason=Reason.SATISFIABILITY_UNKNOWN, message=text,
                               brief=""))
        else:
            out.append(f)
    return out


def _structural_findings(doc: Document, ref: ObjectRef, st: Structural, options: ReviewOptions) -> list[Finding]:
    out: list[Finding] = []
    if st.api_version_error:
        out.append(
            Finding.for_object(ref, Severity.ERROR, Reason.DECODE_ERROR, st.api_version_error, "apiVersion",
                               *_at(doc, Path.root("apiVersion")))
        )
    if st.deprecation:
        out.append(
            Finding.for_object(
                ref, Severity.INFO, Reason.DEPRECATED,
                f"{st.deprecation} (the API server's warning); use resource.k8s.io/v1",
                "apiVersion", *_at(doc, Path.root("apiVersion")),
            )
        )
    target = options.target
    for dropped in st.dropped:
        written = source_path(doc.kind, st.api_version, dropped.path)
        out.append(
            Finding.for_object(
                ref, Severity.WARNING, Reason.FIELD_DROPPED,
                f"dropped by the API server without an error: feature gate {target.describe_gate(dropped.gate)} "
                "is off, so the field is neither stored nor validated",
                str(written), *_at(doc, written, key=True, versioned=True),
            )
        )
    if not options.admission:  # the API server already decoded admitted objects strictly
        for path in st.unknown_fields:
            line, col = _at(doc, path, key=True, versioned=True)
            since = st.not_in_version.get(str(path))
            message = (f'unknown field "{path}": the {ref.kind} API of Kubernetes {target.version} has no such '
                       f"field ({since})" if since else
                       f'unknown field "{path}": the {ref.kind} API has no such field (a typo?)')
            out.append(Finding.for_object(ref, Severity.ERROR, Reason.UNKNOWN_FIELD, message, str(path), line, col))
    out.extend(_field_finding(doc, ref, err, versioned=True) for err in st.type_errors)
    return out


def _namespace_labels(documents: Sequence[Document]) -> dict[str, dict[str, str]] | None:
    labels: dict[str, dict[str, str]] = {}
    for doc in documents:
        if doc.kind == "Namespace" and doc.name:
            meta = doc.obj.get("metadata")
            raw = meta.get("labels") if isinstance(meta, dict) else None
            labels[doc.name] = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
    return labels or None


# ---------------------------------------------------------------------------- per object
@dataclass
class _Checked:
    """One object after decoding and validation: its review so far and, when valid, its model for the satisfiability step."""

    doc: Document
    ref: ObjectRef
    review: ObjectReview
    model: Any = None
    valid: bool = False


def _structure_and_validate(
    doc: Document,
    ctx: ValidationContext,
    options: ReviewOptions,
    old: Any = None,
    old_raw: dict[str, Any] | None = None,
    *,
    create: bool = True,
) -> _Checked:
    ref = _ref(doc)
    review = ObjectReview(ref=ref)
    checked = _Checked(doc=doc, ref=ref, review=review)
    old_shape = to_internal_shape(doc.kind, old_raw) if old_raw is not None else None
    st = structural_pass(doc.kind, doc.obj, target=options.target, create=create, old=old_shape)
    review.findings.extend(_structural_findings(doc, ref, st, options))
    if st.model is None:
        return checked
    checked.model = st.model
    result: ValidationResult = validate(st.model, ctx) if old is None else validate_update(st.model, old, ctx)
    review.findings.extend(_field_finding(doc, ref, err) for err in result.errors)
    review.findings.extend(_note_finding(doc, ref, note, options) for note in result.notes)
    checked.valid = not result.errors and not st.type_errors and not st.api_version_error
    return checked


def _not_checked(doc: Document) -> _Checked | None:
    """A recognised kind draguard does not check in depth (:data:`~app.k8s.decode.NOT_CHECKED_KINDS`):
    its cheap checks as a review, or None (then it is skipped, "not checked", like any other kind)."""
    errors = validate_not_checked_kind(doc.kind, doc.obj)
    if errors is None:
        return None
    ref = _ref(doc)
    review = ObjectReview(ref=ref, findings=[_field_finding(doc, ref, err) for err in errors])
    return _Checked(doc=doc, ref=ref, review=review)


def _claim_spec_and_base(model: Any) -> tuple[Any, Path] | None:
    if isinstance(model, ResourceClaim):
        return model.spec, Path.root("spec")
    if isinstance(model, ResourceClaimTemplate):
        return model.spec.spec, Path.root("spec", "spec")
    return None


def _review_budget(options: ReviewOptions) -> Budget | None:
    """The one budget of an object's satisfiability checks — claim or pod search, "now", replica
    count — made when they start: ``options.deadline_seconds`` from now, never past the door's
    own budget (the webhook's request; :func:`~app.k8s.budget_scope`)."""
    return Budget.within(options.deadline_seconds, current_budget())


def _satisfiability(
    checked: _Checked,
    inventory: Inventory | None,
    inventory_problem: str | None,
    options: ReviewOptions,
) -> None:
    target = _claim_spec_and_base(checked.model)
    if target is None or not checked.valid:
        return
    spec, base = target
    ref, doc = checked.ref, checked.doc
    if inventory_problem:
        checked.review.findings.append(
            Finding.for_object(
                ref, Severity.WARNING, Reason.SATISFIABILITY_UNKNOWN,
                f"satisfiability not checked: {inventory_problem}", "", *_at(doc, None),
            )
        )
        return
    if inventory is None:
        return
    budget = _review_budget(options)
    try:
        notes = check_claim_spec(spec, inventory, base=base, budget=budget, strict=options.strict)
    except BudgetExceeded as exc:  # the other findings stand; satisfiability stays undecided, loudly
        notes = [Note(Reason.SATISFIABILITY_UNKNOWN,
                      f"satisfiability not decided: the review's time budget ran out ({exc.where})",
                      None, Severity.WARNING, fail_open=exc.where)]
    notes = sound_for_target(notes, spec, options.target)
    now_asked = not _allocated(doc, ref, inventory)
    if now_asked:  # (without a budget running out, these steps are rechecks.claim_notes)
        try:  # "not now" is only a hint: without time for it, an info note marked fail_open
            notes += capacity_in_use(spec, inventory, base=base, ever=notes, namespace=ref.namespace or "default",
                                     budget=budget)
        except BudgetExceeded as exc:
            notes.append(now_not_checked(exc.where))
    if rechecks.active() and not (options.mutate or options.show_mutations) and rechecks.plain_notes(tuple(notes)):
        rechecks.record(id(doc), rechecks.ClaimCheck(spec, base, ref.namespace or "default", now_asked, tuple(notes),
                                                     doc=doc, static=tuple(checked.review.findings)))
    checked.review.findings.extend(_note_finding(doc, ref, note, options) for note in notes)


def remade_findings(check: rechecks.Check, options: ReviewOptions) -> list[Finding]:
    """An object's findings from its (new) engine answers, as the pipeline makes them: those made
    without the inventory's devices, then one per note — for a claim or template
    (:func:`_satisfiability`), and for a plain Pod (:func:`_workload_review`; a Pod's notes are not
    reworded: only a workload's are, :func:`_workload_satisfiability`)."""
    if check.doc is None:
        raise ValueError("a check the pipeline did not complete")
    notes = check.notes if isinstance(check, rechecks.ClaimCheck) else (*check.notes, *check.capacity)
    ref = _ref(check.doc)
    return [*check.static, *(_note_finding(check.doc, ref, n, options) for n in notes)]


def _allocated(doc: Document, ref: ObjectRef, inventory: Inventory) -> bool:
    """Whether the reviewed claim is already allocated (its status says so, or the cluster's copy
    does): it holds its devices, and "would it fit now?" is not its question."""
    status = doc.obj.get("status") if isinstance(doc.obj, dict) else None
    if isinstance(status, dict) and status.get("allocation"):
        return True
    held = inventory.cluster.claims.get((ref.namespace or "default", ref.name))
    return ref.kind == "ResourceClaim" and held is not None and held.allocation is not None


def _mutation(checked: _Checked, inventory: Inventory | None, options: ReviewOptions) -> None:
    if not (options.mutate or options.show_mutations) or inventory is None or not checked.valid:
        return
    if not isinstance(checked.model, ResourceClaim):
        return  # templates are never patched: their claims are created (and patched) later
    if checked.doc.api_version not in (V1, V1BETA2) or not options.target.enabled("DRAConsumableCapacity"):
        # the patch addresses v1's shape; and without consumable capacity the filled-in
        # capacity request would be dropped by the API server anyway
        return
    try:
        patch, descriptions = default_fill_patch(checked.model.spec, checked.doc.obj, inventory)
    except BudgetExceeded as exc:  # no time to prove every device agrees on a default: fill nothing (never a wrong patch)
        checked.review.findings.append(Finding.for_object(
            checked.ref, Severity.INFO, Reason.BUDGET_EXCEEDED,
            f"no capacity defaults filled: the review's time budget ran out ({exc.where})", fail_open=exc.where))
        return
    checked.review.patch = patch
    checked.review.patch_descriptions = descriptions


def _merged(base: Sequence[Mapping[str, Any]], extra: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Inventory objects keyed by kind and name; a later object replaces an earlier one.

    The same folder passed as ``--inventory`` and linted must not count each slice twice
    (a pool with duplicate slices would look invalid).
    """
    by_key: dict[tuple[str, str], Mapping[str, Any]] = {}
    for obj in [*base, *extra]:
        meta = obj.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        if not isinstance(name, str):  # an unnamed or oddly named Node: keep it apart (str() of a
            name = f"<unnamed {id(obj)}>"  # deep value would recurse, found by make fuzz)
        by_key[(str(obj.get("kind")), name)] = obj
    return list(by_key.values())


def _sorted(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.file, f.line, f.column, f.kind, f.name, f.field, f.reason))


# ---------------------------------------------------------------------------- doors
_F = TypeVar("_F", bound=Callable[..., Any])


def _in_target_names(review: _F) -> _F:
    """Run a door's review with capacity request names resolved as its target's allocator does
    (:func:`~app.capacity.names.capacity_names_for`: 1.38 also finds ``<driver>/<name>``): the
    claim checks, the pod checks and the rechecks inside it then agree with that allocator."""

    @functools.wraps(review)
    def scoped(*args: Any, **kwargs: Any) -> Any:
        options = kwargs.get("options", ReviewOptions())
        with capacity_names_for(options.target):
            return review(*args, **kwargs)

    return cast(_F, scoped)


@_in_target_names
def review_documents(
    documents: Sequence[Document],
    *,
    inventory: Inventory | None,
    inventory_objects: Sequence[Mapping[str, Any]] = (),
    inventory_problem: str | None = None,
    options: ReviewOptions = ReviewOptions(),
    merge_inventory_objects: bool = True,
    decode_findings: Sequence[Finding] = (),
    inventory_name: str = "",
    retain: list[object] | None = None,
) -> Review:
    """Review a batch of decoded documents (the lint door: CLI and ``POST /lint``).

    ``inventory_name`` names the inventory (its paths) in the finding about an empty one.

    ``retain``, when given, receives the review's intermediate objects (every document's decoded
    model and per-object state, the merged inventory) instead of letting them be freed on return.
    Only for a process that exits right after (``draguard lint``, :func:`app.cli.entry`): freeing
    them one by one — a pydantic model tree per object — was ~5–7 % of linting 10,000 objects,
    work the kernel does at once when the process ends.

    A ResourceSlice's decoded model is let go as soon as the slice is validated: nothing after
    validation reads it (the inventory builder has already taken what it keeps of a valid one,
    :meth:`~app.inventory.InventoryBuilder.adopt`, instead of decoding it again), and slices' models
    were ~45 % of a 10,000-object lint's heap — freed while the run goes on, their memory is used
    again instead of the process growing (peak RSS 383 → 247 MB, CPU −7 to −9 %, interleaved
    A/B).

    ``inventory`` is the cluster (or files) to check satisfiability against; when given and
    ``merge_inventory_objects`` is set, valid DeviceClasses/ResourceSlices/Nodes among the
    documents are added to it (``inventory_objects`` are the raw objects it was built from).
    """
    ctx = ValidationContext(
        namespace_labels=_namespace_labels(documents), admission=options.admission, target=options.target
    )
    checked: list[_Checked] = []
    order: list[_Checked | Document] = []
    skipped: list[ObjectRef] = []
    extra_inventory: list[Mapping[str, Any]] = []
    merging = inventory is not None and merge_inventory_objects
    builder = InventoryBuilder(target=options.target)
    gangs = _gang_index(options)
    for doc in documents:
        if doc.kind in DRA_KINDS:
            started = time.perf_counter()
            item = _structure_and_validate(doc, ctx, options)
            item.review.elapsed_ms = (time.perf_counter() - started) * 1000
            if item.valid and doc.kind in INVENTORY_OBJECT_KINDS:
                extra_inventory.append(doc.obj)
                if merging:
                    builder.adopt(doc.obj, item.model)
            if doc.kind == "ResourceSlice":
                item.model = None  # (the docstring says why)
            checked.append(item)
            order.append(item)
        elif doc.kind == "Node":
            extra_inventory.append(doc.obj)
        elif (row := workload_kind_for(doc.api_version, doc.kind, options.workload_kinds)) is not None:
            order.append(doc)
            if gangs is not None:  # gangs: which PodGroup each pod template joins
                gangs.add_workload(doc.obj, row, _ref(doc).namespace, f'{doc.kind} "{doc.name}"')
        elif gangs is not None and (group := _gang_object(doc, gangs)) is not None:
            checked.append(group)
            order.append(group)
        elif doc.kind in NOT_CHECKED_KINDS and (known := _not_checked(doc)) is not None:
            checked.append(known)
            order.append(known)
        elif doc.kind not in INVENTORY_KINDS:
            skipped.append(_ref(doc))
    if inventory is not None and merging and extra_inventory:
        inventory = carry_cluster(builder.build(_merged(inventory_objects, extra_inventory)), inventory)
    for item in checked:
        started = time.perf_counter()
        _satisfiability(item, inventory, inventory_problem, options)
        if options.show_mutations:
            _mutation(item, inventory, options)
        item.review.elapsed_ms += (time.perf_counter() - started) * 1000
    reviews: list[ObjectReview] = []
    if len(order) > len(checked):  # some workloads: references resolve against the run's claims
        index = _files_index(checked, inventory, lint=True)
        extended = _extended_names(checked, inventory)
        sharing = _LintSharing.start(inventory, options)
        for entry in order:
            if isinstance(entry, _Checked):
                reviews.append(entry.review)
                sharing.saw(entry)
                continue
            started = time.perf_counter()
            workload = _workload_review(entry, inventory, inventory_problem, options, index, extended, sharing, gangs)
            if workload is None:  # a workload whose pods use no DRA: skipped, as any other kind
                skipped.append(_ref(entry))
                continue
            workload.elapsed_ms = (time.perf_counter() - started) * 1000
            reviews.append(workload)
    else:
        reviews = [c.review for c in checked]
    review = Review(objects=reviews)
    review.skipped = skipped
    all_findings = list(decode_findings)
    for r in reviews:
        all_findings.extend(r.findings)
    unchecked = _unchecked_satisfiability(checked, inventory, inventory_name)
    if unchecked is not None:
        notice, finding = unchecked
        review.notices.append(notice)
        if finding is not None:
            all_findings.append(finding)
    review.findings = _sorted(all_findings)
    if retain is not None:
        retain.extend((checked, order, inventory))
    return review


# ---------------------------------------------------------------------------- workloads
def _known(item: _Checked) -> KnownClaim:
    from .workloads import KnownClaim

    model = item.model
    spec = None
    if isinstance(model, ResourceClaim):
        spec = model.spec
    elif isinstance(model, ResourceClaimTemplate):
        spec = model.spec.spec
    errors = [f for f in item.review.findings if f.severity is Severity.ERROR and _api_checked(f.reason)]
    rejected = ""
    if errors or model is None:
        first = errors[0] if errors else None
        rejected = f"{first.field}: {first.message}" if first is not None and first.field else (
            first.message if first is not None else "it cannot be decoded")
        if len(errors) > 1:
            rejected += f" and {len(errors) - 1} more"
    return KnownClaim(spec if not rejected else None, rejected=rejected)


def _files_index(checked: Sequence[_Checked], inventory: Inventory | None, *, lint: bool) -> ClaimIndex:
    from .workloads import ClaimIndex

    claims: dict[tuple[str, str], KnownClaim] = {}
    templates: dict[tuple[str, str], KnownClaim] = {}
    for item in checked:
        if item.doc.kind not in NAMESPACED_KINDS:
            continue
        key = (item.ref.namespace or "default", item.ref.name)
        (claims if item.doc.kind == "ResourceClaim" else templates)[key] = _known(item)
    cluster = inventory.cluster if inventory is not None else EMPTY_CLUSTER
    return ClaimIndex.build(claims, templates, cluster, lint=lint)


def _extended_names(checked: Sequence[_Checked], inventory: Inventory | None) -> frozenset[str]:
    from .workloads import extended_resource_names

    classes: list[Any] = list(inventory.classes.values()) if inventory is not None else []
    classes.extend(c.model for c in checked if isinstance(c.model, DeviceClass))
    return extended_resource_names(classes)


def _workload_review(
    doc: Document,
    inventory: Inventory | None,
    inventory_problem: str | None,
    options: ReviewOptions,
    index: ClaimIndex,
    extended: frozenset[str],
    sharing: _LintSharing | _AdmissionSharing | None = None,
    gangs: GangIndex | None = None,
) -> ObjectReview | None:
    """The review of a Pod or workload that uses DRA; None when it uses none (skipped, as before).
    ``sharing``: the lint run's pods so far, in file order; at the webhook, the namespace's pods
    that already use a claim the object names (None: none known)."""
    from .workloads import read_workload

    ref = _ref(doc)
    workload = read_workload(doc.obj, doc.api_version, doc.kind, ref.namespace, extra_kinds=options.workload_kinds,
                             extended=extended, index=index)
    if workload is None:
        return None
    review = ObjectReview(ref=ref)
    review.findings.extend(_workload_findings(doc, ref, workload, options))
    static = tuple(review.findings)
    review.findings.extend(_workload_satisfiability(doc, ref, workload, inventory, inventory_problem, options, sharing,
                                                    gangs))
    rechecks.add_static(doc, static)
    return review


def _workload_findings(doc: Document, ref: ObjectRef, workload: WorkloadReview, options: ReviewOptions) -> list[Finding]:
    out: list[Finding] = []
    for t in workload.templates:
        if not options.admission:
            for path in t.unknown_fields:
                line, col = _at(doc, path, key=True)
                out.append(Finding.for_object(
                    ref, Severity.ERROR, Reason.UNKNOWN_FIELD,
                    f'unknown field "{path}": the {ref.kind} API has no such field (a typo?)', str(path), line, col))
        out.extend(_field_finding(doc, ref, err, versioned=True) for err in t.type_errors)
        out.extend(_field_finding(doc, ref, err) for err in t.errors)
        for note in t.notes:
            if note.reason == Reason.REFERENCE_NOT_FOUND and options.strict and note.severity is Severity.WARNING:
                note = replace(note, severity=Severity.ERROR)
            out.append(_note_finding(doc, ref, note, options))
    return out


def _workload_satisfiability(
    doc: Document,
    ref: ObjectRef,
    workload: WorkloadReview,
    inventory: Inventory | None,
    inventory_problem: str | None,
    options: ReviewOptions,
    sharing: _LintSharing | _AdmissionSharing | None = None,
    gangs: GangIndex | None = None,
) -> list[Finding]:
    """Per pod and per workload: can its pods ever run, and how many at once (the engine's answer).

    A Pod is ``Unsatisfiable`` when no node it may use can hold all its claims; a workload when
    none of its pods could ever run — so a workload with several pod templates of which some can
    run, or one scaled to 0, gets the proof as a warning.  When a claim or template could not be
    read, only a proof made without it stands (more claims can only make it harder), and no
    replica count is made.

    Pods that share a claim (``resourceClaimName``): in a lint run (``sharing``) a pod the claim's
    first user shuts out is told so (:mod:`app.satisfy.joint`), and at the webhook a pod that may
    wait for another pod of the namespace that uses the same unallocated claim is warned
    (:class:`_AdmissionSharing`); a workload of more replicas than a
    claim's ``reservedFor`` holds gets the count capped; a pending Pod whose claim is reserved for
    256 pods already is warned (:mod:`app.satisfy.reserved`).

    Gangs (``gangs``: the lint run's PodGroups, target with ``GenericWorkload``; or draguard's
    ``draguard.io/gang-min-count`` annotation): a gang whose ``minCount`` pods cannot all be placed
    together is ``Unsatisfiable``, and a PodGroup's claims are counted once for the group
    (:mod:`app.satisfy.gang`).
    """
    from ..satisfy import PodVerdict, check_pod, pod_capacity_in_use, reserved_for_full
    from .workloads import gang_of, pod_request

    rechecks.record(id(doc), None)  # replaced below when the pod is plain (the rechecks module's docstring)
    checkable = [t for t in workload.templates if t.valid]
    if inventory is None or not checkable:
        return []
    if inventory_problem:
        return [Finding.for_object(ref, Severity.WARNING, Reason.SATISFIABILITY_UNKNOWN,
                                   f"satisfiability not checked: {inventory_problem}", "", *_at(doc, None))]
    budget = _review_budget(options)
    answers: list[tuple[PodTemplateReview, PodVerdict, list[Note]]] = []
    gang = gang_of(doc.obj, workload, f'{ref.kind} "{ref.name}"', gangs, options.target)
    gang_counts: dict[str, ReplicaCount] = {}
    for t in checkable:
        request = pod_request(t)
        if request is None:
            if t.unknown:  # nothing could be checked: say so rather than pass in silence
                out_notes = [Note(Reason.SATISFIABILITY_UNKNOWN,
                                  f"the pod's claims are not checked: draguard cannot see {', '.join(t.unknown)} "
                                  "(it reads the cluster's claims and templates with serve --kube, or from the "
                                  "inventory files)", t.template.spec_path.child("resourceClaims"), Severity.WARNING)]
                answers.append((t, PodVerdict([], None), out_notes))
            continue
        # what a recorded check keeps (rechecks), written out once and handed to check_pod
        written = rechecks.written(request, inventory) if rechecks.active() else None
        try:
            if written is None:
                verdict = check_pod(request, inventory, budget=budget, strict=options.strict, target=options.target,
                                    every_class=t.template.per_node)
            else:
                verdict = check_pod(request, inventory, budget=budget, strict=options.strict, target=options.target,
                                    every_class=t.template.per_node, claims_text=written[0], effect=written[1])
        except BudgetExceeded as exc:
            verdict = PodVerdict([Note(Reason.SATISFIABILITY_UNKNOWN,
                                       f"satisfiability not decided: the review's time budget ran out ({exc.where})",
                                       None, Severity.WARNING, fail_open=exc.where)], None)
        shared_notes = sharing.observe(doc, ref, workload, t, request, verdict, budget) if sharing is not None else []
        if any(n.severity is Severity.ERROR for n in shared_notes):  # shut out by the claim's first user
            verdict = PodVerdict([*verdict.notes, *shared_notes], False, verdict.per_class)
        notes = list(verdict.notes) + [n for n in shared_notes if n.severity is not Severity.ERROR]
        now_asked = workload.is_pod and not t.unknown and not t.unresolved and _pending(doc)
        capacity: list[Note] = []
        if now_asked:
            try:  # "not now" is only a hint: without time for it, an info note marked fail_open
                capacity = pod_capacity_in_use(request, inventory, verdict, namespace=ref.namespace or "default",
                                               budget=budget, target=options.target)
            except BudgetExceeded as exc:
                capacity = [now_not_checked(exc.where)]
            notes += capacity
            if verdict.satisfiable is not False:
                full = reserved_for_full(request, inventory.cluster, _str(_meta(doc).get("name")), target=options.target)
                shared_notes += full
                notes += full
        if (written is not None and workload.is_pod and len(workload.templates) == 1 and not t.unknown
                and not t.unresolved and not t.template.per_node and not shared_notes and gang is None
                and rechecks.plain_notes(tuple(notes))):
            # the pod's findings below are its verdict's notes and its capacity notes, nothing else
            rechecks.record(id(doc), rechecks.PodCheck(
                request, written[0], ref.namespace or "default", now_asked, verdict.satisfiable,
                tuple(verdict.notes), tuple(capacity), effect=written[2]))
        if t.unknown:
            notes.append(Note(Reason.SATISFIABILITY_UNKNOWN,
                              f"the pod's claims are not all checked: draguard cannot see {', '.join(t.unknown)} "
                              "(it reads the cluster's claims and templates with serve --kube, or from the inventory files)",
                              t.template.spec_path.child("resourceClaims"), Severity.WARNING))
        if t.unresolved:
            missing = ", ".join(f'"{n}"' for n in t.unresolved if n)
            notes = [replace(n, message=f"{n.message} (even without pod claim {missing}, which could not be read)")
                     if n.reason == Reason.UNSATISFIABLE else n
                     for n in notes if n.reason == Reason.SATISFIABILITY_UNKNOWN or
                     (n.reason == Reason.UNSATISFIABLE and n.severity is Severity.ERROR)]
        elif verdict.satisfiable and t.template.per_node:
            notes.extend(_daemonset_nodes(verdict))
        elif verdict.satisfiable and t.template.replicas is not None and (
                t.template.replicas > 1 or (gang is not None and gang.includes(t))):
            try:
                count = _count_pods(t, request, inventory, budget, options, workload.namespace, gangs, gang, gang_counts)
                notes.extend(count.notes)
            except BudgetExceeded as exc:
                notes.append(Note(Reason.SATISFIABILITY_UNKNOWN,
                                  f"replicas not counted: the review's time budget ran out ({exc.where})", None,
                                  Severity.WARNING, fail_open=exc.where))
        answers.append((t, verdict, notes))
    some_run = any(v.satisfiable is not False for _, v, _ in answers)
    gang_notes = _gang_verdict(gang, answers, gang_counts)
    never = any(n.severity is Severity.ERROR for n in gang_notes)
    out: list[Finding] = []
    for t, verdict, notes in answers:
        for note in notes:
            if never and note.reason == Reason.REPLICAS_EXCEED_CAPACITY and gang is not None and gang.includes(t):
                continue  # the gang never starts: how many of its pods would fit is beside the point
            if note.reason == Reason.UNSATISFIABLE and note.severity is Severity.ERROR and not workload.is_pod:
                why = ""
                if t.template.replicas == 0:
                    why = "scaled to 0 replicas: nothing to deny until it is scaled up"
                elif some_run and len(answers) > 1:
                    why = "the pods of its other templates can run"
                elif t.template.per_node:
                    why = "" if _daemonset_has_eligible(verdict) else "no node is eligible for its pods"
                if why:  # the brief too: a warning must say why it is not a denial
                    note = replace(note, severity=Severity.WARNING, message=f"{note.message} ({why})",
                                   brief=f"{note.brief} ({why})" if note.brief else "")
            out.append(_note_finding(doc, ref, note, options))
    out.extend(_note_finding(doc, ref, note, options) for note in gang_notes)
    return out


# ---------------------------------------------------------------------------- gangs (issue #37)
def _gang_index(options: ReviewOptions) -> GangIndex | None:
    """The lint run's PodGroups and their pods, where the target serves the Workload API
    (``GenericWorkload`` on); None elsewhere, and at the webhook (no PodGroups to read there)."""
    if options.admission or not options.target.enabled("GenericWorkload"):
        return None
    from .workloads import GangIndex

    return GangIndex(options.target)


def _gang_object(doc: Document, gangs: GangIndex) -> _Checked | None:
    """A Workload or PodGroup the target serves: its field errors as a review (the API server
    refuses it), a valid PodGroup joins ``gangs``.  None: not one (left to the not-checked path)."""
    from ..k8s import read_pod_group, read_workload_object, scheduling_api_served

    if doc.kind not in ("PodGroup", "Workload") or not scheduling_api_served(doc.api_version, gangs.target):
        return None
    ref = _ref(doc)
    obj = doc.obj if isinstance(doc.obj, Mapping) else {}
    if doc.kind == "PodGroup":
        group, errors = read_pod_group(obj, ref.namespace or "default")
        if group is not None:
            gangs.add_group(group)
    else:
        _, errors = read_workload_object(obj, ref.namespace or "default")
    review = ObjectReview(ref=ref, findings=[_field_finding(doc, ref, err) for err in errors])
    return _Checked(doc=doc, ref=ref, review=review, valid=not errors)


def _count_pods(t: PodTemplateReview, request: PodRequest, inventory: Inventory, budget: Budget | None,
                options: ReviewOptions, namespace: str, gangs: GangIndex | None, gang: Gang | None,
                gang_counts: dict[str, ReplicaCount]) -> ReplicaCount:
    """The template's replica count — its PodGroup's claims made once for the group — and, for a
    gang member, the count its gang is judged by (without the ``reservedFor`` cap: that acts at
    PreBind, after the gang was let through), kept in ``gang_counts``."""
    from ..satisfy import ReplicaCount, count_replicas, with_group_claims
    from .workloads import group_claim_names

    group = gangs.group_of(t.template, namespace) if gangs is not None else None
    grouped = group_claim_names(t, group, options.target)
    counted = with_group_claims(request, grouped)
    replicas = t.template.replicas or 0
    per_pod = _reserved_per_pod(t, options, request, grouped, known=group is not None)
    if replicas <= 1:
        count = ReplicaCount(replicas, True)
    else:
        count = count_replicas(counted, inventory, replicas, budget=budget, target=options.target, reservations=per_pod)
    if gang is not None and gang.includes(t):
        capped = any((n.details or {}).get("limit") == "reservedFor" for n in count.notes)
        gang_counts[str(t.template.spec_path)] = count if not capped else count_replicas(
            counted, inventory, replicas, budget=budget, target=options.target, reservations=False)
    return count


def _gang_verdict(gang: Gang | None, answers: Sequence[tuple[PodTemplateReview, PodVerdict, list[Note]]],
                  counts: Mapping[str, ReplicaCount]) -> list[Note]:
    """The gang's notes (:func:`~app.satisfy.gang_notes`) once every template of the workload was
    judged.  Nothing when a member template can never run or was not decided (its own notes say
    so), or the gang holds no pod (scaled to 0)."""
    from ..satisfy import GangMember, gang_notes

    if gang is None:
        return []
    if gang.min_count is None:
        return [Note(Reason.SATISFIABILITY_UNKNOWN, f"{gang.label}: not treated as a gang — {gang.problem}", gang.path,
                     Severity.WARNING)]
    members: list[GangMember] = []
    for t, verdict, _ in answers:
        if not gang.includes(t):
            continue
        if verdict.satisfiable is not True or t.unresolved or t.unknown:
            return []
        members.append(GangMember(str(t.template.spec_path), t.template.replicas or 0, counts.get(str(t.template.spec_path))))
    if not members:
        return []
    members.extend(GangMember(label, pods) for label, pods in gang.others)
    if sum(m.replicas for m in members) == 0:
        return []
    return gang_notes(gang.label, gang.min_count, members, path=gang.path, whole=gang.whole, closed=gang.closed)


def _pending(doc: Document) -> bool:
    """Whether the reviewed Pod is not bound to a node yet: only then is "would it fit now?" its
    question — a bound pod's claims hold their devices already, and a workload's own running pods
    hold what a replica count with today's allocations would find missing."""
    spec = doc.obj.get("spec") if isinstance(doc.obj, dict) else None
    return not (isinstance(spec, dict) and spec.get("nodeName"))


def _meta(doc: Document) -> Mapping[str, Any]:
    meta = doc.obj.get("metadata") if isinstance(doc.obj, Mapping) else None
    return meta if isinstance(meta, Mapping) else {}


def _reserved_per_pod(t: PodTemplateReview, options: ReviewOptions, request: PodRequest, grouped: frozenset[str], *,
                      known: bool) -> bool:
    """Whether the template's pods take one ``reservedFor`` entry each in a shared claim (the
    256-consumer limit counts them).  Not so with ``DRAWorkloadResourceClaims`` for a claim the
    pod's PodGroup lists: it is reserved for the PodGroup, once (``resourceclaim.BindTo``).  With
    the PodGroup in the run (``known``) that is exact per claim; without it, a pod that names a
    scheduling group may be reserved as its group, and the limit is not counted (no warning that
    may be wrong)."""
    if not options.target.enabled("DRAWorkloadResourceClaims"):
        return True
    if known:
        return any(c.shared and c.name not in grouped for c in request.claims)
    spec = t.template.spec
    return not (isinstance(spec, Mapping) and spec.get("schedulingGroup") is not None)


# ---------------------------------------------------------------------------- pods that share claims (lint)
@dataclass
class _LintSharing:
    """The lint run's pods in file order, for claims several of them name (``resourceClaimName``):
    the engine's :class:`~app.satisfy.joint.SharedClaims`, and what only the manifests tell —
    whether a pod is certainly placed before the pods after it (a bare Pod whose claims all exist
    before it, with nothing to wait for)."""

    tracker: SharedClaims | None
    claims_seen: set[tuple[str, str]] = field(default_factory=set)

    @classmethod
    def start(cls, inventory: Inventory | None, options: ReviewOptions) -> _LintSharing:
        from ..satisfy import SharedClaims

        # a lint run only: the audit reviews the cluster's pods with admission semantics, where the
        # order in which pending pods will be placed is not known (and its rechecks could not
        # reproduce a joint note), so a shared claim says nothing there
        live = options.admission
        return cls(SharedClaims(inventory, target=options.target) if inventory is not None and not live else None)

    def saw(self, item: _Checked) -> None:
        """A claim of the run: pods after it in the file find it created."""
        if item.doc.kind == "ResourceClaim" and item.model is not None and not any(
                f.severity is Severity.ERROR and _api_checked(f.reason) for f in item.review.findings):
            self.claims_seen.add((item.ref.namespace or "default", item.ref.name))

    def observe(self, doc: Document, ref: ObjectRef, workload: WorkloadReview, t: PodTemplateReview,
                request: PodRequest, verdict: PodVerdict, budget: Budget | None) -> list[Note]:
        from ..satisfy import SharingPod

        if self.tracker is None or not any(c.shared and c.allocation is None for c in request.claims):
            return []
        spec = t.template.spec if isinstance(t.template.spec, Mapping) else {}
        pod = SharingPod(f'{ref.kind} "{ref.name}"', request, self._pins(doc, workload, t, spec),
                         repr((spec.get("priorityClassName"), spec.get("priority"), spec.get("schedulerName"))),
                         complete=not t.unresolved and not t.unknown)
        return self.tracker.observe(pod, verdict, budget=budget)

    def _pins(self, doc: Document, workload: WorkloadReview, t: PodTemplateReview, spec: Mapping[str, Any]) -> bool:
        """A bare Pod, created in file order, scheduled at once and running for good: no scheduling
        gates, no nodeName, kube-scheduler's, restartPolicy Always (a pod that ends lets the claim
        go), no claim made by the claim controller after it (template) and every named claim created
        before it (in the run, or in the cluster already)."""
        if not workload.is_pod or len(workload.templates) != 1 or _meta(doc).get("ownerReferences"):
            return False
        if spec.get("schedulingGates") or spec.get("nodeName") or spec.get("restartPolicy") not in (None, "Always"):
            return False
        if spec.get("schedulerName") not in (None, "", "default-scheduler"):
            return False  # another scheduler's queue: its order is its own
        cluster = self.tracker.inventory.cluster if self.tracker is not None else EMPTY_CLUSTER
        for entry in spec.get("resourceClaims") or ():
            if not isinstance(entry, Mapping) or entry.get("resourceClaimTemplateName") is not None:
                return False
        for claim in t.claims:
            ns, _, name = claim.key.partition("/")
            if not claim.shared or ((ns, name) not in self.claims_seen and (ns, name) not in cluster.claims):
                return False
        return not t.unresolved and not t.unknown


# ---------------------------------------------------------------------------- pods that share claims (admission)
@dataclass
class _AdmissionSharing:
    """At the webhook (issue #37 item 1, live): the pods of the review's namespace that already use
    a claim the reviewed object names while the claim is unallocated — the snapshot's cluster carries
    them as ``sharing_pods`` when the server listed them (:mod:`app.server.sharing`; nothing else
    sets it, so lint, the audit and a static inventory never get here).  Which of them the
    scheduler places first is not known, so a pod whose nodes and another's share no node the
    claim's devices reach is told "one of these pods may wait" — a warning, never a denial."""

    tracker: SharedClaims
    others: list[SharingPod]

    @classmethod
    def start(cls, inventory: Inventory | None, options: ReviewOptions, index: ClaimIndex, extended: frozenset[str],
              namespace: str) -> _AdmissionSharing | None:
        from ..satisfy import SharedClaims, SharingPod
        from .workloads import pod_request, read_workload

        pods = inventory.cluster.sharing_pods if inventory is not None else ()
        if inventory is None or not pods:
            return None
        others: list[SharingPod] = []
        for pod in pods:
            if not isinstance(pod, Mapping):
                continue
            name = _str((pod.get("metadata") or {}).get("name"))
            read = read_workload(pod, "v1", "Pod", namespace, extra_kinds=(), extended=extended, index=index)
            if read is None or len(read.templates) != 1 or not read.templates[0].valid:
                continue
            request = pod_request(read.templates[0])
            if request is not None:
                others.append(SharingPod(f'Pod "{name}"', request))
        return cls(SharedClaims(inventory, target=options.target), others) if others else None

    def observe(self, doc: Document, ref: ObjectRef, workload: WorkloadReview, t: PodTemplateReview,
                request: PodRequest, verdict: PodVerdict, budget: Budget | None) -> list[Note]:
        """The warnings for one pod template of the reviewed object (only one that fits alone)."""
        from ..satisfy import SharingPod

        if verdict.satisfiable is not True or t.unresolved or t.unknown:
            return []
        pod = SharingPod(f'{ref.kind} "{ref.name}"', request)
        notes: list[Note] = []
        for claim in request.claims:
            if not (claim.shared and claim.allocation is None and claim.key):
                continue
            for other in self.others:
                if any(c.key == claim.key for c in other.request.claims):
                    note = self.tracker.versus(other, pod, claim, budget=budget)
                    if note is not None:
                        notes.append(note)
        return notes


def _daemonset_has_eligible(verdict: PodVerdict) -> bool:
    """Whether some node class is one the DaemonSet controller makes a pod for (its pod's own
    filters — nodeSelector, affinity, taints with the controller's tolerations — let it there)."""
    return any(cls.eligible for cls in verdict.per_class)


def _names(nodes: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(nodes[:limit])
    return shown + (f" and {len(nodes) - limit} more" if len(nodes) > limit else "")


def _daemonset_nodes(verdict: PodVerdict) -> list[Note]:
    """A DaemonSet runs one pod per eligible node: name the eligible nodes where it can never run.

    Reported as ``ReplicasExceedCapacity`` with the eligible nodes as ``replicas`` and the nodes
    whose class fits as ``fit`` — only when every eligible class was decided (an undecided class
    would make the count a lower bound, which the contract has no word for).
    """
    eligible = [c for c in verdict.per_class if c.eligible]
    if not eligible or any(c.ok is None for c in eligible) or any(n.fail_open for n in verdict.notes):
        return []
    never = [c for c in eligible if c.ok is False]
    if not never:
        return []
    total = sum(len(c.nodes) for c in eligible)
    fit = sum(len(c.nodes) for c in eligible if c.ok)
    nodes = [n for c in never for n in c.nodes]
    why = "; ".join(f"{_names(list(c.nodes))}: {c.reason}" for c in never[:3])
    return [Note(Reason.REPLICAS_EXCEED_CAPACITY,
                 f"{fit} of {total} eligible nodes can run the DaemonSet's pod; it can never run on "
                 f"{_names(nodes)} ({why})", None, Severity.WARNING,
                 details={"replicas": total, "fit": fit, "exact": True})]


def _unchecked_satisfiability(
    checked: Sequence[_Checked], inventory: Inventory | None, name: str
) -> tuple[str, Finding | None] | None:
    """Why no claim of the batch had its satisfiability checked, when that is so for all of them.

    Without an inventory that is a choice (lint in a repository that has no cluster in it), so
    it is a notice; an inventory that was given but holds no DeviceClass is almost always a
    wrong path, and every claim would only say "class not found (yet)": a warning, so that
    ``--fail-on warning`` catches it and the summary cannot read as a clean bill of health.
    """
    claims = sum(c.review.ref.kind in NAMESPACED_KINDS for c in checked)
    if not claims:
        return None
    if inventory is None:
        return "satisfiability was not checked: no inventory given (--inventory)", None
    if inventory.classes:
        return None
    what = "is empty" if not inventory.devices and not inventory.nodes else "has no DeviceClass"
    message = (f"the inventory {what}: the satisfiability of {claims} claims and templates was not checked "
               "(is --inventory the right path?)")
    finding = Finding(severity=Severity.WARNING, reason=Reason.SATISFIABILITY_UNKNOWN, message=message, file=name)
    return f"satisfiability was not checked: the inventory {what}", finding


@_in_target_names
def review_admission(
    *,
    kind: str,
    operation: str,
    obj: Mapping[str, Any] | None,
    old_obj: Mapping[str, Any] | None,
    namespace: str,
    inventory: Inventory | None,
    inventory_problem: str | None,
    options: ReviewOptions,
) -> ObjectReview:
    """Review one object of an AdmissionReview (the webhook door).

    UPDATE of claims and templates re-checks only immutability (their specs cannot change);
    DELETE/CONNECT and kinds draguard does not know are allowed untouched by the caller.
    """
    started = time.perf_counter()
    raw = dict(obj or {})
    raw["kind"] = kind  # the AdmissionRequest's kind is authoritative
    if namespace and isinstance(raw.get("metadata"), dict) and not raw["metadata"].get("namespace"):
        raw["metadata"] = {**raw["metadata"], "namespace": namespace}
    doc = Document(obj=raw)
    if kind not in DRA_KINDS and workload_kind_for(_str(raw.get("apiVersion")), kind, options.workload_kinds):
        return _admit_workload(doc, operation, old_obj, inventory, inventory_problem, options, started)
    if kind not in DRA_KINDS:
        review = ObjectReview(ref=_ref(doc))
        review.findings.append(
            Finding.for_object(review.ref, Severity.WARNING, Reason.UNSUPPORTED_KIND,
                               f"draguard does not check objects of kind {kind!r}; allowed unchecked")
        )
        return review
    ctx = ValidationContext(admission=True, target=options.target)
    opts = options if options.admission else replace(options, admission=True)
    old_model = None
    old_raw: dict[str, Any] | None = None
    if operation == "UPDATE" and old_obj is not None and kind in DRA_KINDS:
        old_raw = {**dict(old_obj), "kind": kind}
        old_model = structural_pass(kind, old_raw, target=opts.target, create=False).model
    try:
        checked = _structure_and_validate(doc, ctx, opts, old=old_model, old_raw=old_raw, create=operation != "UPDATE")
        is_update_of_claim = operation == "UPDATE" and kind in NAMESPACED_KINDS
        if operation == "CREATE" or (operation == "UPDATE" and not is_update_of_claim):
            _satisfiability(checked, inventory, inventory_problem, opts)
        if operation == "CREATE" and opts.mutate:
            _mutation(checked, inventory, opts)
    except BudgetExceeded as exc:  # out of time: allowed, with a warning the server reports loudly
        review = ObjectReview(ref=_ref(doc))
        review.findings.append(
            Finding.for_object(review.ref, Severity.WARNING, Reason.BUDGET_EXCEEDED,
                               f"draguard: the review's time budget ran out ({exc.where}); allowed without a full "
                               "check", fail_open=exc.where)
        )
        review.elapsed_ms = (time.perf_counter() - started) * 1000
        return review
    checked.review.findings = _sorted(unproven_for_newer_cluster(admission_policy(checked.review.findings, opts.deny),
                                                                 opts.version_notice))
    checked.review.elapsed_ms = (time.perf_counter() - started) * 1000
    return checked.review


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _template_specs(obj: Mapping[str, Any] | None, row: WorkloadKind) -> list[Any]:
    return [t.spec for t in find_pod_templates(obj, row)] if obj is not None else []


def _admit_workload(
    doc: Document,
    operation: str,
    old_obj: Mapping[str, Any] | None,
    inventory: Inventory | None,
    inventory_problem: str | None,
    options: ReviewOptions,
    started: float,
) -> ObjectReview:
    """A Pod (CREATE) or workload (CREATE, or UPDATE that changes a pod template) at the webhook.

    A Pod's claims and containers cannot change after creation, and a workload update that
    leaves its templates alone (a scale, a label) makes no new kind of pod: both are allowed
    without a review.  References resolve against the cluster's claims only (``serve --kube``).
    """
    from .workloads import extended_resource_names

    opts = options if options.admission else replace(options, admission=True)
    ref = _ref(doc)
    row = workload_kind_for(doc.api_version, doc.kind, opts.workload_kinds)
    if operation != "CREATE" and row is not None:
        if (row.kind == "Pod" and row.group == "") or operation != "UPDATE":
            return ObjectReview(ref=ref)
        if equal(_template_specs(doc.obj, row), _template_specs(old_obj, row)):
            return ObjectReview(ref=ref)
    index = _files_index((), inventory, lint=False)
    extended = extended_resource_names(inventory.classes.values()) if inventory is not None else frozenset()
    try:
        sharing = _AdmissionSharing.start(inventory, opts, index, extended, ref.namespace or "default")
        review = _workload_review(doc, inventory, inventory_problem, opts, index, extended, sharing)
    except BudgetExceeded as exc:
        review = ObjectReview(ref=ref)
        review.findings.append(
            Finding.for_object(ref, Severity.WARNING, Reason.BUDGET_EXCEEDED,
                               f"draguard: the review's time budget ran out ({exc.where}); allowed without a full "
                               "check", fail_open=exc.where)
        )
    if review is None:
        return ObjectReview(ref=ref)
    review.findings = _sorted(unproven_for_newer_cluster(admission_policy(review.findings, opts.deny),
                                                         opts.version_notice))
    review.elapsed_ms = (time.perf_counter() - started) * 1000
    return review
