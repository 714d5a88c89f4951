"""The audit pass without an API server: what is audited, results per object, clearing, the
memory of answers (unchanged objects against an unchanged snapshot are not reviewed again), the
grace period, the PolicyReport shape and the token bucket."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from draguard.inventory import build_inventory
from draguard.k8s import Severity
from draguard.server.audit import (
    AuditEngine,
    AuditFinding,
    GraceTracker,
    Subject,
    TokenBucket,
    audited,
    build_reports,
    report_identities,
)

from server.audit.objects import claim, deployment, device_class, node, pod, pool, template

FULL = [device_class(), pool("big", "80Gi"), pool("small", "16Gi"), node("big"), node("small")]
SMALL = [device_class(), pool("small", "16Gi"), node("small")]


def inventory(objects: list[dict[str, Any]]) -> Any:
    return build_inventory(objects)


def reasons(result: Any) -> set[tuple[str, str, str, str]]:
    return {(f.subject.kind, f.subject.namespace, f.subject.name, f.reason) for f in result.findings}


# ------------------------------------------------------------------ what is audited
@pytest.mark.parametrize(("obj", "expected"), [
    (template("a", "t", "8Gi"), True),
    (claim("a", "c", "8Gi"), True),
    (claim("a", "c", "8Gi", allocated=True), False),  # holds its devices: not asked again
    (claim("a", "c", "8Gi", owner="p"), False),  # generated from a template: the template answers
    (pod("a", "p", "t"), True),
    (pod("a", "p", "t", node_name="big"), False),  # scheduled
    (pod("a", "p", "t", phase="Running"), False),
    (deployment("a", "d", "t"), True),
    (deployment("a", "rs", "t", owner_kind="Deployment"), False),  # its Deployment is audited
])
def test_audited_objects(obj: dict[str, Any], expected: bool) -> None:
    assert audited(obj) is expected


def test_pod_without_dra_is_not_audited() -> None:
    plain = pod("a", "p", "t")
    del plain["spec"]["resourceClaims"]
    assert audited(plain) is False
    plain["spec"]["containers"][0]["resources"] = {"limits": {"example.com/gpu": "1"}}
    assert audited(plain) is True  # an extended resource a DeviceClass may back


def test_deleting_object_is_not_audited() -> None:
    obj = template("a", "t", "8Gi")
    obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert audited(obj) is False


# ------------------------------------------------------------------ a pass
def test_node_pool_removed_makes_templates_unsatisfiable_and_adding_it_back_clears() -> None:
    objects = [template("a", "t40", "40Gi"), template("b", "t40", "40Gi"), template("a", "t8", "8Gi")]
    engine = AuditEngine()
    assert engine.evaluate(objects, inventory(FULL)).findings == []
    after = engine.evaluate(objects, inventory(SMALL))
    assert reasons(after) == {("ResourceClaimTemplate", "a", "t40", "Unsatisfiable"),
                              ("ResourceClaimTemplate", "b", "t40", "Unsatisfiable")}
    assert all(f.severity is Severity.ERROR and "40Gi" in f.message for f in after.findings)
    assert engine.evaluate(objects, inventory(FULL)).findings == []


def test_a_fixed_or_deleted_object_clears_its_result() -> None:
    engine = AuditEngine()
    inv = inventory(SMALL)
    assert reasons(engine.evaluate([template("a", "t", "40Gi")], inv))
    fixed = template("a", "t", "8Gi", rv="2")
    assert engine.evaluate([fixed], inv).findings == []
    assert engine.evaluate([], inv).findings == []


def test_unchanged_objects_and_snapshot_are_not_reviewed_again() -> None:
    engine = AuditEngine(classes=False)
    inv = inventory(SMALL)
    objects = [template(ns, "t40", "40Gi") for ns in ("a", "b", "c")]
    # identical objects of one namespace share one review (a ReplicaSet's pods, say)
    objects += [pod("a", f"p{i}", "t40") for i in range(5)]
    first = engine.evaluate(objects, inv)
    assert first.audited == 8 and first.reviewed == 4  # 3 templates + 1 pod content (never across namespaces)
    again = engine.evaluate(objects, inv)
    assert again.reviewed == 0 and reasons(again) == reasons(first)
    changed = [*objects[:2], template("c", "t40", "8Gi", rv="2"), *objects[3:]]
    third = engine.evaluate(changed, inv)
    assert third.reviewed == 1
    assert ("ResourceClaimTemplate", "c", "t40", "Unsatisfiable") not in reasons(third)
    # a new snapshot: each content's engine answers are asked again of the spec or request kept from
    # its review, and are equal, so its answer is carried instead of reviewed
    fourth = engine.evaluate(changed, inventory(SMALL))
    assert (fourth.reviewed, fourth.carried) == (0, 4)
    assert reasons(fourth) == reasons(third)


def test_device_class_no_device_serves_any_more_is_a_cluster_finding() -> None:
    engine = AuditEngine()
    gone = [device_class(), device_class("tpu", driver="tpu.example.com"), pool("small", "16Gi"), node("small")]
    found = [f for f in engine.evaluate([], inventory(gone)).findings if f.subject.kind == "DeviceClass"]
    assert [(f.subject.name, f.reason, f.severity) for f in found] == [
        ("tpu", "SatisfiabilityUnknown", Severity.WARNING)]
    assert found[0].message.startswith("no device of the inventory can be allocated for DeviceClass tpu: ")
    assert 'request "' not in found[0].message


# ------------------------------------------------------------------ grace period
def finding(name: str, reason: str = "Unsatisfiable", message: str = "m") -> AuditFinding:
    return AuditFinding(Subject("ResourceClaimTemplate", "a", name, "u"), reason, Severity.ERROR, message)


def test_grace_period_publishes_only_what_persisted() -> None:
    tracker = GraceTracker(10)
    assert tracker.update([finding("t")], now=100) == ([], 1)
    assert tracker.update([finding("t")], now=105) == ([], 1)
    published, pending = tracker.update([finding("t", message="newer figures")], now=110)
    assert [f.message for f in published] == ["newer figures"] and pending == 0
    # gone for one pass: the clock starts again
    assert tracker.update([], now=111) == ([], 0)
    assert tracker.update([finding("t")], now=112) == ([], 1)


def test_grace_seeded_from_existing_reports_publishes_at_once() -> None:
    report = build_reports([finding("t")], {finding("t").identity: 50.0})["a"]
    tracker = GraceTracker(10)
    tracker.seed(report_identities(report), now=100)
    published, _ = tracker.update([finding("t")], now=100)
    assert [f.subject.name for f in published] == ["t"]
    assert tracker.pending_since()[finding("t").identity] == 50.0  # its timestamp is kept


# ------------------------------------------------------------------ report shape
def test_policy_report_shape() -> None:
    warn = AuditFinding(Subject("Pod", "b", "p", "uid-p", "v1"), "CapacityInUse", Severity.WARNING, "held", "spec.x")
    budget = AuditFinding(Subject("Pod", "b", "q", "", "v1"), "SatisfiabilityUnknown", Severity.WARNING, "t",
                          fail_open="search")
    cls = AuditFinding(Subject("DeviceClass", "", "gpu", "", "resource.k8s.io/v1"), "SatisfiabilityUnknown",
                       Severity.WARNING, "none")
    reports = build_reports([finding("t"), warn, budget, cls], {})
    assert set(reports) == {"a", "b", ""}
    b = reports["b"]
    assert b["apiVersion"] == "wgpolicyk8s.io/v1alpha2" and b["kind"] == "PolicyReport"
    assert b["metadata"] == {"name": "draguard", "namespace": "b", "labels": {"app.kubernetes.io/managed-by": "draguard"}}
    assert b["summary"] == {"pass": 0, "fail": 0, "warn": 1, "error": 1, "skip": 0}
    first = b["results"][0]
    assert first == {"policy": "draguard", "rule": "CapacityInUse", "result": "warn", "severity": "medium",
                     "scored": True, "source": "draguard", "category": "DRA", "message": "held",
                     "timestamp": {"seconds": 0, "nanos": 0},
                     "resources": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "namespace": "b", "uid": "uid-p"}],
                     "properties": {"field": "spec.x"}}
    assert b["results"][1]["result"] == "error"
    assert reports["a"]["summary"]["fail"] == 1 and reports["a"]["results"][0]["severity"] == "high"
    cluster = reports[""]
    assert cluster["kind"] == "ClusterPolicyReport" and "namespace" not in cluster["metadata"]
    assert cluster["results"][0]["resources"] == [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                                    "name": "gpu"}]


def test_report_results_are_capped() -> None:
    many = [finding(f"t{i:04d}") for i in range(1005)]
    report = build_reports(many, {})["a"]
    assert len(report["results"]) == 1000
    assert report["metadata"]["annotations"] == {"draguard.dev/results-omitted": "5"}


# ------------------------------------------------------------------ token bucket
def test_token_bucket() -> None:
    now = [0.0]
    bucket = TokenBucket(2, 3, clock=lambda: now[0])
    assert [bucket.try_take() for _ in range(4)] == [True, True, True, False]
    now[0] = 0.5
    assert bucket.try_take() is True and bucket.try_take() is False
    with pytest.raises(ValueError):
        TokenBucket(0, 1)


def test_token_bucket_waits() -> None:
    bucket = TokenBucket(50, 1)

    async def take_three() -> None:
        for _ in range(3):
            await bucket.take()

    asyncio.run(take_three())
    assert bucket.waited > 0


def test_clean_answers_are_shared_across_namespaces_findings_never() -> None:
    engine = AuditEngine(classes=False)
    inv = inventory(SMALL)
    objects: list[dict[str, Any]] = []
    for ns in (f"ns{i}" for i in range(20)):
        objects += [template(ns, "t8", "8Gi"), pod(ns, "p", "t8")]
    first = engine.evaluate(objects, inv)
    assert first.findings == [] and first.audited == 40
    assert first.reviewed == 2  # one template, one pod: the other namespaces' contents are equal and clean
    inv = inventory(SMALL)
    again = engine.evaluate(objects, inv)  # a new snapshot: the answers are carried, the shared
    assert (again.reviewed, again.carried) == (0, 40)  # engine answers asked once per representative
    # findings are each namespace's own review (messages may name the namespace's own objects)
    unsatisfiable = [template(f"ns{i}", "t40", "40Gi") for i in range(3)]
    found = engine.evaluate(objects + unsatisfiable, inv)
    assert found.reviewed == 3
    assert {(f.subject.namespace, f.reason) for f in found.findings} == {
        (f"ns{i}", "Unsatisfiable") for i in range(3)}
    # a pod whose template is missing in its namespace is not sharing the others' clean answer
    lonely = pod("elsewhere", "p", "t8")
    assert engine.evaluate([*objects, lonely], inv).reviewed == 1


def test_objects_not_audited_keep_only_their_metadata() -> None:
    from draguard.server.audit import AUDIT_RESOURCES
    from draguard.server.audit.watch import trim

    by_kind = {r.kind: r for r in AUDIT_RESOURCES}
    assert "spec" in trim(pod("a", "p", "t"), by_kind["Pod"])
    running = trim(pod("a", "p", "t", phase="Running"), by_kind["Pod"])
    assert "spec" not in running and running["metadata"]["name"] == "p"
    held = trim(claim("a", "c", "8Gi", allocated=True), by_kind["ResourceClaim"])
    assert "spec" not in held and held["status"] == {"allocation": {}}
    assert by_kind["Pod"].field_selector == "spec.nodeName="  # only unscheduled Pods are listed at all


def test_report_stays_below_the_etcd_object_limit() -> None:
    long = [finding(f"t{i:04d}", message="x" * 2000) for i in range(900)]
    report = build_reports(long, {})["a"]
    kept = len(report["results"])
    assert 0 < kept < 900 and int(report["metadata"]["annotations"]["draguard.dev/results-omitted"]) == 900 - kept
    assert len(str(report)) < 1_500_000
