"""Pods that share a claim at the webhook (issue #37 item 1, live): a pod admitted while its shared
claim is unallocated and another pod of the namespace already uses it.

Whichever of the two the scheduler places first gets the claim allocated where it runs; a claim
stays where it is allocated, so when the two can use no common node the claim's devices reach the
other never runs.  The webhook does not know the scheduler's order: a warning naming the claim and
the other pod, never a denial.  The other pods reach the review through the snapshot's cluster
(``app.server.sharing.with_sharing_pods``, filled by the server's LIST).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from draguard.inventory import HeldClaim, Inventory, with_cluster
from draguard.k8s import AllocationResult, ResourceClaimSpec
from draguard.review import ObjectReview, ReviewOptions, review_admission
from draguard.server.sharing import with_sharing_pods
from review.test_shared_claims_review import CLAIM, deployment, inventory, pod_doc

ALLOCATED_ON_A = {
    "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-a", "device": "gpu-0"}]},
    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}]},
}


def cluster(*, allocated: bool = False, namespace: str = "default") -> Inventory:
    spec = ResourceClaimSpec.model_validate(yaml.safe_load(CLAIM)["spec"])
    allocation = AllocationResult.model_validate(ALLOCATED_ON_A) if allocated else None
    held = HeldClaim(namespace, "shared-gpu", spec=spec, allocation=allocation)
    return with_cluster(inventory(), {(namespace, "shared-gpu"): held}, {}, known=True)


def pod(name: str, zone: str, extra: str = "") -> dict[str, Any]:
    obj: dict[str, Any] = yaml.safe_load(pod_doc(name, zone, extra))
    obj["metadata"]["namespace"] = "default"
    return obj


def admit(obj: dict[str, Any], inv: Inventory, kind: str = "Pod") -> ObjectReview:
    return review_admission(kind=kind, operation="CREATE", obj=obj, old_obj=None, namespace="default", inventory=inv,
                            inventory_problem=None, options=ReviewOptions(admission=True))


def found(review: ObjectReview) -> list[tuple[str, str]]:
    return [(f.reason, f.severity.value) for f in review.findings]


def test_a_pod_that_shares_no_node_with_a_pending_user_of_its_claim_is_warned_never_denied() -> None:
    inv = with_sharing_pods(cluster(), (pod("first", "a"),))
    review = admit(pod("second", "b"), inv)
    assert not review.denied
    assert found(review) == [("SatisfiabilityUnknown", "warning")]
    (f,) = review.findings
    assert f.message.startswith("one of these pods may wait: ResourceClaim default/shared-gpu")
    assert 'Pod "first"' in f.message and 'Pod "second"' in f.message
    assert "whichever the scheduler places first pins the claim where the other cannot run" in f.message
    assert "node-a" in f.message and "node-b" in f.message
    assert f.field == "spec.resourceClaims[0]"
    assert f.details is not None and f.details["claim"] == "default/shared-gpu" and f.details["sharedWith"] == 'Pod "first"'


def test_pods_that_can_share_a_node_are_not_warned() -> None:
    inv = with_sharing_pods(cluster(), (pod("first", "a"),))
    assert found(admit(pod("second", "a"), inv)) == []
    # no nodeSelector at all: it may run where "first" does
    free = pod("second", "a")
    del free["spec"]["nodeSelector"]
    assert found(admit(free, inv)) == []


def test_without_the_other_pods_nothing_is_said() -> None:
    """The snapshot alone (a static inventory, lint's admission, a LIST that failed): today's answer."""
    assert found(admit(pod("second", "b"), cluster())) == []


def test_each_other_pod_is_named_that_the_reviewed_pod_may_wait_for() -> None:
    inv = with_sharing_pods(cluster(), (pod("first", "a"), pod("near", "b"), pod("third", "a")))
    review = admit(pod("second", "b"), inv)
    assert not review.denied
    named = sorted(f.details["sharedWith"] for f in review.findings if f.details)
    assert named == ['Pod "first"', 'Pod "third"']


def test_an_other_pod_that_names_another_claim_or_can_never_run_is_no_reason() -> None:
    other = pod("first", "a")
    other["spec"]["resourceClaims"][0]["resourceClaimName"] = "another"
    never = pod("never", "c")  # no node of zone c: it never runs, so it pins nothing
    inv = with_sharing_pods(cluster(), (other, never))
    assert found(admit(pod("second", "b"), inv)) == []


def test_an_allocated_claim_pins_as_before() -> None:
    """The allocation's node selector decides; the other pods change nothing (the server does not
    even ask for them: app/server/references.py)."""
    alone = admit(pod("second", "b"), cluster(allocated=True))
    assert found(alone) == [("Unsatisfiable", "error")]  # a fact: the claim's devices are on node-a
    shared = admit(pod("second", "b"), with_sharing_pods(cluster(allocated=True), (pod("first", "a"),)))
    assert found(shared) == found(alone)
    assert [f.message for f in shared.findings] == [f.message for f in alone.findings]
    assert found(admit(pod("second", "a"), with_sharing_pods(cluster(allocated=True), (pod("first", "a"),)))) == []


@pytest.mark.parametrize("zone", ["a", "b"])
def test_a_workload_is_warned_as_a_pod_is(zone: str) -> None:
    obj = yaml.safe_load(deployment(2, extra=f"\n      nodeSelector: {{zone: {zone}}}"))
    obj["metadata"]["namespace"] = "default"
    review = admit(obj, with_sharing_pods(cluster(), (pod("first", "a"),)), kind="Deployment")
    assert not review.denied
    if zone == "a":
        assert [f.reason for f in review.findings if f.reason == "SatisfiabilityUnknown"] == []
    else:
        (f,) = [f for f in review.findings if f.reason == "SatisfiabilityUnknown"]
        assert 'Deployment "web"' in f.message and 'Pod "first"' in f.message
