"""Two shortcuts on every claim event, each held to what it stands for: the keys equal specs and node
selectors are shared by (:func:`draguard.inventory.claims._canonical`: one text per content, never one
text for two contents, None for what is not JSON — whichever of its two encoders, orjson or the
standard library, makes it), and the comparison that tells a re-allocation from a change of
consumers (:func:`draguard.inventory.live.same_allocation`: pydantic's equality, decided sooner)."""

from __future__ import annotations

import datetime
import math
from typing import Any

import pytest
from draguard.inventory.claims import ClaimReducer, _canonical
from draguard.inventory.live import same_allocation

SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": 2}}]}}
REORDERED = {"devices": {"requests": [{"exactly": {"count": 2, "deviceClassName": "gpu.example.com"}, "name": "gpu"}]}}


def test_one_text_per_content_whatever_the_key_order() -> None:
    assert _canonical(SPEC) == _canonical(REORDERED) is not None
    assert _canonical({"a": None, "b": [1]}) == _canonical({"b": [1], "a": None}) is not None


@pytest.mark.parametrize(("one", "other"), [
    ({"v": None}, {"v": math.nan}),  # orjson writes null for NaN
    ({"v": None}, {"v": math.inf}),
    ({"v": 10**30}, {"v": 1e30}),
    ({"v": 1}, {"v": 1.0}),
    ({"v": 1}, {"v": True}),
    ({"v": "null"}, {"v": None}),
    ({"1": 2}, {1: 2}),  # orjson refuses integer keys; the standard library writes them as text
    ({"v": 2**64}, {"v": 2**64 + 1}),
    ({"v": "é"}, {"v": "e"}),
])
def test_different_contents_never_share_a_text(one: dict[str, Any], other: dict[Any, Any]) -> None:
    assert _canonical(one) is not None and _canonical(other) is not None
    assert _canonical(one) != _canonical(other)


@pytest.mark.parametrize("value", [{"v": {1, 2}}, {"v": datetime.date(2026, 1, 1)}, {"v": b"x"}, {(1, 2): 3}])
def test_what_the_standard_library_cannot_encode_has_no_text(value: Any) -> None:
    assert _canonical(value) is None


def test_equal_specs_are_one_object_and_different_ones_are_not() -> None:
    reducer = ClaimReducer()
    one = reducer.spec("resource.k8s.io/v1", "ResourceClaim", SPEC)
    assert one is not None
    assert reducer.spec("resource.k8s.io/v1", "ResourceClaim", REORDERED) is one
    other = reducer.spec("resource.k8s.io/v1", "ResourceClaim", {**SPEC, "devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": 3}}]}})
    assert other is not None and other is not one and other.devices.requests[0].exactly.count == 3


def test_a_spec_that_is_not_json_does_not_decode() -> None:
    assert ClaimReducer().spec("resource.k8s.io/v1", "ResourceClaim", {"devices": {"requests": {1, 2}}}) is None
    assert ClaimReducer().node_selector({"nodeSelectorTerms": [{"matchFields": datetime.date(2026, 1, 1)}]}) is None


def test_equal_node_selectors_are_one_object() -> None:
    reducer = ClaimReducer()
    raw = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
    one = reducer.node_selector(raw)
    assert one is not None and reducer.node_selector({"nodeSelectorTerms": [{"matchFields": [
        {"values": ["n1"], "operator": "In", "key": "metadata.name"}]}]}) is one
    assert reducer.node_selector({"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]}) is not one


# ---------------------------------------------------------------- same_allocation
def _allocation(*results: tuple[str, str | None, str]) -> Any:
    """An allocation as the reducer makes it: (device, share, consumed memory) per result."""
    raw = {"devices": {"results": [
        {"request": "r", "driver": "gpu.example.com", "pool": "p", "device": device,
         **({"shareID": share, "consumedCapacity": {"memory": memory}} if share else {})}
        for device, share, memory in results]}}
    return ClaimReducer().allocation(raw)


@pytest.mark.parametrize("other", [
    (("gpu-1", "s1", "5Gi"),),  # moved
    (("gpu-0", "s2", "5Gi"),),  # another share of the same device
    (("gpu-0", "s1", "6Gi"),),  # same device and share, other capacity: told apart by the full comparison
    (("gpu-0", "s1", "5Gi"), ("gpu-1", None, "")),  # one result more
    (),
])
def test_a_changed_allocation_is_not_the_same(other: tuple[tuple[str, str | None, str], ...]) -> None:
    one = _allocation(("gpu-0", "s1", "5Gi"))
    assert not same_allocation(one, _allocation(*other))
    assert not same_allocation(_allocation(*other), one)
    assert not same_allocation(one, None) and not same_allocation(None, one)


def test_an_equal_allocation_is_the_same() -> None:
    assert same_allocation(_allocation(("gpu-0", "s1", "5Gi"), ("gpu-1", None, "")),
                           _allocation(("gpu-0", "s1", "5Gi"), ("gpu-1", None, "")))
    assert same_allocation(None, None)
