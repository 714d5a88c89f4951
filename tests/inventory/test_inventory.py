"""Inventory snapshot: pools, generations, completeness, validity, reachability, grouping."""

from __future__ import annotations

from dra_builders import dclass, device, node, rslice
from draguard.inventory import build_inventory


def test_only_newest_generation_counts() -> None:
    inv = build_inventory([rslice("n1", [device("old")], generation=1), rslice("n1", [device("new")], generation=2)])
    assert [d.name for d in inv.devices] == ["new"]
    assert inv.pool_count == 1 and inv.device_count == 1


def test_completeness_by_resource_slice_count() -> None:
    inv = build_inventory([rslice("n1", [device("a")], count=2, name="s1")])
    assert not inv.pools[("gpu.example.com", "n1")].complete
    inv = build_inventory([rslice("n1", [device("a")], count=2, name="s1"), rslice("n1", [device("b")], count=2, name="s2")])
    assert inv.pools[("gpu.example.com", "n1")].usable


def test_duplicate_device_names_make_the_pool_invalid() -> None:
    inv = build_inventory([rslice("n1", [device("a")], count=2, name="s1"), rslice("n1", [device("a")], count=2, name="s2")])
    pool = inv.pools[("gpu.example.com", "n1")]
    assert pool.invalid == "device a is listed twice" and not pool.usable


def test_undecodable_objects_and_other_kinds_are_skipped() -> None:
    broken = rslice("n1", [device("a")])
    broken["spec"]["pool"]["generation"] = "x"
    inv = build_inventory([broken, {"kind": "ConfigMap"}, dclass(), rslice("n2", [device("b")])])
    assert [d.name for d in inv.devices] == ["b"] and list(inv.classes) == ["gpu.example.com"]


def _selector(op: str, values: list[str] | None = None, key: str = "zone") -> dict[str, object]:
    req: dict[str, object] = {"key": key, "operator": op}
    if values is not None:
        req["values"] = values
    return {"nodeSelectorTerms": [{"matchExpressions": [req]}]}


def _reached(selector: dict[str, object]) -> set[str]:
    inv = build_inventory([node("n1", zone="a", size="5"), node("n2", zone="b", size="50"),
                           rslice(None, [device("x")], pool="p", nodeSelector=selector)])
    return {n for g in inv.groups if g.devices for n in g.nodes}


def test_node_selector_operators() -> None:
    assert _reached(_selector("In", ["a"])) == {"n1"}
    assert _reached(_selector("NotIn", ["a"])) == {"n2"}
    assert _reached(_selector("Exists")) == {"n1", "n2"}
    assert _reached(_selector("DoesNotExist")) == set()
    assert _reached(_selector("Gt", ["10"], key="size")) == {"n2"}
    assert _reached(_selector("Lt", ["10"], key="size")) == {"n1"}
    fields = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]}
    assert _reached(fields) == {"n2"}


def test_all_nodes_and_per_device_node_selection() -> None:
    per_device = rslice(None, [device("a", nodeName="n1"), device("b", allNodes=True)], pool="p", perDeviceNodeSelection=True)
    inv = build_inventory([node("n1"), node("n2"), rslice(None, [device("c")], pool="q", allNodes=True), per_device])
    by_node = {n: {inv.devices[i].name for i in g.devices} for g in inv.groups for n in g.nodes}
    assert by_node == {"n1": {"a", "b", "c"}, "n2": {"b", "c"}}


def test_nodes_with_identical_device_sets_are_grouped() -> None:
    inv = build_inventory([node("n1"), node("n2"), node("n3"), rslice(None, [device("c")], pool="q", allNodes=True),
                           rslice("n3", [device("own")])])
    assert sorted(g.nodes for g in inv.groups) == [("n1", "n2"), ("n3",)]
    assert inv.node_count == 3


def test_without_node_objects_each_node_name_is_a_node() -> None:
    inv = build_inventory([rslice("n1", [device("a")]), rslice("n2", [device("b")])])
    assert sorted(g.nodes for g in inv.groups) == [("n1",), ("n2",)]
