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
    assert lint(deployment(), inventory=inventory).findings == []


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
