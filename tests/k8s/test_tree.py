"""JSON trees without recursion: same answers as the standard library, at any depth."""

from __future__ import annotations

import json
import sys
from typing import Any

from draguard.k8s.models import OpaqueDeviceConfiguration
from draguard.k8s.quantity import parse_quantity
from draguard.k8s.tree import compact_json, deep_copy, depth, equal, json_length
from hypothesis import given, settings
from hypothesis import strategies as st

DEEP = 10_000  # Kubernetes' own nesting limit for JSON
assert sys.getrecursionlimit() < DEEP

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
trees = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                     max_leaves=30)


def nested(levels: int) -> Any:
    """``{"a": [{"a": [ ... ]}]}`` built without recursion."""
    root: dict[str, Any] = {}
    node = root
    for _ in range(levels // 2):
        child: dict[str, Any] = {}
        node["a"] = [child]
        node = child
    return root


@settings(max_examples=300, deadline=None)
@given(trees)
def test_same_as_the_standard_library(value: Any) -> None:
    assert compact_json(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    assert json_length(value) == len(json.dumps(value, separators=(",", ":"), ensure_ascii=False)
                                      .encode("utf-8", "surrogatepass"))
    copied = deep_copy(value)
    assert copied == value and equal(copied, value)


@settings(max_examples=300, deadline=None)
@given(trees, trees)
def test_equal_is_python_equality(a: Any, b: Any) -> None:
    assert equal(a, b) == (a == b)


def test_copy_is_independent() -> None:
    original = {"a": [{"b": 1}], "c": "x"}
    copied = deep_copy(original)
    copied["a"][0]["b"] = 2
    assert original == {"a": [{"b": 1}], "c": "x"}


def test_depth() -> None:
    assert depth(1) == 0
    assert depth({}) == 1
    assert depth([[1], {"a": {"b": []}}]) == 4


def test_deep_trees_are_handled_where_the_standard_library_gives_up() -> None:
    value = nested(DEEP)
    other = nested(DEEP)
    assert depth(value) == DEEP + 1
    assert equal(value, other)
    copied = deep_copy(value)
    assert equal(copied, value) and copied is not value
    text = compact_json(value)
    assert text.startswith('{"a":[{"a":[') and text.count("[") == DEEP // 2
    assert json_length(value) == len(text)
    other_leaf = nested(DEEP)
    node = other_leaf
    while node:
        node = node["a"][0]
    node["a"] = 1
    assert not equal(value, other_leaf)


def test_models_compare_field_by_field() -> None:
    a = OpaqueDeviceConfiguration.model_validate({"driver": "d", "parameters": nested(DEEP)})
    b = OpaqueDeviceConfiguration.model_validate({"driver": "d", "parameters": nested(DEEP)})
    c = OpaqueDeviceConfiguration.model_validate({"driver": "e", "parameters": nested(DEEP)})
    assert equal(a, b) and not equal(a, c) and not equal(a, {"driver": "d"})


def test_scalars_keep_their_own_equality_and_default() -> None:
    assert equal(parse_quantity("1Gi"), parse_quantity("1024Mi")) == (parse_quantity("1Gi") == parse_quantity("1024Mi"))
    assert compact_json({"q": parse_quantity("1Gi")}, default=str) == '{"q":"1Gi"}'
    assert compact_json({1: True, "s": "\ud800"}) == json.dumps({1: True, "s": "\ud800"}, separators=(",", ":"),
                                                                   ensure_ascii=False)
