"""check_pod: all of a pod's claims on one node the pod may use (reject and accept per rule)."""

from __future__ import annotations

from typing import Any

from dra_builders import cap, claim, dclass, device, req, rslice
from draguard.inventory import build_inventory
from draguard.k8s import AllocationResult
from draguard.satisfy import check_pod
from pod_builders import container, knode, pclaim, pod

NIC = "nic.example.com"


def nic_class() -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": NIC},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{NIC}"'}}]}}


def gpu_nic_inventory(*, same_node: bool) -> Any:
    objs = [dclass(), nic_class(), knode("node-a"), knode("node-b"), knode("node-c"),
            rslice("node-a", [device("gpu-0")]), rslice("node-c", [device("gpu-0")]),
            rslice("node-a" if same_node else "node-b", [device("nic-0")], driver=NIC)]
    return build_inventory(objs)


GPU = claim(req("gpu"))
NICC = claim(req("nic", cls=NIC))


def test_gpu_and_nic_on_different_nodes_is_unsatisfiable_naming_each_class() -> None:
    v = check_pod(pod(pclaim("gpu", GPU), pclaim("nic", NICC, 1)), gpu_nic_inventory(same_node=False))
    assert v.satisfiable is False
    msg = v.notes[0].message
    assert v.notes[0].reason == "Unsatisfiable"
    # node-a and node-c reach alike devices: one class, one sentence
    assert "node-a (+1 alike)" in msg and "node-b" in msg
    assert 'claim "gpu" (template "gpu") fits; claim "nic"' in msg
    assert 'claim "gpu" (template "gpu"): request "gpu"' in msg  # node-b has no GPU
    assert "cannot allocate all" not in msg
    assert {c.label: c.nodes for c in v.per_class} == {"node-a (+1 alike)": ("node-a", "node-c"), "node-b": ("node-b",)}
    assert all(c.ok is False and c.reason for c in v.per_class)


def test_gpu_and_nic_on_one_node_fit() -> None:
    v = check_pod(pod(pclaim("gpu", GPU), pclaim("nic", NICC, 1)), gpu_nic_inventory(same_node=True))
    assert v.satisfiable is True and not [n for n in v.notes if n.severity.value == "error"]


def test_dedicated_device_is_used_once_across_claims() -> None:
    inv = build_inventory([dclass(), knode("n1"), rslice("n1", [device("gpu-0")])])
    assert check_pod(pod(pclaim("a", GPU), pclaim("b", GPU, 1)), inv).satisfiable is False
    assert check_pod(pod(pclaim("a", GPU)), inv).satisfiable is True


def test_shared_capacity_adds_up_across_claims() -> None:
    dev = device("gpu-0", multi=True, capacity={"memory": cap("40Gi")})
    inv = build_inventory([dclass(), knode("n1"), rslice("n1", [dev])])
    half = claim(req("m", capacity={"memory": "20Gi"}))
    more = claim(req("m", capacity={"memory": "21Gi"}))
    assert check_pod(pod(pclaim("a", half), pclaim("b", half, 1)), inv).satisfiable is True
    v = check_pod(pod(pclaim("a", half), pclaim("b", more, 1)), inv)
    assert v.satisfiable is False and "each claim fits alone" in v.notes[0].message


def test_32_devices_per_claim_not_per_pod() -> None:
    inv = build_inventory([dclass(), knode("n1"), rslice("n1", [device(f"gpu-{i}") for i in range(40)])])
    twenty = claim(req("r", count=20))
    assert check_pod(pod(pclaim("a", twenty), pclaim("b", twenty, 1)), inv).satisfiable is True
    v = check_pod(pod(pclaim("a", claim(req("r", count=33)))), inv)
    assert v.satisfiable is False and "at most 32" in v.notes[0].message


def test_node_selector_excludes_every_device_node() -> None:
    inv = build_inventory([dclass(), knode("n1", zone="z1"), knode("n2", zone="z2"), rslice("n1", [device("gpu-0")])])
    v = check_pod(pod(pclaim("gpu", GPU), node_selector={"zone": "z2"}), inv)
    assert v.satisfiable is False and "nodeSelector (zone=z2)" in v.notes[0].message
    assert check_pod(pod(pclaim("gpu", GPU), node_selector={"zone": "z1"}), inv).satisfiable is True


def _aff(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeSelectorTerms": list(terms)}


def test_required_affinity_terms_and_operators() -> None:
    inv = build_inventory([dclass(), knode("n1", gen="5"), knode("n2", gen="3"), rslice("n1", [device("gpu-0")])])
    gt = {"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["4"]}]}
    lt = {"matchExpressions": [{"key": "gen", "operator": "Lt", "values": ["4"]}]}
    name = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}
    assert check_pod(pod(pclaim("g", GPU), affinity=_aff(gt)), inv).satisfiable is True
    assert check_pod(pod(pclaim("g", GPU), affinity=_aff(lt)), inv).satisfiable is False
    assert check_pod(pod(pclaim("g", GPU), affinity=_aff(name)), inv).satisfiable is False
    assert check_pod(pod(pclaim("g", GPU), affinity=_aff(lt, gt)), inv).satisfiable is True  # terms ORed
    assert check_pod(pod(pclaim("g", GPU), affinity=_aff({})), inv).satisfiable is False  # empty term: nothing
    bad = {"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["x"]}]}
    assert check_pod(pod(pclaim("g", GPU), affinity=_aff(bad)), inv).satisfiable is False  # parse error: no match


def test_taints_against_tolerations() -> None:
    taint = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    inv = build_inventory([dclass(), knode("n1", taints=taint), rslice("n1", [device("gpu-0")])])
    v = check_pod(pod(pclaim("g", GPU)), inv)
    assert v.satisfiable is False and "dedicated=gpu:NoSchedule" in v.notes[0].message
    tol = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    assert check_pod(pod(pclaim("g", GPU), tolerations=tol), inv).satisfiable is True
    assert check_pod(pod(pclaim("g", GPU), tolerations=[{"operator": "Exists"}]), inv).satisfiable is True
    wrong = [{"key": "dedicated", "operator": "Equal", "value": "cpu"}]
    assert check_pod(pod(pclaim("g", GPU), tolerations=wrong), inv).satisfiable is False
    soft = build_inventory([dclass(), knode("n1", taints=[{"key": "x", "effect": "PreferNoSchedule"}]),
                            rslice("n1", [device("gpu-0")])])
    assert check_pod(pod(pclaim("g", GPU)), soft).satisfiable is True


def test_cordoned_node_is_not_now_never_a_denial() -> None:
    inv = build_inventory([dclass(), knode("n1", unschedulable=True), rslice("n1", [device("gpu-0")])])
    v = check_pod(pod(pclaim("g", GPU)), inv)
    assert v.satisfiable is None and v.notes[0].reason == "SatisfiabilityUnknown" and "cordoned" in v.notes[0].message
    tol = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]
    assert check_pod(pod(pclaim("g", GPU), tolerations=tol), inv).satisfiable is True
    # cordoned and without the device: still a proof
    assert check_pod(pod(pclaim("g", claim(req("g", count=2)))), inv).satisfiable is False


def test_allocated_claim_pins_the_pod_and_holds_its_devices() -> None:
    inv = build_inventory([dclass(), knode("n1"), knode("n2"),
                           rslice("n1", [device("gpu-0")]), rslice("n2", [device("gpu-0"), device("gpu-1")])])
    alloc = AllocationResult.model_validate({
        "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]},
    })
    pinned = pclaim("held", GPU, allocation=alloc)
    v = check_pod(pod(pinned, pclaim("more", GPU, 1)), inv)
    assert v.satisfiable is False  # n1's only GPU is held by the pod's own claim; n2 is excluded
    assert "allocated claim" in v.notes[0].message
    assert check_pod(pod(pinned), inv).satisfiable is True


def test_extended_resource_backed_by_dra() -> None:
    ext = {**dclass(), "spec": {**dclass()["spec"], "extendedResourceName": "example.com/gpu"}}
    inv = build_inventory([ext, knode("n1"), rslice("n1", [device("gpu-0"), device("gpu-1")])])
    assert check_pod(pod(containers=(container("c", {"example.com/gpu": "2"}),)), inv).satisfiable is True
    v = check_pod(pod(containers=(container("c", {"example.com/gpu": "3"}),)), inv)
    assert v.satisfiable is False and "implicit claim of example.com/gpu" in v.notes[0].message
    implicit = check_pod(pod(containers=(container("c", {"deviceclass.resource.kubernetes.io/gpu.example.com": "1"}),)), inv)
    assert implicit.satisfiable is True


def test_extended_resource_from_a_device_plugin_is_not_dra() -> None:
    ext = {**dclass(), "spec": {**dclass()["spec"], "extendedResourceName": "example.com/gpu"}}
    inv = build_inventory([ext, knode("n1", allocatable={"example.com/gpu": "8"}), rslice("n1", [device("gpu-0")])])
    v = check_pod(pod(containers=(container("c", {"example.com/gpu": "3"}),)), inv)
    assert v.satisfiable is not False  # served by the node's device plugin, DRA is not asked


def test_every_class_decides_all_classes_and_marks_excluded_ones_not_eligible() -> None:
    inv = build_inventory([dclass(), knode("n1", zone="a"), knode("n2", zone="a"), knode("n3", zone="b"),
                           rslice("n1", [device("gpu-0")]), rslice("n2", [device("gpu-0"), device("gpu-1")])])
    request = pod(pclaim("g", claim(req("g", count=2))), node_selector={"zone": "a"})
    first = check_pod(request, inv)
    assert first.satisfiable is True
    every = check_pod(request, inv, every_class=True)
    by_label = {c.label: c for c in every.per_class}
    assert by_label["n2"].ok is True and by_label["n1"].ok is False and by_label["n1"].eligible
    assert by_label["n3"].ok is False and not by_label["n3"].eligible


def test_generic_cannot_allocate_all_never_appears_for_a_claim() -> None:
    from dra_builders import check

    inv = build_inventory([dclass(), nic_class(), knode("a"), knode("b"),
                           rslice("a", [device("gpu-0")]), rslice("b", [device("nic-0")], driver=NIC)])
    notes = check(claim(req("gpu"), req("nic", cls=NIC)), inv)
    text = next(n.message for n in notes if n.reason == "Unsatisfiable")
    assert "all requests of the claim together" not in text and 'request "nic"' in text


# ------------------------------------------------------------------ the verdict remembered per snapshot
def _remembered(inv: Any) -> list[Any]:
    return [k for k in inv.cache._items if isinstance(k, tuple) and k and k[0] == "pod"]


def test_a_pods_verdict_is_remembered_per_request_and_snapshot() -> None:
    """Replicas and the audit's namespaces ask the same question: the second answer is the first,
    from the snapshot's bounded cache; a different request (here, another claim origin, which
    the message names) is its own entry; a new snapshot starts empty."""
    inv = gpu_nic_inventory(same_node=False)
    first = check_pod(pod(pclaim("gpu", GPU), pclaim("nic", NICC, 1)), inv)
    assert len(_remembered(inv)) == 1
    again = check_pod(pod(pclaim("gpu", GPU), pclaim("nic", NICC, 1)), inv)
    assert again == first and again.notes is not first.notes  # a copy: callers may extend the list
    assert len(_remembered(inv)) == 1
    other = check_pod(pod(pclaim("gpu2", GPU), pclaim("nic", NICC, 1)), inv)
    assert len(_remembered(inv)) == 2 and 'claim "gpu2"' in other.notes[0].message
    assert _remembered(gpu_nic_inventory(same_node=False)) == []


def test_answers_cut_short_and_now_answers_are_not_remembered() -> None:
    from draguard.k8s import Budget

    inv = gpu_nic_inventory(same_node=False)
    spent = check_pod(pod(pclaim("gpu", GPU), pclaim("nic", NICC, 1)), inv, budget=Budget(0.0))
    assert spent.satisfiable is None and any(n.fail_open for n in spent.notes)
    assert _remembered(inv) == []
    decided = check_pod(pod(pclaim("gpu", GPU), pclaim("nic", NICC, 1)), inv)
    assert decided.satisfiable is False  # not the cut-short answer
    check_pod(pod(pclaim("gpu", GPU)), inv, now=True)
    assert len(_remembered(inv)) == 1  # the "now" question reads allocations: asked afresh each time


def test_pods_with_the_same_claims_share_the_answers_per_class_whatever_their_placement() -> None:
    """Placement only chooses which classes are asked; the answer on a class is the claims'."""
    inv = gpu_nic_inventory(same_node=False)
    a = check_pod(pod(pclaim("gpu", GPU), pclaim("nic", NICC, 1)), inv)
    b = check_pod(pod(pclaim("gpu", GPU), pclaim("nic", NICC, 1),
                      tolerations=[{"key": "example.com/other", "operator": "Exists"}]), inv)
    shared = [k for k in inv.cache._items if isinstance(k, tuple) and k and k[0] == "podclasses"]
    assert len(shared) == 1  # one problem, one memo: the second pod searched no class again
    assert a.satisfiable is b.satisfiable is False and a.notes[0].message == b.notes[0].message
    excluded = check_pod(pod(pclaim("gpu", GPU), pclaim("nic", NICC, 1), node_selector={"zone": "none"}), inv)
    assert excluded.satisfiable is False and "node-a" in excluded.notes[0].message  # still its own verdict


def _three_alike(*, taint_c: bool = True, cordon_b: bool = False) -> Any:
    taint = [{"key": "team", "value": "x", "effect": "NoSchedule"}] if taint_c else None
    return build_inventory([dclass(), knode("node-a"), knode("node-b", unschedulable=cordon_b), knode("node-c", taints=taint),
                            *(rslice(n, [device("gpu-0")]) for n in ("node-a", "node-b", "node-c"))])


def test_one_class_of_alike_nodes_is_split_by_the_pods_filters() -> None:
    """Three nodes of one class, one tainted: the class's answer is asked once, the tainted node is
    an excluded entry and the others one class — the same split for every way of walking."""
    inv = _three_alike()
    v = check_pod(pod(pclaim("gpu", GPU)), inv, every_class=True)
    assert v.satisfiable is True
    assert [(c.nodes, c.ok, c.eligible) for c in v.per_class] == [
        (("node-c",), False, False), (("node-a", "node-b"), True, True)]
    assert "taint team=x:NoSchedule is not tolerated" in v.per_class[0].reason
    tolerated = check_pod(pod(pclaim("gpu", GPU), tolerations=[{"key": "team", "operator": "Exists"}]), inv, every_class=True)
    assert [(c.label, c.nodes, c.ok) for c in tolerated.per_class] == [("node-a (+2 alike)", ("node-a", "node-b", "node-c"), True)]


def test_a_pod_pinned_by_name_to_an_excluded_node_of_a_fitting_class_does_not_fit() -> None:
    inv = _three_alike()
    pinned = check_pod(pod(pclaim("gpu", GPU), node_name="node-c"), inv)
    assert pinned.satisfiable is False
    assert "taint team=x:NoSchedule" in pinned.notes[0].message
    assert check_pod(pod(pclaim("gpu", GPU), node_name="node-b"), inv).satisfiable is True


def test_cordoned_nodes_of_a_class_are_out_only_for_now() -> None:
    inv = _three_alike(taint_c=False, cordon_b=True)
    only_b = check_pod(pod(pclaim("gpu", GPU), node_name="node-b"), inv)
    assert only_b.satisfiable is None and "cordoned" in only_b.notes[0].message
    assert check_pod(pod(pclaim("gpu", GPU)), inv).satisfiable is True


def test_held_groups_of_a_class_are_divided_by_what_is_held_and_never_share_the_classes_answer() -> None:
    """"Now" starts from today's allocations: the groups of a class are divided by what is held on
    each (groups held alike share one search), the free ones keep the answer from an empty start."""
    import dataclasses

    from draguard.inventory import Allocations, ClusterState

    inv = _three_alike(taint_c=False)

    def busy(*held: int) -> Any:
        return dataclasses.replace(inv, cluster=ClusterState(known=True, allocations=Allocations(dedicated=frozenset(held))))

    assert check_pod(pod(pclaim("gpu", GPU)), inv, every_class=True).satisfiable is True  # the class's answer, remembered
    assert check_pod(pod(pclaim("gpu", GPU)), busy(0, 1, 2), now=True).satisfiable is False
    some = check_pod(pod(pclaim("gpu", GPU)), busy(0, 1), now=True, every_class=True)
    assert some.satisfiable is True
    assert [(c.nodes, c.ok) for c in some.per_class] == [(("node-c",), True), (("node-a", "node-b"), False)]
    held_alone = check_pod(pod(pclaim("gpu", GPU)), busy(0), now=True, every_class=True)
    assert [(c.nodes, c.ok) for c in held_alone.per_class] == [(("node-b", "node-c"), True), (("node-a",), False)]
    free = check_pod(pod(pclaim("gpu", GPU)), busy(), now=True, every_class=True)
    assert [(c.nodes, c.ok) for c in free.per_class] == [(("node-a", "node-b", "node-c"), True)]


def test_groups_of_a_class_with_different_shares_consumed_are_not_held_alike() -> None:
    import dataclasses

    from draguard.inventory import Allocations, ClusterState
    from draguard.k8s import parse_quantity

    dev = device("gpu-0", multi=True, capacity={"memory": cap("40Gi")})
    inv = build_inventory([dclass(), knode("node-a"), knode("node-b"), rslice("node-a", [dev]), rslice("node-b", [dev])])
    ask = pod(pclaim("gpu", claim(req("m", capacity={"memory": "20Gi"}))))
    a, b = (next(d.index for d in inv.devices if d.pool == n) for n in ("node-a", "node-b"))
    mem = next(iter(inv.devices[a].capacity))

    def consumed(on_a: str, on_b: str) -> Any:
        shares = {a: {mem: parse_quantity(on_a)}, b: {mem: parse_quantity(on_b)}}
        return dataclasses.replace(inv, cluster=ClusterState(known=True, allocations=Allocations(consumed=shares)))

    assert check_pod(ask, consumed("30Gi", "30Gi"), now=True).satisfiable is False  # held alike: one search, no room
    mixed = check_pod(ask, consumed("30Gi", "10Gi"), now=True, every_class=True)
    assert mixed.satisfiable is True
    assert sorted((c.nodes, c.ok) for c in mixed.per_class) == [(("node-a",), False), (("node-b",), True)]


# ------------------------------------------------------------------ the verdict remembered per placement effect
_PLACEMENTS: list[dict[str, Any]] = [
    {},
    {"tolerations": [{"key": "nothing-has-this", "operator": "Exists"}]},  # the same effect as {}
    {"tolerations": [{"key": "team", "operator": "Exists"}]},
    {"tolerations": [{"key": "team", "operator": "Equal", "value": "y"}]},  # the wrong value: as {}
    {"node_selector": {"zone": "z0"}},
    {"node_selector": {"zone": "z1"}, "tolerations": [{"key": "team", "operator": "Exists"}]},
    {"node_selector": {"zone": "none"}},
    {"affinity": _aff({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]})},
    {"tolerations": [{"key": "maint", "operator": "Exists"}]},  # node-b: cordoned either way, but only for now
    {"node_name": "node-c"},  # decided by name: keyed by the placement's text
    {"node_name": "node-a"},
]


def _zoned() -> Any:
    taint = [{"key": "team", "value": "x", "effect": "NoSchedule"}]
    maint = [{"key": "maint", "value": "", "effect": "NoSchedule"}]
    return build_inventory([dclass(), knode("node-a", zone="z0"),
                            knode("node-b", zone="z0", unschedulable=True, taints=maint),
                            knode("node-c", zone="z1", taints=taint), knode("node-d", zone="z1"),
                            rslice("node-a", [device("gpu-0")]), rslice("node-b", [device("gpu-0")]),
                            rslice("node-c", [device("gpu-0"), device("gpu-1")]), rslice("node-d", [])])


def test_a_verdict_remembered_under_the_placements_effect_is_the_pods_own() -> None:
    """Pods with the same claims whose placements act alike on every node info share one verdict;
    each pod's remembered answer equals the one it gets asked alone on a fresh snapshot."""
    two = claim(req("gpu", count=2))
    for every_class in (False, True):
        for claims in ((pclaim("gpu", GPU),), (pclaim("gpu", two),)):
            shared = _zoned()
            for placement in _PLACEMENTS:
                asked = pod(*claims, **placement)
                remembered = check_pod(asked, shared, every_class=every_class)
                alone = check_pod(asked, _zoned(), every_class=every_class)
                assert (remembered.satisfiable, remembered.notes, remembered.per_class) == (
                    alone.satisfiable, alone.notes, alone.per_class), placement
            assert len(_remembered(shared)) < len(_PLACEMENTS)  # alike effects shared one entry


def test_reasons_of_alike_nodes_name_the_nodes_they_apply_to() -> None:
    """Two nodes alike in devices, one tainted: a pod for another tier is kept off both, but the
    taint is edge-2's alone — the reason must not read as if it held for edge-1 too."""
    taint = [{"key": "maintenance", "value": "yes", "effect": "NoSchedule"}]
    inv = build_inventory([dclass(), knode("edge-1", tier="edge"), knode("edge-2", taints=taint, tier="edge"),
                           rslice("edge-1", [device("gpu-0")]), rslice("edge-2", [device("gpu-0")])])
    v = check_pod(pod(pclaim("g", GPU), node_selector={"tier": "core"}), inv)
    assert v.satisfiable is False
    text = v.notes[0].message
    assert "on edge-1" in text and "is not tolerated on edge-2" in text, text
    # one reason for the whole class: said once, without node names
    both = build_inventory([dclass(), knode("edge-1", tier="edge"), knode("edge-2", tier="edge"),
                            rslice("edge-1", [device("gpu-0")]), rslice("edge-2", [device("gpu-0")])])
    text = check_pod(pod(pclaim("g", GPU), node_selector={"tier": "core"}), both).notes[0].message
    assert "excluded by the pod's nodeSelector (tier=core)" in text and " on edge-" not in text, text
