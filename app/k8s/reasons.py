"""The one registry of finding reasons: the enum every check emits and what each reason means.

Why one place: a reason is a protocol value — JSON ``reason``, the SARIF rule ``id``, the
``--deny`` vocabulary, the README's "Reasons" table — and each use needs the same facts about
it (which *family* it belongs to, how severe it usually is, its readable SARIF name, one line of
meaning, its README anchor).  Checks emit :class:`Reason` members; the pipeline dispatches on
:attr:`ReasonInfo.family`, never on the spelling of a reason; :mod:`app.report` renders SARIF
rules and the README table from :data:`REASONS`.

Kubernetes' own cause types (``FieldValue*``) stay :class:`~app.k8s.field.ErrorType` — they are
apimachinery's vocabulary, carried by :class:`~app.k8s.field.FieldError` — but have entries here
too, so that every reason a finding can carry has exactly one row.

To add a reason: a member of :class:`Reason` and a row in :data:`_ROWS` (the registry test fails
until both exist), then regenerate the README table (``make reasons``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from .field import ErrorType

__all__ = ["REASONS", "Family", "Reason", "ReasonInfo", "Severity", "family_of", "reason_anchor"]


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 2, "warning": 1, "info": 0}[self.value]


class Family(enum.StrEnum):
    """What kind of statement a reason makes; the pipeline and the doors dispatch on this."""

    PARITY = "parity"
    """The API server's own verdict: a ``FieldValue*`` rejection, its warnings, its rules draguard
    cannot decide.  Never denies at the webhook (the API server validated the object first)."""
    DECODE = "decode"
    """Reading the document: not an object, unknown fields, fields or versions the target drops."""
    INVENTORY = "inventory"
    """Satisfiability of one claim against the inventory (devices, capacity, selectors on devices)."""
    WORKLOAD = "workload"
    """Pods and workloads: replicas that cannot all run, claims they name that do not exist."""
    LINT = "lint"
    """draguard's own policies on what Kubernetes accepts: warnings, errors under ``--strict``,
    and the only reasons besides proofs an operator may make deny (``--deny``)."""
    REVIEW = "review"
    """The review's own limits: out of time, a kind or a selector draguard cannot check."""


class Reason(enum.StrEnum):
    """Stable machine-readable reasons that are not Kubernetes cause types (see :data:`REASONS`).

    A ``StrEnum``: ``Reason.UNSATISFIABLE == "Unsatisfiable"``, and JSON shows the plain value.
    """

    DECODE_ERROR = "DecodeError"
    UNKNOWN_FIELD = "UnknownField"
    FIELD_DROPPED = "FieldDropped"
    DEPRECATED = "Deprecated"
    ADMIN_ACCESS_UNVERIFIED = "AdminAccessUnverified"
    API_SERVER_WARNING = "APIServerWarning"
    UNSATISFIABLE = "Unsatisfiable"
    SATISFIABILITY_UNKNOWN = "SatisfiabilityUnknown"
    SELECTOR_RUNTIME_ERROR = "SelectorRuntimeError"
    CAPACITY_ROUNDED = "CapacityRounded"
    CAPACITY_DEFAULTED = "CapacityDefaulted"
    SATISFIABLE_ON_SCALE_UP = "SatisfiableOnScaleUp"
    CAPACITY_IN_USE = "CapacityInUse"
    CAPACITY_ON_EXCLUSIVE_DEVICE = "CapacityOnExclusiveDevice"
    REPLICAS_EXCEED_CAPACITY = "ReplicasExceedCapacity"
    REFERENCE_NOT_FOUND = "ReferenceNotFound"
    BUDGET_EXCEEDED = "BudgetExceeded"
    UNSUPPORTED_KIND = "UnsupportedKind"
    SELECTOR_NOT_CHECKED = "SelectorNotChecked"
    LINT_NEGATIVE_CAPACITY_REQUEST = "LintNegativeCapacityRequest"
    LINT_FRACTIONAL_STEP = "LintFractionalStep"
    LINT_MAX_OFF_GRID = "LintMaxOffGrid"
    LINT_DEFAULT_WITHOUT_RANGE = "LintDefaultWithoutRange"


def reason_anchor(reason: str) -> str:
    """The README anchor of a reason's row (``reason-unsatisfiable``)."""
    return f"reason-{reason.lower()}"


@dataclass(frozen=True, slots=True)
class ReasonInfo:
    """Everything draguard states about one reason.

    ``severity`` is the one it is reported with by default (``--strict`` raises lints and
    unresolved references to errors; a selector error is an error only when it is certain).
    """

    reason: str
    family: Family
    severity: Severity
    sarif_name: str
    description: str

    @property
    def anchor(self) -> str:
        return reason_anchor(self.reason)


_E, _W, _I = Severity.ERROR, Severity.WARNING, Severity.INFO
_ROWS: tuple[tuple[str, Family, Severity, str, str], ...] = (
    # Kubernetes' field error cause types: what the API server rejects
    (ErrorType.REQUIRED.value, Family.PARITY, _E, "RequiredFieldMissing",
     "A field the API server requires is missing or empty."),
    (ErrorType.INVALID.value, Family.PARITY, _E, "InvalidFieldValue", "The API server rejects this field's value."),
    (ErrorType.NOT_SUPPORTED.value, Family.PARITY, _E, "UnsupportedFieldValue",
     "The value is not one of those the API server accepts."),
    (ErrorType.DUPLICATE.value, Family.PARITY, _E, "DuplicateFieldValue", "The value repeats one that must be unique."),
    (ErrorType.TOO_LONG.value, Family.PARITY, _E, "FieldValueLongerThanAllowed",
     "The value is longer than the API server allows."),
    (ErrorType.TOO_MANY.value, Family.PARITY, _E, "MoreItemsThanAllowed",
     "The list has more items than the API server allows."),
    (ErrorType.FORBIDDEN.value, Family.PARITY, _E, "ForbiddenField", "The API server forbids this field here."),
    (ErrorType.TYPE_INVALID.value, Family.PARITY, _E, "WrongFieldType",
     "The value has the wrong type (a string for a number...)."),
    (ErrorType.NOT_FOUND.value, Family.PARITY, _E, "ReferencedValueNotFound",
     "The value names something the object does not have (a `capacityKey` no capacity has)."),
    (Reason.ADMIN_ACCESS_UNVERIFIED, Family.PARITY, _W, "AdminAccessNamespaceUnknown",
     "adminAccess needs a namespace label the input does not show, so the API server's rule is not decided."),
    (Reason.API_SERVER_WARNING, Family.PARITY, _W, "ApiServerWarns",
     "The API server accepts the object with a warning (an upper-case driver name)."),
    # decoding
    (Reason.DECODE_ERROR, Family.DECODE, _E, "DocumentNotDecodable", "The input is not a decodable Kubernetes object."),
    (Reason.UNKNOWN_FIELD, Family.DECODE, _E, "FieldNotInApi",
     "A field the resource.k8s.io API does not have (usually a typo)."),
    (Reason.FIELD_DROPPED, Family.DECODE, _W, "FieldDroppedByTargetVersion",
     "A field the target Kubernetes version and feature gates drop silently."),
    (Reason.DEPRECATED, Family.DECODE, _I, "DeprecatedApiVersion", "An API version the target serves but will remove."),
    # inventory checks
    (Reason.UNSATISFIABLE, Family.INVENTORY, _E, "ClaimCanNeverBeAllocated",
     "Proven: no node of the inventory could ever allocate it."),
    (Reason.SATISFIABILITY_UNKNOWN, Family.INVENTORY, _W, "SatisfiabilityNotDecided",
     "Whether the claim can be allocated was not decided."),
    (Reason.SELECTOR_RUNTIME_ERROR, Family.INVENTORY, _E, "SelectorFailsOnDevice",
     "A CEL selector fails on a device it is evaluated against."),
    (Reason.CAPACITY_ROUNDED, Family.INVENTORY, _W, "CapacityRoundedUp",
     "The request will consume more capacity than asked (policy rounding)."),
    (Reason.CAPACITY_DEFAULTED, Family.INVENTORY, _I, "CapacityPolicyDefaultUsed",
     "An omitted capacity request will consume the policy default."),
    (Reason.SATISFIABLE_ON_SCALE_UP, Family.INVENTORY, _I, "NeedsNodeGroupScaleUp",
     "Only a node an autoscaler can create (a potential node-group template) can allocate the claim."),
    (Reason.CAPACITY_IN_USE, Family.INVENTORY, _W, "NoCapacityFreeNow",
     "It would fit an empty cluster, but not today's allocations (never a denial)."),
    (Reason.CAPACITY_ON_EXCLUSIVE_DEVICE, Family.INVENTORY, _I, "CapacityRequestTakesWholeDevice",
     "A capacity request whose devices cannot be shared (no allowMultipleAllocations): the claim takes a whole device."),
    # workloads
    (Reason.REPLICAS_EXCEED_CAPACITY, Family.WORKLOAD, _W, "ReplicasCannotAllRun",
     "With every device free, only some replicas of the workload can hold their claims at once."),
    (Reason.REFERENCE_NOT_FOUND, Family.WORKLOAD, _W, "ClaimReferenceNotFound",
     "A ResourceClaim or ResourceClaimTemplate the pod names is in none of the files nor the cluster."),
    # the review's own limits
    (Reason.BUDGET_EXCEEDED, Family.REVIEW, _W, "ReviewOutOfTime",
     "The review's time budget ran out before the checks finished (allowed)."),
    (Reason.UNSUPPORTED_KIND, Family.REVIEW, _W, "KindNotChecked", "An object of a kind draguard does not check."),
    (Reason.SELECTOR_NOT_CHECKED, Family.REVIEW, _W, "SelectorNotEvaluated",
     "A CEL selector Kubernetes accepts but draguard cannot evaluate; it is not checked."),
    # draguard's own checks
    (Reason.LINT_NEGATIVE_CAPACITY_REQUEST, Family.LINT, _W, "NonPositiveCapacityRequest",
     "A capacity request of zero or less."),
    (Reason.LINT_FRACTIONAL_STEP, Family.LINT, _W, "StepBelowOneUnit",
     "A validRange.step below one whole unit (rounding uses whole units)."),
    (Reason.LINT_MAX_OFF_GRID, Family.LINT, _W, "MaxNotOnStepGrid",
     "A validRange.max that is not on the min + k*step grid."),
    (Reason.LINT_DEFAULT_WITHOUT_RANGE, Family.LINT, _W, "UnconstrainedDefault",
     "A requestPolicy default no range or values constrain."),
)

REASONS: Mapping[str, ReasonInfo] = {
    str(reason): ReasonInfo(str(reason), family, severity, name, text) for reason, family, severity, name, text in _ROWS
}
"""Every reason a finding can carry → its facts, in the README table's order."""


def family_of(reason: str) -> Family | None:
    """The family of ``reason``; None for a string that is no registered reason."""
    info = REASONS.get(reason)
    return info.family if info is not None else None
