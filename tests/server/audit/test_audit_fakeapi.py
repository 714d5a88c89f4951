"""The audit loop against the fake API server: list+watch of the audited kinds, one writer (a
Lease), PolicyReports that appear after the grace period and clear, Events, no flapping, and the
API's refusals — CRD missing (then Events and metrics only, until it appears), 403, 409,
429/500 with backoff."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from draguard.inventory.kube import KubeInventory
from draguard.inventory.kubeconfig import load_kube_config
from draguard.server.audit import AuditObjects, Auditor, AuditSettings
from fakeapi import FakeCluster
from kube.helpers import LoopThread, wait_for

from server.audit.objects import claim, device_class, node, pod, pool, template

SETTINGS = AuditSettings(period_seconds=1.0, grace_seconds=0.3, debounce_seconds=0.05, poll_seconds=0.02,
                         lease_seconds=2, writes_per_second=200, write_burst=200, identity="replica-a")


def seed(cluster: FakeCluster) -> None:
    cluster.put("deviceclasses", device_class())
    for n, memory in (("big", "80Gi"), ("small", "16Gi")):
        cluster.put("nodes", node(n))
        cluster.put("resourceslices", pool(n, memory))
    cluster.put("resourceclaimtemplates", template("team-a", "big-gpu", "40Gi"))
    cluster.put("resourceclaimtemplates", template("team-a", "any-gpu", "8Gi"))
    cluster.put("resourceclaimtemplates", template("team-b", "big-gpu", "40Gi"))
    cluster.put("pods", pod("team-b", "trainer", "big-gpu"))


class Running:
    def __init__(self, auditor: Auditor, inventory: KubeInventory) -> None:
        self.auditor = auditor
        self.inventory = inventory


@pytest.fixture
def start(kubeconfig: Path, loop_thread: LoopThread) -> Iterator[Any]:
    def _start(settings: AuditSettings = SETTINGS) -> Running:
        config = load_kube_config(kubeconfig)
        # claims_interval 0: claim changes published at once (the 10 s default spares reviews under churn)
        inventory = KubeInventory(config, debounce=0.02, backoff_initial=0.02, backoff_max=0.1, claims_interval=0.0)
        auditor = Auditor(inventory, AuditObjects(config, backoff=(0.02, 0.1), refused_retry=0.2), config, settings)
        loop_thread.submit(inventory.run())
        loop_thread.submit(auditor.run())
        return Running(auditor, inventory)

    yield _start


def reports(cluster: FakeCluster) -> dict[str, dict[str, Any]]:
    return {r["metadata"]["namespace"]: r for r in cluster.objects_of("policyreports")}


def report_writes(cluster: FakeCluster) -> list[tuple[str, str, str, str]]:
    return [w for w in cluster.writes if w[1] in ("policyreports", "clusterpolicyreports")]


def test_pool_removed_publishes_unsatisfiable_per_namespace_and_adding_it_back_clears(
    cluster: FakeCluster, start: Any
) -> None:
    seed(cluster)
    run = start()
    wait_for(lambda: run.auditor.passes["done"] >= 2, what="audit passes over the synced cluster")
    assert reports(cluster) == {}  # everything satisfiable: no report at all
    cluster.delete("resourceslices", "big-gpus")
    got = wait_for(lambda: len(reports(cluster)) == 2 and reports(cluster), what="reports in both namespaces")
    a, b = got["team-a"], got["team-b"]
    assert [(r["rule"], r["result"], r["resources"][0]["name"]) for r in a["results"]] == [
        ("Unsatisfiable", "fail", "big-gpu")]
    assert a["summary"]["fail"] == 1 and "40Gi" in a["results"][0]["message"]
    assert a["results"][0]["resources"][0] == {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                                               "name": "big-gpu", "namespace": "team-a", "uid": "uid-team-a-big-gpu"}
    assert "team-b" not in str(a) and "trainer" not in str(a)  # a namespace's report speaks of its own objects
    assert "team-a" not in str(b)
    # team-b's pending pod "trainer" uses that template: the pod can never run either (workloads)
    events = wait_for(lambda: len(cluster.objects_of("events")) == 3 and cluster.objects_of("events"), what="Events")
    assert sorted((e["metadata"]["namespace"], e["involvedObject"]["name"], e["reason"]) for e in events) == [
        ("team-a", "big-gpu", "Unsatisfiable"), ("team-b", "big-gpu", "Unsatisfiable"),
        ("team-b", "trainer", "Unsatisfiable")]
    stats = run.auditor.stats()
    assert stats["leader"] and stats["results"] == {("Unsatisfiable", "fail"): 3}
    # further passes: nothing changed, nothing written, no Event twice
    writes = len(report_writes(cluster))
    done = run.auditor.passes["done"]
    wait_for(lambda: run.auditor.passes["done"] >= done + 2, what="two more passes")
    assert len(report_writes(cluster)) == writes and len(cluster.objects_of("events")) == 3
    # the pool comes back: the results clear and the reports go
    cluster.put("resourceslices", pool("big", "80Gi"))
    wait_for(lambda: reports(cluster) == {}, what="reports deleted once satisfiable again")
    assert run.auditor.stats()["results"] == {}


def test_deleted_object_clears_its_result(cluster: FakeCluster, start: Any) -> None:
    seed(cluster)
    cluster.delete("resourceslices", "big-gpus")
    start()
    wait_for(lambda: len(reports(cluster)) == 2, what="reports")
    cluster.delete("resourceclaimtemplates", "big-gpu", namespace="team-b")
    wait_for(lambda: set(reports(cluster)) == {"team-a"}, what="team-b's report gone with its template")


def test_no_flapping_on_a_rolling_update(cluster: FakeCluster, start: Any) -> None:
    seed(cluster)
    run = start(replace(SETTINGS, grace_seconds=3.0))
    wait_for(lambda: run.auditor.passes["done"] >= 1, what="first pass")
    cluster.delete("resourceslices", "big-gpus")  # the driver restarts on node big ...
    wait_for(lambda: run.auditor.pending >= 2, what="findings pending within the grace period")
    cluster.put("resourceslices", pool("big", "80Gi"))  # ... and publishes its slice again
    wait_for(lambda: run.auditor.pending == 0 and run.auditor.passes["done"] >= 3, what="pending cleared")
    assert report_writes(cluster) == [] and cluster.objects_of("events") == []


def test_inventory_not_synced_skips_the_pass(kubeconfig: Path, cluster: FakeCluster, loop_thread: LoopThread) -> None:
    seed(cluster)
    cluster.delete("resourceslices", "big-gpus")
    config = load_kube_config(kubeconfig)
    never = KubeInventory(config)  # not running: never synced
    auditor = Auditor(never, AuditObjects(config, backoff=(0.02, 0.1)), config, SETTINGS)
    loop_thread.submit(auditor.run())
    wait_for(lambda: auditor.passes["skipped"] >= 1, what="a skipped pass")
    assert auditor.passes["done"] == 0 and report_writes(cluster) == []


def test_without_the_crd_events_and_metrics_only_until_it_appears(
    cluster: FakeCluster, start: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="draguard.audit")
    cluster.policy_reports_installed = False
    seed(cluster)
    cluster.delete("resourceslices", "big-gpus")
    run = start()
    wait_for(lambda: len(cluster.objects_of("events")) == 3, what="Events without the CRD")
    done = run.auditor.passes["done"]
    wait_for(lambda: run.auditor.passes["done"] >= done + 2, what="more passes")
    assert report_writes(cluster) == []
    assert run.auditor.stats()["reports_enabled"] is False
    assert run.auditor.stats()["results"] == {("Unsatisfiable", "fail"): 3}
    said = [r for r in caplog.records if "not installed" in r.getMessage()]
    assert len(said) == 1  # said once, not per pass
    cluster.policy_reports_installed = True  # the CRD is installed later
    wait_for(lambda: len(reports(cluster)) == 2, what="reports once the CRD appears")
    assert len(cluster.objects_of("events")) == 3  # no Event twice
    assert any("CRD found" in r.getMessage() for r in caplog.records)


def test_api_faults_are_retried_or_survived(cluster: FakeCluster, start: Any) -> None:
    seed(cluster)
    cluster.delete("resourceslices", "big-gpus")
    cluster.object_fault("create", "policyreports", 429, 500)  # backoff, then the write goes through
    cluster.forbidden.add(("create", "events"))  # RBAC without events: reports still written
    run = start()
    wait_for(lambda: len(reports(cluster)) == 2, what="reports despite 429/500")
    calls = wait_for(lambda: ("create events", "forbidden") in run.auditor.stats()["writes"]
                     and run.auditor.stats()["writes"], what="the Event refused")
    assert calls[("create policyreports", "retried")] == 2
    done = run.auditor.passes["done"]
    wait_for(lambda: run.auditor.passes["done"] >= done + 1, what="another pass")
    assert run.auditor.stats()["writes"][("create events", "forbidden")] == 1  # tried once, then left alone
    # someone else rewrote a report: 409 on our update, re-read, written over
    cluster.put_object("policyreports", {**reports(cluster)["team-a"], "results": [], "summary": {}})
    cluster.object_fault("update", "policyreports", 409)
    cluster.put("resourceclaimtemplates", template("team-a", "big-gpu-2", "50Gi"))
    wait_for(lambda: len(reports(cluster)["team-a"]["results"]) == 2, what="team-a rewritten after a 409")
    assert run.auditor.stats()["writes"][("update policyreports", "conflict")] >= 1


def test_one_writer_among_replicas_and_failover_keeps_reports(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    seed(cluster)
    cluster.delete("resourceslices", "big-gpus")
    config = load_kube_config(kubeconfig)
    inventory = KubeInventory(config, debounce=0.02, claims_interval=0.0)
    first_loop, second_loop, inv_loop = LoopThread(), LoopThread(), LoopThread()
    try:
        inv_loop.submit(inventory.run())
        one = Auditor(inventory, AuditObjects(config), config, SETTINGS)
        two = Auditor(inventory, AuditObjects(config), config, replace(SETTINGS, identity="replica-b"))
        first_loop.submit(one.run())
        wait_for(lambda: one.leader, what="replica-a leads")
        second_loop.submit(two.run())
        wait_for(lambda: len(reports(cluster)) == 2, what="reports by the leader")
        assert len(cluster.objects_of("events")) == 3
        wait_for(lambda: two.passes == {} and not two.leader and two.events is not None, what="b follows")
        assert two.passes == {}  # the follower does not even review
        written = len(report_writes(cluster))
        first_loop.stop()  # the leader goes away (its Lease is released on the way out)
        wait_for(lambda: two.leader and two.passes["done"] >= 2, timeout=15, what="replica-b takes over")
        assert len(report_writes(cluster)) == written  # seeded from the reports: nothing rewritten
        assert len(cluster.objects_of("events")) == 3  # nor announced again
    finally:
        for lt in (second_loop, inv_loop):
            lt.stop()


def test_capacity_in_use_appears_while_gpus_are_held_and_clears_when_freed(cluster: FakeCluster, start: Any) -> None:
    """The "now" findings: a claim that fits an empty cluster but not today's allocations gets a
    ``CapacityInUse`` warning in its own namespace's report — holders elsewhere counted, never
    named — and the result goes once a holder is deleted (capacity freed)."""
    cluster.put("deviceclasses", device_class())
    cluster.put("nodes", node("n1"))
    cluster.put("resourceslices", pool("n1", "80Gi"))  # two GPUs
    for i in range(2):
        held = claim("team-a", f"holder-{i}", "8Gi", allocated=True)
        held["status"]["allocation"]["devices"]["results"][0].update(pool="n1", device=f"gpu-{i}")
        cluster.put("resourceclaims", held)
    cluster.put("resourceclaims", claim("team-b", "waiting", "8Gi"))
    run = start()
    got = wait_for(lambda: reports(cluster).get("team-b"), what="team-b's report")
    results = [(r["rule"], r["result"], r["resources"][0]["name"]) for r in got["results"]]
    assert ("CapacityInUse", "warn", "waiting") in results, results
    assert "holder" not in str(got) and "team-a" not in str(got)  # counts, never names, of other namespaces
    assert "team-a" not in reports(cluster)  # the holders are allocated: not audited
    cluster.delete("resourceclaims", "holder-0", namespace="team-a")  # a job ends: a GPU is free
    wait_for(lambda: "team-b" not in reports(cluster), what="the result cleared once capacity is free")
    assert run.auditor.stats()["results"] == {}


def test_only_unscheduled_pods_are_watched(cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    cluster.put("pods", pod("team-a", "running", "t", node_name="n1"))
    cluster.put("pods", pod("team-a", "waiting", "t"))
    objects = AuditObjects(load_kube_config(kubeconfig), backoff=(0.02, 0.1))
    loop_thread.submit(objects.run())
    wait_for(lambda: objects.synced, what="listed")
    assert [o["metadata"]["name"] for o in objects.objects() if o["kind"] == "Pod"] == ["waiting"]
    assert any(q.get("fieldSelector") == "spec.nodeName=" for q in cluster.list_requests("pods"))
    cluster.put("pods", pod("team-a", "waiting", "t", node_name="n1"))  # scheduled: it leaves the watch
    wait_for(lambda: not [o for o in objects.objects() if o["kind"] == "Pod"], what="the scheduled pod gone")


def test_the_audit_watch_survives_gone_malformed_and_dropped_streams_and_reports_a_refused_resource(
        cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    """The audit reads through the inventory's reflector (app/inventory/reflector.py): 410 inside
    the stream and a compacted history relist, a line of garbage relists after a pause, a cut
    stream resumes — and a 403 on one resource is reported while the others stay current."""
    cluster.forbidden.add(("list", "deployments"))
    objects = AuditObjects(load_kube_config(kubeconfig), backoff=(0.02, 0.1), refused_retry=0.2)
    loop_thread.submit(objects.run())
    wait_for(lambda: objects.synced, what="listed (the refused resource counts as done)")
    assert set(objects.refused()) == {"deployments"} and objects.refused()["deployments"].startswith("HTTP 403: ")
    lists = len(cluster.list_requests("resourceclaimtemplates"))
    cluster.fault("resourceclaimtemplates", "gone")
    cluster.compact()
    cluster.put("resourceclaimtemplates", template("team-a", "after-gone", "8Gi"))
    # the put may reach the open stream just before its 410 does: wait for the object *and* the relist
    wait_for(lambda: any(o["metadata"]["name"] == "after-gone" for o in objects.objects())
             and len(cluster.list_requests("resourceclaimtemplates")) > lists, what="relisted after 410")
    for fault, name in (("malformed", "after-garbage"), ("drop", "after-drop")):
        cluster.fault("resourceclaimtemplates", fault)
        cluster.put("resourceclaimtemplates", template("team-a", name, "8Gi"))
        wait_for(lambda n=name: any(o["metadata"]["name"] == n for o in objects.objects()), what=f"current after {fault}")
    assert objects.restarts >= 2
    cluster.forbidden.clear()  # RBAC applied: the slow retry lists them
    wait_for(lambda: not objects.refused(), what="the refused resource read once allowed")
