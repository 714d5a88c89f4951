"""The plain-device fast path of ResourceSlice validation (``_plainly_valid``) never hides an error.

It answers "certainly valid" without building field paths; the long way must then find nothing.
Random devices mix valid and invalid names, keys, values, capacities and the fields the fast path
does not handle; both ways are compared on each, and the fast path must take most plain devices
(else it is dead code and the test says so)."""

from __future__ import annotations

import random
from typing import Any

from draguard.k8s import Path, memo_tables
from draguard.k8s.models import Device
from draguard.validation import resourceslice
from draguard.validation.resourceslice import _plainly_valid, validate_resource_slice_spec

from .builders import rslice
from .support import check, lines

GOOD_NAMES = ["gpu-0", "d", "a" * 63]
BAD_NAMES = ["a" * 64, "Gpu-0", "gpu.0", "-x", ""]
GOOD_KEYS = ["model", "gpu.example.com/model", "x" * 32, "a/b/c"]  # 1.36 accepts two slashes
BAD_KEYS = ["x" * 33, "Bad-Key", "/x", "a.example.com/", "9lives"]
GOOD_VALUES: list[dict[str, Any]] = [
    {"string": "h100"}, {"string": "x" * 64}, {"string": "é" * 32}, {"int": 3}, {"bool": True},
    {"version": "1.2.3"}, {"version": "1.2.3-rc.1+b"},
]
BAD_VALUES: list[dict[str, Any]] = [
    {"string": "x" * 65}, {"string": "é" * 33}, {"version": "1.2"}, {"version": "v" + "1" * 70 + ".2.3"},
    {}, {"int": 1, "string": "a"}, {"strings": ["a"]}, {"ints": []},
]
GOOD_CAPACITIES: list[dict[str, Any]] = [
    {"value": "40Gi"},
    {"value": "40Gi", "requestPolicy": {"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}}},
]
BAD_CAPACITIES: list[dict[str, Any]] = [  # invalid when shared; any policy is invalid when not
    {"value": "1Gi", "requestPolicy": {"default": "3Gi", "validValues": ["3Gi"]}},
    {"value": "8", "requestPolicy": {"default": "1", "validValues": ["1", "2", "1"]}},
]
OTHER_FIELDS: list[dict[str, Any]] = [  # valid or not, the fast path leaves them to the long way
    {"taints": [{"key": "k", "effect": "NoSchedule"}]}, {"bindingConditions": ["ready"]},
    {"bindingFailureConditions": ["failed"]}, {"nodeName": "n1"}, {"allNodes": False},
    {"consumesCounters": [{"counterSet": "cs", "counters": {"mem": {"value": "1Gi"}}}]},
]


def _device(rng: random.Random) -> dict[str, Any]:
    """A valid plain device, then (most of the time) exactly one change that may break it, so no
    error hides behind another."""
    raw: dict[str, Any] = {
        "name": rng.choice(GOOD_NAMES),
        "attributes": {rng.choice(GOOD_KEYS): rng.choice(GOOD_VALUES) for _ in range(rng.randrange(0, 5))},
    }
    if rng.random() < 0.5:
        raw["allowMultipleAllocations"] = True
    if rng.random() < 0.5:
        raw["capacity"] = {rng.choice(GOOD_KEYS[:2]): rng.choice(GOOD_CAPACITIES[:1])}
        if raw.get("allowMultipleAllocations"):
            raw["capacity"][rng.choice(GOOD_KEYS[2:])] = rng.choice(GOOD_CAPACITIES)
    change = rng.randrange(8)
    if change == 0:
        raw["name"] = rng.choice(BAD_NAMES)
    elif change == 1:
        raw["attributes"][rng.choice(BAD_KEYS)] = rng.choice(GOOD_VALUES)
    elif change == 2:
        raw["attributes"][rng.choice(GOOD_KEYS)] = rng.choice(BAD_VALUES)
    elif change == 3:
        raw.setdefault("capacity", {})[rng.choice(GOOD_KEYS)] = rng.choice(BAD_CAPACITIES + GOOD_CAPACITIES)
    elif change == 4:
        raw.setdefault("capacity", {})[rng.choice(BAD_KEYS)] = rng.choice(GOOD_CAPACITIES[:1])
    elif change == 5:
        raw.update(rng.choice(OTHER_FIELDS))
    elif change == 6:
        raw["attributes"].update({f"a{i}": {"int": i} for i in range(rng.choice((28, 31, 32, 33)))})
    return raw


def test_the_fast_path_never_calls_a_device_with_errors_valid() -> None:
    rng = random.Random(20261202)
    fast = plain = bad = 0
    for _ in range(3000):
        for table in memo_tables().values():  # a remembered verdict must not decide the case alone
            if rng.random() < 0.1:
                table.clear()
        device = Device.model_validate(_device(rng))
        per_device = rng.random() < 0.05
        long_way = _long_way(device, per_device)
        if _plainly_valid(device, per_device):
            fast += 1
            assert long_way == [], (device, long_way)
        if not long_way:
            plain += 1
        else:
            bad += 1
    assert bad > 1000, bad  # the cases do exercise errors
    assert fast > 0.5 * plain, (fast, plain)  # the fast path takes most valid devices


def _long_way(device: Device, per_device: bool) -> list[str]:
    """The full rules of a new device, every path built."""
    return [str(e) for e in resourceslice._validate_device_rules(device, None, Path.root("d"), per_device)]


def test_a_slice_of_plain_devices_is_valid_and_a_bad_one_among_them_named() -> None:
    good = {"name": "gpu-0", "attributes": {"model": {"string": "h100"}}, "capacity": {"memory": {"value": "80Gi"}}}
    bad = {"name": "gpu-1", "attributes": {"model": {"string": "x" * 65}}, "capacity": {"memory": {"value": "80Gi"}}}
    assert lines(check(rslice([good, {**good, "name": "gpu-2"}]))) == []
    got = lines(check(rslice([good, bad])))
    assert len(got) == 1 and got[0].startswith("spec.devices[1].attributes[model].string: Too long")


def test_the_spec_validator_takes_the_fast_path_for_plain_devices(monkeypatch: Any) -> None:
    calls: list[str] = []
    real = resourceslice._validate_device_rules
    monkeypatch.setattr(resourceslice, "_validate_device_rules",
                        lambda d, o, p, s, **kw: calls.append(d.name) or real(d, o, p, s, **kw))
    raw = rslice([{"name": "gpu-0", "attributes": {"model": {"string": "h100"}}},
                  {"name": "gpu-1", "attributes": {"model": {"string": "x" * 65}}}])
    from draguard.k8s.models import ResourceSliceSpec

    spec = ResourceSliceSpec.model_validate(raw["spec"])
    errs = validate_resource_slice_spec(spec, None, Path.root("spec"))
    assert calls == ["gpu-1"] and len(errs) == 1
