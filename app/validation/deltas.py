"""What each Kubernetes release after 1.36 changed in the API server's DRA validation, in one table.

Why a table: the rules in this package are Kubernetes 1.36's; a later release tightens some (a
``validRange.step`` of 0, names with two slashes) and loosens others (fractional ranges).  Writing
``if version >= "1.37"`` inside each rule would scatter the release history across the modules;
here every delta is one row a reader can diff against upstream's ``validation.go`` of that
release, and a rule asks :func:`applies` whether its row is in force at the target being validated
(:mod:`.target`).  Adding 1.39 is new rows, not edits in the rules.

Each row names the first minor release whose API server behaves the new way and the upstream pull
request.  Read from ``k8s.io/kubernetes`` v1.36.3, v1.37.2 and v1.38.0-beta.0
(``pkg/apis/resource/validation/validation.go``, and for declarative rules the generated
``pkg/apis/resource/v1/zz_generated.validations.go`` from ``k8s.io/api``'s ``+k8s:`` tags);
v1.36.2 and v1.36.3 are identical there, so no row was backported to a 1.36 patch.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..k8s import minor_key
from .target import current_target

__all__ = [
    "CAPACITY_RATCHET",
    "CAPACITY_REQUEST_AMOUNTS",
    "CAPACITY_REQUEST_NAMES",
    "DEFAULT_ERRORS_ON_DEFAULT",
    "DELTAS",
    "DEVICE_LIST_RATCHET",
    "DEVICE_NODE_SELECTOR_ONE_TERM",
    "FRACTIONAL_RANGE_GATE",
    "INT64_BOUNDS",
    "QUALIFIED_NAME_ONE_SLASH",
    "SEMVER_18_DIGITS",
    "STEP_POSITIVE",
    "Delta",
    "applies",
]


@dataclass(frozen=True)
class Delta:
    """One change of the API server's validation: from ``since`` on (a minor version), ``what``."""

    since: str
    pr: str
    what: str




def applies(delta: Delta) -> bool:
    """Whether the target being validated (:func:`.target.current_target`) has ``delta``."""
    return minor_key(current_target().version) >= minor_key(delta.since)


STEP_POSITIVE = Delta(
    "1.37", "kubernetes#139698",
    "validRange.step <= 0 is `must be greater than zero` (1.36: step 0 panics with an internal "
    "error, a negative step is accepted by the whole-unit arithmetic)",
)
INT64_BOUNDS = Delta(
    "1.37", "kubernetes#140666",
    "with a positive step on the integer path, default/min/max/step must be in [0, 9223372036854775807]: "
    "`must be greater than or equal to 0` / `must not be larger than 9223372036854775807`, "
    "and the step-multiple checks are skipped then",
)
DEFAULT_ERRORS_ON_DEFAULT = Delta(
    "1.37", "kubernetes/kubernetes v1.37.2 validation.go",
    "`default is less than min` / `default is more than max` are reported on validRange.default "
    "(1.36: on validRange.min / validRange.max)",
)
FRACTIONAL_RANGE_GATE = Delta(
    "1.37", "kubernetes#140161",
    "with DRAFractionalCapacityRange on, a fractional range or default uses milli-unit arithmetic "
    "(`value cannot be represented as a milli value`) and validValues are unique by exact value",
)
CAPACITY_RATCHET = Delta(
    "1.37", "kubernetes#140161",
    "on update, a device whose capacity map is unchanged is not re-validated there "
    "(1.36 re-validates every capacity; only unchanged taints are skipped)",
)
DEVICE_LIST_RATCHET = Delta(
    "1.38", "kubernetes#141644",
    "on update, an unchanged spec.devices list is not re-validated at all; any change re-validates "
    "every device (the per-device capacity/taint ratchets are gone)",
)
QUALIFIED_NAME_ONE_SLASH = Delta(
    "1.38", "kubernetes#141644",
    "attribute/capacity names with more than one slash: `must not contain more than one slash`",
)
DEVICE_NODE_SELECTOR_ONE_TERM = Delta(
    "1.38", "kubernetes#141213",
    "a per-device nodeSelector must have exactly one node selector term",
)
CAPACITY_REQUEST_NAMES = Delta(
    "1.38", "kubernetes#142202",
    "capacity.requests keys of claim requests and consumedCapacity keys of allocation results are "
    "qualified names (`<name>` or `<driver>/<name>`); unchanged requests of a template update ratchet",
)
CAPACITY_REQUEST_AMOUNTS = Delta(
    "1.38", "k8s.io/api v0.38.0-beta.0 +k8s:maxProperties=32 +k8s:eachVal=+k8s:minimum=0 (issue kubernetes#140468)",
    "capacity.requests of claim requests and consumedCapacity of allocation results (declarative validation, "
    "reported after the handwritten errors): more than 32 entries is `Too many: N: must have at most 32 items`, "
    "a negative amount `must be greater than or equal to 0` on the entry; unchanged maps and entries ratchet",
)
SEMVER_18_DIGITS = Delta(
    "1.38", "kubernetes/kubernetes v1.38.0-beta.0 validation.go",
    "version attributes: numeric identifiers have at most 18 digits (`must be a string compatible with "
    "semver.org spec 2.0.0, with at most 18 digits in numbers`)",
)

DELTAS: tuple[Delta, ...] = (
    STEP_POSITIVE,
    INT64_BOUNDS,
    DEFAULT_ERRORS_ON_DEFAULT,
    FRACTIONAL_RANGE_GATE,
    CAPACITY_RATCHET,
    DEVICE_LIST_RATCHET,
    QUALIFIED_NAME_ONE_SLASH,
    DEVICE_NODE_SELECTOR_ONE_TERM,
    CAPACITY_REQUEST_NAMES,
    CAPACITY_REQUEST_AMOUNTS,
    SEMVER_18_DIGITS,
)
