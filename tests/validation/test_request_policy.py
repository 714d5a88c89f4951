"""requestPolicy rules (the requestPolicy rows of app/validation/RULES.md): exact path, type and message; nearest valid accepted.

The tables are Kubernetes 1.36's answers and run with a 1.36 target; what 1.37 and 1.38 change
(default errors on ``validRange.default``, negative steps and bounds, fractional ranges) is in
``test_versions_137_138.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from draguard.k8s import Target
from draguard.validation import ValidationContext

from .builders import device, multi_device, policy_slice, rslice
from .support import check, lines

AS_136 = ValidationContext(target=Target("1.36"))

P = "spec.devices[0].capacity[memory].requestPolicy"

REJECT: list[tuple[str, dict[str, Any], list[str]]] = [
    (
        "policy-without-multi-allocation",
        rslice([device(capacity={"memory": {"value": "1Gi", "requestPolicy": {"default": "1Mi"}}})]),
        [f"{P}: Forbidden: allowMultipleAllocations must be true"],
    ),
    (
        "policy-with-multi-allocation-false",
        rslice(
            [
                device(
                    allowMultipleAllocations=False,
                    capacity={"memory": {"value": "1Gi", "requestPolicy": {"default": "1Mi"}}},
                )
            ]
        ),
        [f"{P}: Forbidden: allowMultipleAllocations must be true"],
    ),
    (
        "values-and-range",
        policy_slice({"default": "1Gi", "validValues": ["1Gi"], "validRange": {"min": "1Gi"}}),
        [
            f'{P}: Forbidden: exactly one policy can be specified, cannot specify "validValues" and '
            '"validRange" at the same time'
        ],
    ),
    (
        "values-without-default",
        policy_slice({"validValues": ["1Gi"]}),
        [f"{P}.default: Required value: required when validValues is defined"],
    ),
    (
        "values-unsorted",
        policy_slice({"default": "1Gi", "validValues": ["3Gi", "2Gi", "1Gi"]}),
        [
            f'{P}.validValues[1]: Invalid value: "2Gi": values must be sorted in ascending order',
            f'{P}.validValues[2]: Invalid value: "1Gi": values must be sorted in ascending order',
        ],
    ),
    (
        "values-too-many",
        policy_slice({"default": "1", "validValues": [str(i) for i in range(1, 12)]}, value="100"),
        [
            f"{P}.validValues: Too many: 11: must have at most 10 items",
            f'{P}.validValues: Invalid value: "1": default value is not valid according to the requestPolicy',
        ],
    ),
    (
        "option-above-capacity",
        policy_slice({"default": "1Gi", "validValues": ["1Gi", "20Gi"]}),
        [f'{P}.validValues[1]: Invalid value: "20Gi": option is larger than capacity value: 10Gi'],
    ),
    (
        "duplicate-option",
        policy_slice({"default": "1Ki", "validValues": ["1Ki", "1024"]}),
        [f'{P}.validValues[1]: Duplicate value: "1024"'],
    ),
    (
        "duplicate-after-value-rounding",
        policy_slice({"default": "100m", "validValues": ["100m", "200m"]}, value="1"),
        [f'{P}.validValues[1]: Duplicate value: "1"'],
    ),
    (
        "default-not-an-option",
        policy_slice({"default": "3Gi", "validValues": ["1Gi", "2Gi"]}),
        [f'{P}.validValues: Invalid value: "3Gi": default value is not valid according to the requestPolicy'],
    ),
    (
        "range-without-default",
        policy_slice({"validRange": {"min": "1Gi"}}),
        [f"{P}.default: Required value: required when validRange is defined"],
    ),
    (
        "range-without-min",
        policy_slice({"default": "1Gi", "validRange": {"max": "1Gi"}}),
        [f"{P}.validRange.min: Required value: required when validRange is defined"],
    ),
    (
        "min-above-capacity",
        policy_slice({"default": "20Gi", "validRange": {"min": "20Gi"}}),
        [f'{P}.validRange.min: Invalid value: "20Gi": min is larger than capacity value: 10Gi'],
    ),
    (
        "default-below-min-reported-on-min",
        policy_slice({"default": "1Gi", "validRange": {"min": "2Gi"}}),
        [f'{P}.validRange.min: Invalid value: "1Gi": default is less than min: 2Gi'],
    ),
    (
        "min-above-max",
        policy_slice({"default": "5Gi", "validRange": {"min": "5Gi", "max": "4Gi"}}),
        [
            f'{P}.validRange.max: Invalid value: "5Gi": min is larger than max: 4Gi',
            f'{P}.validRange.max: Invalid value: "5Gi": default is more than max: 4Gi',
        ],
    ),
    (
        "max-above-capacity",
        policy_slice({"default": "1Gi", "validRange": {"min": "1Gi", "max": "20Gi"}}),
        [f'{P}.validRange.max: Invalid value: "20Gi": max is larger than capacity value: 10Gi'],
    ),
    (
        "default-above-max-reported-on-max",
        policy_slice({"default": "5Gi", "validRange": {"min": "1Gi", "max": "4Gi"}}),
        [f'{P}.validRange.max: Invalid value: "5Gi": default is more than max: 4Gi'],
    ),
    (
        "one-step-above-capacity",
        policy_slice({"default": "1Gi", "validRange": {"min": "1Gi", "step": "10Gi"}}),
        [f'{P}.validRange.step: Invalid value: "10Gi": one step 11Gi is larger than capacity value: 10Gi'],
    ),
    (
        "default-and-max-off-grid",
        policy_slice({"default": "2Gi", "validRange": {"min": "1Gi", "max": "10Gi", "step": "2Gi"}}),
        [
            f'{P}.validRange.step: Invalid value: "2Gi": value is not a multiple of a given step (2Gi) from (1Gi)',
            f'{P}.validRange.step: Invalid value: "10Gi": value is not a multiple of a given step (2Gi) from (1Gi)',
        ],
    ),
    (
        "four-range-errors-in-order",
        policy_slice({"default": "2Gi", "validRange": {"min": "20Gi", "max": "1Gi"}}),
        [
            f'{P}.validRange.min: Invalid value: "20Gi": min is larger than capacity value: 10Gi',
            f'{P}.validRange.min: Invalid value: "2Gi": default is less than min: 20Gi',
            f'{P}.validRange.max: Invalid value: "20Gi": min is larger than max: 1Gi',
            f'{P}.validRange.max: Invalid value: "2Gi": default is more than max: 1Gi',
        ],
    ),
    (
        "step-zero-is-an-error-not-a-crash",
        policy_slice({"default": "1Gi", "validRange": {"min": "1Gi", "step": "0"}}),
        [f'{P}.validRange.step: Invalid value: "0": must be greater than zero'],
    ),
    (
        "error-on-second-device",
        rslice(
            [
                multi_device({"memory": {"value": "1Gi"}}),
                multi_device(
                    {"memory": {"value": "1Gi", "requestPolicy": {"validValues": ["1Gi"]}}}, name="dev-1"
                ),
            ]
        ),
        [
            "spec.devices[1].capacity[memory].requestPolicy.default: Required value: required when validValues is defined"
        ],
    ),
]

ACCEPT: list[tuple[str, dict[str, Any]]] = [
    ("multi-allocatable-with-policy", policy_slice({"default": "1Mi", "validRange": {"min": "1Mi"}})),
    ("no-policy-single-allocatable", rslice([device(capacity={"memory": {"value": "1Gi"}})])),
    ("values-sorted-with-default", policy_slice({"default": "2Gi", "validValues": ["1Gi", "2Gi", "10Gi"]})),
    (
        "values-exactly-ten",
        policy_slice({"default": "1", "validValues": [str(i) for i in range(1, 11)]}, value="100"),
    ),
    ("values-distinct-by-value", policy_slice({"default": "1Ki", "validValues": ["1000", "1Ki"]})),
    ("range-min-equals-capacity", policy_slice({"default": "10Gi", "validRange": {"min": "10Gi"}})),
    (
        "range-default-equals-max",
        policy_slice({"default": "4Gi", "validRange": {"min": "1Gi", "max": "4Gi"}}),
    ),
    (
        "range-one-step-equals-capacity",
        policy_slice({"default": "1Gi", "validRange": {"min": "1Gi", "step": "9Gi"}}),
    ),
    (
        "range-on-grid-from-min",
        policy_slice({"default": "7Gi", "validRange": {"min": "2Gi", "max": "7Gi", "step": "5Gi"}}),
    ),
    ("default-only", policy_slice({"default": "80Gi"})),
    ("empty-policy", policy_slice({})),
    (
        "negative-min-accepted",
        policy_slice({"default": "-5", "validRange": {"min": "-5", "step": "5"}}, value="10"),
    ),
    (
        "fractional-default-passes-by-value-rounding",
        policy_slice({"default": "1500m", "validRange": {"min": "500m", "step": "1"}}, value="3"),
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), REJECT, ids=[c[0] for c in REJECT])
def test_rejects_with_exact_messages(name: str, obj: dict[str, Any], expected: list[str]) -> None:
    assert lines(check(obj, AS_136)) == expected


@pytest.mark.parametrize(("name", "obj"), ACCEPT, ids=[c[0] for c in ACCEPT])
def test_nearest_valid_is_accepted(name: str, obj: dict[str, Any]) -> None:
    assert lines(check(obj, AS_136)) == []


def test_unchanged_capacity_is_not_revalidated_on_update() -> None:
    """Ratcheting: an existing bad policy does not block an unrelated update of the slice."""
    from .support import check_update

    bad = policy_slice({"validValues": ["1Gi"]})
    changed = policy_slice({"validValues": ["1Gi"]})
    changed["metadata"]["labels"] = {"a": "b"}
    assert lines(check_update(changed, bad)) == []
    new_bad = policy_slice({"validValues": ["2Gi"]})
    assert lines(check_update(new_bad, bad)) == [
        f"{P}.default: Required value: required when validValues is defined"
    ]


def test_huge_step_that_wraps_to_zero_is_an_error_not_a_crash() -> None:
    obj = policy_slice(
        {"default": "1", "validRange": {"min": "1", "step": "18446744073709551616"}}, value="1"
    )
    errs = check(obj).errors
    assert ("spec.devices[0].capacity[memory].requestPolicy.validRange.step", "FieldValueInvalid") in {
        (e.field, e.reason) for e in errs
    }
    assert any("must not be larger than 9223372036854775807" in str(e) for e in errs)
