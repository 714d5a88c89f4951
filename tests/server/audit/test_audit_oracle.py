"""The audit through the real control plane (kube-apiserver, kube-scheduler, kube-controller-manager
unpacked by scripts/setup-apiserver.sh; Nodes without a kubelet): a Deployment fills the GPUs, then a pod that fits an
empty cluster but not today's stays Pending — the audit publishes a ``CapacityInUse`` result for it
within the grace period plus one resync, naming no object of another namespace, and removes it
once the Deployment is scaled down (the pod is scheduled, its devices are held by it now).

Skips with a reason where the binaries are absent (scripts/setup-apiserver.sh unpacks them); the
test plays the kubelet's one part here — confirming a graceful delete — since the Nodes have none."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import realapi
import yaml
from draguard.inventory.kube import KubeInventory
from draguard.inventory.kubeconfig import load_kube_config
from draguard.server.audit import AuditObjects, Auditor, AuditSettings
from kube.helpers import LoopThread, wait_for

from server.audit.objects import device_class, node, pod, pool

SETTINGS = AuditSettings(period_seconds=2.0, grace_seconds=1.0, debounce_seconds=0.1, poll_seconds=0.05,
                         lease_seconds=5, writes_per_second=50, write_burst=50, identity="audit-oracle")
GPU_TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one-gpu"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}


def write_inventory(folder: Path) -> Path:
    folder.mkdir()
    docs = [device_class(), node("gpu-node"), pool("gpu-node", "80Gi", devices=2)]
    (folder / "inventory.yaml").write_text(yaml.safe_dump_all(docs))
    return folder


def reports(api: realapi.LiveApiServer, ns: str) -> list[dict[str, Any]]:
    status, body = api.request("GET", f"/apis/wgpolicyk8s.io/v1alpha2/namespaces/{ns}/policyreports")
    assert status == 200, body
    return list(body["items"])


def test_capacity_in_use_reported_then_cleared_through_the_real_control_plane(tmp_path: Path) -> None:
    with realapi.LiveControlPlane(write_inventory(tmp_path / "inventory")) as api:
        from server.audit.test_audit_realapi import install_crds

        install_crds(api)
        for ns in ("team-a", "team-b"):
            api.apply("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            # the controller-manager makes the "default" ServiceAccount itself, sometimes first
            status, body = api.request("POST", f"/api/v1/namespaces/{ns}/serviceaccounts",
                                       {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}})
            assert status in (200, 201, 409), body
            api.apply(f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaimtemplates", GPU_TEMPLATE)
        filler = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "filler"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "filler"}},
                           "template": {"metadata": {"labels": {"app": "filler"}}, "spec": {
                               "containers": [{"name": "c", "image": "busybox",
                                               "resources": {"claims": [{"name": "gpu"}]}}],
                               "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}}}}
        api.apply("/apis/apps/v1/namespaces/team-a/deployments", filler)

        def bound(ns: str) -> int:
            _, body = api.request("GET", f"/api/v1/namespaces/{ns}/pods")
            return sum(1 for p in body["items"] if p["spec"].get("nodeName"))

        wait_for(lambda: bound("team-a") == 2, timeout=60, what="the Deployment holding both GPUs")
        waiting = pod("team-b", "waiting", "one-gpu")
        del waiting["metadata"]["uid"], waiting["status"]
        api.apply("/api/v1/namespaces/team-b/pods", waiting)
        config = load_kube_config(api.kubeconfig)
        inventory = KubeInventory(config, debounce=0.05)
        auditor = Auditor(inventory, AuditObjects(config), config, SETTINGS)
        loop = LoopThread()
        try:
            loop.submit(inventory.run())
            loop.submit(auditor.run())
            started = time.monotonic()
            (report,) = wait_for(lambda: reports(api, "team-b"), timeout=60, what="team-b's report")
            appeared = time.monotonic() - started
            results = [(r["rule"], r["resources"][0]["kind"], r["resources"][0]["name"]) for r in report["results"]]
            assert ("CapacityInUse", "Pod", "waiting") in results, results
            text = str(report)
            assert "filler" not in text and "team-a" not in text  # holders elsewhere are counted, not named
            status, body = api.request("PATCH", "/apis/apps/v1/namespaces/team-a/deployments/filler/scale",
                                       {"spec": {"replicas": 1}}, ctype="application/merge-patch+json")
            assert status == 200, body
            scaled = time.monotonic()

            def kubelet_confirms_deletes() -> None:
                """No kubelet confirms a graceful delete here: do what it would (grace 0), so the
                scaled-down pod goes, its claim is released and its GPU is free again."""
                _, body = api.request("GET", "/api/v1/namespaces/team-a/pods")
                for p in body["items"]:
                    if p["metadata"].get("deletionTimestamp"):
                        api.request("DELETE", f"/api/v1/namespaces/team-a/pods/{p['metadata']['name']}",
                                    {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})

            def scheduled() -> bool:
                kubelet_confirms_deletes()
                return bound("team-b") == 1

            wait_for(scheduled, timeout=60, what="the waiting pod scheduled once a GPU is free")
            wait_for(lambda: not any(r["resources"][0]["name"] == "waiting"
                                     for rep in reports(api, "team-b") for r in rep["results"]),
                     timeout=60, what="the result removed")
            cleared = time.monotonic() - scaled
        finally:
            loop.stop()
        print(f"audit through the control plane: CapacityInUse after {appeared:.2f}s, cleared {cleared:.2f}s "
              f"after the scale-down (grace + one resync = {SETTINGS.grace_seconds + SETTINGS.period_seconds:.1f}s)")
