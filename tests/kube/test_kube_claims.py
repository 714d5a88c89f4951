"""The live inventory's ResourceClaims and ResourceClaimTemplates against the fake API server:
every namespace, kept reduced, allocations follow watch events, 410 relists, and a stream that
cannot be listed (no RBAC yet) neither blocks readiness nor makes answers unknown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from draguard.inventory import HeldClaim, Inventory
from draguard.inventory.kube import KubeInventory
from draguard.inventory.kubeconfig import load_kube_config
from fakeapi import FakeCluster

from kube.helpers import LoopThread, device_class, node, resource_slice, wait_for


def claim(name: str, ns: str, device: str | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}",
                     "managedFields": [{"manager": "kube-scheduler", "fieldsV1": {"f:status": {}}}]},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
    }
    if device is not None:
        obj["status"] = {
            "allocation": {"devices": {"results": [
                {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": device}]}},
            "reservedFor": [{"resource": "pods", "name": f"{name}-pod", "uid": "u1"}],
        }
    return obj


def template(name: str, ns: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name, "namespace": ns},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}


def seed(cluster: FakeCluster) -> None:
    cluster.put("deviceclasses", device_class("gpu"))
    cluster.put("resourceslices", resource_slice("node-1-gpu", "node-1", devices=3))
    cluster.put("nodes", node("node-1"))


def start(kubeconfig: Path, loop_thread: LoopThread, claims_interval: float = 0.0) -> KubeInventory:
    inv = KubeInventory(load_kube_config(kubeconfig), debounce=0.02, backoff_initial=0.02, backoff_max=0.1,
                        claims_interval=claims_interval)
    loop_thread.submit(inv.run())
    return inv


def snap(inv: KubeInventory) -> Inventory:
    got = inv.snapshot()
    assert got is not None
    return got


def held(inv: KubeInventory) -> set[str]:
    s = inv.snapshot()
    if s is None:
        return set()
    return {s.devices[i].name for i in s.cluster.allocations.dedicated}


def test_claims_of_every_namespace_are_listed_reduced(cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    seed(cluster)
    cluster.put("resourceclaims", claim("train", "team-a", "gpu-0"))
    cluster.put("resourceclaims", claim("train", "team-b", "gpu-1"))  # same name, other namespace
    cluster.put("resourceclaims", claim("waiting", "team-a"))
    cluster.put("resourceclaimtemplates", template("gpu", "team-a"))
    inv = start(kubeconfig, loop_thread)
    wait_for(lambda: inv.synced and inv.claims_known and snap(inv).cluster.known, what="claims listed")
    state = snap(inv).cluster
    assert set(state.claims) == {("team-a", "train"), ("team-b", "train"), ("team-a", "waiting")}
    assert state.claims[("team-a", "train")].reserved_for == ("train-pod",)
    assert set(state.templates) == {("team-a", "gpu")}
    assert held(inv) == {"gpu-0", "gpu-1"}
    # kept reduced, never raw: no managed fields or status dicts in memory, and not among the objects
    stored = [v for s in inv._streams.values() if s.resource.held == "claim" for v in s.objects.values()]
    assert stored and all(isinstance(v, HeldClaim) for v in stored)
    assert {o["kind"] for o in inv.objects()} == {"DeviceClass", "ResourceSlice", "Node"}
    assert inv.status()["objects"]["resourceclaims"] == 3


def test_allocations_follow_watch_events(cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    seed(cluster)
    inv = start(kubeconfig, loop_thread)
    wait_for(lambda: inv.synced and snap(inv).cluster.known, what="sync")
    assert held(inv) == set()
    cluster.put("resourceclaims", claim("a", "team-a"))
    wait_for(lambda: ("team-a", "a") in snap(inv).cluster.claims, what="added claim")
    assert held(inv) == set()
    builds = inv.builds
    cluster.put("resourceclaims", claim("a", "team-a", "gpu-2"))  # the scheduler allocates it
    wait_for(lambda: held(inv) == {"gpu-2"}, what="allocation")
    assert inv.builds > builds
    cluster.delete("resourceclaims", "team-a/a")  # pod done, claim deleted
    wait_for(lambda: held(inv) == set() and not snap(inv).cluster.claims, what="deleted claim")


def test_claim_changes_do_not_rebuild_the_devices(cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    seed(cluster)
    inv = start(kubeconfig, loop_thread)
    wait_for(lambda: inv.synced and snap(inv).cluster.known, what="sync")
    before = snap(inv)
    cluster.put("resourceclaims", claim("a", "team-a", "gpu-0"))
    wait_for(lambda: held(inv) == {"gpu-0"}, what="allocation")
    after = snap(inv)
    assert after is not before and after.devices is before.devices and after.cache is before.cache


def test_gone_and_dropped_watches_of_claims_relist(cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    seed(cluster)
    cluster.put("resourceclaims", claim("a", "team-a", "gpu-0"))
    inv = start(kubeconfig, loop_thread)
    wait_for(lambda: held(inv) == {"gpu-0"}, what="sync")
    relists = inv.relists
    wait_for(lambda: cluster.watch_requests("resourceclaims"), what="claims watch")
    cluster.fault("resourceclaims", "gone")
    cluster.compact()
    cluster.put("resourceclaims", claim("b", "team-b", "gpu-1"))
    cluster.delete("resourceclaims", "team-a/a")
    # the put may reach the open stream just before its 410 does: wait for the state *and* the relist
    wait_for(lambda: held(inv) == {"gpu-1"} and inv.relists > relists, what="state after relist")
    cluster.fault("resourceclaims", "drop")
    cluster.put("resourceclaims", claim("c", "team-c", "gpu-2"))
    wait_for(lambda: held(inv) == {"gpu-1", "gpu-2"}, what="state after a dropped watch")
    cluster.fault("resourceclaims", "malformed")
    cluster.put("resourceclaims", claim("c", "team-c"))
    wait_for(lambda: held(inv) == {"gpu-1"}, what="state after a malformed event")


def test_claims_that_cannot_be_listed_block_nothing(cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    """An operator who upgraded without the new RBAC rules: readiness and every "ever" answer
    stand; the cluster's claims are simply not known (nothing is "not now")."""
    seed(cluster)
    cluster.forbidden.add(("list", "resourceclaims"))
    cluster.put("resourceclaims", claim("a", "team-a", "gpu-0"))
    inv = start(kubeconfig, loop_thread)
    wait_for(lambda: inv.synced, what="sync without claims")
    wait_for(lambda: inv._streams["resourceclaims"].last_error, what="claims refused")
    assert inv.problem() is None and not inv.claims_known
    assert not snap(inv).cluster.known and held(inv) == set()
    assert "403" in inv._streams["resourceclaims"].last_error
    cluster.forbidden.clear()  # RBAC applied: the next retry lists them
    wait_for(lambda: held(inv) == {"gpu-0"} and snap(inv).cluster.known, what="claims after RBAC")


def test_claims_only_rebuilds_are_paced_by_their_own_cost(
    cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread, monkeypatch: Any
) -> None:
    """Claim events are applied one by one and a claims-only rebuild only publishes them; should
    publishing ever be expensive under allocation churn, it must not starve the reviews: a
    claims-only publish waits a multiple of what the previous one cost (a lower bound only: load
    can only make it later)."""
    import time

    import draguard.inventory.kube as kube
    from draguard.inventory.live import LiveClaims

    real = LiveClaims.snapshot

    def slow_snapshot(self: LiveClaims) -> Inventory:
        time.sleep(0.1)  # stands for a publish that became expensive
        return real(self)

    monkeypatch.setattr(LiveClaims, "snapshot", slow_snapshot)
    seed(cluster)
    inv = start(kubeconfig, loop_thread)
    wait_for(lambda: inv.synced and snap(inv).cluster.known, what="sync")
    cluster.put("resourceclaims", claim("a", "team-a", "gpu-0"))
    wait_for(lambda: held(inv) == {"gpu-0"}, what="allocation")
    assert inv._claims_pace >= kube._CLAIMS_PACE_FACTOR * 0.1
    asked = time.monotonic()
    cluster.put("resourceclaims", claim("b", "team-a", "gpu-1"))
    wait_for(lambda: held(inv) == {"gpu-0", "gpu-1"}, what="second allocation")
    assert time.monotonic() - asked >= kube._CLAIMS_PACE_FACTOR * 0.1  # paced: not the 0.02 s debounce alone


def _not_now(inv: KubeInventory) -> list[str]:
    """The CapacityInUse findings of a review of a one-GPU claim against the current snapshot."""
    import yaml
    from draguard.k8s import Reason, decode_text
    from draguard.review import ReviewOptions, review_documents

    text = yaml.safe_dump({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                           "metadata": {"name": "want", "namespace": "team-a"},
                           "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}})
    got = review_documents(decode_text(text, "want.yaml").documents, inventory=snap(inv), inventory_objects=inv.objects(),
                           options=ReviewOptions())
    return [f.message for f in got.findings if f.reason == Reason.CAPACITY_IN_USE]


def test_a_watch_event_is_seen_by_the_next_now_check(cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    """Every GPU held: "not now"; one deallocated (MODIFIED) or deleted (DELETED) through the watch:
    it fits — each change applied to the live claims, with no full build between."""
    seed(cluster)
    for i in range(3):
        cluster.put("resourceclaims", claim(f"c{i}", "team-b", f"gpu-{i}"))
    inv = start(kubeconfig, loop_thread)
    wait_for(lambda: held(inv) == {"gpu-0", "gpu-1", "gpu-2"}, what="every GPU held")
    live = inv._live
    assert live is not None
    [message] = _not_now(inv)
    assert "fits an empty cluster but not today's allocations" in message
    cluster.put("resourceclaims", claim("c1", "team-b"))  # deallocated
    wait_for(lambda: held(inv) == {"gpu-0", "gpu-2"}, what="deallocation")
    assert _not_now(inv) == []
    cluster.put("resourceclaims", claim("c1", "team-b", "gpu-1"))  # allocated again
    wait_for(lambda: held(inv) == {"gpu-0", "gpu-1", "gpu-2"}, what="allocation")
    assert len(_not_now(inv)) == 1
    cluster.delete("resourceclaims", "c2", "team-b")
    wait_for(lambda: held(inv) == {"gpu-0", "gpu-1"}, what="deletion")
    assert _not_now(inv) == []
    assert inv._live is live  # applied event by event: no claim was summed again


@pytest.mark.parametrize("journal_max", [100_000, 1])
def test_claim_events_during_a_full_build_are_not_lost(
    cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread, monkeypatch: Any, journal_max: int
) -> None:
    """A device change sums every claim again in a worker thread; claim events that arrive while
    it runs are journaled and applied to its result — or, past the journal's bound, the result is
    published as it is and another full build follows."""
    import draguard.inventory.kube as kube

    monkeypatch.setattr(kube, "_JOURNAL_MAX", journal_max)
    full_builds: list[object] = []

    class Counted(kube.LiveClaims):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            full_builds.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(kube, "LiveClaims", Counted)
    import threading
    import time

    from draguard.inventory.build import InventoryBuilder

    builder = InventoryBuilder()
    building, release = threading.Event(), threading.Event()

    def slow_build(objects: Any) -> Inventory:
        objects = list(objects)
        if any(o["metadata"]["name"] == "node-2" for o in objects):
            building.set()
            release.wait(10)
        return builder.build(objects)

    seed(cluster)
    cluster.put("resourceclaims", claim("a", "team-a", "gpu-0"))
    inv = KubeInventory(load_kube_config(kubeconfig), build=slow_build, debounce=0.02, backoff_initial=0.02, backoff_max=0.1,
                        claims_interval=0.0)
    loop_thread.submit(inv.run())
    wait_for(lambda: held(inv) == {"gpu-0"}, what="sync")
    cluster.put("nodes", node("node-2"))  # a device change: full build, held up in the thread
    assert building.wait(10)
    cluster.put("resourceclaims", claim("b", "team-a", "gpu-1"))
    cluster.delete("resourceclaims", "a", "team-a")
    wait_for(lambda: inv._journal or inv._journal_broken, what="events journaled")
    time.sleep(0.1)
    before = len(full_builds)
    release.set()
    wait_for(lambda: held(inv) == {"gpu-1"} and "node-2" in snap(inv).nodes, what="build with the journal applied")
    assert inv._live is not None and inv._journal is None
    time.sleep(0.2)  # time for a full build too many to show
    # the journal applied: that build stands; overflowed: one more build from the claims as they are
    assert len(full_builds) - before == (1 if journal_max > 2 else 2)


def test_claims_only_snapshots_are_at_least_an_interval_apart(
    cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread
) -> None:
    """Each new snapshot starts the "now" answers from cold caches: under churn, claims-only
    snapshots come no closer together than ``claims_interval`` (however cheap publishing is)."""
    import time

    seed(cluster)
    inv = start(kubeconfig, loop_thread, claims_interval=0.6)
    wait_for(lambda: inv.synced and snap(inv).cluster.known, what="sync")
    cluster.put("resourceclaims", claim("a", "team-a", "gpu-0"))
    wait_for(lambda: held(inv) == {"gpu-0"}, what="allocation")
    published = inv._published_at
    cluster.put("resourceclaims", claim("b", "team-a", "gpu-1"))
    wait_for(lambda: held(inv) == {"gpu-0", "gpu-1"}, what="second allocation")
    assert inv._published_at - published >= 0.6
    assert time.monotonic() - published >= 0.6
