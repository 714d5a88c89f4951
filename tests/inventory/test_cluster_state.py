"""ClusterState from inventory files: claims and templates reduced, allocations per device, and
the snapshot "now" (held view)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from dra_builders import DRIVER, cap, dclass, device, node, rslice
from draguard.inventory import StaticInventory, build_inventory, carry_cluster, compute_allocations
from draguard.inventory.claims import ClaimReducer
from draguard.k8s import Quantity, parse_quantity


def allocated(name: str, *results: dict[str, Any], ns: str = "team-a", node_name: str | None = None,
              pods: tuple[str, ...] = ()) -> dict[str, Any]:
    status: dict[str, Any] = {"allocation": {"devices": {"results": list(results)}}}
    if node_name:
        status["allocation"]["nodeSelector"] = {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
    if pods:
        status["reservedFor"] = [{"resource": "pods", "name": p, "uid": f"uid-{p}"} for p in pods]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}},
            "status": status}


def result(dev: str, pool: str = "node-1", **extra: Any) -> dict[str, Any]:
    return {"request": "gpu", "driver": DRIVER, "pool": pool, "device": dev, **extra}


def template(name: str, ns: str = "team-a") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name, "namespace": ns},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}}


def objects() -> list[dict[str, Any]]:
    """node-1: two whole GPUs and one shareable GPU (40Gi); node-2: partitions of one counter set."""
    partition = [device(f"part-{i}", consumesCounters=[{"counterSet": "gpu", "counters": {"memory": {"value": "20Gi"}}}])
                 for i in range(2)]
    return [
        dclass(), node("node-1"), node("node-2"),
        rslice("node-1", [device("gpu-0"), device("gpu-1"),
                          device("shared-0", multi=True, capacity={"memory": cap("40Gi")})]),
        rslice("node-2", partition, sharedCounters=[{"name": "gpu", "counters": {"memory": {"value": "40Gi"}}}]),
    ]


def claims() -> list[dict[str, Any]]:
    return [
        allocated("whole", result("gpu-0"), node_name="node-1", pods=("p1", "p2")),
        allocated("share-a", result("shared-0", shareID="s-1", consumedCapacity={"memory": "30Gi"})),
        allocated("share-b", result("shared-0", shareID="s-2", consumedCapacity={"memory": "4Gi"}), ns="team-b"),
        allocated("admin", result("gpu-1", adminAccess=True), ns="ops"),
        allocated("stale", result("gone-7"), ns="team-b"),
        allocated("part", result("part-0", pool="node-2")),
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "pending", "namespace": "team-a"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}},
    ]


def write(tmp_path: Path, docs: list[dict[str, Any]], name: str = "inv.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def index(inv: Any, name: str) -> int:
    return next(d.index for d in inv.devices if d.name == name)


def test_claims_in_inventory_files_are_what_the_cluster_holds(tmp_path: Path) -> None:
    listed = {"apiVersion": "v1", "kind": "List", "items": claims()}  # kubectl get resourceclaims -A -o yaml
    source = StaticInventory([write(tmp_path, objects()), write(tmp_path, [listed, template("gpu")], "claims.yaml")])
    inv = source.snapshot()
    assert inv is not None
    state = inv.cluster
    assert state.known
    assert set(state.claims) == {("team-a", "whole"), ("team-a", "share-a"), ("team-b", "share-b"), ("ops", "admin"),
                                 ("team-b", "stale"), ("team-a", "part"), ("team-a", "pending")}
    whole = state.claims[("team-a", "whole")]
    assert whole.reserved_for == ("p1", "p2") and whole.uid == "uid-whole"
    assert whole.allocation is not None and whole.allocation.node_selector is not None
    assert state.claims[("team-a", "pending")].allocation is None
    assert set(state.templates) == {("team-a", "gpu")} and state.templates[("team-a", "gpu")] is not None
    alloc = state.allocations
    # whole device and partition taken; the admin-access result counts for nothing
    assert alloc.dedicated == {index(inv, "gpu-0"), index(inv, "part-0")}
    assert alloc.consumed == {index(inv, "shared-0"): {"memory": parse_quantity("34Gi")}}
    assert alloc.counters == {(DRIVER, "node-2"): {("gpu", "memory"): parse_quantity("20Gi")}}
    assert alloc.holders[index(inv, "shared-0")] == (("team-a", "share-a"), ("team-b", "share-b"))
    assert alloc.unknown == 1 and alloc.claims == 6
    # no raw claim objects are kept: the source's objects are the inventory kinds only
    assert sorted({o["kind"] for o in source.objects()}) == ["DeviceClass", "Node", "ResourceSlice"]
    assert source.status()["claims"] == 7


def test_an_inventory_without_claims_says_nothing_about_them(tmp_path: Path) -> None:
    inv = StaticInventory([write(tmp_path, objects())]).snapshot()
    assert inv is not None and not inv.cluster.known and not inv.cluster.claims
    assert inv.cluster.allocations.empty and inv.held_view() is inv


def test_equal_specs_are_one_object_and_bad_claims_never_raise() -> None:
    reducer = ClaimReducer()
    a, b = reducer.claim(allocated("a", result("gpu-0"))), reducer.claim(allocated("b", result("gpu-1")))
    assert a is not None and b is not None and a.spec is b.spec
    assert reducer.claim({"kind": "ResourceClaim", "metadata": {"namespace": "x"}}) is None  # no name
    broken = allocated("broken", {"driver": DRIVER, "pool": 3, "device": "gpu-0"})
    bad_spec = {**allocated("bad-spec", result("gpu-0")), "spec": {"devices": {"requests": [{"name": 5}]}}}
    bad_quantity = allocated("q", result("shared-0", shareID="x", consumedCapacity={"memory": "lots"}))
    got = [reducer.claim(c) for c in (broken, bad_spec, bad_quantity)]
    assert got[0] is not None and got[0].allocation is None
    assert got[1] is not None and got[1].spec is None and got[1].allocation is not None
    assert got[2] is not None and got[2].allocation is None
    deep: dict[str, Any] = {}
    cur = deep
    for _ in range(5000):
        cur["x"] = {}
        cur = cur["x"]
    assert reducer.claim({**allocated("deep", result("gpu-0")), "spec": deep}) is not None


def test_held_view_is_the_inventory_now(tmp_path: Path) -> None:
    inv = StaticInventory([write(tmp_path, objects() + claims())]).snapshot()
    assert inv is not None
    now = inv.held_view()
    assert now is inv.held_view()  # once per snapshot
    gpu0, gpu1, shared, part0 = (index(inv, n) for n in ("gpu-0", "gpu-1", "shared-0", "part-0"))
    reached = {i for g in now.groups for i in g.devices}
    assert gpu0 not in reached and part0 not in reached and gpu1 in reached and shared in reached
    assert {i for g in inv.groups for i in g.devices} >= {gpu0, part0}  # the snapshot itself is untouched
    left = now.devices[shared].capacity["memory"].value
    assert left == parse_quantity("6Gi") and inv.devices[shared].capacity["memory"].value == parse_quantity("40Gi")
    assert now.devices[shared].profile != inv.devices[shared].profile  # less capacity: another profile
    # CEL selectors still read the published capacity
    assert now.devices[shared].cel is not None and now.devices[shared].published is inv.devices[shared].capacity
    assert now.pools[(DRIVER, "node-2")].counter_sets["gpu"]["memory"] == parse_quantity("20Gi")
    assert [d.index for d in now.devices] == [d.index for d in inv.devices]


def test_potential_nodes_do_not_exist_now() -> None:
    potential = node("template-node")
    potential["metadata"]["annotations"] = {"draguard.io/potential": "true"}
    inv = build_inventory([dclass(), node("node-1"), potential, rslice("node-1", [device("gpu-0")]),
                           rslice("template-node", [device("gpu-0")])])
    assert any(g.potential for g in inv.groups)
    assert not any(g.potential for g in inv.held_view().groups)


def test_allocations_follow_a_rebuilt_snapshot(tmp_path: Path) -> None:
    """lint merges the run's own slices into the inventory: the cluster state is carried over and
    allocations are computed against the new device indices."""
    source = StaticInventory([write(tmp_path, objects() + claims())])
    inv = source.snapshot()
    assert inv is not None
    extra = rslice("node-0", [device("gpu-9")], name="a-first-slice")  # sorts first: indices shift
    carried = carry_cluster(build_inventory([*source.objects(), extra]), inv)
    gpu0 = index(carried, "gpu-0")
    assert gpu0 == index(inv, "gpu-0") + 1
    assert carried.cluster.known and gpu0 in carried.cluster.allocations.dedicated
    assert compute_allocations(inv.cluster.claims.values(), carried).dedicated == carried.cluster.allocations.dedicated


def test_consumed_quantities_add_up_exactly() -> None:
    reducer = ClaimReducer()
    inv = build_inventory(objects())
    held = [reducer.claim(allocated(f"s{i}", result("shared-0", shareID=f"s{i}", consumedCapacity={"memory": "100Mi"})))
            for i in range(3)]
    alloc = compute_allocations([h for h in held if h is not None], inv)
    assert alloc.consumed[index(inv, "shared-0")]["memory"] == Quantity(3 * parse_quantity("100Mi").nanos)
