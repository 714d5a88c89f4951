"""Workload and PodGroup as draguard reads them: the fields gangs need, and only the API server's rules.

Each rule is the declarative validation of ``k8s.io/api`` ``scheduling/v1beta1`` ``types.go`` (1.37):
``schedulingPolicy`` a union of ``basic`` and ``gang``; ``gang.minCount`` ``+k8s:required``,
``+k8s:minimum=1``; ``resourceClaims`` ``+k8s:maxItems=4``, a map keyed by ``name``, each a union of
``resourceClaimName`` and ``resourceClaimTemplateName``; ``podGroupTemplates`` ``+k8s:maxItems=8``,
keyed by ``name``.  Each is shown rejecting and accepting; bad shapes give a field error, never an
exception.
"""

from __future__ import annotations

from typing import Any

import pytest
from draguard.k8s import (
    GANG_MIN_COUNT_ANNOTATION,
    GroupClaim,
    Target,
    gang_annotation,
    pod_group_name,
    read_pod_group,
    read_workload_object,
    scheduling_api_served,
)


def pod_group(spec: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "g"}, "spec": spec}


def errors_of(spec: Any) -> list[str]:
    model, errors = read_pod_group(pod_group(spec), "default")
    assert (model is None) == bool(errors)
    return [str(e) for e in errors]


# ------------------------------------------------------------------ the scheduling policy
def test_a_gang_policy_is_read_with_its_min_count() -> None:
    model, errors = read_pod_group(pod_group({"schedulingPolicy": {"gang": {"minCount": 8}},
                                              "workloadRef": {"workloadName": "w", "templateName": "t"}}), "ns")
    assert errors == [] and model is not None
    assert (model.namespace, model.name, model.min_count, model.is_gang) == ("ns", "g", 8, True)
    assert (model.workload, model.template) == ("w", "t")


def test_a_basic_policy_is_no_gang() -> None:
    model, _ = read_pod_group(pod_group({"schedulingPolicy": {"basic": {}}}), "ns")
    assert model is not None and model.min_count is None and not model.is_gang


@pytest.mark.parametrize(("policy", "message"), [
    ({}, "spec.schedulingPolicy: Invalid value: \"\": must specify one of: `basic`, `gang`"),
    ({"basic": {}, "gang": {"minCount": 2}}, "must specify exactly one of: `basic`, `gang`"),
    (None, "spec.schedulingPolicy: Invalid value: \"\": must specify one of"),  # a struct: absent is empty
    ("gang", "spec.schedulingPolicy: Invalid value"),
])
def test_the_policy_is_exactly_one_of_basic_and_gang(policy: Any, message: str) -> None:
    spec = {} if policy is None else {"schedulingPolicy": policy}
    (error,) = errors_of(spec)
    assert message in error


@pytest.mark.parametrize(("gang", "message"), [
    ({"minCount": 0}, "spec.schedulingPolicy.gang.minCount: Required value"),  # validate.RequiredValue: 0 is unset
    ({"minCount": -3}, "spec.schedulingPolicy.gang.minCount: Invalid value: -3: must be greater than or equal to 1"),
    ({}, "spec.schedulingPolicy.gang.minCount: Required value"),
    ({"minCount": "8"}, "spec.schedulingPolicy.gang.minCount: Invalid value"),
    ({"minCount": True}, "spec.schedulingPolicy.gang.minCount: Invalid value"),
])
def test_min_count_is_required_and_at_least_one(gang: dict[str, Any], message: str) -> None:
    (error,) = errors_of({"schedulingPolicy": {"gang": gang}})
    assert message in error


def test_min_count_one_is_accepted() -> None:
    assert errors_of({"schedulingPolicy": {"gang": {"minCount": 1}}}) == []


# ------------------------------------------------------------------ group claims
def test_group_claims_are_read() -> None:
    model, _ = read_pod_group(pod_group({"schedulingPolicy": {"basic": {}}, "resourceClaims": [
        {"name": "a", "resourceClaimName": "shared"}, {"name": "b", "resourceClaimTemplateName": "per-group"}]}), "ns")
    assert model is not None
    assert model.claims == (GroupClaim("a", "shared", None), GroupClaim("b", None, "per-group"))


def test_at_most_four_group_claims() -> None:
    four = [{"name": f"c{i}", "resourceClaimTemplateName": "t"} for i in range(4)]
    assert errors_of({"schedulingPolicy": {"basic": {}}, "resourceClaims": four}) == []
    five = [*four, {"name": "c4", "resourceClaimTemplateName": "t"}]
    (error,) = errors_of({"schedulingPolicy": {"basic": {}}, "resourceClaims": five})
    assert error == "spec.resourceClaims: Too many: 5: must have at most 4 items"


def test_group_claim_names_are_unique() -> None:
    claims = [{"name": "a", "resourceClaimName": "x"}, {"name": "a", "resourceClaimName": "y"}]
    (error,) = errors_of({"schedulingPolicy": {"basic": {}}, "resourceClaims": claims})
    assert error == 'spec.resourceClaims[1].name: Duplicate value: "a"'


@pytest.mark.parametrize(("entry", "message"), [
    ({"name": "a"}, "spec.resourceClaims[0]: Invalid value: \"\": must specify one of: `resourceClaimName`, "
                    "`resourceClaimTemplateName`"),
    ({"name": "a", "resourceClaimName": "x", "resourceClaimTemplateName": "y"}, "must specify exactly one of"),
    ({"resourceClaimName": "x"}, "spec.resourceClaims[0].name: Required value"),
    ({"name": "a", "resourceClaimName": 3}, "spec.resourceClaims[0].resourceClaimName: Invalid value: 3"),
    ("a", "spec.resourceClaims[0]: Invalid value"),
])
def test_a_group_claim_names_exactly_one_source(entry: Any, message: str) -> None:
    errors = errors_of({"schedulingPolicy": {"basic": {}}, "resourceClaims": [entry]})
    assert errors and message in errors[0]


@pytest.mark.parametrize("spec", [None, "x", [], {"schedulingPolicy": {"gang": []}}, {"schedulingPolicy": {"basic": {}},
                                                                                       "resourceClaims": {"a": 1}}])
def test_bad_shapes_are_field_errors_not_crashes(spec: Any) -> None:
    assert errors_of(spec)


# ------------------------------------------------------------------ Workload
def workload(templates: Any) -> dict[str, Any]:
    return {"kind": "Workload", "metadata": {"name": "w"}, "spec": {"podGroupTemplates": templates}}


def test_a_workload_templates_are_read() -> None:
    model, errors = read_workload_object(workload([
        {"name": "leaders", "schedulingPolicy": {"basic": {}}},
        {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}},
         "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}]), "ns")
    assert errors == [] and model is not None
    assert [(t.name, t.min_count) for t in model.templates] == [("leaders", None), ("workers", 4)]
    assert model.templates[1].claims == (GroupClaim("gpu", None, "t"),)


def test_a_workload_has_at_most_eight_templates_with_unique_names() -> None:
    eight = [{"name": f"t{i}", "schedulingPolicy": {"basic": {}}} for i in range(8)]
    assert read_workload_object(workload(eight), "ns")[1] == []
    _, errors = read_workload_object(workload([*eight, {"name": "t8", "schedulingPolicy": {"basic": {}}}]), "ns")
    assert [str(e) for e in errors] == ["spec.podGroupTemplates: Too many: 9: must have at most 8 items"]
    _, errors = read_workload_object(workload([eight[0], eight[0]]), "ns")
    assert [str(e) for e in errors] == ['spec.podGroupTemplates[1].name: Duplicate value: "t0"']


def test_a_workload_template_policy_follows_the_pod_group_rules() -> None:
    _, errors = read_workload_object(workload([{"name": "t", "schedulingPolicy": {"gang": {"minCount": -1}}}]), "ns")
    assert [str(e) for e in errors] == [
        "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than or equal to 1"]


@pytest.mark.parametrize(("spec", "message"), [
    ({}, "spec: Invalid value: \"\": must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`"),
    ({"podGroupTemplates": []}, "must specify one of"),
    ({"podGroupTemplates": [{"name": "t", "schedulingPolicy": {"basic": {}}}],
      "compositePodGroupTemplates": [{"name": "c"}]}, "must specify exactly one of"),
])
def test_a_workload_spec_is_a_union_of_its_template_lists(spec: dict[str, Any], message: str) -> None:
    _, errors = read_workload_object({"kind": "Workload", "spec": spec}, "ns")
    assert errors and str(errors[0]).startswith("spec:") and message in str(errors[0])
    _, errors = read_workload_object({"kind": "Workload"}, "ns")
    assert [str(e) for e in errors] == [
        "spec: Invalid value: \"\": must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`"]


@pytest.mark.parametrize("templates", ["x", [1], [{"schedulingPolicy": {"basic": {}}}]])
def test_a_bad_workload_is_a_field_error(templates: Any) -> None:
    model, errors = read_workload_object(workload(templates), "ns")
    assert model is None and errors


# ------------------------------------------------------------------ served versions, membership, annotation
@pytest.mark.parametrize(("version", "gates", "api_version", "served"), [
    ("1.37", {}, "scheduling.k8s.io/v1beta1", False),  # beta, off by default
    ("1.37", {"GenericWorkload": True}, "scheduling.k8s.io/v1beta1", True),
    ("1.38", {"GenericWorkload": True}, "scheduling.k8s.io/v1beta1", True),
    ("1.37", {"GenericWorkload": True}, "scheduling.k8s.io/v1alpha2", False),
    # 1.36's v1alpha2 gang-scheduled only with the alpha GangScheduling gate too (not in the gate table)
    ("1.36", {"GenericWorkload": True}, "scheduling.k8s.io/v1alpha2", False),
    ("1.36", {"GenericWorkload": True}, "scheduling.k8s.io/v1beta1", False),
    ("1.35", {"GenericWorkload": True}, "scheduling.k8s.io/v1alpha1", False),  # no PodGroup object in 1.35
])
def test_the_api_is_served_per_version_and_gate(version: str, gates: dict[str, bool], api_version: str,
                                                 served: bool) -> None:
    assert scheduling_api_served(api_version, Target(version, gates)) is served


@pytest.mark.parametrize(("spec", "group"), [
    ({"schedulingGroup": {"podGroupName": "train"}}, "train"),
    ({"schedulingGroup": {}}, None),
    ({"schedulingGroup": {"podGroupName": ""}}, None),
    ({"schedulingGroup": "train"}, None),
    ({}, None),
    (None, None),
])
def test_a_pod_joins_the_group_its_scheduling_group_names(spec: Any, group: str | None) -> None:
    assert pod_group_name(spec) == group


@pytest.mark.parametrize(("value", "min_count"), [("8", 8), (" 2 ", 2), ("1", 1)])
def test_the_gang_annotation_is_read(value: str, min_count: int) -> None:
    got = gang_annotation({"annotations": {GANG_MIN_COUNT_ANNOTATION: value}})
    assert got is not None and got.min_count == min_count and not got.problem


@pytest.mark.parametrize("value", ["0", "-1", "eight", "", "2.5", 8])
def test_a_bad_gang_annotation_says_why(value: Any) -> None:
    got = gang_annotation({"annotations": {GANG_MIN_COUNT_ANNOTATION: value}})
    assert got is not None and got.min_count is None and GANG_MIN_COUNT_ANNOTATION in got.problem


def test_no_annotation_no_gang() -> None:
    assert gang_annotation({"annotations": {"other": "1"}}) is None
    assert gang_annotation(None) is None
