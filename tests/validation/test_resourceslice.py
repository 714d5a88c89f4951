"""ResourceSlice rules other than requestPolicy: exact path and type (messages where fixed by upstream)."""

from __future__ import annotations

from typing import Any

import pytest

from .builders import device, rslice, with_
from .support import check, lines, pairs

DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
NODE_SEL = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
SELECTOR = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}
TAINT = {"key": "k", "effect": "NoSchedule"}
COUNTERS = [{"counterSet": "cs", "counters": {"mem": {"value": "1Gi"}}}]


def many(n: int, **fields: Any) -> list[dict[str, Any]]:
    return [device(f"dev-{i}", **fields) for i in range(n)]


def attrs(n: int) -> dict[str, Any]:
    return {f"a{i}": {"int": i} for i in range(n)}


# (id, bad object, expected (path, reason) set, nearest valid object)
CASES: list[tuple[str, dict[str, Any], set[tuple[str, str]], dict[str, Any]]] = [
    (
        "name-required",
        rslice([device()], name=""),
        {("metadata.name", "FieldValueRequired")},
        rslice([device()]),
    ),
    (
        "name-invalid",
        rslice([device()], name="S1"),
        {("metadata.name", "FieldValueInvalid")},
        rslice([device()], name="s1"),
    ),
    (
        "driver-required",
        rslice([device()], driver=""),
        {("spec.driver", "FieldValueRequired")},  # Required alone: a 1.36 API server stops there
        rslice([device()], driver="d.example.com"),
    ),
    (
        "driver-too-long",
        rslice([device()], driver="d" * 60 + ".example.com"),
        {("spec.driver", "FieldValueTooLong")},
        rslice([device()], driver="d" * 51 + ".example.com"),
    ),
    (
        "driver-invalid",
        rslice([device()], driver="bad_driver"),
        {("spec.driver", "FieldValueInvalid")},
        rslice([device()], driver="Bad.Driver"),
    ),
    (
        "pool-name-required",
        rslice([device()], pool={"name": "", "resourceSliceCount": 1}),
        {("spec.pool.name", "FieldValueRequired")},
        rslice([device()], pool={"name": "p", "resourceSliceCount": 1}),
    ),
    (
        "pool-slice-count",
        rslice([device()], pool={"name": "p", "resourceSliceCount": 0}),
        {("spec.pool.resourceSliceCount", "FieldValueInvalid")},
        rslice([device()], pool={"name": "p", "resourceSliceCount": 1}),
    ),
    (
        "pool-generation",
        rslice([device()], pool={"name": "p", "generation": -1, "resourceSliceCount": 1}),
        {("spec.pool.generation", "FieldValueInvalid")},
        rslice([device()], pool={"name": "p", "generation": 0, "resourceSliceCount": 1}),
    ),
    (
        "no-node-selection",
        rslice([device()], nodeName=None),
        {("spec", "FieldValueRequired")},
        rslice([device()]),
    ),
    (
        "two-node-selections",
        rslice([device()], allNodes=True),
        {("spec", "FieldValueInvalid")},
        rslice([device()], nodeName=None, allNodes=True),
    ),
    (
        "empty-node-name",
        rslice([device()], nodeName=""),
        {("spec.nodeName", "FieldValueInvalid"), ("spec", "FieldValueRequired")},
        rslice([device()], nodeName="n"),
    ),
    (
        "bad-node-name",
        rslice([device()], nodeName="Node_1"),
        {("spec.nodeName", "FieldValueInvalid")},
        rslice([device()], nodeName="node-1"),
    ),
    (
        "all-nodes-false",
        rslice([device()], allNodes=False),
        {("spec.allNodes", "FieldValueInvalid")},
        rslice([device()]),
    ),
    (
        "per-device-false",
        rslice([device()], perDeviceNodeSelection=False),
        {("spec.perDeviceNodeSelection", "FieldValueInvalid")},
        rslice([device()]),
    ),
    (
        "node-selector-two-terms",
        rslice(
            [device()], nodeName=None, nodeSelector={"nodeSelectorTerms": SELECTOR["nodeSelectorTerms"] * 2}
        ),
        {("spec.nodeSelector.nodeSelectorTerms", "FieldValueInvalid")},
        rslice([device()], nodeName=None, nodeSelector=SELECTOR),
    ),
    (
        "node-selector-no-terms",
        rslice([device()], nodeName=None, nodeSelector={"nodeSelectorTerms": []}),
        {
            ("spec.nodeSelector.nodeSelectorTerms", "FieldValueRequired"),
            ("spec.nodeSelector.nodeSelectorTerms", "FieldValueInvalid"),
        },
        rslice([device()], nodeName=None, nodeSelector=SELECTOR),
    ),
    (
        "node-selector-bad-requirement",
        rslice(
            [device()],
            nodeName=None,
            nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In"}]}]},
        ),
        {("spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values", "FieldValueRequired")},
        rslice([device()], nodeName=None, nodeSelector=SELECTOR),
    ),
    (
        "node-selector-bad-operator-and-field",
        rslice(
            [device()],
            nodeName=None,
            nodeSelector={
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}],
                        "matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["x"]}],
                    }
                ]
            },
        ),
        {
            ("spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator", "FieldValueInvalid"),
            ("spec.nodeSelector.nodeSelectorTerms[0].matchFields[0].key", "FieldValueInvalid"),
        },
        rslice([device()], nodeName=None, nodeSelector=SELECTOR),
    ),
    (
        "counters-and-devices",
        rslice([device()], sharedCounters=[{"name": "cs", "counters": {"mem": {"value": "1Gi"}}}]),
        {("spec", "FieldValueInvalid")},
        rslice(None, sharedCounters=[{"name": "cs", "counters": {"mem": {"value": "1Gi"}}}]),
    ),
    ("too-many-devices", rslice(many(129)), {("spec.devices", "FieldValueTooMany")}, rslice(many(128))),
    (
        "too-many-tainted-devices",
        rslice(many(65, taints=[TAINT])),
        {("spec.devices", "FieldValueTooMany")},
        rslice(many(64, taints=[TAINT])),
    ),
    (
        "too-many-counter-devices",
        rslice(many(65, consumesCounters=COUNTERS)),
        {("spec.devices", "FieldValueTooMany")},
        rslice(many(64, consumesCounters=COUNTERS)),
    ),
    (
        "duplicate-device",
        rslice([device("a"), device("a")]),
        {("spec.devices[1]", "FieldValueDuplicate")},
        rslice([device("a"), device("b")]),
    ),
    (
        "device-name",
        rslice([device("Dev_0")]),
        {("spec.devices[0].name", "FieldValueInvalid")},
        rslice([device("dev-0")]),
    ),
    (
        "too-many-attributes-and-capacities",
        rslice([device(attributes=attrs(32), capacity={"memory": {"value": "1"}})]),
        {("spec.devices[0]", "FieldValueInvalid")},
        rslice([device(attributes=attrs(31), capacity={"memory": {"value": "1"}})]),
    ),
    (
        "attribute-key-reported-at-map",
        rslice([device(attributes={"1model": {"string": "x"}})]),
        {("spec.devices[0].attributes", "FieldValueInvalid")},
        rslice([device(attributes={"model1": {"string": "x"}})]),
    ),
    (
        "capacity-key-reported-at-map",
        rslice([device(capacity={"memory-size": {"value": "1"}})]),
        {("spec.devices[0].capacity", "FieldValueInvalid")},
        rslice([device(capacity={"memory_size": {"value": "1"}})]),
    ),
    (
        "attribute-without-value",
        rslice([device(attributes={"a": {}})]),
        {("spec.devices[0].attributes[a]", "FieldValueInvalid")},
        rslice([device(attributes={"a": {"bool": True}})]),
    ),
    (
        "attribute-two-values",
        rslice([device(attributes={"a": {"bool": True, "int": 1}})]),
        {("spec.devices[0].attributes[a]", "FieldValueInvalid")},
        rslice([device(attributes={"a": {"int": 1}})]),
    ),
    (
        "attribute-string-too-long",
        rslice([device(attributes={"a": {"string": "x" * 65}})]),
        {("spec.devices[0].attributes[a].string", "FieldValueTooLong")},
        rslice([device(attributes={"a": {"string": "x" * 64}})]),
    ),
    (
        "attribute-version-not-semver",
        rslice([device(attributes={"a": {"version": "1.0"}})]),
        {("spec.devices[0].attributes[a].version", "FieldValueInvalid")},
        rslice([device(attributes={"a": {"version": "1.0.0-rc.1+build.5"}})]),
    ),
    (
        "too-many-taints",
        rslice([device(taints=[{"key": f"k{i}", "effect": "NoSchedule"} for i in range(17)])]),
        {("spec.devices[0].taints", "FieldValueTooMany")},
        rslice([device(taints=[{"key": f"k{i}", "effect": "NoSchedule"} for i in range(16)])]),
    ),
    (
        "taint-fields",
        rslice(
            [
                device(
                    taints=[{"key": "bad key", "value": "-v", "effect": ""}, {"key": "k", "effect": "Evict"}]
                )
            ]
        ),
        {
            ("spec.devices[0].taints[0].key", "FieldValueInvalid"),
            ("spec.devices[0].taints[0].value", "FieldValueInvalid"),
            ("spec.devices[0].taints[0].effect", "FieldValueRequired"),
            ("spec.devices[0].taints[1].effect", "FieldValueNotSupported"),
        },
        rslice(
            [
                device(
                    taints=[
                        {"key": "k", "value": "v", "effect": "None"},
                        {"key": "k2", "effect": "NoExecute"},
                    ]
                )
            ]
        ),
    ),
    (
        "consumes-counters",
        rslice(
            [
                device(
                    consumesCounters=[
                        {"counterSet": "", "counters": {}},
                        {"counterSet": "cs", "counters": {"Bad_Counter": {"value": "1"}}},
                        {"counterSet": "cs2", "counters": {"c": {"value": "1"}}},
                    ]
                )
            ]
        ),
        {("spec.devices[0].consumesCounters", "FieldValueTooMany")},
        rslice([device(consumesCounters=COUNTERS)]),
    ),
    (
        "consumes-counters-fields",
        rslice(
            [
                device(
                    consumesCounters=[
                        {"counterSet": "", "counters": {}},
                        {"counterSet": "", "counters": {"Bad_Counter": {"value": "1"}}},
                    ]
                )
            ]
        ),
        {
            ("spec.devices[0].consumesCounters[0].counterSet", "FieldValueRequired"),
            ("spec.devices[0].consumesCounters[0].counters", "FieldValueRequired"),
            ("spec.devices[0].consumesCounters[1].counterSet", "FieldValueRequired"),
            ("spec.devices[0].consumesCounters[1].counters", "FieldValueInvalid"),
            ("spec.devices[0].consumesCounters[1]", "FieldValueDuplicate"),
        },
        rslice(
            [device(consumesCounters=[*COUNTERS, {"counterSet": "cs2", "counters": {"c": {"value": "1"}}}])]
        ),
    ),
    (
        "shared-counters",
        rslice(
            None,
            sharedCounters=[
                {"name": "", "counters": {}},
                {"name": "x", "counters": {f"c{i}": {"value": "1"} for i in range(33)}},
            ],
        ),
        {
            ("spec.sharedCounters[0].name", "FieldValueRequired"),
            ("spec.sharedCounters[0].counters", "FieldValueRequired"),
            ("spec.sharedCounters[1].counters", "FieldValueTooMany"),
        },
        rslice(
            None, sharedCounters=[{"name": "cs", "counters": {f"c{i}": {"value": "1"} for i in range(32)}}]
        ),
    ),
    (
        "too-many-counter-sets",
        rslice(
            None, sharedCounters=[{"name": f"cs{i}", "counters": {"c": {"value": "1"}}} for i in range(9)]
        ),
        {("spec.sharedCounters", "FieldValueTooMany")},
        rslice(
            None, sharedCounters=[{"name": f"cs{i}", "counters": {"c": {"value": "1"}}} for i in range(8)]
        ),
    ),
    (
        "per-device-node-selection-missing",
        rslice([device()], nodeName=None, perDeviceNodeSelection=True),
        {("spec.devices[0]", "FieldValueRequired")},
        rslice([device(nodeName="node-1")], nodeName=None, perDeviceNodeSelection=True),
    ),
    (
        "per-device-node-selection-two",
        rslice([device(nodeName="node-1", allNodes=True)], nodeName=None, perDeviceNodeSelection=True),
        {("spec.devices[0]", "FieldValueInvalid")},
        rslice([device(allNodes=True)], nodeName=None, perDeviceNodeSelection=True),
    ),
    (
        "device-node-fields-without-per-device",
        rslice([device(nodeName="node-1")]),
        {("spec.devices[0]", "FieldValueInvalid")},
        rslice([device()]),
    ),
    (
        "binding-conditions",
        rslice([device(bindingConditions=["ready", "ready"], bindingFailureConditions=["ready"])]),
        {
            ("spec.devices[0].bindingConditions[1]", "FieldValueDuplicate"),
            ("spec.devices[0].bindingFailureConditions[0]", "FieldValueInvalid"),
        },
        rslice([device(bindingConditions=["ready"], bindingFailureConditions=["failed"])]),
    ),
    (
        "binding-conditions-need-failure-conditions",
        rslice([device(bindingConditions=["ready"])]),
        {("spec.devices[0].bindingFailureConditions", "FieldValueInvalid")},
        rslice([device(bindingConditions=["ready"], bindingFailureConditions=["failed"])]),
    ),
    (
        "too-many-binding-conditions",
        rslice([device(bindingConditions=[f"c{i}" for i in range(5)], bindingFailureConditions=["f"])]),
        {("spec.devices[0].bindingConditions", "FieldValueTooMany")},
        rslice([device(bindingConditions=[f"c{i}" for i in range(4)], bindingFailureConditions=["f"])]),
    ),
]


@pytest.mark.parametrize(("name", "bad", "expected", "good"), CASES, ids=[c[0] for c in CASES])
def test_rule(name: str, bad: dict[str, Any], expected: set[tuple[str, str]], good: dict[str, Any]) -> None:
    assert pairs(check(bad)) == expected, lines(check(bad))
    assert lines(check(good)) == []


def test_messages_of_slice_level_rules() -> None:
    assert lines(check(rslice([device()], nodeName=None))) == [f"spec: Required value: {NODE_SEL}"]
    assert lines(check(rslice([device()], allNodes=True))) == [
        f'spec: Invalid value: "{{`nodeName`, `allNodes`}}": {NODE_SEL}, but multiple fields are set'
    ]
    assert lines(check(rslice([device("Dev")]))) == [
        f'spec.devices[0].name: Invalid value: "Dev": {DNS_LABEL}'
    ]
    assert lines(check(rslice(many(65, taints=[TAINT])))) == [
        "spec.devices: Too many: 65: must have at most 64 items"
    ]
    bad = rslice([device(attributes=attrs(32), capacity={"memory": {"value": "1"}})])
    assert lines(check(bad)) == [
        "spec.devices[0]: Invalid value: 33: the total number of attributes and capacities must not exceed 32"
    ]
    assert lines(
        check(rslice([device()], sharedCounters=[{"name": "cs", "counters": {"m": {"value": "1"}}}]))
    ) == ['spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed']


def test_long_map_keys_are_truncated_in_paths() -> None:
    key = "d" * 60 + ".example.com/" + "x" * 50
    obj = rslice([device(attributes={key: {}})])
    err = next(e for e in check(obj).errors if e.field.startswith("spec.devices[0].attributes["))
    assert err.field == "spec.devices[0].attributes[" + key[:47] + "..." + key[-46:] + "]"


def test_uppercase_driver_is_a_warning_not_an_error() -> None:
    result = check(rslice([device()], driver="Val.Example.com"))
    assert result.errors == []
    assert [n.reason for n in result.notes] == ["APIServerWarning"]


def test_with_helper_changes_one_field() -> None:
    base = rslice([device()])
    assert with_(base, "spec.devices.0.name", "x")["spec"]["devices"][0]["name"] == "x"
    assert base["spec"]["devices"][0]["name"] == "dev-0"
