"""Objects for the audit tests: a GPU class, node pools of big (80Gi) and small (16Gi) GPUs, and
templates, claims, Pods and Deployments that need a GPU with at least some memory."""

from __future__ import annotations

from typing import Any

DRIVER = "gpu.example.com"


def device_class(name: str = "gpu", driver: str = DRIVER) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}}


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}


def pool(node_name: str, memory: str, devices: int = 2, driver: str = DRIVER) -> dict[str, Any]:
    """One node's ResourceSlice (a pool of one slice)."""
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-gpus"},
        "spec": {"driver": driver, "nodeName": node_name,
                 "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": f"gpu-{i}", "capacity": {"memory": {"value": memory}}} for i in range(devices)]},
    }


def _spec(memory: str, device_class_name: str = "gpu") -> dict[str, Any]:
    cel = f'device.capacity["{DRIVER}"].memory.compareTo(quantity("{memory}")) >= 0'
    return {"devices": {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": device_class_name, "selectors": [{"cel": {"expression": cel}}]}}]}}


def template(namespace: str, name: str, memory: str, rv: str = "1") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}", "resourceVersion": rv},
            "spec": {"spec": _spec(memory)}}


def claim(namespace: str, name: str, memory: str, *, allocated: bool = False,
          owner: str | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                           "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"},
                           "spec": _spec(memory)}
    if allocated:
        obj["status"] = {"allocation": {"devices": {"results": [
            {"request": "gpu", "driver": DRIVER, "pool": "big", "device": "gpu-0"}]}}}
    if owner:
        obj["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner, "uid": "p",
                                               "controller": True}]
    return obj


def pod(namespace: str, name: str, template_name: str, *, node_name: str = "", phase: str = "Pending") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template_name}],
    }
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
            "spec": spec, "status": {"phase": phase}}


def deployment(namespace: str, name: str, template_name: str, replicas: int = 1,
               owner_kind: str | None = None) -> dict[str, Any]:
    pod_spec = pod(namespace, "x", template_name)["spec"]
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    kind = "Deployment"
    if owner_kind:
        kind = "ReplicaSet"
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner_kind, "name": "d", "uid": "d",
                                    "controller": True}]
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec}}}
