"""draguard's own Lint* notes: never FieldValue*, never a repeat of an API error."""

from __future__ import annotations

from .builders import claim, device, exact, policy_slice, rslice, template
from .support import check

P = "spec.devices[0].capacity[memory].requestPolicy"


def notes(obj: dict) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    result = check(obj)
    for n in result.notes:
        assert n.severity.value == "warning"
    return [(n.reason, str(n.path)) for n in result.notes]


def test_negative_and_zero_capacity_requests() -> None:
    obj = claim(
        [
            exact(capacity={"requests": {"memory": "-5Gi", "cores": "0", "bw": "1G"}}),
            {
                "name": "b",
                "firstAvailable": [
                    {"name": "s", "deviceClassName": "c", "capacity": {"requests": {"memory": "-1"}}}
                ],
            },
        ]
    )
    assert check(obj).errors == []  # Kubernetes accepts it
    assert notes(obj) == [
        ("LintNegativeCapacityRequest", "spec.devices.requests[0].exactly.capacity.requests[memory]"),
        ("LintNegativeCapacityRequest", "spec.devices.requests[0].exactly.capacity.requests[cores]"),
        (
            "LintNegativeCapacityRequest",
            "spec.devices.requests[1].firstAvailable[0].capacity.requests[memory]",
        ),
    ]
    assert notes(claim([exact(capacity={"requests": {"memory": "1Gi"}})])) == []
    tmpl = template([exact(capacity={"requests": {"memory": "-1"}})])
    assert notes(tmpl) == [
        ("LintNegativeCapacityRequest", "spec.spec.devices.requests[0].exactly.capacity.requests[memory]")
    ]


def test_fractional_step() -> None:
    obj = policy_slice({"default": "500m", "validRange": {"min": "500m", "step": "500m"}}, value="2")
    assert check(obj).errors == []
    assert notes(obj) == [("LintFractionalStep", f"{P}.validRange.step")]
    assert "behaves like 1" in check(obj).notes[0].message
    assert notes(policy_slice({"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}})) == []


def test_step_zero_is_an_error_not_a_lint() -> None:
    obj = policy_slice({"default": "1Gi", "validRange": {"min": "1Gi", "step": "0"}})
    assert [e.reason for e in check(obj).errors] == ["FieldValueInvalid"]
    assert notes(obj) == []


def test_max_off_grid_only_where_the_api_accepts() -> None:
    accepted = policy_slice(
        {"default": "500m", "validRange": {"min": "500m", "max": "3", "step": "1"}}, value="3"
    )
    assert check(accepted).errors == []
    assert notes(accepted) == [("LintMaxOffGrid", f"{P}.validRange.max")]
    assert "round max down to 2500m" in check(accepted).notes[0].message
    rejected = policy_slice(
        {"default": "1Gi", "validRange": {"min": "1Gi", "max": "80Gi", "step": "2Gi"}}, value="80Gi"
    )
    assert [e.field for e in check(rejected).errors] == [f"{P}.validRange.step"]
    assert notes(rejected) == []
    on_grid = policy_slice(
        {"default": "1Gi", "validRange": {"min": "1Gi", "max": "79Gi", "step": "2Gi"}}, value="80Gi"
    )
    assert notes(on_grid) == [] and check(on_grid).errors == []


def test_default_without_range() -> None:
    obj = policy_slice({"default": "8Gi"}, value="1Gi")
    assert check(obj).errors == []
    assert notes(obj) == [("LintDefaultWithoutRange", f"{P}.default")]
    assert notes(policy_slice({"default": "1Gi", "validValues": ["1Gi"]})) == []


def test_no_policy_lints_where_the_policy_is_an_api_error() -> None:
    obj = rslice([device(capacity={"memory": {"value": "1Gi", "requestPolicy": {"default": "1Gi"}}})])
    assert [e.reason for e in check(obj).errors] == ["FieldValueForbidden"]
    assert notes(obj) == []


def test_at_1_38_a_negative_request_is_the_api_servers_error_not_a_lint() -> None:
    """1.38 refuses negative capacity requests itself (FieldValueInvalid); the lint would only repeat
    it. A zero request is still accepted there, and still linted."""
    from draguard.k8s import parse_target
    from draguard.validation import ValidationContext

    obj = claim([exact(capacity={"requests": {"memory": "-5Gi", "cores": "0"}})])
    result = check(obj, ValidationContext(target=parse_target("1.38")))
    assert [str(e.field) for e in result.errors] == ["spec.devices.requests[0].exactly.capacity.requests[memory]"]
    assert [(n.reason, str(n.path)) for n in result.notes] == [
        ("LintNegativeCapacityRequest", "spec.devices.requests[0].exactly.capacity.requests[cores]"),
    ]
    at_137 = check(obj, ValidationContext(target=parse_target("1.37")))
    assert at_137.errors == [] and len(at_137.notes) == 2
