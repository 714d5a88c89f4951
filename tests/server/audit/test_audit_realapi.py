"""The audit against a real kube-apiserver 1.36 with the PolicyReport CRDs this project ships
(manifests/components/policyreport-crds): a node pool removed from the inventory turns its
templates' results to ``Unsatisfiable`` within the grace period plus one resync, and adding it
back clears them; the reports and Events the audit writes are accepted and kept as written
(nothing pruned by the CRD's structural schema)."""

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

from server.audit.objects import device_class, node, pool, template

ROOT = Path(__file__).resolve().parents[3]
CRDS = ROOT / "manifests/components/policyreport-crds/crds.yaml"
SETTINGS = AuditSettings(period_seconds=2.0, grace_seconds=1.0, debounce_seconds=0.1, poll_seconds=0.05,
                         lease_seconds=5, writes_per_second=50, write_burst=50, identity="audit-realapi")
REPORTS = "/apis/wgpolicyk8s.io/v1alpha2/namespaces/{ns}/policyreports"


def install_crds(api: realapi.LiveApiServer) -> None:
    for crd in yaml.safe_load_all(CRDS.read_text()):
        api.apply("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)

    def established() -> bool:
        status, body = api.request("GET", "/apis/wgpolicyk8s.io/v1alpha2")
        return status == 200 and {"policyreports", "clusterpolicyreports"} <= {r["name"] for r in body["resources"]}

    wait_for(established, timeout=30, what="the PolicyReport CRDs served")


def reports(api: realapi.LiveApiServer, ns: str) -> list[dict[str, Any]]:
    status, body = api.request("GET", REPORTS.format(ns=ns))
    assert status == 200, body
    return list(body["items"])


def test_pool_removed_and_added_back_through_a_real_api_server() -> None:
    with realapi.LiveApiServer() as api:
        install_crds(api)
        for ns in ("team-a", "team-b"):
            api.apply("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        api.apply("/apis/resource.k8s.io/v1/deviceclasses", device_class())
        for name, memory in (("big", "80Gi"), ("small", "16Gi")):
            api.apply("/api/v1/nodes", node(name))
            api.apply("/apis/resource.k8s.io/v1/resourceslices", pool(name, memory))
        for ns, name, memory in (("team-a", "big-gpu", "40Gi"), ("team-a", "any-gpu", "8Gi"),
                                 ("team-b", "big-gpu", "40Gi")):
            obj = template(ns, name, memory)
            del obj["metadata"]["uid"], obj["metadata"]["resourceVersion"]
            api.apply(f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaimtemplates", obj)
        config = load_kube_config(api.kubeconfig)
        inventory = KubeInventory(config, debounce=0.05)
        auditor = Auditor(inventory, AuditObjects(config), config, SETTINGS)
        loop = LoopThread()
        try:
            loop.submit(inventory.run())
            loop.submit(auditor.run())
            wait_for(lambda: auditor.passes["done"] >= 1, timeout=60, what="a first pass over the synced cluster")
            assert reports(api, "team-a") == []
            status, _ = api.request("DELETE", "/apis/resource.k8s.io/v1/resourceslices/big-gpus")
            assert status == 200
            removed = time.monotonic()
            (report,) = wait_for(lambda: reports(api, "team-a"), timeout=60, what="team-a's report")
            appeared = time.monotonic() - removed
            (result,) = report["results"]
            assert (result["rule"], result["result"], result["source"]) == ("Unsatisfiable", "fail", "draguard")
            assert result["resources"][0]["name"] == "big-gpu" and result["resources"][0]["uid"]
            assert "40Gi" in result["message"]
            assert report["summary"] == {"pass": 0, "fail": 1, "warn": 0, "error": 0, "skip": 0}
            assert report["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "draguard"}
            assert [r["metadata"]["name"] for r in wait_for(lambda: reports(api, "team-b"), timeout=30,
                                                            what="team-b's report")] == ["draguard"]
            status, events = api.request("GET", "/api/v1/namespaces/team-a/events")
            assert status == 200
            assert [(e["reason"], e["involvedObject"]["name"]) for e in events["items"]
                    if e.get("reportingComponent") == "draguard.dev/audit"] == [("Unsatisfiable", "big-gpu")]
            api.apply("/apis/resource.k8s.io/v1/resourceslices", pool("big", "80Gi"))
            added = time.monotonic()
            wait_for(lambda: reports(api, "team-a") == [] and reports(api, "team-b") == [], timeout=60,
                     what="reports cleared once the pool is back")
            cleared = time.monotonic() - added
        finally:
            loop.stop()
        bound = SETTINGS.grace_seconds + SETTINGS.period_seconds
        print(f"audit on a real API server: result after {appeared:.2f}s, cleared after {cleared:.2f}s "
              f"(grace + one resync = {bound:.1f}s)")
