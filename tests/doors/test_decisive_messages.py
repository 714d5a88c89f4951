"""Issue #35, last rows: a replica count says what limits it, and a webhook warning leads with the
decisive fact within its 120 characters (the full message is unchanged in lint and JSON)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import yaml
from draguard.inventory import Inventory, build_inventory
from draguard.k8s import decode_text
from draguard.report.admission import WARNING_LIMIT, finding_warning
from draguard.review import ReviewOptions, review_documents

CLASS = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: device.driver == "gpu.example.com"}}]}
"""

TEMPLATE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: NAME}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.example.com CAPACITY}}
"""


def template(name: str = "gpu", memory: str = "") -> str:
    capacity = f", capacity: {{requests: {{memory: {memory}}}}}" if memory else ""
    return TEMPLATE.replace("NAME", name).replace(" CAPACITY", capacity)


def node(name: str, taint: str = "", memory: str = "", gpus: int = 2) -> list[dict[str, Any]]:
    """A node and its slice of ``gpus`` GPUs (``memory``: each GPU's memory capacity, shareable)."""
    spec: dict[str, Any] = {"taints": [{"key": taint, "effect": "NoSchedule"}]} if taint else {}
    devices: list[dict[str, Any]] = []
    for i in range(gpus):
        dev: dict[str, Any] = {"name": f"gpu-{i}"}
        if memory:
            dev.update({"allowMultipleAllocations": True, "capacity": {"memory": {"value": memory}}})
        devices.append(dev)
    return [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": spec},
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
             "spec": {"driver": "gpu.example.com", "nodeName": name, "devices": devices,
                      "pool": {"name": name, "generation": 1, "resourceSliceCount": 1}}}]


def inventory(*nodes: list[dict[str, Any]]) -> Inventory:
    return build_inventory([yaml.safe_load(CLASS), *(o for n in nodes for o in n)])


def deployment(replicas: int, claim_template: str = "gpu", tolerate: str = "") -> str:
    tolerations = f"\n      tolerations: [{{key: {tolerate}, operator: Exists}}]" if tolerate else ""
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: d}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: d}}}}
  template:
    metadata: {{labels: {{app: d}}}}
    spec:{tolerations}
      containers: [{{name: c, image: x, resources: {{claims: [{{name: gpu}}]}}}}]
      resourceClaims: [{{name: gpu, resourceClaimTemplateName: {claim_template}}}]
"""


POD = """
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]
"""


def findings(*docs: str, inv: Inventory, kind: str) -> list[Any]:
    decoded = decode_text("---\n".join(docs), "chart.yaml")
    review = review_documents(decoded.documents, inventory=inv, options=ReviewOptions())
    return [f for f in review.findings if f.kind == kind]


def test_a_capacity_limited_count_names_the_class_and_the_nodes_devices() -> None:
    (f,) = findings(template(), deployment(5), inv=inventory(node("node-a")), kind="Deployment")
    assert f.reason == "ReplicasExceedCapacity" and f.details == {"fit": 2, "replicas": 5, "exact": True}
    assert "limited by capacity of the gpu.example.com devices: node-a holds 2" in f.message, f.message
    assert "taint" not in f.message
    # the figure and the limit lead the webhook's warning
    warning = finding_warning(f)
    assert warning.startswith("ReplicasExceedCapacity: 2 of 5 replicas fit; gpu.example.com devices: node-a holds 2") and "node-a holds 2" in warning, warning
    # accepted: as many replicas as the devices hold says nothing
    assert findings(template(), deployment(2), inv=inventory(node("node-a")), kind="Deployment") == []


def test_a_taint_limited_count_names_the_taint_the_pods_do_not_tolerate() -> None:
    inv = inventory(node("node-a"), node("node-b", taint="dedicated"))
    (f,) = findings(template(), deployment(4), inv=inv, kind="Deployment")
    assert f.reason == "ReplicasExceedCapacity" and f.details == {"fit": 2, "replicas": 4, "exact": True}
    assert "node-b: taint dedicated=:NoSchedule is not tolerated" in f.message, f.message
    assert "dedicated" in finding_warning(f)
    assert "dedicated" not in finding_warning(replace(f, brief=""))  # the message alone: cut before it
    # tolerated: all four fit, nothing to say
    assert findings(template(), deployment(4, tolerate="dedicated"), inv=inv, kind="Deployment") == []


def test_a_tainted_node_without_devices_is_not_named_as_a_limit() -> None:
    inv = inventory(node("node-a"), node("cpu-0", taint="dedicated", gpus=0))
    (f,) = findings(template(), deployment(3), inv=inv, kind="Deployment")
    assert "dedicated" not in f.message and "node-a holds 2" in f.message, f.message


def test_the_webhook_warning_for_a_template_too_large_names_the_template() -> None:
    inv = inventory(node("gpu-pool-a100-40gb-europe-west4-b-0001", memory="40Gi"))
    (f,) = [f for f in findings(template("big", memory="50Gi"), deployment(2, claim_template="big"), inv=inv,
                                kind="Deployment") if f.reason == "Unsatisfiable"]
    head = finding_warning(f)[:WARNING_LIMIT]
    assert 'template "big"' in head, head
    assert 'template "big"' not in finding_warning(replace(f, brief=""))  # the preamble-first text had no room
    assert f.message.startswith("no node can run the pod with all its claims: "), f.message  # full text unchanged


def test_the_webhook_warning_for_a_pod_kept_out_by_a_taint_names_the_taint_key() -> None:
    inv = inventory(node("node-a", taint="example.com/reserved-for-training-jobs-only-team-alpha"))
    (f,) = findings(template(), POD, inv=inv, kind="Pod")
    assert f.reason == "Unsatisfiable"
    head = finding_warning(f)[:WARNING_LIMIT]
    assert "example.com/reserved-for-training-jobs-only-team-alpha" in head, head
    assert "team-alpha" not in finding_warning(replace(f, brief=""))  # the preamble-first text had no room
    assert f.message.startswith("no node can run the pod with all its claims: "), f.message


def test_a_proof_turned_warning_keeps_its_why_in_the_brief() -> None:
    inv = inventory(node("node-a", memory="40Gi"))
    (f,) = [f for f in findings(template("big", memory="50Gi"), deployment(0, claim_template="big"), inv=inv,
                                kind="Deployment") if f.reason == "Unsatisfiable"]
    assert f.severity.value == "warning" and f.brief.endswith("(scaled to 0 replicas: nothing to deny until it is scaled up)")
    assert f.brief.startswith('claim "gpu" (template "big")'), f.brief
