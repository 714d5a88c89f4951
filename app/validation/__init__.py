"""API-server-parity validation of DRA objects (Kubernetes 1.36), plus draguard's own lints.

Public surface: :class:`ValidationContext`, :class:`ValidationResult`, :func:`validate` and
:func:`validate_update`.  ``errors`` are exactly what kube-apiserver would reject (same field
path, same cause type, same detail text where it is deterministic); ``notes`` are draguard's
own findings — ``Lint*`` warnings and warnings where draguard cannot decide (the admin-access
namespace label when the namespace is unknown) or that the API server itself would return.

Why a context object: one rule (admin access) depends on the *namespace*, which is not part of
the object.  In admission mode the API server has already checked it before calling a webhook;
in lint mode the labels come from Namespace objects among the inputs, or are unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..k8s import (
    DEFAULT_TARGET,
    DeviceClass,
    DeviceTaintRule,
    FieldError,
    Note,
    Path,
    Reason,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    Severity,
    Target,
    forbidden,
)
from ..lazy import lazy_exports
from .device_selectors import unchecked_selector_notes
from .deviceclass import validate_device_class, validate_device_class_update
from .devicetaintrule import validate_device_taint_rule, validate_device_taint_rule_update
from .fields_137 import validate_claim_spec_137, validate_slice_spec_137
from .lints import lint_claim_spec, lint_resource_slice_spec
from .meta import valid_object_names
from .not_checked import validate_not_checked_kind
from .resourceclaim import (
    ADMIN_ACCESS_LABEL,
    admin_access_paths,
    validate_resource_claim,
    validate_resource_claim_template,
    validate_resource_claim_template_update,
    validate_resource_claim_update,
)
from .resourceslice import validate_resource_slice, validate_resource_slice_update
from .target import target_scope

if TYPE_CHECKING:
    from .pod import (
        IMPLICIT_EXTENDED_PREFIX,
        MIRROR_POD_ANNOTATION,
        effective_requests,
        is_extended_resource,
        validate_pod_spec,
    )
__getattr__ = lazy_exports(__name__, {".pod": ("IMPLICIT_EXTENDED_PREFIX", "MIRROR_POD_ANNOTATION", "effective_requests",
                                               "is_extended_resource", "validate_pod_spec")})
"""Pod rules (:mod:`.pod`) are imported on first use (:mod:`app.lazy` says why)."""

__all__ = [
    "IMPLICIT_EXTENDED_PREFIX",
    "MIRROR_POD_ANNOTATION",
    "DRAObject",
    "ValidationContext",
    "ValidationResult",
    "effective_requests",
    "is_extended_resource",
    "valid_object_names",
    "validate",
    "validate_not_checked_kind",
    "validate_pod_spec",
    "validate_update",
]

DRAObject = DeviceClass | ResourceSlice | ResourceClaim | ResourceClaimTemplate | DeviceTaintRule

_ADMIN_MESSAGE = (
    f"admin access to devices requires the `{ADMIN_ACCESS_LABEL}: true` label on the containing namespace"
)


@dataclass(frozen=True)
class ValidationContext:
    """What validation needs beyond the object itself."""

    namespace_labels: Mapping[str, Mapping[str, str]] | None = None  # namespace -> labels; None = unknown
    admission: bool = False  # webhook mode: the API server already checked the namespace label
    target: Target = DEFAULT_TARGET  # Kubernetes version + feature gates (the CEL environment follows them)


@dataclass
class ValidationResult:
    """``errors``: the API server's rejections (FieldValue*); ``notes``: draguard's own findings."""

    errors: list[FieldError] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)


def validate(obj: DRAObject, ctx: ValidationContext = ValidationContext()) -> ValidationResult:
    """Validate an object as ``kubectl create`` would see it (after defaulting and field dropping)."""
    with target_scope(ctx.target):
        return _validate(obj, ctx)


def _validate(obj: DRAObject, ctx: ValidationContext) -> ValidationResult:
    result = ValidationResult()
    if isinstance(obj, ResourceSlice):
        result.errors = validate_resource_slice(obj)
        result.notes = lint_resource_slice_spec(obj.spec, Path.root("spec")) + _driver_warnings(obj)
    elif isinstance(obj, ResourceClaim):
        admin_errors, admin_notes = _admin_access(obj, ctx)
        result.errors = admin_errors + validate_resource_claim(obj)
        result.notes = admin_notes + lint_claim_spec(obj.spec, Path.root("spec"))
    elif isinstance(obj, ResourceClaimTemplate):
        admin_errors, admin_notes = _admin_access(obj, ctx)
        result.errors = admin_errors + validate_resource_claim_template(obj)
        result.notes = admin_notes + lint_claim_spec(obj.spec.spec, Path.root("spec", "spec"))
    elif isinstance(obj, DeviceClass):
        result.errors = validate_device_class(obj)
    elif isinstance(obj, DeviceTaintRule):
        result.errors = validate_device_taint_rule(obj)
        return result
    result.errors += _since_137(obj)
    if not isinstance(obj, ResourceSlice):
        result.notes += unchecked_selector_notes(obj)
    return result


def _since_137(obj: DRAObject) -> list[FieldError]:
    """The rules of the fields 1.37 added (:mod:`.fields_137`), kept apart from the per-kind rules:
    a field that reaches validation exists and is enabled at the target (decoding removed it otherwise)."""
    if isinstance(obj, ResourceSlice):
        return validate_slice_spec_137(obj.spec, Path.root("spec"))
    if isinstance(obj, ResourceClaim):
        return validate_claim_spec_137(obj.spec.devices, Path.root("spec", "devices"))
    if isinstance(obj, ResourceClaimTemplate):
        return validate_claim_spec_137(obj.spec.spec.devices, Path.root("spec", "spec", "devices"))
    return []


def validate_update(
    obj: DRAObject,
    old: DRAObject,
    ctx: ValidationContext = ValidationContext(),
) -> ValidationResult:
    """Validate an update: the update rules plus whatever Kubernetes re-validates for the kind.

    ResourceSlice and DeviceClass are fully re-validated (unchanged parts are ratcheted);
    ResourceClaim only gets metadata and immutability checks (its spec cannot change, and
    admin access is not re-checked); ResourceClaimTemplate is re-validated *and* its spec is
    immutable.  An ``old`` of another kind is ignored (plain create validation).
    """
    if type(obj) is not type(old):
        return validate(obj, ctx)
    with target_scope(ctx.target):
        return _validate_update(obj, old)


def _validate_update(obj: DRAObject, old: DRAObject) -> ValidationResult:
    result = ValidationResult()
    if isinstance(obj, ResourceSlice) and isinstance(old, ResourceSlice):
        result.errors = validate_resource_slice_update(obj, old)
        result.notes = lint_resource_slice_spec(obj.spec, Path.root("spec")) + _driver_warnings(obj)
    elif isinstance(obj, ResourceClaim) and isinstance(old, ResourceClaim):
        result.errors = validate_resource_claim_update(obj, old)
        result.notes = lint_claim_spec(obj.spec, Path.root("spec"))
    elif isinstance(obj, ResourceClaimTemplate) and isinstance(old, ResourceClaimTemplate):
        result.errors = validate_resource_claim_template_update(obj, old)
        result.notes = lint_claim_spec(obj.spec.spec, Path.root("spec", "spec"))
    elif isinstance(obj, DeviceClass) and isinstance(old, DeviceClass):
        result.errors = validate_device_class_update(obj, old)
    elif isinstance(obj, DeviceTaintRule) and isinstance(old, DeviceTaintRule):
        result.errors = validate_device_taint_rule_update(obj, old)
        return result
    if isinstance(obj, ResourceSlice) and isinstance(old, ResourceSlice) and obj.spec != old.spec:
        result.errors += _since_137(obj)  # claims' and templates' specs are immutable: not re-validated
    return result


def _admin_access(
    obj: ResourceClaim | ResourceClaimTemplate, ctx: ValidationContext
) -> tuple[list[FieldError], list[Note]]:
    """``AuthorizedForAdmin``: ``adminAccess: true`` needs the namespace label — decided only when known.

    Admission: skipped (the API server checked it before calling the webhook).  Lint: with the
    namespace's labels (from Namespace objects in the input) → the API server's Forbidden error;
    without them → a warning that says what to check.
    """
    paths = admin_access_paths(obj)
    if not paths or ctx.admission:
        return [], []
    namespace = obj.metadata.namespace or "default"
    labels = ctx.namespace_labels.get(namespace) if ctx.namespace_labels is not None else None
    if labels is None:
        notes = [
            Note(
                reason=Reason.ADMIN_ACCESS_UNVERIFIED,
                message=(
                    f"adminAccess is requested; the API server rejects this unless namespace {namespace!r} has "
                    f'the label `{ADMIN_ACCESS_LABEL}: "true"` — not checked, the Namespace was not among the inputs'
                ),
                path=p,
                severity=Severity.WARNING,
            )
            for p in paths
        ]
        return [], notes
    if labels.get(ADMIN_ACCESS_LABEL) == "true":
        return [], []
    return [forbidden(p, _ADMIN_MESSAGE) for p in paths], []


def _driver_warnings(obj: ResourceSlice) -> list[Note]:
    """The API server's own warning (not an error) for upper-case driver names."""
    driver = obj.spec.driver
    if driver != driver.lower():
        return [
            Note(
                reason=Reason.API_SERVER_WARNING,
                message=f'driver names should be lowercase; "{driver}" contains uppercase characters',
                path=Path.root("spec", "driver"),
                severity=Severity.WARNING,
            )
        ]
    return []
