"""DeviceClass rules."""

from __future__ import annotations

from typing import Any

import pytest

from .builders import dclass
from .support import check, check_update, lines, pairs

OPAQUE = {"opaque": {"driver": "gpu.example.com", "parameters": {"mode": "fast"}}}

CASES: list[tuple[str, dict[str, Any], set[tuple[str, str]], dict[str, Any]]] = [
    ("name-invalid", dclass("GPU"), {("metadata.name", "FieldValueInvalid")}, dclass("gpu")),
    ("name-required", dclass(""), {("metadata.name", "FieldValueRequired")}, dclass("gpu")),
    (
        # a 1.36 API server generates the name first and validates only that for DeviceClasses
        "generate-name-invalid",
        {**dclass(""), "metadata": {"generateName": "GPU-"}},
        {("metadata.name", "FieldValueInvalid")},
        {**dclass(""), "metadata": {"generateName": "gpu-"}},
    ),
    (
        "too-many-selectors",
        dclass(selectors=[{"cel": {"expression": "true"}}] * 33),
        {("spec.selectors", "FieldValueTooMany")},
        dclass(selectors=[{"cel": {"expression": "true"}}] * 32),
    ),
    (
        "selector-without-cel",
        dclass(selectors=[{}]),
        {("spec.selectors[0].cel", "FieldValueRequired")},
        dclass(selectors=[]),
    ),
    (
        "too-many-configs",
        dclass(config=[OPAQUE] * 33),
        {("spec.config", "FieldValueTooMany")},
        dclass(config=[OPAQUE] * 32),
    ),
    (
        "config-without-opaque",
        dclass(config=[{}]),
        {("spec.config[0].opaque", "FieldValueRequired")},
        dclass(config=[OPAQUE]),
    ),
    (
        "extended-resource-name",
        dclass(extendedResourceName="gpu"),
        {("spec.extendedResourceName", "FieldValueInvalid")},
        dclass(extendedResourceName="example.com/gpu"),
    ),
    (
        "extended-resource-name-kubernetes-io",
        dclass(extendedResourceName="kubernetes.io/gpu"),
        {("spec.extendedResourceName", "FieldValueInvalid")},
        dclass(extendedResourceName="deviceclass.example.com/gpu"),
    ),
]


@pytest.mark.parametrize(("name", "bad", "expected", "good"), CASES, ids=[c[0] for c in CASES])
def test_rule(name: str, bad: dict[str, Any], expected: set[tuple[str, str]], good: dict[str, Any]) -> None:
    assert pairs(check(bad)) == expected, lines(check(bad))
    assert lines(check(good)) == []


def test_extended_resource_message() -> None:
    assert lines(check(dclass(extendedResourceName="gpu"))) == [
        'spec.extendedResourceName: Invalid value: "gpu": must be a valid extended resource name'
    ]


def test_namespace_on_cluster_scoped_kind_is_ignored() -> None:
    obj = dclass()
    obj["metadata"]["namespace"] = "Not_A_Label"
    assert check(obj).errors == []


def test_unchanged_oversized_config_is_grandfathered_on_update() -> None:
    big = dclass(config=[{"opaque": {"driver": "d.com", "parameters": {"p": "x" * 10240}}}])
    assert pairs(check(big)) == {("spec.config[0].opaque.parameters", "FieldValueTooLong")}
    relabelled = {**big, "metadata": {"name": "gpu.example.com", "labels": {"a": "b"}}}
    assert check_update(relabelled, big).errors == []


def test_cel_in_class_and_stored_selectors() -> None:
    bad = dclass(selectors=[{"cel": {"expression": "device.driver"}}])
    assert pairs(check(bad)) == {("spec.selectors[0].cel.expression", "FieldValueInvalid")}
    # an unchanged selector list counts as stored and is not recompiled
    assert (
        check_update({**bad, "metadata": {"name": "gpu.example.com", "labels": {"a": "b"}}}, bad).errors == []
    )
