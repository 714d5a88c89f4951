"""count_replicas: pods placed one after another, first solution each, devices of earlier pods held."""

from __future__ import annotations

from typing import Any

from dra_builders import cap, claim, dclass, device, req, rslice
from draguard.inventory import build_inventory
from draguard.k8s import Budget
from draguard.satisfy import SEARCH_DEADLINE, count_replicas
from pod_builders import knode, pclaim, pod

WHOLE = claim(req("gpu"))


def test_eight_whole_gpu_replicas_on_four_gpus_fit_four_exactly() -> None:
    inv = build_inventory([dclass(), knode("n1"), knode("n2"),
                           rslice("n1", [device("gpu-0"), device("gpu-1")]), rslice("n2", [device("gpu-0"), device("gpu-1")])])
    got = count_replicas(pod(pclaim("gpu", WHOLE)), inv, 8)
    assert (got.fit, got.exact) == (4, True)
    assert got.notes[0].reason == "ReplicasExceedCapacity" and "4 of 8 replicas" in got.notes[0].message
    assert count_replicas(pod(pclaim("gpu", WHOLE)), inv, 3).fit == 3 and not count_replicas(pod(pclaim("gpu", WHOLE)), inv, 3).notes


def test_any_partition_pods_take_the_whole_gpu_first() -> None:
    """A whole GPU listed before its partitions: each "any device" pod takes the whole GPU first
    while it is free, so fewer pods fit than partitions exist."""
    counters = [{"name": "mem", "counters": {"slots": {"value": "4"}}}]
    whole = device("gpu-0", consumesCounters=[{"counterSet": "mem", "counters": {"slots": {"value": "4"}}}])
    parts = [device(f"part-{i}", consumesCounters=[{"counterSet": "mem", "counters": {"slots": {"value": "1"}}}]) for i in range(4)]
    inv = build_inventory([dclass(), knode("n1"), rslice("n1", [whole, *parts], sharedCounters=counters)])
    got = count_replicas(pod(pclaim("any", WHOLE)), inv, 4)
    assert (got.fit, got.exact) == (1, True)


def test_shared_capacity_replicas() -> None:
    dev = device("gpu-0", multi=True, capacity={"memory": cap("40Gi")})
    inv = build_inventory([dclass(), knode("n1"), rslice("n1", [dev])])
    got = count_replicas(pod(pclaim("m", claim(req("m", capacity={"memory": "10Gi"})))), inv, 6)
    assert (got.fit, got.exact) == (4, True)


def test_shared_claim_pins_every_replica_to_one_node() -> None:
    inv = build_inventory([dclass(), knode("n1"), knode("n2"),
                           rslice("n1", [device("gpu-0"), device("gpu-1")]), rslice("n2", [device("gpu-0"), device("gpu-1")])])
    shared = pclaim("shared", WHOLE, shared=True, key="ns/shared")
    own = pclaim("own", WHOLE, 1)
    got = count_replicas(pod(shared, own), inv, 4)
    assert got.fit == 1 and got.exact  # the shared GPU and one own GPU per node: one replica
    alone = count_replicas(pod(shared), inv, 4)
    assert alone.fit == 4  # every replica reuses the shared allocation


def test_alike_nodes_are_counted_once_and_multiplied() -> None:
    objs = [dclass()] + [knode(f"n{i}") for i in range(50)] + [rslice(f"n{i}", [device("gpu-0"), device("gpu-1")]) for i in range(50)]
    got = count_replicas(pod(pclaim("gpu", WHOLE)), build_inventory(objs), 1000)
    assert (got.fit, got.exact) == (100, True)


def test_now_counts_from_what_is_allocated() -> None:
    import dataclasses

    from draguard.inventory import Allocations, ClusterState

    inv = build_inventory([dclass(), knode("n1"), rslice("n1", [device("gpu-0"), device("gpu-1")])])
    busy = dataclasses.replace(inv, cluster=ClusterState(known=True, allocations=Allocations(dedicated=frozenset({0}))))
    assert count_replicas(pod(pclaim("gpu", WHOLE)), busy, 2).fit == 2
    now = count_replicas(pod(pclaim("gpu", WHOLE)), busy, 2, now=True)
    assert now.fit == 1 and "allocated now" in now.notes[0].message


def test_a_count_the_budget_cuts_short_is_no_count_and_says_so_by_fail_open() -> None:
    """A replay stopped by the budget has placed only some pods: a lower bound, never "at most"."""
    inv = build_inventory([dclass(), knode("n1"), knode("n2"),
                           rslice("n1", [device("gpu-0"), device("gpu-1")]), rslice("n2", [device("gpu-0"), device("gpu-1")])])
    cut = count_replicas(pod(pclaim("gpu", WHOLE)), inv, 8, budget=Budget.within(0.0))
    assert [(n.reason, n.fail_open) for n in cut.notes] == [("SatisfiabilityUnknown", SEARCH_DEADLINE)]
    assert not cut.exact and "at most" not in cut.notes[0].message
    decided = count_replicas(pod(pclaim("gpu", WHOLE)), inv, 8, budget=Budget.within(60.0))
    assert (decided.fit, decided.exact) == (4, True) and not any(n.fail_open for n in decided.notes)


NAS = "nas.example.com"


def _with_network_pool(pool: list[dict[str, Any]], *, nodes: int = 2, gpus: int = 2) -> list[dict[str, Any]]:
    """``nodes`` nodes of ``gpus`` local GPUs each (zone-a for n0, zone-b for the rest), a NAS class
    and the network-attached slices ``pool``."""
    objs: list[dict[str, Any]] = [dclass(), dclass(NAS, f'device.driver == "{NAS}"')]
    for i in range(nodes):
        objs += [knode(f"n{i}", zone="a" if i == 0 else "b"), rslice(f"n{i}", [device(f"gpu-{j}") for j in range(gpus)])]
    return objs + pool


GPU_AND_VOLUME = claim(req("gpu"), req("vol", cls=NAS))


def test_a_network_attached_pool_is_held_once_for_all_node_classes() -> None:
    """4 local GPUs on two nodes and 3 volumes every node reaches: the third pod takes the last
    volume wherever it lands, the fourth finds none — 3, exactly (the real scheduler's answer in
    tests/data/workloads/oracle/cases/10-network-attached-replicas.yaml).  Counted per node class
    as if each had the pool to itself, it was 4: "all fit", no warning."""
    pool = rslice(None, [device(f"vol-{i}") for i in range(3)], pool="nas", driver=NAS, allNodes=True)
    inv = build_inventory(_with_network_pool([pool]))
    got = count_replicas(pod(pclaim("d", GPU_AND_VOLUME)), inv, 4)
    assert (got.fit, got.exact) == (3, True), got
    assert "network-attached" in got.notes[0].message and "3 in all" in got.notes[0].message
    # the local devices still limit when the pool is large: 4 GPUs, 10 volumes
    big = rslice(None, [device(f"vol-{i}") for i in range(10)], pool="nas", driver=NAS, allNodes=True)
    got = count_replicas(pod(pclaim("d", GPU_AND_VOLUME)), build_inventory(_with_network_pool([big])), 6)
    assert (got.fit, got.exact) == (4, True), got
    # and a workload that fits stays without a finding
    assert not count_replicas(pod(pclaim("d", GPU_AND_VOLUME)), inv, 3).notes


def test_a_pool_reaching_only_some_nodes_gives_an_upper_bound() -> None:
    """A volume every node reaches and a second one only zone-b reaches: where a pod lands decides
    what is left for the next (reach differs between the node classes), so the count is the
    per-class sum, said as "at most" — never less than what the scheduler can place."""
    every = rslice(None, [device("vol-0")], pool="nas", driver=NAS, allNodes=True)
    zone_b = rslice(None, [device("vol-1")], pool="nas-b", driver=NAS,
                    nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]})
    inv = build_inventory(_with_network_pool([every, zone_b], nodes=2, gpus=1))
    volume = claim(req("vol", cls=NAS))
    got = count_replicas(pod(pclaim("v", volume)), inv, 3)
    assert got.exact is False and got.fit >= 2, got  # two volumes in all: at most, and not below the truth


def test_local_devices_beside_the_pool_make_the_count_an_upper_bound() -> None:
    """n1 has a local volume of the NAS driver beside the pool's one: a pod landing on n1 first may
    take the pool's volume and leave n0 none (1 runs), or n0 first and both run — where the
    scheduler puts each pod decides, so the count is "at most", never below what can run."""
    pool = rslice(None, [device("vol-0")], pool="nas", driver=NAS, allNodes=True)
    local = rslice("n1", [device("vol-1")], pool="n1-nas", driver=NAS)
    inv = build_inventory(_with_network_pool([pool, local], nodes=2, gpus=1))
    got = count_replicas(pod(pclaim("d", GPU_AND_VOLUME)), inv, 3)
    assert got.exact is False and got.fit == 2, got
    assert got.notes and "at most 2 of 3" in got.notes[0].message
