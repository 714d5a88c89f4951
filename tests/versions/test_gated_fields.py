"""Every feature-gated field: dropped (FieldDropped, not validated) with its gate off, validated on.

The objects in ``gated/`` each carry one gated field, mostly with a value that is invalid when
the field survives.  The same files are posted to a real API server in ``test_real_api.py``;
here the expectations are written out so that they hold without the binaries.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from draguard.k8s.features import Target, parse_target

from .compare import OurVerdict, verdicts

GATED = sorted((Path(__file__).parent / "gated").glob("*.yaml"))

# name -> (gate, fields dropped with the gate off, accepted with the gate on, accepted with it off)
CASES: dict[str, tuple[str, set[str], bool, bool]] = {
    "gated-taints": ("DRADeviceTaints", {"spec.devices[0].taints"}, False, True),
    "gated-shared-counters": ("DRAPartitionableDevices", {"spec.sharedCounters"}, False, True),
    "gated-per-device-node-selection": ("DRAPartitionableDevices", {"spec.perDeviceNodeSelection"}, False, True),
    "gated-consumes-counters": ("DRAPartitionableDevices", {"spec.devices[0].consumesCounters"}, False, True),
    "gated-device-node-name": ("DRAPartitionableDevices", {"spec.devices[0].nodeName"}, False, True),
    "gated-device-all-nodes": ("DRAPartitionableDevices", {"spec.devices[0].allNodes"}, False, True),
    "gated-binding-conditions": (
        "DRADeviceBindingConditions",
        {"spec.devices[0].bindingConditions", "spec.devices[0].bindingFailureConditions", "spec.devices[0].bindsToNode"},
        False,
        True,
    ),
    "gated-request-policy": (
        "DRAConsumableCapacity",
        {"spec.devices[0].allowMultipleAllocations", "spec.devices[0].capacity[memory].requestPolicy"},
        False,
        True,
    ),
    "gated-node-allocatable": (
        "DRANodeAllocatableResources", {"spec.devices[0].nodeAllocatableResourceMappings"}, False, True
    ),
    "gated-node-allocatable-valid": (
        "DRANodeAllocatableResources", {"spec.devices[0].nodeAllocatableResourceMappings"}, True, True
    ),
    "gated-list-attributes": (
        "DRAListTypeAttributes",
        {"spec.devices[0].attributes[model].strings", "spec.devices[0].attributes[versions].versions"},
        False,
        True,
    ),
    "gated-list-attributes-valid": (
        "DRAListTypeAttributes",
        {f"spec.devices[0].attributes[{k}].{v}" for k, v in
         (("models", "strings"), ("cores", "ints"), ("flags", "bools"), ("drivers", "versions"))},
        True,
        False,  # every attribute loses its only value: "exactly one value must be specified"
    ),
    "gated-first-available": ("DRAPrioritizedList", {"spec.devices.requests[0].firstAvailable"}, True, False),
    "gated-tolerations": ("DRADeviceTaints", {"spec.devices.requests[0].exactly.tolerations"}, False, True),
    "gated-sub-tolerations": (
        "DRADeviceTaints", {"spec.devices.requests[0].firstAvailable[0].tolerations"}, False, True
    ),
    "gated-distinct-attribute": (
        "DRAConsumableCapacity", {"spec.devices.constraints[0].distinctAttribute"}, True, False
    ),
    "gated-capacity-requests": ("DRAConsumableCapacity", {"spec.devices.requests[0].exactly.capacity"}, True, True),
    "gated-template-capacity": (
        "DRAConsumableCapacity",
        {"spec.spec.devices.requests[0].exactly.capacity", "spec.spec.devices.constraints[0].distinctAttribute"},
        True,
        False,
    ),
    "gated-extended-resource": ("DRAExtendedResource", {"spec.extendedResourceName"}, False, True),
    "gated-extended-resource-valid": ("DRAExtendedResource", {"spec.extendedResourceName"}, True, True),
}


def _target(gate: str, on: bool) -> Target:
    return parse_target("1.36", f"{gate}={str(on).lower()}")


@pytest.fixture(scope="module")
def by_gate() -> dict[tuple[str, bool], dict[str, OurVerdict]]:
    gates = {gate for gate, *_ in CASES.values()}
    return {(gate, on): verdicts(GATED, _target(gate, on)) for gate in gates for on in (True, False)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gate_off_drops_the_field_without_validating_it(
    name: str, by_gate: dict[tuple[str, bool], dict[str, OurVerdict]]
) -> None:
    gate, dropped, _, accepted_off = CASES[name]
    verdict = by_gate[(gate, False)][name]
    assert set(verdict.dropped) == dropped
    assert verdict.admitted is accepted_off, verdict
    assert not any(field.startswith(tuple(dropped)) for field, _ in verdict.causes), verdict


@pytest.mark.parametrize("name", sorted(CASES))
def test_gate_on_keeps_and_validates_the_field(
    name: str, by_gate: dict[tuple[str, bool], dict[str, OurVerdict]]
) -> None:
    gate, _, accepted_on, _ = CASES[name]
    verdict = by_gate[(gate, True)][name]
    assert not verdict.dropped
    assert verdict.admitted is accepted_on, verdict


@pytest.mark.parametrize(
    ("version", "dropped"),
    [
        ("1.34", True),  # alpha, off by default
        ("1.35", True),
        ("1.36", False),  # beta, on by default
    ],
)
def test_each_version_drops_what_its_default_gates_drop(version: str, dropped: bool) -> None:
    verdict = verdicts(GATED, parse_target(version))["gated-capacity-requests"]
    assert bool(verdict.dropped) is dropped
    assert verdict.admitted


def test_cel_environment_follows_consumable_capacity() -> None:
    on = verdicts(GATED, parse_target("1.36"))["gated-cel-allow-multiple"]
    off = verdicts(GATED, parse_target("1.35"))["gated-cel-allow-multiple"]
    assert on.admitted
    assert not off.admitted
    assert off.causes == {("spec.selectors[0].cel.expression", "FieldValueInvalid")}


def test_constraint_without_attribute_is_reported_per_gate(tmp_path: Path) -> None:
    claim = tmp_path / "c.yaml"
    claim.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n"
        "    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]\n"
        "    constraints: [{requests: [gpu]}]\n"
    )
    assert verdicts([claim], parse_target("1.36"))["c"].causes == {("spec.devices.constraints[0]", "FieldValueRequired")}
    assert verdicts([claim], parse_target("1.35"))["c"].causes == {
        ("spec.devices.constraints[0].matchAttribute", "FieldValueRequired")
    }
