"""Incremental snapshots: a rebuild after a watch event decodes only what changed, and answers
exactly like a snapshot built from nothing."""

from __future__ import annotations

import copy
import sys
from pathlib import Path as FsPath
from typing import Any

from draguard.inventory import build_inventory
from draguard.inventory.build import InventoryBuilder
from draguard.k8s.field import Path
from draguard.k8s.models import ResourceClaimSpec
from draguard.satisfy import check_claim_spec

sys.path.insert(0, str(FsPath(__file__).resolve().parents[2] / "benchmarks"))
from workload import CLAIMS, make_inventory


def _as_from_api(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Objects as the API server hands them out: with a uid and a resourceVersion."""
    out = copy.deepcopy(objects)
    for i, obj in enumerate(out):
        obj["metadata"]["uid"] = f"uid-{i}"
        obj["metadata"]["resourceVersion"] = "1"
    return out


def _answers(inv: Any) -> list[Any]:
    return [check_claim_spec(ResourceClaimSpec.model_validate(c["spec"]), inv, base=Path.root("spec")) for c in CLAIMS]


def test_a_rebuild_decodes_only_the_changed_objects() -> None:
    objects = _as_from_api(make_inventory(80, seed=9))
    builder = InventoryBuilder()
    builder.build(objects)
    assert builder.decoded_objects == len(objects)
    builder.build(objects)
    assert builder.decoded_objects == 0  # nothing changed: nothing decoded
    changed = next(o for o in objects if o["kind"] == "ResourceSlice")
    changed["spec"]["devices"][0]["attributes"]["model"] = {"string": "B200"}
    changed["metadata"]["resourceVersion"] = "2"
    builder.build(objects)
    assert builder.decoded_objects == 1


def test_an_incremental_snapshot_answers_like_a_fresh_one() -> None:
    objects = _as_from_api(make_inventory(80, seed=9))
    builder = InventoryBuilder()
    builder.build(objects)
    # a watch event: one slice loses its devices' capacity, another node appears, one is deleted
    sl = next(o for o in objects if o["kind"] == "ResourceSlice" and o["spec"]["devices"][0].get("capacity"))
    for dev in sl["spec"]["devices"]:
        dev["capacity"]["memory"]["value"] = "4Gi"
    sl["metadata"]["resourceVersion"] = "7"
    objects = [o for o in objects if o["metadata"]["name"] != "node-000003-gpu"]
    incremental = builder.build(objects)
    fresh = build_inventory(copy.deepcopy(objects))
    assert [(d.name, d.pool, d.profile, d.bare_profile) for d in incremental.devices] == [
        (d.name, d.pool, d.profile, d.bare_profile) for d in fresh.devices
    ]
    assert [g.nodes for g in incremental.groups] == [g.nodes for g in fresh.groups]
    assert _answers(incremental) == _answers(fresh)


def test_objects_without_resource_versions_are_always_decoded() -> None:
    objects = make_inventory(16, seed=2)
    builder = InventoryBuilder()
    builder.build(objects)
    builder.build(objects)
    assert builder.decoded_objects == len(objects)


def test_devices_alike_share_their_parts_and_keep_no_model() -> None:
    """Memory (issue #11): equal bodies are decoded into one capacity map, one taint tuple and one
    counter map, attribute names are one string object, and no record holds a pydantic model."""
    inv = build_inventory(make_inventory(16, seed=2))
    by_body: dict[int, Any] = {}
    for dev in inv.devices:
        first = by_body.setdefault(dev.bare_profile, dev)
        assert dev.capacity is first.capacity and dev.taints is first.taints and dev.counters is first.counters
        for name in dev.attributes:
            assert next(n for n in first.attributes if n == name) is name if name in first.attributes else True
    assert len(by_body) < len(inv.devices) / 4
    assert not hasattr(inv.devices[0], "device")


def test_the_builder_remembers_only_what_the_latest_snapshot_uses() -> None:
    """Under churn (every build a new capacity on one slice) the builder forgets the old bodies:
    what it keeps follows the inventory, not its history."""
    objects = _as_from_api(make_inventory(40, seed=3))
    builder = InventoryBuilder()
    sl = next(o for o in objects if o["kind"] == "ResourceSlice" and o["spec"]["devices"][0].get("capacity"))
    remembered: tuple[int, int] | None = None
    for version in range(2, 30):
        for dev in sl["spec"]["devices"]:
            dev["capacity"]["memory"]["value"] = f"{version}Gi"
        sl["metadata"]["resourceVersion"] = str(version)
        builder.build(objects)
        remembered = remembered or (len(builder._decoded), len(builder._parts.bodies))
    assert (len(builder._decoded), len(builder._parts.bodies)) == remembered


def test_cel_devices_are_built_only_for_the_devices_selectors_run_on() -> None:
    """Memory (issue #11): a snapshot builds no CEL device up front; checking the claim mix builds
    them for one device per profile, not for every device (each has its own ``uuid``)."""
    inv = build_inventory(make_inventory(80, seed=9))
    assert all(d._cel is None for d in inv.devices)
    _answers(inv)
    built = sum(d._cel is not None for d in inv.devices)
    assert 0 < built < len(inv.devices) / 4


def test_the_error_known_up_front_is_the_one_the_cel_device_gets() -> None:
    from draguard.cel import device_error, make_device

    cases: list[dict[str, tuple[str | None, object]]] = [
        {"model": ("string", "a100"), "driverVersion": ("version", "1.2.3")},
        {"model": ("string", "a100"), "driverVersion": ("version", "1.2")},
        {"a": ("version", "x"), "b": (None, None)},
        {"b": (None, None), "a": ("version", "x")},
        {},
    ]
    for attrs in cases:
        assert device_error(attrs) == make_device("d.example.com", False, attrs, {}).error
    assert device_error(cases[1]) is not None and device_error(cases[0]) is None


def _snapshot(inv: Any) -> list[Any]:
    return [(d.name, d.pool, d.slice_name, d.profile, d.bare_profile, d.attributes, d.capacity) for d in inv.devices]


def _decoded_models(objects: list[dict[str, Any]]) -> list[Any]:
    from draguard.k8s import structural_pass

    return [structural_pass(o["kind"], o).model for o in objects]


def test_adopted_objects_are_not_decoded_again_and_build_the_same_snapshot() -> None:
    """The lint hands the builder the slices and classes it has just validated (``adopt``)."""
    objects = make_inventory(40, seed=4)
    adoptable = [o for o in objects if o["kind"] in ("ResourceSlice", "DeviceClass")]
    builder = InventoryBuilder()
    for obj, model in zip(adoptable, _decoded_models(adoptable), strict=True):
        builder.adopt(obj, model)
    adopted = builder.build(objects)
    assert builder.decoded_objects == len(objects) - len(adoptable)  # the Nodes only
    assert _snapshot(adopted) == _snapshot(build_inventory(copy.deepcopy(objects)))
    assert sorted(adopted.classes) == sorted(build_inventory(objects).classes)
    assert builder._adopted == {}  # only for the next build: then forgotten
    builder.build(objects)
    assert builder.decoded_objects == len(objects)


def test_an_adopted_model_is_used_only_for_that_very_object() -> None:
    """Matched by identity: an equal copy, or an object adopted under a name a later one took,
    is decoded from its own content (a model must never stand for another object)."""
    objects = make_inventory(20, seed=4)
    sl = next(o for o in objects if o["kind"] == "ResourceSlice")
    model = _decoded_models([sl])[0]
    twin = copy.deepcopy(sl)
    twin["spec"]["devices"][0]["attributes"]["model"] = {"string": "B200"}  # same name, other content
    builder = InventoryBuilder()
    builder.adopt(sl, model)
    inv = builder.build([twin if o is sl else o for o in objects])
    assert builder.decoded_objects == len(objects)
    assert any(d.attributes.get("gpu.example.com/model") == ("string", "B200") for d in inv.devices)
    later = copy.deepcopy(sl)
    builder.adopt(sl, model)
    builder.adopt(later, _decoded_models([later])[0])  # replaces the first: one model per kind and name
    assert len(builder._adopted) == 1
    builder.build(objects)
    assert builder.decoded_objects == len(objects)  # ``sl`` itself is no longer adopted
