"""The gate model: per-version defaults and kube-apiserver's --feature-gates rules."""

from __future__ import annotations

import pytest
from draguard.k8s.features import (
    DEFAULT_TARGET,
    FeatureGateError,
    Target,
    parse_feature_gates,
    parse_target,
    parse_version,
)


@pytest.mark.parametrize(
    ("version", "gate", "on"),
    [
        ("1.34", "DRAConsumableCapacity", False),
        ("1.35", "DRAConsumableCapacity", False),
        ("1.36", "DRAConsumableCapacity", True),
        ("1.34", "DRAPrioritizedList", True),
        ("1.35", "DRADeviceTaints", False),
        ("1.36", "DRADeviceTaints", True),
        ("1.36", "DRADeviceTaintRules", False),
        ("1.36", "DRAListTypeAttributes", False),
        ("1.35", "DRAListTypeAttributes", False),  # does not exist yet: off
        ("1.36", "DRAExtendedResource", True),
        ("1.35", "DRAExtendedResource", False),
        ("1.34", "DRAAdminAccess", True),
        # 1.37.2's own table
        ("1.37", "DRADeviceTaintRules", True),
        ("1.37", "DRAExtendedResource", True),
        ("1.37", "DRAFractionalCapacityRange", False),
        ("1.36", "DRAFractionalCapacityRange", False),  # does not exist yet
        ("1.37", "DRAWorkloadResourceClaims", False),
        ("1.37", "GenericWorkload", False),
        ("1.37", "DRADerivedAttributes", False),
        ("1.37", "DynamicResourceAllocation", True),
        # 1.38.0-beta.0's own table
        ("1.38", "DRAFractionalCapacityRange", True),
        ("1.38", "DRAConsumableCapacity", True),
        ("1.38", "DynamicResourceAllocation", True),  # the gate is removed: always on
    ],
)
def test_defaults_per_version(version: str, gate: str, on: bool) -> None:
    assert Target(version).enabled(gate) is on


@pytest.mark.parametrize(
    ("version", "gates"),
    [
        # GA but not locked yet ("LockToDefault: true in 1.38/1.39" in their sources): can be turned off
        ("1.37", "DRADeviceTaintRules=false"),
        ("1.37", "DRADeviceTaintRules=false,DRADeviceTaints=false"),
        ("1.38", "DRAConsumableCapacity=false,DRAFractionalCapacityRange=false"),
        ("1.38", "DRAFractionalCapacityRange=false"),
    ],
)
def test_ga_gates_not_yet_locked_can_be_turned_off(version: str, gates: str) -> None:
    target = parse_target(version, gates)
    assert all(not target.enabled(g.split("=")[0]) for g in gates.split(","))


def test_default_target_is_the_newest_released_minor_with_its_defaults() -> None:
    assert DEFAULT_TARGET.version == "1.37" and not DEFAULT_TARGET.overrides


def test_overrides_win_over_defaults() -> None:
    target = parse_target("1.35", "DRAConsumableCapacity=true, DRADeviceTaints=true")
    assert target.enabled("DRAConsumableCapacity") and target.enabled("DRADeviceTaints")
    assert target.gates_text() == "DRAConsumableCapacity=true,DRADeviceTaints=true"
    assert parse_feature_gates("DRAConsumableCapacity=TRUE", "1.35") == {"DRAConsumableCapacity": True}


@pytest.mark.parametrize("text", ["1.36", "v1.36", "1.36.2"])
def test_versions_are_read_like_kubectl_prints_them(text: str) -> None:
    assert parse_version(text) == "1.36"


@pytest.mark.parametrize(
    ("version", "gates", "parameter", "message"),
    [
        ("1.20", "", "kubernetes-version", "unsupported Kubernetes version"),
        ("1.36", "NoSuchGate=true", "feature-gates", "unrecognized feature gate: NoSuchGate"),
        ("1.36", "DRAConsumableCapacity", "feature-gates", "missing bool value"),
        ("1.36", "DRAConsumableCapacity=yes", "feature-gates", "invalid value of DRAConsumableCapacity=yes"),
        # the texts below are kube-apiserver 1.36's own start-up errors
        ("1.36", "DRAAdminAccess=false", "feature-gates",
         "cannot set feature gate DRAAdminAccess to false, feature is locked to true"),
        ("1.35", "DynamicResourceAllocation=false", "feature-gates",
         "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true"),
        ("1.35", "DRAListTypeAttributes=true", "feature-gates",
         "cannot set feature gate DRAListTypeAttributes to true, feature is PreAlpha at emulated version 1.35"),
        ("1.36", "DRADeviceTaintRules=true,DRADeviceTaints=false", "feature-gates",
         "DRADeviceTaintRules is enabled, but depends on features that are disabled: [DRADeviceTaints]"),
        ("1.36", "DRAResourceClaimDeviceStatus=false", "feature-gates",
         "DRADeviceBindingConditions is enabled, but depends on features that are disabled"),
        # 1.37 and 1.38
        ("1.37", "DRAExtendedResource=false", "feature-gates",
         "cannot set feature gate DRAExtendedResource to false, feature is locked to true"),
        ("1.37", "DRAWorkloadResourceClaims=true", "feature-gates",
         "DRAWorkloadResourceClaims is enabled, but depends on features that are disabled: [GenericWorkload]"),
        ("1.37", "DRAFractionalCapacityRange=true,DRAConsumableCapacity=false", "feature-gates",
         "DRAFractionalCapacityRange is enabled, but depends on features that are disabled: [DRAConsumableCapacity]"),
        ("1.38", "DynamicResourceAllocation=true", "feature-gates", "unrecognized feature gate: DynamicResourceAllocation"),
        ("1.38", "DRAAdminAccess=false", "feature-gates",
         "cannot set feature gate DRAAdminAccess to false, feature is locked to true"),
    ],
)
def test_what_kube_apiserver_refuses_is_a_usage_error(version: str, gates: str, parameter: str, message: str) -> None:
    with pytest.raises(FeatureGateError) as info:
        parse_target(version, gates)
    assert info.value.parameter == parameter
    assert message in str(info.value)


def test_gate_descriptions_name_stage_default_and_version() -> None:
    assert Target("1.35").describe_gate("DRAConsumableCapacity") == (
        "DRAConsumableCapacity (alpha, off by default in Kubernetes 1.35)"
    )
    assert parse_target("1.36", "DRAConsumableCapacity=false").describe_gate("DRAConsumableCapacity") == (
        "DRAConsumableCapacity (set to false for Kubernetes 1.36)"
    )
    assert "not in Kubernetes 1.35" in Target("1.35").describe_gate("DRAListTypeAttributes")
