"""Gangs in the lint and webhook doors: a PodGroup's ``minCount`` (target 1.37 with ``GenericWorkload``),
PodGroup claims (``DRAWorkloadResourceClaims``), and draguard's own ``draguard.io/gang-min-count``.

The inventory is two nodes of three whole GPUs each: eight pods of one GPU place six of them, as
the real 1.37 scheduler did (``tests/data/workloads/oracle-1.37``)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from draguard.inventory import Inventory, build_inventory, with_cluster
from draguard.k8s import ResourceClaimSpec, Target, decode_text
from draguard.review import ReviewOptions, review_admission, review_documents

INVENTORY = """
apiVersion: v1
kind: Node
metadata: {name: node-a}
---
apiVersion: v1
kind: Node
metadata: {name: node-b}
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
       devices: [{name: gpu-0}, {name: gpu-1}, {name: gpu-2}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-b}
spec: {driver: gpu.example.com, nodeName: node-b, pool: {name: node-b, generation: 1, resourceSliceCount: 1},
       devices: [{name: gpu-0}, {name: gpu-1}, {name: gpu-2}]}
"""

ONE_GPU = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}}
"""

THREE_GPUS = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: three-gpus}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, allocationMode: ExactCount,
                                                          count: 3}}]}}}
"""

SHARED = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-gpu}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}
"""

GATES = Target("1.37", {"GenericWorkload": True, "DRAWorkloadResourceClaims": True})


def pod_group(policy: str, claims: str = "", api_version: str = "scheduling.k8s.io/v1beta1", name: str = "train") -> str:
    return f"""
apiVersion: {api_version}
kind: PodGroup
metadata: {{name: {name}}}
spec:
  schedulingPolicy: {policy}{claims}
"""


def job(pods: int = 8, template: str = "one-gpu", group: str | None = "train", name: str = "train",
        annotations: str = "", entry: str = "") -> str:
    membership = f"\n      schedulingGroup: {{podGroupName: {group}}}" if group else ""
    claim = entry or f"resourceClaimTemplateName: {template}"
    return f"""
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}{annotations}
spec:
  parallelism: {pods}
  completions: {pods}
  template:
    spec:
      restartPolicy: Never{membership}
      containers: [{{name: c, image: x, resources: {{claims: [{{name: gpu}}]}}}}]
      resourceClaims: [{{name: gpu, {claim}}}]
"""


def inventory() -> Inventory:
    return build_inventory(yaml.safe_load_all(INVENTORY))


def lint(*docs: str, target: Target = GATES) -> Any:
    decoded = decode_text("---\n".join(docs), "run.yaml")
    return review_documents(decoded.documents, inventory=inventory(), options=ReviewOptions(target=target))


def findings(review: Any, name: str = "train", kind: str = "Job") -> list[tuple[str, str]]:
    return [(f.reason, f.severity.value) for f in review.findings if f.name == name and f.kind == kind]


def the(review: Any, reason: str, name: str = "train") -> Any:
    (f,) = [f for f in review.findings if f.name == name and f.reason == reason]
    return f


# ------------------------------------------------------------------ PodGroup gangs
def test_an_eight_pod_gang_with_six_placeable_is_unsatisfiable() -> None:
    review = lint(ONE_GPU, pod_group("{gang: {minCount: 8}}"), job())
    assert findings(review) == [("Unsatisfiable", "error")]
    f = the(review, "Unsatisfiable")
    assert "6 of 8 could, the gang needs 8" in f.message and 'PodGroup "train"' in f.message
    assert f.field == "spec.template.spec.schedulingGroup"
    assert [o.ref.kind for o in review.objects] == ["ResourceClaimTemplate", "PodGroup", "Job"]  # checked, not skipped


def test_the_same_gang_with_min_count_six_is_admitted_with_the_count() -> None:
    review = lint(ONE_GPU, pod_group("{gang: {minCount: 6}}"), job())
    assert findings(review) == [("ReplicasExceedCapacity", "warning")]
    assert the(review, "ReplicasExceedCapacity").details["fit"] == 6


def test_a_basic_pod_group_is_no_gang() -> None:
    assert findings(lint(ONE_GPU, pod_group("{basic: {}}"), job())) == [("ReplicasExceedCapacity", "warning")]


@pytest.mark.parametrize("target", [Target("1.37"), Target("1.38"), Target("1.36"), Target("1.35", {"GenericWorkload": True})])
def test_without_the_workload_api_gangs_are_ignored(target: Target) -> None:
    review = lint(ONE_GPU, pod_group("{gang: {minCount: 8}}"), job(), target=target)
    assert findings(review) == [("ReplicasExceedCapacity", "warning")]
    assert [r.kind for r in review.skipped] == ["PodGroup"]  # not served: recognised, not checked


def test_target_1_36_ignores_the_v1alpha2_pod_group() -> None:
    # 1.36's scheduler gang-schedules only with the alpha GangScheduling gate as well
    target = Target("1.36", {"GenericWorkload": True})
    review = lint(ONE_GPU, pod_group("{gang: {minCount: 8}}", api_version="scheduling.k8s.io/v1alpha2"), job(),
                  target=target)
    assert findings(review) == [("ReplicasExceedCapacity", "warning")]


def test_a_gang_that_fits_says_nothing() -> None:
    assert findings(lint(ONE_GPU, pod_group("{gang: {minCount: 6}}"), job(pods=6))) == []


def test_pods_of_other_workloads_in_the_group_make_it_a_warning() -> None:
    # ten pods in the group, six GPUs: the other workload's pods are counted as if they all ran (an
    # upper bound), so "at most 8 of 10" for the first, "at most 8 of 10" (6 + 2) is no proof
    review = lint(ONE_GPU, pod_group("{gang: {minCount: 10}}"), job(), job(pods=2, name="helpers"))
    for name in ("train", "helpers"):
        assert ("Unsatisfiable", "error") not in findings(review, name)
    assert "at most 8 of 10 could, the gang needs 10" in the(review, "SatisfiabilityUnknown").message
    # with minCount 8 the bound (8) reaches it: nothing is said about the gang
    review = lint(ONE_GPU, pod_group("{gang: {minCount: 8}}"), job(), job(pods=2, name="helpers"))
    assert ("SatisfiabilityUnknown", "warning") not in findings(review)


def test_fewer_pods_than_min_count_wait_for_more() -> None:
    review = lint(ONE_GPU, pod_group("{gang: {minCount: 8}}"), job(pods=4))
    assert findings(review) == [("SatisfiabilityUnknown", "warning")]
    assert "linted workloads make 4" in the(review, "SatisfiabilityUnknown").message


def test_a_job_whose_pod_group_is_not_in_the_run_is_counted_as_before() -> None:
    assert findings(lint(ONE_GPU, job())) == [("ReplicasExceedCapacity", "warning")]


def test_a_pod_group_the_api_server_rejects_is_an_error_on_it_and_no_gang() -> None:
    review = lint(ONE_GPU, pod_group("{gang: {minCount: 0}}"), job())
    (f,) = [f for f in review.findings if f.kind == "PodGroup"]
    assert (f.severity.value, f.field) == ("error", "spec.schedulingPolicy.gang.minCount")
    assert findings(review) == [("ReplicasExceedCapacity", "warning")]


def test_workloads_are_checked_when_served() -> None:
    bad = """
apiVersion: scheduling.k8s.io/v1beta1
kind: Workload
metadata: {name: w}
spec: {podGroupTemplates: [{name: t, schedulingPolicy: {}}]}
"""
    review = lint(bad)
    (f,) = review.findings
    assert (f.kind, f.severity.value, f.field) == ("Workload", "error", "spec.podGroupTemplates[0].schedulingPolicy")
    good = bad.replace("schedulingPolicy: {}", "schedulingPolicy: {gang: {minCount: 2}}")
    assert lint(good).findings == []


# ------------------------------------------------------------------ PodGroup claims
GROUP_CLAIM = "\n  resourceClaims: [{name: gpu, resourceClaimTemplateName: three-gpus}]"


def test_a_pod_group_claim_is_made_once_for_the_group() -> None:
    review = lint(THREE_GPUS, pod_group("{gang: {minCount: 8}}", GROUP_CLAIM), job(template="three-gpus"))
    assert findings(review) == []  # one claim of three GPUs, all eight pods on its node


def test_without_the_claims_gate_each_pod_has_its_own_claim() -> None:
    target = Target("1.37", {"GenericWorkload": True})
    review = lint(THREE_GPUS, pod_group("{gang: {minCount: 8}}", GROUP_CLAIM), job(template="three-gpus"), target=target)
    assert "2 of 8 could, the gang needs 8" in the(review, "Unsatisfiable").message


def test_a_pod_claim_unlike_the_group_claim_is_the_pods_own() -> None:
    other = "\n  resourceClaims: [{name: gpus, resourceClaimTemplateName: three-gpus}]"  # another name: no match
    review = lint(THREE_GPUS, pod_group("{gang: {minCount: 8}}", other), job(template="three-gpus"))
    assert "2 of 8 could, the gang needs 8" in the(review, "Unsatisfiable").message


def test_a_shared_claim_the_pod_group_lists_is_not_held_to_256_consumers() -> None:
    group_claim = "\n  resourceClaims: [{name: gpu, resourceClaimName: shared-gpu}]"
    entry = "resourceClaimName: shared-gpu"
    listed = lint(SHARED, pod_group("{basic: {}}", group_claim), job(pods=300, entry=entry))
    assert findings(listed) == []
    # the PodGroup lists no claim: every pod takes an entry of reservedFor, 256 at most
    unlisted = lint(SHARED, pod_group("{basic: {}}"), job(pods=300, entry=entry))
    assert findings(unlisted) == [("ReplicasExceedCapacity", "warning")]
    assert "at most 256 of 300" in the(unlisted, "ReplicasExceedCapacity").message


def test_a_gang_is_not_denied_for_the_reserved_for_limit() -> None:
    # 300 pods on one claim with minCount 300: all pass Permit together; the limit acts at PreBind
    entry = "resourceClaimName: shared-gpu"
    review = lint(SHARED, pod_group("{gang: {minCount: 300}}"), job(pods=300, entry=entry))
    assert findings(review) == [("ReplicasExceedCapacity", "warning")]


# ------------------------------------------------------------------ draguard's own annotation
def annotated(value: str) -> str:
    return f"\n  annotations: {{draguard.io/gang-min-count: \"{value}\"}}"


@pytest.mark.parametrize("target", [Target("1.35"), Target("1.37"), GATES])
def test_the_annotation_makes_a_gang_where_the_api_is_absent(target: Target) -> None:
    review = lint(ONE_GPU, job(group=None, annotations=annotated("8")), target=target)
    assert findings(review) == [("Unsatisfiable", "error")]
    assert "6 of 8 could, the gang needs 8" in the(review, "Unsatisfiable").message
    assert the(review, "Unsatisfiable").field == "metadata.annotations[draguard.io/gang-min-count]"
    assert findings(lint(ONE_GPU, job(group=None, annotations=annotated("6")), target=target)) == [
        ("ReplicasExceedCapacity", "warning")]


def test_a_gang_that_needs_more_pods_than_the_workload_makes_never_starts() -> None:
    review = lint(ONE_GPU, job(pods=4, group=None, annotations=annotated("8")))
    assert "4 of 4 could, the gang needs 8" in the(review, "Unsatisfiable").message


def test_a_bad_annotation_is_a_warning() -> None:
    review = lint(ONE_GPU, job(group=None, annotations=annotated("all")))
    assert ("SatisfiabilityUnknown", "warning") in findings(review)
    assert ("Unsatisfiable", "error") not in findings(review)


def test_a_pod_group_wins_over_the_annotation() -> None:
    review = lint(ONE_GPU, pod_group("{gang: {minCount: 6}}"), job(annotations=annotated("8")))
    assert findings(review) == [("ReplicasExceedCapacity", "warning")]


def test_the_webhook_denies_an_annotated_gang_that_never_starts() -> None:
    spec = ResourceClaimSpec.model_validate(yaml.safe_load(ONE_GPU)["spec"]["spec"])
    cluster = with_cluster(inventory(), {}, {("default", "one-gpu"): spec}, known=True)  # serve --kube

    def admit(min_count: str) -> Any:
        deployment = yaml.safe_load(f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: default, annotations: {{draguard.io/gang-min-count: "{min_count}"}}}}
spec:
  replicas: 8
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: c, image: x, resources: {{claims: [{{name: gpu}}]}}}}]
      resourceClaims: [{{name: gpu, resourceClaimTemplateName: one-gpu}}]
""")
        return review_admission(kind="Deployment", operation="CREATE", obj=deployment, old_obj=None,
                                namespace="default", inventory=cluster, inventory_problem=None,
                                options=ReviewOptions(admission=True))

    denied = admit("8")
    assert denied.denied and [f.reason for f in denied.findings] == ["Unsatisfiable"]
    assert denied.findings[0].brief == "gang never starts: 6 of 8 could, the gang needs 8"
    admitted = admit("6")
    assert not admitted.denied and [f.reason for f in admitted.findings] == ["ReplicasExceedCapacity"]
