"""The catalogue of finding reasons as report rules: a readable name, one line, a help anchor.

Why a catalogue: SARIF consumers (GitHub code scanning) show a rule's ``name`` next to its
``id`` and link its ``helpUri``; a name equal to the id says nothing, and a link to the top of a
page makes people search.  Every reason draguard emits has an entry here and an anchor
``reason-<id in lower case>`` in README.md's "Reasons" table (a test keeps the three in step).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DOCS_URI", "RULES", "Rule", "rule_for"]

DOCS_URI = "https://github.com/draguard/draguard/blob/main/README.md"


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    description: str

    @property
    def help_uri(self) -> str:
        return f"{DOCS_URI}#{anchor(self.id)}"


def anchor(reason: str) -> str:
    """The README anchor of a reason (``reason-unsatisfiable``)."""
    return f"reason-{reason.lower()}"


_CATALOGUE: tuple[tuple[str, str, str], ...] = (
    # Kubernetes' field error cause types: what the API server rejects
    ("FieldValueRequired", "RequiredFieldMissing", "A field the API server requires is missing or empty."),
    ("FieldValueInvalid", "InvalidFieldValue", "The API server rejects this field's value."),
    ("FieldValueNotSupported", "UnsupportedFieldValue", "The value is not one of those the API server accepts."),
    ("FieldValueDuplicate", "DuplicateFieldValue", "The value repeats one that must be unique."),
    ("FieldValueTooLong", "FieldValueLongerThanAllowed", "The value is longer than the API server allows."),
    ("FieldValueTooMany", "MoreItemsThanAllowed", "The list has more items than the API server allows."),
    ("FieldValueForbidden", "ForbiddenField", "The API server forbids this field here."),
    ("FieldValueTypeInvalid", "WrongFieldType", "The value has the wrong type (a string for a number...)."),
    ("FieldValueNotFound", "ReferencedValueNotFound", "The value names something the object does not have."),
    # decoding
    ("DecodeError", "DocumentNotDecodable", "The input is not a decodable Kubernetes object."),
    ("UnknownField", "FieldNotInApi", "A field the resource.k8s.io API does not have (usually a typo)."),
    ("FieldDropped", "FieldDroppedByTargetVersion",
     "A field the target Kubernetes version and feature gates drop silently."),
    ("Deprecated", "DeprecatedApiVersion", "An API version the target serves but will remove."),
    ("UnsupportedKind", "KindNotChecked", "An object of a kind draguard does not check."),
    # inventory checks
    ("Unsatisfiable", "ClaimCanNeverBeAllocated", "Proven: no node of the inventory could ever allocate it."),
    ("SatisfiabilityUnknown", "SatisfiabilityNotDecided", "Whether the claim can be allocated was not decided."),
    ("SelectorRuntimeError", "SelectorFailsOnDevice", "A CEL selector fails on a device it is evaluated against."),
    ("SelectorNotChecked", "SelectorNotEvaluated",
     "A CEL selector Kubernetes accepts but draguard cannot evaluate; it is not checked."),
    ("CapacityRounded", "CapacityRoundedUp", "The request will consume more capacity than asked (policy rounding)."),
    ("CapacityDefaulted", "CapacityPolicyDefaultUsed", "An omitted capacity request will consume the policy default."),
    ("SatisfiableOnScaleUp", "NeedsNodeGroupScaleUp",
     "Only a node an autoscaler can create (a potential node-group template) can allocate the claim."),
    # workloads and what the cluster holds now
    ("ReplicasExceedCapacity", "ReplicasCannotAllRun",
     "With every device free, only some replicas of the workload can hold their claims at once."),
    ("ReferenceNotFound", "ClaimReferenceNotFound",
     "A ResourceClaim or ResourceClaimTemplate the pod names is in none of the files nor the cluster."),
    ("CapacityInUse", "NoCapacityFreeNow",
     "It would fit an empty cluster, but not today's allocations (never a denial)."),
    ("BudgetExceeded", "ReviewOutOfTime", "The review's time budget ran out before the checks finished (allowed)."),
    # draguard's own checks
    ("LintNegativeCapacityRequest", "NonPositiveCapacityRequest", "A capacity request of zero or less."),
    ("LintFractionalStep", "StepBelowOneUnit", "A validRange.step below one whole unit (rounding uses whole units)."),
    ("LintMaxOffGrid", "MaxNotOnStepGrid", "A validRange.max that is not on the min + k*step grid."),
    ("LintDefaultWithoutRange", "UnconstrainedDefault", "A requestPolicy default no range or values constrain."),
)

RULES: dict[str, Rule] = {r: Rule(r, name, text) for r, name, text in _CATALOGUE}


def rule_for(reason: str) -> Rule:
    """The rule of ``reason``; a reason missing from the catalogue still gets a distinct name."""
    known = RULES.get(reason)
    if known is not None:
        return known
    if reason.startswith("Lint"):
        return Rule(reason, f"{reason[4:]}Check", f"draguard check {reason} (not enforced by Kubernetes).")
    return Rule(reason, f"{reason}Finding", reason)
