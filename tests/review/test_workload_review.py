"""Pods and workloads in the lint and webhook doors: read, validated, references resolved."""

from __future__ import annotations

from typing import Any

import yaml
from draguard.inventory import ClusterState, Inventory
from draguard.k8s import ResourceClaimSpec, Severity, decode_text, parse_workload_kinds
from draguard.review import ReviewOptions, review_admission, review_documents

TEMPLATE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
"""


def deployment(claims: str = "[{name: gpu}]", entries: str = "[{name: gpu, resourceClaimTemplateName: gpu}]",
               replicas: int = 2, name: str = "d") -> str:
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: d}}}}
  template:
    metadata: {{labels: {{app: d}}}}
    spec:
      volumes: [{{name: v, emptyDir: {{}}}}]
      containers:
      - name: c
        image: x
        ports: [{{containerPort: 80}}]
        resources:
          claims: {claims}
      resourceClaims: {entries}
"""


def lint(*docs: str, options: ReviewOptions | None = None, inventory: Inventory | None = None) -> Any:
    options = options or ReviewOptions()
    decoded = decode_text("---\n".join(docs), "chart.yaml")
    return review_documents(decoded.documents, inventory=inventory, options=options)


def found(review: Any) -> list[tuple[str, str, str, str]]:
    return [(f.kind, f.severity.value, f.reason, f.field) for f in review.findings]


def test_a_workload_with_dra_is_checked_and_counted_one_without_is_skipped() -> None:
    plain = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template: {spec: {containers: [{name: c, image: x, resources: {limits: {cpu: "1", nvidia.com/gpu: 1}}}]}}
"""
    review = lint(TEMPLATE, deployment(), plain)
    assert review.summary() == {"objects": 2, "errors": 0, "warnings": 0, "notes": 0, "skipped": 1}
    assert [r.name for r in review.skipped] == ["web"]
    assert [o.ref.kind for o in review.objects] == ["ResourceClaimTemplate", "Deployment"]
    assert review.objects[1].ref.namespace == "default"


def test_findings_on_a_template_are_the_workloads_with_template_paths_and_lines() -> None:
    review = lint(TEMPLATE, deployment(claims="[{name: nic}]"))
    text = "---\n".join([TEMPLATE, deployment(claims="[{name: nic}]")])
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "claims: [{name: nic}]" in t)
    (f,) = review.findings
    assert (f.kind, f.name, f.reason, f.field) == ("Deployment", "d", "FieldValueNotFound",
                                                  "spec.template.spec.containers[0].resources.claims[0]")
    assert f.file == "chart.yaml" and f.line == line and f.severity is Severity.ERROR


def test_typos_only_in_the_dra_parts_are_unknown_fields() -> None:
    review = lint(TEMPLATE, deployment(entries="[{name: gpu, resourceClaimTemplateName: gpu, templateName: x}]"))
    assert found(review) == [("Deployment", "error", "UnknownField", "spec.template.spec.resourceClaims[0].templateName")]


def test_a_missing_template_is_a_warning_and_an_error_under_strict() -> None:
    review = lint(deployment())
    assert found(review) == [("Deployment", "warning", "ReferenceNotFound",
                              "spec.template.spec.resourceClaims[0].resourceClaimTemplateName")]
    assert 'ResourceClaimTemplate "gpu" (namespace default) is in none of the linted files' in review.findings[0].message
    strict = lint(deployment(), options=ReviewOptions(strict=True))
    assert [f.severity for f in strict.findings] == [Severity.ERROR]
    # found in another namespace is not found
    other = lint(TEMPLATE.replace("{name: gpu}", "{name: gpu, namespace: other}"), deployment())
    assert [f.reason for f in other.findings] == ["ReferenceNotFound"]


def test_a_claim_the_api_server_would_reject_never_exists() -> None:
    bad_claim = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared}
spec: {devices: {requests: [{name: GPU_0, exactly: {deviceClassName: gpu.example.com}}]}}
"""
    review = lint(bad_claim, deployment(entries="[{name: gpu, resourceClaimName: shared}]"))
    ref = [f for f in review.findings if f.kind == "Deployment"]
    assert [(f.reason, f.severity.value) for f in ref] == [("ReferenceNotFound", "warning")]
    assert "the API server would reject it" in ref[0].message and "GPU_0" in ref[0].message


def test_a_request_name_the_claim_does_not_have_is_an_error() -> None:
    review = lint(TEMPLATE, deployment(claims="[{name: gpu, request: gpu}, {name: gpu, request: nic}]"))
    assert found(review) == [("Deployment", "error", "ReferenceNotFound",
                              "spec.template.spec.containers[0].resources.claims[1].request")]
    assert 'no such request (requests: "gpu")' in review.findings[0].message


def test_references_resolve_against_the_cluster_state_of_the_inventory() -> None:
    spec = ResourceClaimSpec.model_validate(yaml.safe_load(TEMPLATE)["spec"]["spec"])
    inventory = Inventory(cluster=ClusterState(templates={("default", "gpu"): spec}, known=True))
    # found: no reference finding (an empty inventory leaves satisfiability unknown, which is another matter)
    assert [f.reason for f in lint(deployment(), inventory=inventory).findings] == ["SatisfiabilityUnknown"]


def admit(doc: str, operation: str = "CREATE", old: str | None = None, inventory: Inventory | None = None) -> Any:
    obj = yaml.safe_load(doc)
    return review_admission(kind=obj["kind"], operation=operation, obj=obj,
                            old_obj=yaml.safe_load(old) if old else None, namespace="default",
                            inventory=inventory, inventory_problem=None, options=ReviewOptions(admission=True))


def test_the_webhook_demotes_parity_errors_and_says_nothing_of_references_it_cannot_know() -> None:
    review = admit(deployment(claims="[{name: nic}]"))
    assert [(f.reason, f.severity.value) for f in review.findings] == [("FieldValueNotFound", "warning")]
    assert review.findings[0].message.startswith("version skew?")
    assert admit(deployment()).findings == []  # no cluster source: absent is not known
    known = Inventory(cluster=ClusterState(known=True))
    assert [f.reason for f in admit(deployment(), inventory=known).findings] == ["ReferenceNotFound"]


def test_the_webhook_reviews_a_workload_update_only_when_its_pod_template_changes() -> None:
    known = Inventory(cluster=ClusterState(known=True))
    scaled = admit(deployment(replicas=5), "UPDATE", old=deployment(replicas=2), inventory=known)
    assert scaled.findings == []
    changed = admit(deployment(entries="[{name: gpu, resourceClaimTemplateName: other}]"), "UPDATE",
                    old=deployment(), inventory=known)
    assert [f.reason for f in changed.findings] == ["ReferenceNotFound"]
    pod = """
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: x, resources: {claims: [{name: nic}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]
"""
    assert [f.reason for f in admit(pod).findings] == ["FieldValueNotFound"]
    assert admit(pod, "UPDATE", old=pod).findings == []  # a pod's claims cannot change


def test_operator_rows_make_a_custom_resource_a_workload() -> None:
    rows = parse_workload_kinds(yaml.safe_load("""
kinds:
- apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  podTemplates: [{each: spec.replicatedJobs, template: template.spec.template, replicas: [replicas]}]
"""))
    jobset = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        template:
          spec:
            containers: [{name: c, image: x, resources: {claims: [{name: nic}]}}]
            resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]
"""
    assert lint(TEMPLATE, jobset).summary()["objects"] == 1  # unknown kind: skipped
    review = lint(TEMPLATE, jobset, options=ReviewOptions(workload_kinds=tuple(rows)))
    assert found(review) == [("JobSet", "error", "FieldValueNotFound",
                              "spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.claims[0]")]


# ---------------------------------------------------------------------------- with the engine
INVENTORY_OBJECTS = list(yaml.safe_load_all("""
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {zone: a}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: device.driver == "gpu.example.com"}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-a}
spec:
  driver: gpu.example.com
  nodeName: node-a
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}, {name: gpu-1}]
"""))


def engine_inventory(taint: str = "") -> Inventory:
    from draguard.inventory import build_inventory

    objects = [dict(o) for o in INVENTORY_OBJECTS]
    if taint:
        objects[0] = {**objects[0], "spec": {"taints": [{"key": taint, "effect": "NoSchedule"}]}}
    return build_inventory(objects)


def three_gpus() -> str:
    return TEMPLATE.replace("{name: gpu}", "{name: three}").replace(
        "exactly: {deviceClassName: gpu.example.com}", "exactly: {deviceClassName: gpu.example.com, count: 3}")


def reasons_of(review: Any, kind: str) -> list[tuple[str, str]]:
    return [(f.reason, f.severity.value) for f in review.findings if f.kind == kind]


def test_replicas_beyond_the_devices_are_counted_with_details() -> None:
    review = lint(TEMPLATE, deployment(replicas=5), inventory=engine_inventory())
    (f,) = [f for f in review.findings if f.kind == "Deployment"]
    assert (f.reason, f.severity.value) == ("ReplicasExceedCapacity", "warning")
    assert f.details == {"replicas": 5, "fit": 2, "exact": True} and f.message.startswith("2 of 5 replicas")
    assert reasons_of(lint(TEMPLATE, deployment(replicas=2), inventory=engine_inventory()), "Deployment") == []


def test_a_workload_that_can_never_run_is_unsatisfiable_unless_scaled_to_zero() -> None:
    never = deployment(entries="[{name: gpu, resourceClaimTemplateName: three}]")
    assert reasons_of(lint(three_gpus(), never, inventory=engine_inventory()), "Deployment") == [("Unsatisfiable", "error")]
    zero = lint(three_gpus(), never.replace("replicas: 2", "replicas: 0"), inventory=engine_inventory())
    (f,) = [f for f in zero.findings if f.kind == "Deployment"]
    assert (f.reason, f.severity.value) == ("Unsatisfiable", "warning") and "scaled to 0" in f.message


def test_a_proof_without_an_unreadable_claim_still_stands() -> None:
    entries = "[{name: gpu, resourceClaimTemplateName: three}, {name: nic, resourceClaimTemplateName: absent}]"
    review = lint(three_gpus(), deployment(claims="[{name: gpu}, {name: nic}]", entries=entries),
                  inventory=engine_inventory())
    got = {(f.reason, f.severity.value): f for f in review.findings if f.kind == "Deployment"}
    assert set(got) == {("ReferenceNotFound", "warning"), ("Unsatisfiable", "error")}
    assert 'even without pod claim "nic"' in got[("Unsatisfiable", "error")].message


def test_daemonset_pods_tolerate_what_the_controller_adds() -> None:
    ds = deployment().replace("kind: Deployment", "kind: DaemonSet").replace("  replicas: 2\n", "")
    # node-a is cordoned: the DaemonSet controller's toleration of the unschedulable taint covers it
    cordoned = engine_inventory(taint="node.kubernetes.io/unschedulable")
    assert reasons_of(lint(TEMPLATE, ds, inventory=cordoned), "DaemonSet") == []
    # a Deployment's pod does not tolerate it: not now (a cordon is lifted), never a denial
    assert reasons_of(lint(TEMPLATE, deployment(replicas=1), inventory=cordoned), "Deployment") == [
        ("SatisfiabilityUnknown", "warning")]


def test_cronjob_counts_its_job_templates_parallelism() -> None:
    cron = """
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "@daily"
  jobTemplate:
    spec:
      parallelism: 3
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
          resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]
"""
    (f,) = [f for f in lint(TEMPLATE, cron, inventory=engine_inventory()).findings if f.kind == "CronJob"]
    assert f.details == {"replicas": 3, "fit": 2, "exact": True}


def test_the_webhook_says_when_it_cannot_see_the_claims() -> None:
    review = admit(deployment(), inventory=engine_inventory())
    assert [(f.reason, f.severity.value) for f in review.findings] == [("SatisfiabilityUnknown", "warning")]
    assert 'cannot see ResourceClaimTemplate "gpu"' in review.findings[0].message


def test_a_daemonset_names_the_eligible_nodes_where_its_pod_can_never_run() -> None:
    from draguard.inventory import build_inventory

    plain_node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-b", "labels": {"zone": "b"}}}
    inventory = build_inventory([*INVENTORY_OBJECTS, plain_node])
    ds = deployment().replace("kind: Deployment", "kind: DaemonSet").replace("  replicas: 2\n", "")
    (f,) = [f for f in lint(TEMPLATE, ds, inventory=inventory).findings if f.kind == "DaemonSet"]
    assert (f.reason, f.severity.value) == ("ReplicasExceedCapacity", "warning")
    assert f.details == {"replicas": 2, "fit": 1, "exact": True} and "never run on node-b" in f.message
    # a nodeSelector that only node-a passes: node-b is not eligible, nothing to say
    only_a = ds.replace("      volumes:", "      nodeSelector: {zone: a}\n      volumes:")
    assert reasons_of(lint(TEMPLATE, only_a, inventory=inventory), "DaemonSet") == []
    # no node eligible at all: the DaemonSet makes no pod, so its proof denies nothing
    none = ds.replace("      volumes:", "      nodeSelector: {zone: c}\n      volumes:")
    assert reasons_of(lint(TEMPLATE, none, inventory=inventory), "DaemonSet") == [("Unsatisfiable", "warning")]
    # eligible nodes, none of which can run it: Unsatisfiable
    never = ds.replace("resourceClaimTemplateName: gpu", "resourceClaimTemplateName: three")
    assert reasons_of(lint(three_gpus(), never, inventory=inventory), "DaemonSet") == [("Unsatisfiable", "error")]
