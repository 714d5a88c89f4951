"""ResourceClaim / ResourceClaimTemplate rules: spec, status, admin access, CEL selectors."""

from __future__ import annotations

from typing import Any

import pytest
from draguard.validation import ValidationContext

from .builders import claim, exact, template
from .support import check, lines, pairs

R0 = "spec.devices.requests[0]"
UUID_A = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"


def sub(name: str = "s0", **fields: Any) -> dict[str, Any]:
    return {"name": name, "deviceClassName": "gpu.example.com", **fields}


def result(**fields: Any) -> dict[str, Any]:
    return {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0", **fields}


def with_status(obj: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    return {**obj, "status": status}


CASES: list[tuple[str, dict[str, Any], set[tuple[str, str]], dict[str, Any]]] = [
    ("name-invalid", claim(name="C1"), {("metadata.name", "FieldValueInvalid")}, claim(name="c1")),
    ("name-required", claim(name=""), {("metadata.name", "FieldValueRequired")}, claim(name="c" * 253)),
    (
        "namespace-invalid",
        claim(namespace="Team.A"),
        {("metadata.namespace", "FieldValueInvalid")},
        claim(namespace="team-a"),
    ),
    (
        "labels-invalid",
        {**claim(), "metadata": {"name": "c1", "labels": {"bad key": "v"}, "annotations": {"/x": "y"}}},
        {("metadata.labels", "FieldValueInvalid"), ("metadata.annotations", "FieldValueInvalid")},
        {
            **claim(),
            "metadata": {"name": "c1", "labels": {"example.com/key": "v"}, "annotations": {"x": "y"}},
        },
    ),
    (
        "too-many-requests",
        claim([exact(f"r{i}") for i in range(33)]),
        {("spec.devices.requests", "FieldValueTooMany")},
        claim([exact(f"r{i}") for i in range(32)]),
    ),
    ("request-name", claim([exact("GPU")]), {(f"{R0}.name", "FieldValueInvalid")}, claim([exact("gpu")])),
    (
        "duplicate-request",
        claim([exact("a"), exact("a")]),
        {("spec.devices.requests[1]", "FieldValueDuplicate")},
        claim([exact("a"), exact("b")]),
    ),
    (
        "neither-exactly-nor-first-available",
        claim([{"name": "gpu"}]),
        {(R0, "FieldValueRequired")},
        claim([exact()]),
    ),
    (
        "both-exactly-and-first-available",
        claim([{**exact(), "firstAvailable": [sub()]}]),
        {(R0, "FieldValueInvalid")},
        claim([{"name": "gpu", "firstAvailable": [sub()]}]),
    ),
    (
        "device-class-required",
        claim([exact(deviceClassName="")]),
        {(f"{R0}.exactly.deviceClassName", "FieldValueRequired")},
        claim([exact()]),
    ),
    (
        "device-class-invalid",
        claim([exact(deviceClassName="GPU")]),
        {(f"{R0}.exactly.deviceClassName", "FieldValueInvalid")},
        claim([exact(deviceClassName="gpu")]),
    ),
    (
        "count-negative",
        claim([exact(count=-1)]),
        {(f"{R0}.exactly.count", "FieldValueInvalid")},
        claim([exact(count=0)]),
    ),
    (
        "count-with-all",
        claim([exact(allocationMode="All", count=2)]),
        {(f"{R0}.exactly.count", "FieldValueInvalid")},
        claim([exact(allocationMode="All")]),
    ),
    (
        "allocation-mode",
        claim([exact(allocationMode="Some")]),
        {(f"{R0}.exactly.allocationMode", "FieldValueNotSupported")},
        claim([exact(allocationMode="ExactCount", count=2)]),
    ),
    (
        "too-many-selectors",
        claim([exact(selectors=[{"cel": {"expression": "true"}}] * 33)]),
        {(f"{R0}.exactly.selectors", "FieldValueTooMany")},
        claim([exact(selectors=[{"cel": {"expression": "true"}}] * 32)]),
    ),
    (
        "selector-without-cel",
        claim([exact(selectors=[{}])]),
        {(f"{R0}.exactly.selectors[0].cel", "FieldValueRequired")},
        claim([exact(selectors=[{"cel": {"expression": "true"}}])]),
    ),
    (
        "cel-too-long",
        claim([exact(selectors=[{"cel": {"expression": "true || " + "x" * 10240}}])]),
        {(f"{R0}.exactly.selectors[0].cel.expression", "FieldValueTooLong")},
        claim([exact(selectors=[{"cel": {"expression": "true"}}])]),
    ),
    (
        "tolerations",
        claim(
            [
                exact(
                    tolerations=[
                        {"key": "bad key", "operator": "Exists"},
                        {"key": "k", "operator": "Exists", "value": "v"},
                        {"key": "k", "value": "-v"},
                        {"key": "k", "operator": "Near"},
                        {"key": "k", "operator": "Exists", "effect": "Evict"},
                    ]
                )
            ]
        ),
        {
            (f"{R0}.exactly.tolerations[0].key", "FieldValueInvalid"),
            (f"{R0}.exactly.tolerations[1].value", "FieldValueInvalid"),
            (f"{R0}.exactly.tolerations[2].value", "FieldValueInvalid"),
            (f"{R0}.exactly.tolerations[3].operator", "FieldValueNotSupported"),
            (f"{R0}.exactly.tolerations[4].effect", "FieldValueNotSupported"),
        },
        claim(
            [
                exact(
                    tolerations=[{"operator": "Exists"}]
                    + [{"key": f"k{i}", "value": "v", "effect": "None"} for i in range(17)]
                )
            ]
        ),
    ),
    (
        "first-available-too-many",
        claim([{"name": "gpu", "firstAvailable": [sub(f"s{i}") for i in range(9)]}]),
        {(f"{R0}.firstAvailable", "FieldValueTooMany")},
        claim([{"name": "gpu", "firstAvailable": [sub(f"s{i}") for i in range(8)]}]),
    ),
    (
        "first-available-fields",
        claim(
            [
                {
                    "name": "gpu",
                    "firstAvailable": [
                        sub("!@#$%^", deviceClassName="", capacity={"requests": {"memory": "1Gi"}}),
                        sub("b"),
                        sub("b", count=-1),
                    ],
                }
            ]
        ),
        {
            (f"{R0}.firstAvailable[0].name", "FieldValueInvalid"),
            (f"{R0}.firstAvailable[0].deviceClassName", "FieldValueRequired"),
            (f"{R0}.firstAvailable[2].count", "FieldValueInvalid"),
            (f"{R0}.firstAvailable[2]", "FieldValueDuplicate"),
        },
        claim(
            [
                {
                    "name": "gpu",
                    "firstAvailable": [
                        sub("a", capacity={"requests": {"memory": "1Gi"}}),
                        sub("b"),
                        sub("c", allocationMode="All"),
                    ],
                }
            ]
        ),
    ),
    (
        "constraint-neither-attribute",
        claim(constraints=[{}]),
        {("spec.devices.constraints[0]", "FieldValueRequired")},
        claim(constraints=[{"distinctAttribute": "gpu.example.com/index"}]),
    ),
    (
        "constraint-match-attribute-no-domain",
        claim(constraints=[{"matchAttribute": "model"}]),
        {("spec.devices.constraints[0].matchAttribute", "FieldValueInvalid")},
        claim(
            constraints=[{"matchAttribute": "gpu.example.com/model", "distinctAttribute": "not validated"}]
        ),
    ),
    (
        "constraint-requests",
        claim(
            [exact("a"), {"name": "b", "firstAvailable": [sub("x")]}],
            constraints=[{"requests": ["a", "a", "c", "b/y", "a/b/c", "B"], "matchAttribute": "d.com/m"}],
        ),
        {
            ("spec.devices.constraints[0].requests[1]", "FieldValueDuplicate"),
            ("spec.devices.constraints[0].requests[2]", "FieldValueInvalid"),
            ("spec.devices.constraints[0].requests[3]", "FieldValueInvalid"),
            ("spec.devices.constraints[0].requests[4]", "FieldValueInvalid"),
            ("spec.devices.constraints[0].requests[5]", "FieldValueInvalid"),
        },
        claim(
            [exact("a"), {"name": "b", "firstAvailable": [sub("x")]}],
            constraints=[{"requests": ["a", "b", "b/x"], "matchAttribute": "d.com/m"}],
        ),
    ),
    (
        "too-many-constraints",
        claim(constraints=[{"matchAttribute": "d.com/m"}] * 33),
        {("spec.devices.constraints", "FieldValueTooMany")},
        claim(constraints=[{"matchAttribute": "d.com/m"}] * 32),
    ),
    (
        "config",
        claim(
            config=[
                {},
                {"requests": ["nope"], "opaque": {"driver": "Bad_Driver", "parameters": [1]}},
                {"opaque": {"driver": "d.com"}},
            ]
        ),
        {
            ("spec.devices.config[0].opaque", "FieldValueRequired"),
            ("spec.devices.config[1].requests[0]", "FieldValueInvalid"),
            ("spec.devices.config[1].opaque.driver", "FieldValueInvalid"),
            ("spec.devices.config[1].opaque.parameters", "FieldValueInvalid"),
            ("spec.devices.config[2].opaque.parameters", "FieldValueRequired"),
        },
        claim(config=[{"requests": ["gpu"], "opaque": {"driver": "d.com", "parameters": {"a": [1]}}}]),
    ),
    (
        "config-too-large",
        claim(config=[{"opaque": {"driver": "d.com", "parameters": {"p": "x" * 10240}}}]),
        {("spec.devices.config[0].opaque.parameters", "FieldValueTooLong")},
        claim(config=[{"opaque": {"driver": "d.com", "parameters": {"p": "x" * 10230}}}]),
    ),
    (
        "too-many-configs",
        claim(config=[{"opaque": {"driver": "d.com", "parameters": {}}}] * 33),
        {("spec.devices.config", "FieldValueTooMany")},
        claim(config=[{"opaque": {"driver": "d.com", "parameters": {}}}] * 32),
    ),
    (
        "capacity-requests-never-validated",
        claim([exact(capacity={"requests": {"not a/valid/name": "-5Gi"}})]),
        set(),
        claim([exact(capacity={"requests": {"memory": "5Gi"}})]),
    ),
    (
        "status-share-ids",
        with_status(
            claim(),
            {
                "allocation": {
                    "devices": {"results": [result(shareID="a"), result(shareID="A" + UUID_A[1:])]}
                },
                "devices": [
                    {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0", "shareID": "a"},
                ],
            },
        ),
        {
            ("status.devices[0].shareID", "FieldValueInvalid"),
            ("status.allocation.devices.results[0].shareID", "FieldValueInvalid"),
            ("status.allocation.devices.results[1].shareID", "FieldValueInvalid"),
        },
        with_status(
            claim(),
            {
                "allocation": {
                    "devices": {"results": [result(shareID=UUID_A, consumedCapacity={"x y": "-1"})]}
                },
                "devices": [
                    {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0", "shareID": UUID_A}
                ],
            },
        ),
    ),
    (
        "status-device-not-allocated",
        with_status(
            claim(),
            {
                "allocation": {"devices": {"results": [result(shareID=UUID_A)]}},
                "devices": [
                    {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
                    {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
                ],
            },
        ),
        {
            ("status.devices[0]", "FieldValueInvalid"),
            ("status.devices[1]", "FieldValueInvalid"),
            ("status.devices[1]", "FieldValueDuplicate"),
        },
        with_status(
            claim(),
            {
                "allocation": {"devices": {"results": [result(shareID=UUID_A)]}},
                "devices": [
                    {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0", "shareID": UUID_A}
                ],
            },
        ),
    ),
    (
        "status-allocation-fields",
        with_status(
            claim(),
            {
                "reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}, {"uid": "1"}],
                "allocation": {
                    "devices": {
                        "results": [result(request="other", driver="", pool="", device="Dev")],
                        "config": [
                            {"source": "", "opaque": {"driver": "d.com", "parameters": {}}},
                            {"source": "FromPod", "opaque": {"driver": "d.com", "parameters": {}}},
                        ],
                    }
                },
            },
        ),
        {
            ("status.reservedFor[1].resource", "FieldValueRequired"),
            ("status.reservedFor[1].name", "FieldValueRequired"),
            ("status.reservedFor[1]", "FieldValueDuplicate"),
            ("status.allocation.devices.results[0].request", "FieldValueInvalid"),
            ("status.allocation.devices.results[0].driver", "FieldValueRequired"),
            ("status.allocation.devices.results[0].pool", "FieldValueRequired"),
            ("status.allocation.devices.results[0].device", "FieldValueInvalid"),
            ("status.allocation.devices.config[0].source", "FieldValueRequired"),
            ("status.allocation.devices.config[1].source", "FieldValueNotSupported"),
        },
        with_status(
            claim(),
            {
                "reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}],
                "allocation": {
                    "devices": {
                        "results": [result()],
                        "config": [{"source": "FromClaim", "opaque": {"driver": "d.com", "parameters": {}}}],
                    }
                },
            },
        ),
    ),
    (
        "status-reserved-without-allocation",
        with_status(claim(), {"reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}]}),
        {("status.reservedFor", "FieldValueForbidden")},
        with_status(claim(), {}),
    ),
    (
        "template-paths-and-metadata",
        {
            **template([exact(allocationMode="All", count=2)], constraints=[{}]),
            "spec": {
                **template([exact(allocationMode="All", count=2)], constraints=[{}])["spec"],
                "metadata": {"name": "x", "labels": {"a": "b"}},
            },
        },
        {
            ("spec.metadata.name", "FieldValueForbidden"),
            ("spec.spec.devices.requests[0].exactly.count", "FieldValueInvalid"),
            ("spec.spec.devices.constraints[0]", "FieldValueRequired"),
        },
        {
            **template(),
            "spec": {**template()["spec"], "metadata": {"labels": {"a": "b"}, "annotations": {"c": "d"}}},
        },
    ),
]


@pytest.mark.parametrize(("name", "bad", "expected", "good"), CASES, ids=[c[0] for c in CASES])
def test_rule(name: str, bad: dict[str, Any], expected: set[tuple[str, str]], good: dict[str, Any]) -> None:
    assert pairs(check(bad)) == expected, lines(check(bad))
    assert lines(check(good)) == []


def test_exact_messages() -> None:
    assert lines(check(claim([{**exact(), "firstAvailable": [sub()]}]))) == [
        f"{R0}: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"
    ]
    assert lines(check(claim([{"name": "gpu"}]))) == [
        f"{R0}: Required value: exactly one of `exactly` or `firstAvailable` is required"
    ]
    assert lines(
        check(
            claim(
                [exact(allocationMode="All", count=2), exact("b", count=-1), exact("c", allocationMode="x")]
            )
        )
    ) == [
        f"{R0}.exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'",
        "spec.devices.requests[1].exactly.count: Invalid value: -1: must be greater than zero",
        'spec.devices.requests[2].exactly.allocationMode: Unsupported value: "x": supported values: "All", "ExactCount"',
    ]
    assert lines(check(claim(constraints=[{}]))) == [
        'spec.devices.constraints[0]: Required value: exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set'
    ]
    assert lines(check(claim(config=[{"opaque": {"driver": "d.com", "parameters": "x"}}]))) == [
        'spec.devices.config[0].opaque.parameters: Invalid value: "<value omitted>": must be a valid JSON object'
    ]
    assert lines(check(claim(constraints=[{"requests": ["nope"], "matchAttribute": "d.com/m"}]))) == [
        'spec.devices.constraints[0].requests[0]: Invalid value: "nope": must be the name of a request in the claim '
        "or the name of a request and a subrequest separated by '/'"
    ]
    obj = with_status(
        claim(),
        {
            "allocation": {"devices": {"results": [result(shareID=UUID_A)]}},
            "devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}],
        },
    )
    assert lines(check(obj)) == [
        'status.devices[0]: Invalid value: {"Driver":"gpu.example.com","Pool":"node-1","Device":"gpu-0","ShareID":""}: '
        "must be an allocated device in the claim"
    ]


ADMIN = claim([exact(adminAccess=True)], namespace="ops")
ADMIN_MSG = "admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace"


def test_admin_access_forbidden_without_namespace_label() -> None:
    ctx = ValidationContext(namespace_labels={"ops": {"team": "ops"}})
    assert lines(check(ADMIN, ctx)) == [f"{R0}.adminAccess: Forbidden: {ADMIN_MSG}"]
    tmpl = template([exact(adminAccess=True)])
    tmpl["metadata"]["namespace"] = "ops"
    assert lines(check(tmpl, ctx)) == [f"{R0}.adminAccess: Forbidden: {ADMIN_MSG}"]


def test_admin_access_allowed_with_label() -> None:
    ctx = ValidationContext(namespace_labels={"ops": {"resource.kubernetes.io/admin-access": "true"}})
    result_ = check(ADMIN, ctx)
    assert result_.errors == [] and result_.notes == []


def test_admin_access_unknown_namespace_is_a_warning() -> None:
    for ctx in (ValidationContext(), ValidationContext(namespace_labels={"other": {}})):
        result_ = check(ADMIN, ctx)
        assert result_.errors == []
        assert [(n.reason, str(n.path)) for n in result_.notes] == [
            ("AdminAccessUnverified", f"{R0}.adminAccess")
        ]


def test_admin_access_skipped_in_admission() -> None:
    result_ = check(ADMIN, ValidationContext(namespace_labels={"ops": {}}, admission=True))
    assert result_.errors == [] and result_.notes == []


def test_admin_access_on_allocation_result() -> None:
    obj = with_status(
        claim(namespace="ops"), {"allocation": {"devices": {"results": [result(adminAccess=True)]}}}
    )
    ctx = ValidationContext(namespace_labels={"ops": {}})
    assert pairs(check(obj, ctx)) == {
        ("status.allocation.devices.results[0].adminAccess", "FieldValueForbidden")
    }


@pytest.mark.parametrize(
    ("expression", "reason", "detail_start"),
    [
        (
            "gpu.model == 1",
            "FieldValueInvalid",
            "compilation failed: ERROR: <input>:1:1: undeclared reference to 'gpu'",
        ),
        ("device.driver", "FieldValueInvalid", "must evaluate to bool or the unknown type, not string"),
        (
            "[1,2,3,4,5,6,7,8,9,10].all(x, [1,2,3,4,5,6,7,8,9,10].all(y, [1,2,3,4,5,6,7,8,9,10].all(z, "
            "[1,2,3,4,5,6,7,8,9,10].all(w, [1,2,3,4,5,6,7,8,9,10].all(v, "
            'int(device.attributes["gpu.example.com"].index) < x*y*z*w*v)))))',
            "FieldValueForbidden",
            "too complex, exceeds cost limit",
        ),
    ],
)
def test_cel_selector_errors(expression: str, reason: str, detail_start: str) -> None:
    obj = claim(
        [
            exact(
                selectors=[
                    {"cel": {"expression": 'device.driver == "a"'}},
                    {"cel": {"expression": expression}},
                ]
            )
        ]
    )
    (err,) = check(obj).errors
    assert (err.field, err.reason) == (f"{R0}.exactly.selectors[1].cel.expression", reason)
    assert err.detail.startswith(detail_start)
    good = claim([exact(selectors=[{"cel": {"expression": 'device.driver == "gpu.example.com"'}}])])
    assert check(good).errors == []


def test_cel_in_first_available_and_template() -> None:
    bad = claim(
        [{"name": "gpu", "firstAvailable": [sub(selectors=[{"cel": {"expression": "device.driver =="}}])]}]
    )
    assert pairs(check(bad)) == {(f"{R0}.firstAvailable[0].selectors[0].cel.expression", "FieldValueInvalid")}
    tmpl = template([exact(selectors=[{"cel": {"expression": "device.driver"}}])])
    assert pairs(check(tmpl)) == {
        ("spec.spec.devices.requests[0].exactly.selectors[0].cel.expression", "FieldValueInvalid")
    }
