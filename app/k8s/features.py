"""The target Kubernetes version and its DRA feature gates (kube-apiserver's view of them).

Why a model: what the API server does with a DRA object depends on the version it runs (or
emulates) and on its ``--feature-gates``.  A field whose gate is off is *dropped* silently on
create (the registry strategies' ``dropDisabledFields``) and never validated; the CEL
environment loses ``device.allowMultipleAllocations`` without ``DRAConsumableCapacity``.  A
linter that ignores this rejects valid manifests on older clusters and misses what vanishes.

The defaults per version come from Kubernetes 1.36's versioned feature table
(``pkg/features/kube_features.go``; README "Kubernetes versions and feature gates").
Parsing follows kube-apiserver's ``--feature-gates`` flag: ``Name=bool`` pairs separated by
commas; an unknown gate, a bad boolean, a locked GA gate set to the other value, a gate that
does not exist yet at the target version, or a gate on while a gate it depends on is off are
errors (kube-apiserver refuses to start on each of them).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .errors import DraguardError

__all__ = [
    "DEFAULT_TARGET",
    "DEFAULT_VERSION",
    "DRA_GATES",
    "NEWEST_VERSION",
    "SUPPORTED_VERSIONS",
    "VERSION_HELP",
    "VERSION_METAVAR",
    "FeatureGateError",
    "GateState",
    "Target",
    "minor_key",
    "parse_feature_gates",
    "parse_target",
    "parse_version",
]

SUPPORTED_VERSIONS = ("1.34", "1.35", "1.36", "1.37", "1.38")
# the newest released minor (1.38.0 is planned for 2026-12-16: the default moves with the recipe
# of README "Adding a Kubernetes version", once 1.38.0's own binaries have been checked)
DEFAULT_VERSION = "1.37"
NEWEST_VERSION = SUPPORTED_VERSIONS[-1]
VERSION_METAVAR = "|".join(SUPPORTED_VERSIONS)
"""``--kubernetes-version``'s metavar, from the one list of supported versions."""
VERSION_HELP = f"answer as this Kubernetes version's API server would (default {DEFAULT_VERSION}, the newest released)"
"""``--kubernetes-version``'s help in ``lint`` (``serve`` reads its cluster's version first)."""


class FeatureGateError(DraguardError, ValueError):
    """A ``--kubernetes-version`` or ``--feature-gates`` value kube-apiserver would refuse."""

    def __init__(self, message: str, *, parameter: str = "") -> None:
        super().__init__(message)
        self.parameter = parameter  # "kubernetes-version" | "feature-gates" | "" (unknown)


@dataclass(frozen=True)
class GateState:
    """A gate's stage and default at one version; ``locked`` GA gates cannot be changed."""

    stage: str
    default: bool
    locked: bool = False


def _g(stage: str, default: bool, locked: bool = False) -> GateState:
    return GateState(stage, default, locked)


# gate -> version -> state (absent version = the gate does not exist there yet, or was removed:
# see _REMOVED).  Columns 1.34–1.36 are Kubernetes 1.36.2's versioned table (what a 1.36 binary
# emulating that version enforces); 1.37 is 1.37.2's ``pkg/features/kube_features.go`` and 1.38
# is 1.38.0-beta.0's, each read at its own version (``scripts/gate-table.py`` prints a version's
# column from its source and the differences from this table: the recipe's check).
_TABLE: dict[str, dict[str, GateState]] = {
    "DynamicResourceAllocation": {
        "1.34": _g("GA", True), "1.35": _g("GA", True, True), "1.36": _g("GA", True, True),
        "1.37": _g("GA", True, True),
    },
    "DRAAdminAccess": {
        "1.34": _g("beta", True), "1.35": _g("beta", True), "1.36": _g("GA", True, True),
        "1.37": _g("GA", True, True), "1.38": _g("GA", True, True),
    },
    "DRAConsumableCapacity": {
        "1.34": _g("alpha", False), "1.35": _g("alpha", False), "1.36": _g("beta", True),
        "1.37": _g("beta", True), "1.38": _g("GA", True),
    },
    "DRADerivedAttributes": {"1.37": _g("alpha", False), "1.38": _g("alpha", False)},
    "DRADeviceBindingConditions": {
        "1.34": _g("alpha", False), "1.35": _g("alpha", False), "1.36": _g("beta", True),
        "1.37": _g("beta", True), "1.38": _g("GA", True, True),
    },
    "DRADeviceCompatibilityGroups": {"1.37": _g("alpha", False), "1.38": _g("alpha", False)},
    "DRADeviceTaints": {
        "1.34": _g("alpha", False), "1.35": _g("alpha", False), "1.36": _g("beta", True),
        "1.37": _g("GA", True), "1.38": _g("GA", True, True),
    },
    "DRADeviceTaintRules": {
        "1.35": _g("alpha", False), "1.36": _g("beta", False), "1.37": _g("GA", True),
        "1.38": _g("GA", True, True),
    },
    "DRAExtendedResource": {
        "1.34": _g("alpha", False), "1.35": _g("alpha", False), "1.36": _g("beta", True),
        "1.37": _g("GA", True, True), "1.38": _g("GA", True, True),
    },
    # beta and off in 1.37 (on only with an emulation compatibility version of 1.37), GA in 1.38
    "DRAFractionalCapacityRange": {"1.37": _g("beta", False), "1.38": _g("GA", True)},
    "DRAListTypeAttributes": {"1.36": _g("alpha", False), "1.37": _g("alpha", False), "1.38": _g("alpha", False)},
    "DRANodeAllocatableResources": {
        "1.36": _g("alpha", False), "1.37": _g("alpha", False), "1.38": _g("alpha", False),
    },
    "DRAOptionalNodeOperations": {"1.37": _g("alpha", False), "1.38": _g("alpha", False)},
    "DRAPartitionableDevices": {
        "1.34": _g("alpha", False), "1.35": _g("alpha", False), "1.36": _g("beta", True),
        "1.37": _g("beta", True), "1.38": _g("GA", True, True),
    },
    "DRAPartitionableDevicesType": {"1.37": _g("alpha", False), "1.38": _g("alpha", False)},
    "DRAPrioritizedList": {
        "1.34": _g("beta", True), "1.35": _g("beta", True), "1.36": _g("GA", True),
        "1.37": _g("GA", True, True), "1.38": _g("GA", True, True),
    },
    "DRAResourceClaimDeviceStatus": {
        "1.34": _g("beta", True), "1.35": _g("beta", True), "1.36": _g("beta", True),
        "1.37": _g("GA", True, True), "1.38": _g("GA", True, True),
    },
    "DRAResourceClaimGranularStatusAuthorization": {
        "1.36": _g("beta", True), "1.37": _g("beta", True), "1.38": _g("beta", True),
    },
    "DRAResourcePoolStatus": {"1.36": _g("alpha", False), "1.37": _g("alpha", False), "1.38": _g("alpha", False)},
    "DRASchedulerFilterTimeout": {
        "1.34": _g("beta", True), "1.35": _g("beta", True), "1.36": _g("beta", True),
        "1.37": _g("beta", True), "1.38": _g("beta", True),
    },
    "DRAWorkloadResourceClaims": {"1.36": _g("alpha", False), "1.37": _g("beta", False), "1.38": _g("beta", False)},
    # not DRA gates, but DRA gates depend on them (the Workload/PodGroup API; node feature discovery)
    "GenericWorkload": {
        "1.35": _g("alpha", False), "1.36": _g("alpha", False), "1.37": _g("beta", False), "1.38": _g("beta", False),
    },
    "NodeDeclaredFeatures": {
        "1.35": _g("alpha", False), "1.36": _g("beta", True), "1.37": _g("GA", True, True),
        "1.38": _g("GA", True, True),
    },
}

# gates removed from kube-apiserver at a version: always on from then, and naming them in
# --feature-gates is "unrecognized feature gate" (kubernetes#141946 removed DynamicResourceAllocation)
_REMOVED: dict[str, str] = {"DynamicResourceAllocation": "1.38"}

DRA_GATES: tuple[str, ...] = tuple(_TABLE)

# a gate only works when these are on too (kube-apiserver checks it at start-up)
_DEPENDENCIES: dict[str, tuple[str, ...]] = {
    **{
        gate: ("DynamicResourceAllocation",)
        for gate in _TABLE
        if gate not in ("DynamicResourceAllocation", "GenericWorkload", "NodeDeclaredFeatures")
    },
    "DRADeviceBindingConditions": ("DynamicResourceAllocation", "DRAResourceClaimDeviceStatus"),
    "DRAResourceClaimGranularStatusAuthorization": ("DynamicResourceAllocation", "DRAResourceClaimDeviceStatus"),
    "DRADeviceTaintRules": ("DynamicResourceAllocation", "DRADeviceTaints"),
    "DRAFractionalCapacityRange": ("DRAConsumableCapacity",),
    "DRADeviceCompatibilityGroups": ("DynamicResourceAllocation", "DRAPartitionableDevices"),
    "DRAOptionalNodeOperations": ("DynamicResourceAllocation", "NodeDeclaredFeatures"),
    "DRAPartitionableDevicesType": ("DynamicResourceAllocation", "DRAPartitionableDevices", "DRAResourcePoolStatus"),
    "DRAWorkloadResourceClaims": ("DynamicResourceAllocation", "GenericWorkload"),
}

_TRUE = {"true"}


@functools.cache  # a handful of version strings, compared for every object of a run
def minor_key(version: str) -> tuple[int, int]:
    """``"1.37"`` → ``(1, 37)``: how every version comparison orders minors."""
    major, _, minor = version.partition(".")
    return (int(major), int(minor))
_FALSE = {"false"}


def parse_version(text: str) -> str:
    """``1.36``, ``v1.36`` or ``1.36.2`` → ``1.36``; anything else is a :class:`FeatureGateError`."""
    raw = text.strip()
    value = raw[1:] if raw.startswith("v") else raw
    parts = value.split(".")
    if len(parts) >= 2 and all(p.isdigit() for p in parts[:3]) and len(parts) <= 3:
        minor = f"{int(parts[0])}.{int(parts[1])}"
        if minor in SUPPORTED_VERSIONS:
            return minor
    raise FeatureGateError(
        f"unsupported Kubernetes version {text!r}: use one of {', '.join(SUPPORTED_VERSIONS)}"
    )


def parse_feature_gates(text: str, version: str = DEFAULT_VERSION) -> dict[str, bool]:
    """Parse kube-apiserver's ``--feature-gates`` syntax into explicit settings for ``version``."""
    settings: dict[str, bool] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {name!r} in --feature-gates (want Name=true|false)")
        lowered = value.strip().lower()
        if lowered not in _TRUE | _FALSE:
            raise FeatureGateError(f"invalid value of {name}={value.strip()}, err: want true or false")
        removed_at = _REMOVED.get(name)
        if removed_at is not None and minor_key(version) >= minor_key(removed_at):
            raise FeatureGateError(f"unrecognized feature gate: {name} (removed in Kubernetes {removed_at}: always on)")
        if name not in _TABLE:
            known = ", ".join(sorted(_TABLE))
            raise FeatureGateError(f"unrecognized feature gate: {name} (draguard knows the DRA gates: {known})")
        states = _TABLE[name]
        if version not in states:
            raise FeatureGateError(
                f"cannot set feature gate {name} to {lowered}, feature is PreAlpha at emulated version {version}"
            )
        enabled = lowered in _TRUE
        state = states[version]
        if state.locked and enabled != state.default:
            raise FeatureGateError(
                f"cannot set feature gate {name} to {str(enabled).lower()}, feature is locked to "
                f"{str(state.default).lower()}"
            )
        settings[name] = enabled
    return settings


@dataclass(frozen=True)
class Target:
    """A Kubernetes version and the explicit gate settings on top of its defaults."""

    version: str = DEFAULT_VERSION
    overrides: Mapping[str, bool] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if self.version not in SUPPORTED_VERSIONS:
            raise FeatureGateError(f"unsupported Kubernetes version {self.version!r}")
        for gate, deps in _DEPENDENCIES.items():
            if self.enabled(gate):
                off = [d for d in deps if not self.enabled(d)]
                if off:
                    raise FeatureGateError(
                        f"{gate} is enabled, but depends on features that are disabled: [{' '.join(off)}]"
                    )

    def enabled(self, gate: str) -> bool:
        """Whether ``gate`` is on; gates that do not exist at this version are off, gates removed
        before it (GA and always on) are on."""
        state = _TABLE.get(gate, {}).get(self.version)
        if state is None:
            removed_at = _REMOVED.get(gate)
            return removed_at is not None and minor_key(self.version) >= minor_key(removed_at)
        return self.overrides.get(gate, state.default)

    def state(self, gate: str) -> GateState | None:
        return _TABLE.get(gate, {}).get(self.version)

    def describe_gate(self, gate: str) -> str:
        """``DRAListTypeAttributes (alpha, off by default in Kubernetes 1.36)`` — for messages."""
        state = self.state(gate)
        if state is None:
            return f"{gate} (not in Kubernetes {self.version})"
        if gate in self.overrides:
            return f"{gate} (set to {str(self.overrides[gate]).lower()} for Kubernetes {self.version})"
        return f"{gate} ({state.stage}, {'on' if state.default else 'off'} by default in Kubernetes {self.version})"

    def gates_text(self) -> str:
        """The explicit settings back in ``--feature-gates`` syntax (``A=true,B=false``)."""
        return ",".join(f"{gate}={str(on).lower()}" for gate, on in sorted(self.overrides.items()))

    @property
    def key(self) -> tuple[str, tuple[tuple[str, bool], ...]]:
        """Hashable identity (caches keyed by target use it)."""
        return (self.version, tuple(sorted(self.overrides.items())))


def parse_target(version: str | None = None, feature_gates: str | None = None) -> Target:
    """Build a :class:`Target` from the user's two strings (flags or query parameters).

    Raises :class:`FeatureGateError`; its ``parameter`` says which of the two was wrong.
    """
    try:
        minor = parse_version(version) if version else DEFAULT_VERSION
    except FeatureGateError as exc:
        raise FeatureGateError(str(exc), parameter="kubernetes-version") from None
    try:
        overrides = parse_feature_gates(feature_gates or "", minor)
        return Target(minor, MappingProxyType(dict(overrides)))
    except FeatureGateError as exc:
        raise FeatureGateError(str(exc), parameter="feature-gates") from None


DEFAULT_TARGET = Target()
