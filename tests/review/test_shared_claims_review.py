"""Pods and workloads that share a ResourceClaim, in the lint and webhook doors: the reservedFor
limit of 256 consumers, and a claim pinned by the first pod of a lint run that uses it."""

from __future__ import annotations

from typing import Any

import yaml
from draguard.inventory import HeldClaim, Inventory, build_inventory, with_cluster
from draguard.k8s import ResourceClaimSpec, Target, decode_text
from draguard.review import ReviewOptions, review_admission, review_documents

INVENTORY = """
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {zone: a}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {zone: b}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: device.driver == "gpu.example.com"}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-a}
spec: {driver: gpu.example.com, nodeName: node-a, pool: {name: node-a, generation: 1, resourceSliceCount: 1},
       devices: [{name: gpu-0}, {name: gpu-1}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-b}
spec: {driver: gpu.example.com, nodeName: node-b, pool: {name: node-b, generation: 1, resourceSliceCount: 1},
       devices: [{name: gpu-0}, {name: gpu-1}]}
"""

CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-gpu}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}
"""

TEMPLATE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}}
"""


def inventory() -> Inventory:
    return build_inventory(yaml.safe_load_all(INVENTORY))


def deployment(replicas: int, entry: str = "resourceClaimName: shared-gpu", extra: str = "") -> str:
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:{extra}
      containers: [{{name: c, image: x, resources: {{claims: [{{name: gpu}}]}}}}]
      resourceClaims: [{{name: gpu, {entry}}}]
"""


def pod_doc(name: str, zone: str, extra: str = "") -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  nodeSelector: {{zone: {zone}}}{extra}
  containers: [{{name: c, image: x, resources: {{claims: [{{name: gpu}}]}}}}]
  resourceClaims: [{{name: gpu, resourceClaimName: shared-gpu}}]
"""


def lint(*docs: str, options: ReviewOptions | None = None, inv: Inventory | None = None) -> Any:
    decoded = decode_text("---\n".join(docs), "run.yaml")
    return review_documents(decoded.documents, inventory=inv or inventory(), options=options or ReviewOptions())


def findings(review: Any, name: str) -> list[tuple[str, str]]:
    return [(f.reason, f.severity.value) for f in review.findings if f.name == name]


# ------------------------------------------------------------------ reservedFor
def test_a_deployment_of_300_replicas_on_one_resource_claim_name_is_told_it_gets_at_most_256_running_pods() -> None:
    review = lint(CLAIM, deployment(300))
    (f,) = [f for f in review.findings if f.name == "web"]
    assert (f.reason, f.severity.value) == ("ReplicasExceedCapacity", "warning")
    assert f.message.startswith("at most 256 of 300 pods can run at once: a ResourceClaim's reservedFor holds at most 256")
    assert f.details is not None and (f.details["fit"], f.details["replicas"]) == (256, 300)
    assert f.field == "spec.template.spec.resourceClaims[0]"


def test_256_replicas_on_one_claim_are_fine_and_a_template_is_not_capped_by_the_limit() -> None:
    assert findings(lint(CLAIM, deployment(256)), "web") == []
    capped = lint(TEMPLATE, deployment(300, "resourceClaimTemplateName: gpu"))
    (f,) = [f for f in capped.findings if f.name == "web"]
    assert f.details is not None and f.details["fit"] == 4 and "reservedFor" not in f.message  # four GPUs, not the limit


def test_pods_that_may_be_reserved_as_their_pod_group_are_not_capped() -> None:
    group = "\n      schedulingGroup: {podGroupName: g}"
    gates = ReviewOptions(target=Target("1.37", {"GenericWorkload": True, "DRAWorkloadResourceClaims": True}))
    assert findings(lint(CLAIM, deployment(300, extra=group), options=gates), "web") == []
    # gate off: the pods are reserved one by one, whatever the template says
    off = lint(CLAIM, deployment(300, extra=group), options=ReviewOptions(target=Target("1.37")))
    assert findings(off, "web") == [("ReplicasExceedCapacity", "warning")]


def _full_claim(n: int) -> Inventory:
    """The inventory with the cluster's claim ``shared-gpu`` reserved for ``n`` pods."""
    spec = ResourceClaimSpec.model_validate(yaml.safe_load(CLAIM)["spec"])
    held = HeldClaim("default", "shared-gpu", spec=spec, reserved_for=tuple(f"p{i}" for i in range(n)))
    return with_cluster(inventory(), {("default", "shared-gpu"): held}, {}, known=True)


def test_the_webhook_warns_a_pod_whose_shared_claim_is_reserved_for_256_pods_and_never_denies_it() -> None:
    obj = yaml.safe_load(pod_doc("late", "a"))
    review = review_admission(kind="Pod", operation="CREATE", obj=obj, old_obj=None, namespace="default",
                              inventory=_full_claim(256), inventory_problem=None, options=ReviewOptions(admission=True))
    assert [(f.reason, f.severity.value) for f in review.findings] == [("CapacityInUse", "warning")]
    assert "reserved for 256 pods already" in review.findings[0].message
    room = review_admission(kind="Pod", operation="CREATE", obj=obj, old_obj=None, namespace="default",
                            inventory=_full_claim(255), inventory_problem=None, options=ReviewOptions(admission=True))
    assert room.findings == []


# ------------------------------------------------------------------ the first pod pins the claim
def test_a_pod_pinned_out_by_the_first_user_of_its_claim_is_unsatisfiable_in_lint() -> None:
    review = lint(CLAIM, pod_doc("first", "a"), pod_doc("second", "b"))
    assert findings(review, "first") == []
    assert findings(review, "second") == [("Unsatisfiable", "error")]
    (f,) = [f for f in review.findings if f.name == "second"]
    assert "default/shared-gpu" in f.message and 'Pod "first"' in f.message and "node-a" in f.message
    assert f.field == "spec.resourceClaims[0]"


def test_pods_that_share_a_node_are_fine() -> None:
    review = lint(CLAIM, pod_doc("first", "a"), pod_doc("second", "a"))
    assert findings(review, "first") == findings(review, "second") == []


def test_when_the_order_is_not_known_it_is_a_warning_only() -> None:
    # the claim comes after the pods: both wait for it, then either may go first
    late_claim = lint(pod_doc("first", "a"), pod_doc("second", "b"), CLAIM)
    assert findings(late_claim, "second") == [("SatisfiabilityUnknown", "warning")]
    # the first pod waits for its scheduling gate, or ends (restartPolicy Never) and lets the claim go
    for extra in ("\n  schedulingGates: [{name: wait}]", "\n  restartPolicy: Never",
                  "\n  priorityClassName: low"):
        review = lint(CLAIM, pod_doc("first", "a", extra), pod_doc("second", "b"))
        assert findings(review, "second") == [("SatisfiabilityUnknown", "warning")], extra
    # a Deployment's pods come from its controller, at a time of its own
    first = deployment(1, extra="\n      nodeSelector: {zone: a}")
    assert findings(lint(CLAIM, first, pod_doc("second", "b")), "second") == [("SatisfiabilityUnknown", "warning")]


def test_a_workload_after_the_pinning_pod_is_unsatisfiable_as_a_whole() -> None:
    later = deployment(2, extra="\n      nodeSelector: {zone: b}")
    review = lint(CLAIM, pod_doc("first", "a"), later)
    assert findings(review, "web") == [("Unsatisfiable", "error")]


def test_the_webhook_never_pins_a_claim_by_the_order_it_sees() -> None:
    inv = inventory()
    for name, zone in (("first", "a"), ("second", "b")):
        review = review_admission(kind="Pod", operation="CREATE", obj=yaml.safe_load(pod_doc(name, zone)), old_obj=None,
                                  namespace="default", inventory=inv, inventory_problem=None,
                                  options=ReviewOptions(admission=True))
        assert not any(f.reason == "Unsatisfiable" for f in review.findings)
