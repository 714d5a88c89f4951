"""Pods that share a claim (``resourceClaimName``): the 256 entries of ``reservedFor``, and the
first user of the claim pinning it for every other (kube-scheduler's DynamicResources plugin:
PreBind reserves the claim per pod, at most ``ResourceClaimReservedForMaxSize`` = 256; an allocated
claim's node selector restricts every later pod — ``resourceclaim not available on the node``)."""

from __future__ import annotations

from typing import Any

from dra_builders import claim, dclass, device, req, rslice
from draguard.inventory import HeldClaim, build_inventory, with_cluster
from draguard.k8s import Target
from draguard.satisfy import PodRequest, PodVerdict, check_pod, count_replicas
from draguard.satisfy.joint import SharedClaims, SharingPod
from draguard.satisfy.reserved import RESERVED_FOR_MAX, reserved_for_full, reserved_for_limit
from pod_builders import knode, pclaim, pod

WHOLE = claim(req("gpu"))
SHARED = pclaim("gpu", WHOLE, shared=True, key="ns/shared-gpu")


def two_zones(*extra: dict[str, Any]) -> Any:
    """node-a (zone a) and node-b (zone b), two GPUs each on the node."""
    return build_inventory([dclass(), knode("node-a", zone="a"), knode("node-b", zone="b"),
                            rslice("node-a", [device("gpu-0"), device("gpu-1")]),
                            rslice("node-b", [device("gpu-0"), device("gpu-1")]), *extra])


# ------------------------------------------------------------------ reservedFor: 256 consumers
def test_the_limit_is_256_at_every_supported_version() -> None:
    assert RESERVED_FOR_MAX == 256
    assert {reserved_for_limit(Target(v)) for v in ("1.34", "1.35", "1.36", "1.37", "1.38")} == {256}


def test_300_replicas_on_one_shared_claim_get_at_most_256_running_pods() -> None:
    got = count_replicas(pod(SHARED), two_zones(), 300)
    assert got.fit == 256
    (note,) = got.notes
    assert note.reason == "ReplicasExceedCapacity" and note.severity.value == "warning"
    assert note.message.startswith("at most 256 of 300 pods can run at once: a ResourceClaim's reservedFor holds at most "
                                   "256 consumers")
    assert "ns/shared-gpu" in note.message and "the other 44 stay Pending" in note.message
    assert note.details is not None and (note.details["fit"], note.details["replicas"]) == (256, 300)


def test_256_replicas_on_one_shared_claim_all_run() -> None:
    got = count_replicas(pod(SHARED), two_zones(), 256)
    assert (got.fit, got.notes) == (256, [])


def test_a_template_claim_gives_each_pod_its_own_claim_so_no_reservedFor_cap() -> None:
    """300 pods of a template claim on a shareable device (no capacity asked): all fit, no cap."""
    inv = build_inventory([dclass(), knode("n1"), rslice("n1", [device("gpu-0", multi=True)])])
    got = count_replicas(pod(pclaim("gpu", WHOLE)), inv, 300)
    assert (got.fit, got.notes) == (300, [])


def test_a_device_count_below_the_limit_is_left_as_it_is() -> None:
    own = pclaim("own", WHOLE, 1)
    got = count_replicas(pod(SHARED, own), two_zones(), 300)
    assert got.fit == 1 and "reservedFor" not in got.notes[0].message


def test_pods_reserved_as_a_pod_group_are_not_capped() -> None:
    got = count_replicas(pod(SHARED), two_zones(), 300, reservations=False)
    assert (got.fit, got.notes) == (300, [])


def _cluster_with(reserved: tuple[str, ...]) -> Any:
    held = HeldClaim("ns", "shared-gpu", spec=None, reserved_for=reserved)
    return with_cluster(two_zones(), {("ns", "shared-gpu"): held}, {}, known=True).cluster


def test_a_pod_on_a_claim_reserved_256_times_already_waits() -> None:
    full = _cluster_with(tuple(f"p{i}" for i in range(256)))
    (note,) = reserved_for_full(pod(SHARED), full, "new-pod")
    assert note.reason == "CapacityInUse" and note.severity.value == "warning"
    assert "reserved for 256 pods already" in note.message


def test_a_claim_with_room_or_listing_the_pod_itself_says_nothing() -> None:
    assert reserved_for_full(pod(SHARED), _cluster_with(tuple(f"p{i}" for i in range(255))), "new-pod") == []
    assert reserved_for_full(pod(SHARED), _cluster_with((*(f"p{i}" for i in range(255)), "me")), "me") == []
    assert reserved_for_full(pod(pclaim("gpu", WHOLE)), _cluster_with(tuple(f"p{i}" for i in range(300))), "x") == []


# ------------------------------------------------------------------ one claim, placed for the first pod
def _run(inv: Any, *pods: SharingPod) -> list[list[Any]]:
    tracker = SharedClaims(inv)
    out = []
    for p in pods:
        verdict = check_pod(p.request, inv)
        out.append(tracker.observe(p, verdict))
    return out


def _sharing(label: str, request: PodRequest, pins: bool = True, order: str = "") -> SharingPod:
    return SharingPod(label, request, pins, order)


def test_a_pod_the_first_users_allocation_never_reaches_is_unsatisfiable() -> None:
    inv = two_zones()
    first = _sharing('Pod "first"', pod(SHARED, node_selector={"zone": "a"}))
    second = _sharing('Pod "second"', pod(SHARED, node_selector={"zone": "b"}))
    assert check_pod(second.request, inv).satisfiable is True  # alone it runs
    got = _run(inv, first, second)
    assert got[0] == []
    (note,) = got[1]
    assert note.reason == "Unsatisfiable" and note.severity.value == "error"
    assert 'Pod "second" can never run' in note.message and "ns/shared-gpu" in note.message
    assert 'Pod "first"' in note.message and "(node-a)" in note.message and "(node-b)" in note.message


def test_pods_with_a_common_node_share_the_claim() -> None:
    inv = two_zones()
    got = _run(inv, _sharing('Pod "first"', pod(SHARED, node_selector={"zone": "a"})),
               _sharing('Pod "second"', pod(SHARED, node_selector={"zone": "a"})))
    assert got == [[], []]


def test_when_the_first_pod_may_land_where_the_second_runs_it_is_only_a_warning() -> None:
    """The first pod may use either node: placed on node-b, the second runs — no proof."""
    inv = two_zones()
    _, (note,) = _run(inv, _sharing('Pod "first"', pod(SHARED)), _sharing('Pod "second"', pod(SHARED, node_selector={"zone": "b"})))
    assert note.reason == "SatisfiabilityUnknown" and note.severity.value == "warning"
    assert note.message.startswith("one of these pods may wait") and "node-a" in note.message


def test_without_a_known_order_disjoint_pods_are_only_a_warning() -> None:
    inv = two_zones()
    for first in (_sharing('Deployment "first"', pod(SHARED, node_selector={"zone": "a"}), pins=False),
                  _sharing('Pod "first"', pod(SHARED, node_selector={"zone": "a"}), order="high")):
        _, (note,) = _run(inv, first, _sharing('Pod "second"', pod(SHARED, node_selector={"zone": "b"})))
        assert (note.reason, note.severity.value) == ("SatisfiabilityUnknown", "warning")
        assert "whichever the scheduler places first" in note.message


def test_a_network_attached_device_reaches_every_node_so_disjoint_pods_both_run() -> None:
    nas = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "nas.example.com"},
           "spec": {"selectors": [{"cel": {"expression": 'device.driver == "nas.example.com"'}}]}}
    inv = two_zones(nas, rslice(None, [device("vol-0")], pool="nas", driver="nas.example.com", allNodes=True))
    volume = pclaim("vol", claim(req("vol", cls="nas.example.com")), shared=True, key="ns/volume")
    got = _run(inv, _sharing('Pod "a"', pod(volume, node_selector={"zone": "a"})),
               _sharing('Pod "b"', pod(volume, node_selector={"zone": "b"})))
    assert got == [[], []]


def test_a_first_pod_that_can_never_run_pins_nothing() -> None:
    inv = two_zones()
    never = _sharing('Pod "never"', pod(SHARED, node_selector={"zone": "c"}))
    assert check_pod(never.request, inv).satisfiable is False
    got = _run(inv, never, _sharing('Pod "a"', pod(SHARED, node_selector={"zone": "a"})),
               _sharing('Pod "b"', pod(SHARED, node_selector={"zone": "b"})))
    assert got[0] == [] and got[1] == []  # "a" is the first that runs: it pins the claim
    assert [n.reason for n in got[2]] == ["Unsatisfiable"]


def test_an_allocated_claim_is_left_to_the_pods_own_check() -> None:
    """A claim already allocated pins by its node selector, which every pod's check reads."""
    from draguard.k8s import AllocationResult

    alloc = AllocationResult.model_validate({"devices": {"results": []}})
    pinned = pclaim("gpu", WHOLE, shared=True, key="ns/shared-gpu", allocation=alloc)
    inv = two_zones()
    got = _run(inv, _sharing('Pod "a"', pod(pinned, node_selector={"zone": "a"})),
               _sharing('Pod "b"', pod(pinned, node_selector={"zone": "b"})))
    assert got == [[], []]


def test_a_verdict_that_is_not_a_fit_says_nothing_of_sharing() -> None:
    inv = two_zones()
    tracker = SharedClaims(inv)
    first = _sharing('Pod "first"', pod(SHARED, node_selector={"zone": "a"}))
    assert tracker.observe(first, check_pod(first.request, inv)) == []
    second = _sharing('Pod "second"', pod(SHARED, node_selector={"zone": "b"}))
    assert tracker.observe(second, PodVerdict([], None)) == []


OTHER = pclaim("nic", WHOLE, 1, shared=True, key="ns/other-gpu")


def test_a_pod_another_shared_claim_shuts_out_pins_nothing() -> None:
    """"b" is shut out by claim "other" (pinned to node-a by "a"), so it never runs and never pins
    "shared": "c", the first user of "shared" that runs, may use node-b."""
    inv = two_zones()
    got = _run(inv, _sharing('Pod "a"', pod(OTHER, node_selector={"zone": "a"})),
               _sharing('Pod "b"', pod(SHARED, OTHER, node_selector={"zone": "b"})),
               _sharing('Pod "c"', pod(SHARED, node_selector={"zone": "b"})))
    assert [n.reason for n in got[1]] == ["Unsatisfiable"]
    assert got[2] == []


def test_a_pod_that_may_wait_for_another_claim_pins_for_a_warning_only() -> None:
    inv = two_zones()
    got = _run(inv, _sharing('Deployment "a"', pod(OTHER, node_selector={"zone": "a"}), pins=False),
               _sharing('Pod "b"', pod(SHARED, OTHER, node_selector={"zone": "b"})),
               _sharing('Pod "c"', pod(SHARED, node_selector={"zone": "a"})))
    assert [(n.reason, n.severity.value) for n in got[1]] == [("SatisfiabilityUnknown", "warning")]
    assert [(n.reason, n.severity.value) for n in got[2]] == [("SatisfiabilityUnknown", "warning")]


def test_a_first_pod_that_does_not_fit_now_is_not_certain_to_go_first() -> None:
    """The cluster holds node-a's GPUs: "first" (zone a) waits, "second" may take the claim."""
    from draguard.k8s import AllocationResult

    taken = AllocationResult.model_validate({"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "node-a", "device": d} for d in ("gpu-0", "gpu-1")]}})
    held = HeldClaim("ns", "busy", spec=None, allocation=taken, reserved_for=("x",))
    inv = with_cluster(two_zones(), {("ns", "busy"): held}, {}, known=True)
    _, (note,) = _run(inv, _sharing('Pod "first"', pod(SHARED, node_selector={"zone": "a"})),
                      _sharing('Pod "second"', pod(SHARED, node_selector={"zone": "b"})))
    assert (note.reason, note.severity.value) == ("SatisfiabilityUnknown", "warning")


def test_a_count_from_today_leaves_room_only_for_what_the_claim_is_not_reserved_for_yet() -> None:
    held = HeldClaim("ns", "shared-gpu", spec=None, reserved_for=tuple(f"p{i}" for i in range(200)))
    inv = with_cluster(two_zones(), {("ns", "shared-gpu"): held}, {}, known=True)
    got = count_replicas(pod(SHARED), inv, 100, now=True)
    assert got.fit == 56 and "200 of them taken already" in got.notes[0].message
    assert count_replicas(pod(SHARED), inv, 100).fit == 100  # with every device free: the limit alone
