"""The DRA fields of Kubernetes 1.37 (and 1.36's renamed one) at every target: an unknown field where
the target's schema lacks it, dropped (FieldDropped) where its gate is off, validated where it is on.

Schemas from k8s.io/api resource/v1 types.go of v0.36.3, v0.37.2 and v0.38.0-beta.0; gates and drops
from 1.37.2's registry strategies; rules from pkg/apis/resource/validation and the declarative tags.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.inventory import load_paths
from draguard.k8s import parse_target
from draguard.review.pipeline import ReviewOptions, review_documents

from .compare import verdicts

DRIVER = "gpu.example.com"


def slice_with(spec: dict[str, Any] | None = None, device: dict[str, Any] | None = None,
               api: str = "resource.k8s.io/v1") -> dict[str, Any]:
    dev: dict[str, Any] = {"name": "gpu-0", "attributes": {"profile": {"string": "full"}},
                           "capacity": {"cores": {"value": "8"}},
                           "consumesCounters": [{"counterSet": "set", "counters": {"mem": {"value": "1"}}}]}
    dev.update(device or {})
    # (the counter set is published by another slice of the pool: one slice may not hold both)
    body: dict[str, Any] = {"driver": DRIVER, "pool": {"name": "p", "resourceSliceCount": 2}, "nodeName": "n",
                            "devices": [dev]}
    body.update(spec or {})
    return {"apiVersion": api, "kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": body}


def claim_with(exactly: dict[str, Any], constraints: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER, **exactly}}]}
    if constraints is not None:
        devices["constraints"] = constraints
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
            "spec": {"devices": devices}}


DERIVED = {"derivedAttributes": [{"name": "derived/numa", "expression": "device.attributes['x'].numa"}]}
DERIVED_USED = [{"matchAttribute": "derived/numa"}]

# name -> (object, field path, gate, the gate list that turns it on at 1.37/1.38, a valid object?)
ON_137 = "DRAPartitionableDevicesType=true,DRAResourcePoolStatus=true"
FIELDS: dict[str, tuple[dict[str, Any], str, str, str]] = {
    "partitionTypeAttribute": (slice_with({"partitionTypeAttribute": f"{DRIVER}/profile"}),
                               "spec.partitionTypeAttribute", "DRAPartitionableDevicesType", ON_137),
    "skipNodeOperations": (slice_with({"skipNodeOperations": ["*"]}), "spec.skipNodeOperations",
                           "DRAOptionalNodeOperations", "DRAOptionalNodeOperations=true"),
    "compatibilityGroups": (
        slice_with(device={"consumesCounters": [{"counterSet": "set", "counters": {"mem": {"value": "1"}},
                                                 "compatibilityGroups": ["a"]}]}),
        "spec.devices[0].consumesCounters[0].compatibilityGroups", "DRADeviceCompatibilityGroups",
        "DRADeviceCompatibilityGroups=true"),
    "nodeAllocatableResources": (
        slice_with(device={"nodeAllocatableResources": {"cpu": {"mapping": {"capacityKey": "cores",
                                                                            "capacityMultiplier": "2"}}}}),
        "spec.devices[0].nodeAllocatableResources", "DRANodeAllocatableResources", "DRANodeAllocatableResources=true"),
    "derivedAttributes": (claim_with(DERIVED, DERIVED_USED), "spec.devices.requests[0].exactly.derivedAttributes",
                          "DRADerivedAttributes", "DRADerivedAttributes=true"),
}


def review(obj: dict[str, Any], version: str, gates: str = "") -> list[dict[str, str]]:
    text = yaml.safe_dump(obj)
    from draguard.k8s import decode_text

    docs = decode_text(text, "obj.yaml").documents
    result = review_documents(docs, inventory=None, options=ReviewOptions(target=parse_target(version, gates)))
    return [{"reason": f.reason, "field": f.field, "message": f.message, "severity": str(f.severity.value)}
            for f in result.findings]


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_a_137_field_is_an_unknown_field_at_1_36(name: str) -> None:
    obj, path, _, _ = FIELDS[name]
    findings = review(obj, "1.36")
    unknown = [f for f in findings if f["reason"] == "UnknownField"]
    assert [f["field"] for f in unknown] == [path], findings
    assert "Kubernetes 1.36" in unknown[0]["message"] and "added in Kubernetes 1.37" in unknown[0]["message"]


@pytest.mark.parametrize("version", ["1.37", "1.38"])
@pytest.mark.parametrize("name", sorted(FIELDS))
def test_a_137_field_is_dropped_with_its_gate_off(name: str, version: str) -> None:
    obj, path, gate, _ = FIELDS[name]
    findings = review(obj, version)
    dropped = [f for f in findings if f["reason"] == "FieldDropped"]
    assert [f["field"] for f in dropped] == [path], findings
    assert gate in dropped[0]["message"]
    assert not [f for f in findings if f["severity"] == "error"], findings


@pytest.mark.parametrize("version", ["1.37", "1.38"])
@pytest.mark.parametrize("name", sorted(FIELDS))
def test_a_137_field_is_kept_and_accepted_with_its_gate_on(name: str, version: str) -> None:
    obj, _, _, gates = FIELDS[name]
    findings = review(obj, version, gates)
    assert not [f for f in findings if f["reason"] in ("FieldDropped", "UnknownField") or f["severity"] == "error"], \
        findings


def test_1_36_name_of_node_allocatable_resources_is_unknown_from_1_37() -> None:
    obj = slice_with(device={"nodeAllocatableResourceMappings": {"cpu": {"capacityKey": "cores"}}})
    for version in ("1.37", "1.38"):
        findings = review(obj, version, "DRANodeAllocatableResources=true")
        assert [(f["reason"], f["field"]) for f in findings if f["severity"] == "error"] == [
            ("UnknownField", "spec.devices[0].nodeAllocatableResourceMappings")], findings
    assert not [f for f in review(obj, "1.36", "DRANodeAllocatableResources=true") if f["severity"] == "error"]


def test_v1beta1_paths_of_an_unknown_137_field() -> None:
    obj = slice_with(api="resource.k8s.io/v1beta1")
    dev = obj["spec"]["devices"][0]
    obj["spec"]["devices"][0] = {"name": dev.pop("name"), "basic": {**dev, "nodeAllocatableResources": {"cpu": {}}}}
    findings = review(obj, "1.36")
    assert ("UnknownField", "spec.devices[0].basic.nodeAllocatableResources") in {
        (f["reason"], f["field"]) for f in findings}


# ---------------------------------------------------------------------------- validation (gate on)
def _errors(obj: dict[str, Any], gates: str, version: str = "1.37") -> set[tuple[str, str]]:
    return {(f["field"], f["reason"]) for f in review(obj, version, gates) if f["severity"] == "error"}


@pytest.mark.parametrize(
    ("name", "change", "expected"),
    [
        ("skipNodeOperations", {"skipNodeOperations": ["NodePrepareResources"]},
         ("spec.skipNodeOperations", "FieldValueInvalid")),
        ("skipNodeOperations", {"skipNodeOperations": ["Everything"]},
         ("spec.skipNodeOperations[0]", "FieldValueNotSupported")),
        ("skipNodeOperations", {"skipNodeOperations": ["*", "*"]}, ("spec.skipNodeOperations[1]", "FieldValueDuplicate")),
        ("partitionTypeAttribute", {"partitionTypeAttribute": "profile"},
         ("spec.partitionTypeAttribute", "FieldValueInvalid")),
        ("partitionTypeAttribute", {"partitionTypeAttribute": f"{DRIVER}/missing"},
         (f"spec.devices[0].attributes[{DRIVER}/missing]", "FieldValueRequired")),
    ],
)
def test_slice_spec_fields_are_validated(name: str, change: dict[str, Any], expected: tuple[str, str]) -> None:
    gates = FIELDS[name][3]
    assert expected in _errors(slice_with(change), gates)


def test_skip_prepare_with_unprepare_is_accepted() -> None:
    gates = FIELDS["skipNodeOperations"][3]
    assert _errors(slice_with({"skipNodeOperations": ["NodePrepareResources", "NodeUnprepareResources"]}), gates) == set()


def test_partition_type_attribute_needs_devices_that_consume_counters() -> None:
    obj = slice_with({"partitionTypeAttribute": f"{DRIVER}/profile"}, {"consumesCounters": []})
    assert ("spec.partitionTypeAttribute", "FieldValueInvalid") in _errors(obj, ON_137)


def test_compatibility_groups_are_at_most_two_unique_dns_labels() -> None:
    gates = FIELDS["compatibilityGroups"][3]

    def groups(values: list[str]) -> dict[str, Any]:
        return slice_with(device={"consumesCounters": [{"counterSet": "set", "counters": {"mem": {"value": "1"}},
                                                        "compatibilityGroups": values}]})

    base = "spec.devices[0].consumesCounters[0].compatibilityGroups"
    assert _errors(groups(["a", "b", "c"]), gates) == {(base, "FieldValueTooMany")}
    assert _errors(groups(["a", "a"]), gates) == {(f"{base}[1]", "FieldValueDuplicate")}
    assert _errors(groups(["Not_A_Label"]), gates) == {(f"{base}[0]", "FieldValueInvalid")}
    assert _errors(groups(["a", "b"]), gates) == set()


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"nvidia.com/gpu": {"overhead": {"perPod": "1"}}}, ("spec.devices[0].nodeAllocatableResources[nvidia.com/gpu]",
                                                            "FieldValueInvalid")),
        ({"cpu": {}}, ("spec.devices[0].nodeAllocatableResources[cpu]", "FieldValueRequired")),
        ({"cpu": {"mapping": {"capacityKey": "cores"}}},
         ("spec.devices[0].nodeAllocatableResources[cpu].mapping.capacityMultiplier", "FieldValueRequired")),
        ({"cpu": {"mapping": {"capacityKey": "nope", "capacityMultiplier": "1"}}},
         ("spec.devices[0].nodeAllocatableResources[cpu].mapping.capacityKey", "FieldValueNotFound")),
        ({"memory": {"mapping": {"deviceMultiplier": "0"}}},
         ("spec.devices[0].nodeAllocatableResources[memory].mapping.deviceMultiplier", "FieldValueInvalid")),
        ({"memory": {"overhead": {"perPod": "-1"}}},
         ("spec.devices[0].nodeAllocatableResources[memory].overhead.perPod", "FieldValueInvalid")),
        ({"memory": {"overhead": {}}}, ("spec.devices[0].nodeAllocatableResources[memory].overhead", "FieldValueInvalid")),
    ],
)
def test_node_allocatable_resources_are_validated(entry: dict[str, Any], expected: tuple[str, str]) -> None:
    gates = FIELDS["nodeAllocatableResources"][3]
    assert expected in _errors(slice_with(device={"nodeAllocatableResources": entry}), gates)


def test_node_allocatable_resources_accept_mapping_and_overhead() -> None:
    entry = {"cpu": {"mapping": {"capacityKey": "cores", "capacityMultiplier": "2"}},
             "hugepages-2Mi": {"overhead": {"perPod": "0", "perContainer": "2Mi"}},
             "memory": {"mapping": {"deviceMultiplier": "1Gi"}}}
    assert _errors(slice_with(device={"nodeAllocatableResources": entry}), FIELDS["nodeAllocatableResources"][3]) == set()


def test_derived_attributes_must_be_used_by_a_constraint_and_named() -> None:
    gates = FIELDS["derivedAttributes"][3]
    path = "spec.devices.requests[0].exactly.derivedAttributes"
    assert (f"{path}[0].name", "FieldValueInvalid") in _errors(claim_with(DERIVED, []), gates)
    unnamed = {"derivedAttributes": [{"name": "numa", "expression": "1"}]}
    assert (f"{path}[0].name", "FieldValueInvalid") in _errors(claim_with(unnamed, [{"matchAttribute": "numa"}]), gates)
    empty = {"derivedAttributes": [{"name": "derived/numa", "expression": ""}]}
    assert (f"{path}[0].expression", "FieldValueRequired") in _errors(claim_with(empty, DERIVED_USED), gates)
    many = {"derivedAttributes": [{"name": f"derived/a{i}", "expression": "1"} for i in range(33)]}
    assert (path, "FieldValueTooMany") in _errors(claim_with(many, DERIVED_USED), gates)
    targeted = [{"requests": ["gpu"], "matchAttribute": "derived/numa"}]
    assert _errors(claim_with(DERIVED, targeted), gates) == set()
    elsewhere = [{"requests": ["other"], "matchAttribute": "derived/numa"}]
    assert (f"{path}[0].name", "FieldValueInvalid") in _errors(claim_with(DERIVED, elsewhere), gates)


def test_allocation_result_skip_node_operations_is_unknown_at_1_36() -> None:
    from draguard.k8s import structural_pass

    obj = claim_with({})
    obj["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": DRIVER, "pool": "p", "device": "d", "skipNodeOperations": ["*"]}]}}}
    st36 = structural_pass("ResourceClaim", obj, target=parse_target("1.36"))
    assert [str(p) for p in st36.unknown_fields] == ["status.allocation.devices.results[0].skipNodeOperations"]
    assert structural_pass("ResourceClaim", obj, target=parse_target("1.37")).unknown_fields == []


# ---------------------------------------------------------------------------- kinds that are not errors
NEW_KINDS = """\
apiVersion: resource.k8s.io/v1alpha3
kind: ResourcePoolStatusRequest
metadata: {name: pools}
spec: {driver: gpu.example.com, limit: 10}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: default}
spec:
  podGroupTemplates: [{name: g, schedulingPolicy: {gang: {minCount: 2}}}]
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: g, namespace: default}
spec: {schedulingPolicy: {basic: {}}}
"""


@pytest.mark.parametrize("version", ["1.36", "1.37", "1.38"])
def test_new_kinds_are_never_errors(tmp_path: Path, version: str) -> None:
    path = tmp_path / "kinds.yaml"
    path.write_text(NEW_KINDS)
    docs = load_paths([str(path)]).documents
    result = review_documents(docs, inventory=None, options=ReviewOptions(target=parse_target(version)))
    assert not result.findings, result.findings
    assert {r.kind for r in result.skipped} == {"Workload", "PodGroup"}  # not checked
    assert [o.ref.kind for o in result.objects] == ["ResourcePoolStatusRequest"]


def test_a_resource_pool_status_request_with_a_bad_name_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "rpsr.yaml"
    path.write_text(NEW_KINDS.split("---")[0].replace("name: pools", "name: Bad_Name"))
    result = review_documents(load_paths([str(path)]).documents, inventory=None, options=ReviewOptions())
    assert [(f.field, f.reason) for f in result.findings] == [("metadata.name", "FieldValueInvalid")]


def test_the_gated_corpus_still_agrees_at_1_37() -> None:
    """The shared gated objects keep their 1.36 verdicts at 1.36 (the 1.36-only field stays known there)."""
    gated = sorted((Path(__file__).parent / "gated").glob("*.yaml"))
    got = verdicts(gated, parse_target("1.36", "DRANodeAllocatableResources=true"))
    assert got["gated-node-allocatable-valid"].admitted
