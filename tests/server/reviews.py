"""Real AdmissionReview request bodies, as kube-apiserver sends them."""

from __future__ import annotations

import copy
import uuid
from typing import Any

RESOURCES = {
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "ResourceSlice": "resourceslices",
    "DeviceClass": "deviceclasses",
}


def admission_review(
    obj: dict[str, Any] | None,
    *,
    operation: str = "CREATE",
    old: dict[str, Any] | None = None,
    uid: str | None = None,
    dry_run: bool = False,
    kind: str | None = None,
    group: str = "resource.k8s.io",
    version: str = "v1",
    api_version: str = "admission.k8s.io/v1",
) -> dict[str, Any]:
    source = obj or old or {}
    kind = kind or source.get("kind", "")
    meta = source.get("metadata", {})
    namespace = meta.get("namespace", "")
    resource = RESOURCES.get(kind, kind.lower() + "s")
    gvk = {"group": group, "version": version, "kind": kind}
    gvr = {"group": group, "version": version, "resource": resource}
    options_kind = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}
    request: dict[str, Any] = {
        "uid": uid or str(uuid.uuid4()),
        "kind": gvk,
        "resource": gvr,
        "requestKind": gvk,
        "requestResource": gvr,
        "name": meta.get("name", ""),
        "operation": operation,
        "userInfo": {"username": "kubernetes-admin", "groups": ["kubeadm:cluster-admins", "system:authenticated"]},
        "object": copy.deepcopy(obj),
        "oldObject": copy.deepcopy(old),
        "dryRun": dry_run,
    }
    if namespace:
        request["namespace"] = namespace
    if operation in options_kind:
        request["options"] = {"kind": options_kind[operation], "apiVersion": "meta.k8s.io/v1"}
    return {"kind": "AdmissionReview", "apiVersion": api_version, "request": request}


def claim(name: str, *, memory: str | None = None, device_class: str = "gpu.example.com",
          request: str = "gpu", namespace: str = "default") -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": 1}
    if memory:
        exactly["capacity"] = {"requests": {"memory": memory}}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace, "uid": str(uuid.uuid4()),
                     "creationTimestamp": None},
        "spec": {"devices": {"requests": [{"name": request, "exactly": exactly}]}},
    }


def template(name: str, **kw: Any) -> dict[str, Any]:
    inner = claim(name, **kw)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": inner["metadata"],
        "spec": {"spec": inner["spec"]},
    }


def resource_slice(name: str, *, step: str = "4Gi") -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "node-b",
            "pool": {"name": "node-b", "generation": 1, "resourceSliceCount": 1},
            "devices": [{
                "name": "gpu-0",
                "allowMultipleAllocations": True,
                "capacity": {"memory": {"value": "40Gi", "requestPolicy": {
                    "default": "4Gi", "validRange": {"min": "4Gi", "max": "16Gi", "step": step}}}},
            }],
        },
    }


def device_class(name: str, expression: str = 'device.driver == "gpu.example.com"') -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}
