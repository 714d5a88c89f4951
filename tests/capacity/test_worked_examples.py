"""Worked examples of request-policy rounding, one test row each (1.36: whole-unit range rounding)."""

from __future__ import annotations

import pytest
from dra_builders import cap
from draguard.capacity import evaluate, fits_on_top, round_up_range
from draguard.k8s.models import CapacityRequestPolicyRange, DeviceCapacity
from draguard.k8s.quantity import Quantity


def _fit(capacity: dict[str, object], asked: str | None, name: str = "mem") -> tuple[str | None, str | None]:
    caps = {name: DeviceCapacity.model_validate(capacity)}
    fit = evaluate({} if asked is None else {name: Quantity.parse(asked)}, "d.example.com", caps)
    return (str(fit.consumed[name]) if fit.ok else None), (fit.miss.kind if fit.miss else None)


EX1 = cap("40Gi", "5Gi", min="5Gi", step="5Gi")
EX2 = cap("40Gi", "5Gi", min="5Gi", max="20Gi", step="5Gi")
EX3 = cap("40Gi", "10Gi", min="5Gi", max="20Gi")
EX4 = cap("40Gi", "10Gi", values=["10Gi", "20Gi", "40Gi"])
EX5 = cap("40Gi")


@pytest.mark.parametrize(
    ("policy", "asked", "consumed", "miss"),
    [
        (EX1, None, "5Gi", None), (EX1, "0", "5Gi", None), (EX1, "1Gi", "5Gi", None), (EX1, "5Gi", "5Gi", None),
        (EX1, "7Gi", "10Gi", None), (EX1, "40Gi", "40Gi", None), (EX1, "41Gi", None, "exceeds"),
        (EX2, None, "5Gi", None), (EX2, "1Gi", "5Gi", None), (EX2, "7Gi", "10Gi", None), (EX2, "16Gi", "20Gi", None),
        (EX2, "20Gi", "20Gi", None), (EX2, "21Gi", None, "max"), (EX2, "40Gi", None, "max"),
        (EX3, "7Gi", "7Gi", None), (EX3, "21Gi", None, "max"),
        (EX4, None, "10Gi", None), (EX4, "0", "10Gi", None), (EX4, "1Gi", "10Gi", None), (EX4, "10Gi", "10Gi", None),
        (EX4, "15Gi", "20Gi", None), (EX4, "40Gi", "40Gi", None), (EX4, "41Gi", None, "values"),
        (EX5, None, "40Gi", None), (EX5, "0", "0", None), (EX5, "7Gi", "7Gi", None), (EX5, "41Gi", None, "exceeds"),
    ],
)
def test_worked_example_rows(policy: dict[str, object], asked: str | None, consumed: str | None, miss: str | None) -> None:
    got_consumed, got_miss = _fit(policy, asked)
    assert got_miss == miss
    if consumed is not None:
        assert got_consumed is not None and Quantity.parse(got_consumed) == Quantity.parse(consumed)


def test_example6_dedicated_device_filters_by_value_and_name() -> None:
    assert _fit({"value": "40Gi"}, "40Gi") == ("40Gi", None)
    assert _fit({"value": "40Gi"}, "41Gi")[1] == "exceeds"
    caps = {"mem": DeviceCapacity.model_validate({"value": "40Gi"})}
    assert evaluate({"bandwidth": Quantity.parse("1")}, "d", caps).miss is not None


def test_example1_shares_mix_up_to_the_value() -> None:
    caps = {"mem": DeviceCapacity.model_validate(EX1)}
    big = evaluate({"mem": Quantity.parse("7Gi")}, "d", caps)
    small = evaluate({}, "d", caps)
    used = {"mem": big.consumed["mem"]}
    for _ in range(6):
        assert fits_on_top(small, caps, used)
        used = {"mem": used["mem"] + small.consumed["mem"]}
    assert not fits_on_top(small, caps, used)  # a seventh omitted request does not fit


def test_range_rounding_uses_whole_units_and_grid_from_min() -> None:
    rng = CapacityRequestPolicyRange.model_validate({"min": "500m", "step": "500m"})
    # Value(): 1.2 -> 2, min 0.5 -> 1, step 0.5 -> 1: 1 + 1*ceil((2-1)/1) = 2, not 1.5
    assert round_up_range(Quantity.parse("1200m"), rng) == Quantity.parse("2")
    grid = CapacityRequestPolicyRange.model_validate({"min": "1", "step": "2"})
    assert round_up_range(Quantity.parse("2"), grid) == Quantity.parse("3")


def test_capacity_names_match_exact_keys_only_in_1_36() -> None:
    caps = {"gpu.example.com/cores": DeviceCapacity.model_validate({"value": "96"})}
    assert evaluate({"cores": Quantity.parse("1")}, "gpu.example.com", caps).miss is not None
    plain = {"bandwidth": DeviceCapacity.model_validate({"value": "10G"})}
    assert evaluate({"gpu.example.com/bandwidth": Quantity.parse("1")}, "gpu.example.com", plain).miss is not None
    assert evaluate({"bandwidth": Quantity.parse("1")}, "gpu.example.com", plain).ok


def test_omitted_capacity_without_policy_consumes_whole_value_and_blocks_sharing() -> None:
    caps = {"mem": DeviceCapacity.model_validate(EX5)}
    first = evaluate({}, "d", caps)
    assert not fits_on_top(first, caps, dict(first.consumed))


def test_miss_messages_name_the_rounding() -> None:
    caps = {"memory": DeviceCapacity.model_validate(EX1)}
    miss = evaluate({"memory": Quantity.parse("41Gi")}, "d", caps).miss
    assert miss is not None
    assert miss.describe() == "45Gi after rounding 41Gi up to the 5Gi step for memory exceeds the device's 40Gi"
