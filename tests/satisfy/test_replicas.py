"""count_replicas: pods placed one after another, first solution each, devices of earlier pods held."""

from __future__ import annotations

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
