"""Strict decoding: unknown fields, wrong types and bad quantities, each with its path."""

from __future__ import annotations

import random
from typing import Any

from draguard.k8s.features import parse_target
from draguard.k8s.field import ErrorType
from draguard.k8s.gated import has_disabled_fields
from draguard.k8s.models import ResourceClaim, ResourceSlice
from draguard.k8s.structure import apply_defaults, structural_pass


def claim(exactly: dict[str, Any], api_version: str = "resource.k8s.io/v1") -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "ResourceClaim",
        "metadata": {"name": "c"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}},
    }


def test_valid_claim_decodes_with_defaults() -> None:
    st = structural_pass("ResourceClaim", claim({"deviceClassName": "gpu", "tolerations": [{"key": "k"}]}))
    assert isinstance(st.model, ResourceClaim)
    exactly = st.model.spec.devices.requests[0].exactly
    assert exactly is not None
    assert (exactly.allocation_mode, exactly.count) == ("ExactCount", 1)
    assert exactly.tolerations[0].operator == "Equal"


def test_all_mode_keeps_count_zero() -> None:
    raw = claim({"deviceClassName": "gpu", "allocationMode": "All"})
    out = apply_defaults("ResourceClaim", raw)
    assert out["spec"]["devices"]["requests"][0]["exactly"].get("count") is None
    assert "allocationMode" not in raw["spec"]["devices"]["requests"][0]["exactly"] or True


def test_defaults_do_not_touch_the_input() -> None:
    raw = claim({"deviceClassName": "gpu"})
    apply_defaults("ResourceClaim", raw)
    assert "count" not in raw["spec"]["devices"]["requests"][0]["exactly"]


def test_unknown_field_is_reported_and_rest_still_decodes() -> None:
    st = structural_pass("ResourceClaim", claim({"deviceClassName": "gpu", "capacty": {}}))
    assert [str(p) for p in st.unknown_fields] == ["spec.devices.requests[0].exactly.capacty"]
    assert isinstance(st.model, ResourceClaim)


def test_wrong_type_and_bad_quantity_have_paths() -> None:
    raw = claim({"deviceClassName": "gpu", "count": "two", "capacity": {"requests": {"memory": "10Gx"}}})
    st = structural_pass("ResourceClaim", raw)
    assert st.model is None
    by_path = {str(e.path): e for e in st.type_errors}
    assert by_path["spec.devices.requests[0].exactly.count"].type is ErrorType.TYPE_INVALID
    bad = by_path["spec.devices.requests[0].exactly.capacity.requests[memory]"]
    assert bad.type is ErrorType.INVALID
    assert "quantities must match the regular expression" in bad.detail


def test_numbers_are_quantities() -> None:
    raw = {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {"driver": "d", "devices": [{"name": "a", "capacity": {"c": {"value": 40}}}]},
    }
    st = structural_pass("ResourceSlice", raw)
    assert isinstance(st.model, ResourceSlice)
    value = st.model.spec.devices[0].capacity["c"].value
    assert value is not None and str(value) == "40"


def test_other_api_versions_are_refused_with_the_supported_list() -> None:
    st = structural_pass("ResourceClaim", claim({"deviceClassName": "gpu"}, "resource.k8s.io/v1alpha3"))
    assert st.model is None
    assert st.api_version_error is not None
    assert "resource.k8s.io/v1, resource.k8s.io/v1beta2" in st.api_version_error


def test_strings_are_not_coerced_from_numbers() -> None:
    st = structural_pass("ResourceClaim", claim({"deviceClassName": 5}))
    assert [str(e.path) for e in st.type_errors] == ["spec.devices.requests[0].exactly.deviceClassName"]



def slice_with(device: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "n",
                 "devices": [{"name": "d0"}, device]},
    }


def test_slice_is_decoded_without_touching_the_input_when_a_gated_field_is_dropped() -> None:
    raw = slice_with({"name": "d1", "attributes": {"model": {"string": "a"}, "tags": {"strings": ["x"]}}})
    st = structural_pass("ResourceSlice", raw, target=parse_target("1.36"))
    assert [(str(d.path), d.gate) for d in st.dropped] == [
        ("spec.devices[1].attributes[tags].strings", "DRAListTypeAttributes")
    ]
    assert raw["spec"]["devices"][1]["attributes"]["tags"] == {"strings": ["x"]}
    assert isinstance(st.model, ResourceSlice)


def test_slice_is_decoded_without_touching_the_input_when_an_unknown_field_is_removed() -> None:
    raw = slice_with({"name": "d1", "bogus": 1})
    st = structural_pass("ResourceSlice", raw)
    assert [str(p) for p in st.unknown_fields] == ["spec.devices[1].bogus"]
    assert raw["spec"]["devices"][1]["bogus"] == 1
    assert isinstance(st.model, ResourceSlice)


def test_slice_keeps_a_gated_field_whose_gate_is_on() -> None:
    raw = slice_with({"name": "d1", "attributes": {"tags": {"strings": ["x"]}}})
    target = parse_target("1.36", "DRAListTypeAttributes=true")
    st = structural_pass("ResourceSlice", raw, target=target)
    assert st.dropped == []
    assert isinstance(st.model, ResourceSlice)


def test_has_disabled_fields_finds_a_gated_field_and_leaves_the_object_alone() -> None:
    raw = slice_with({"name": "d1", "nodeAllocatableResourceMappings": {"cpu": {}}})
    assert has_disabled_fields("ResourceSlice", raw, parse_target("1.36"))
    assert "nodeAllocatableResourceMappings" in raw["spec"]["devices"][1]


def test_has_disabled_fields_is_false_without_gated_fields_or_with_the_gates_on() -> None:
    plain = slice_with({"name": "d1", "attributes": {"model": {"string": "a"}}})
    assert not has_disabled_fields("ResourceSlice", plain, parse_target("1.36"))
    mapped = slice_with({"name": "d1", "nodeAllocatableResourceMappings": {"cpu": {}}})
    assert not has_disabled_fields("ResourceSlice", mapped, parse_target("1.36", "DRANodeAllocatableResources=true"))


def test_dropped_fields_come_in_document_order_per_pattern() -> None:
    raw = slice_with({"name": "d1", "attributes": {"a": {"ints": [1]}, "b": {"bools": [True]}}})
    raw["spec"]["devices"][0]["attributes"] = {"c": {"ints": [2]}}
    st = structural_pass("ResourceSlice", raw, target=parse_target("1.36"))
    assert [str(d.path) for d in st.dropped] == [
        "spec.devices[1].attributes[b].bools",
        "spec.devices[0].attributes[c].ints",
        "spec.devices[1].attributes[a].ints",
    ]


def test_the_one_walk_for_any_disabled_field_answers_what_a_walk_per_group_answers() -> None:
    """has_disabled_fields looks for every off group at once and stops at the first field: the same
    answer as one walk per group, on objects with a gated field at each place and with none."""
    import itertools

    from draguard.k8s import gated

    checked = 0
    for target, kind in itertools.product([parse_target(v) for v in ("1.34", "1.35", "1.36")],
                                          ("ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceClass")):
        groups = [g for g, _ in gated._disabled_groups(kind, target, None)]
        checked += len(groups)
        for group in groups:
            for pattern in group.patterns:
                obj = _with_field(pattern)
                per_group = any(any(gated._find(obj, g)) for g in groups)
                assert per_group and gated.has_disabled_fields(kind, obj, target), (kind, pattern)
        plain = {"spec": {"devices": [{"name": "d", "attributes": {"a": {"int": 1}}}], "requests": []}}
        assert not gated.has_disabled_fields(kind, plain, target)
    assert checked >= 8  # the 1.34 target has claim and class groups off too


def _with_field(pattern: tuple[str, ...]) -> dict[str, object]:
    """The smallest object in which ``pattern`` names a present field (``[]``: one item, ``{}``: one value)."""
    root: dict[str, object] = {}
    node: object = root
    for i, head in enumerate(pattern):
        last = i == len(pattern) - 1
        nxt: object = "x" if last else ([] if pattern[i + 1] == "[]" else {})
        if head == "[]":
            assert isinstance(node, list)
            node.append(nxt if not last else {})
            node = node[-1]
        elif head == "{}":
            assert isinstance(node, dict)
            node["k"] = nxt
            node = node["k"]
        else:
            assert isinstance(node, dict)
            node[head] = nxt
            node = node[head]
    return root


def _random_shape(rng: random.Random, patterns: list[tuple[str, ...]], depth: int = 0) -> object:
    """A random object over the heads of ``patterns``: the fields they name, others, lists and
    maps where they expect them or not, scalars and nulls where they walk on (partial paths too)."""
    if depth > 6 or rng.random() < 0.15:
        return rng.choice(["x", 1, None, True, [], {}])
    heads = {p[depth] for p in patterns if len(p) > depth}
    if "[]" in heads and rng.random() < 0.8:
        rest = [p for p in patterns if len(p) > depth and p[depth] == "[]"]
        return [_random_shape(rng, [p[:depth] + p[depth + 1:] for p in rest], depth) for _ in range(rng.randint(0, 3))]
    out: dict[str, object] = {}
    for head in heads - {"[]"}:
        if rng.random() < 0.4:
            continue
        rest = [p for p in patterns if len(p) > depth and p[depth] == head]
        if head == "{}":
            for n in range(rng.randint(0, 3)):
                out[f"k{n}"] = _random_shape(rng, [p[:depth] + p[depth + 1:] for p in rest], depth)
        else:
            out[head] = _random_shape(rng, rest, depth + 1)
    for n in range(rng.randint(0, 2)):
        out[f"other{n}"] = rng.choice(["x", 1, None, [{"a": 1}], {"bools": [True]}])
    return out


def test_the_one_walk_agrees_with_a_walk_per_group_on_random_objects() -> None:
    """has_disabled_fields and one ``_find`` per off group, on random objects shaped by the
    groups' own patterns (both answers occur)."""
    from draguard.k8s import gated

    rng = random.Random(36)
    answers: set[bool] = set()
    for version in ("1.34", "1.35", "1.36"):
        target = parse_target(version)
        for kind in ("ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceClass"):
            groups = [g for g, _ in gated._disabled_groups(kind, target, None)]
            patterns = [p for g in groups for p in g.patterns]
            if not patterns:
                continue
            for _ in range(150):
                shaped_by = rng.sample(patterns, rng.randint(1, len(patterns)))  # often one pattern alone
                obj = _random_shape(rng, shaped_by)
                if not isinstance(obj, dict):
                    continue
                expected = any(any(gated._find(obj, g)) for g in groups)
                assert gated.has_disabled_fields(kind, obj, target) is expected, (kind, version, obj)
                answers.add(expected)
    assert answers == {True, False}
