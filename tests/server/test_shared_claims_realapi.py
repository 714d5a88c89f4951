"""Pods that share a claim, against a real API server (issue #37 item 1, live): ``draguard serve
--kubeconfig`` in front of etcd + kube-apiserver (no scheduler: the claim stays unallocated).

Pod "first" (zone a) is stored for real, using the claim ``shared-gpu``; draguard is then asked
about pod "second": in zone b it can share no node with "first" that the claim's devices reach, so
whichever the scheduler places first shuts the other out — allowed, with a warning naming the
claim and "first"; in zone a, nothing to say.  Neither is ever denied.  A pod of another
namespace, using that namespace's claim of the same name, is named only in its own namespace.

Skipped, with the reason, without the binaries (``realapi.require``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from realapi import LiveApiServer, require

from server.reviews import admission_review
from server.test_freshness_realapi import draguard_serve

RG = "/apis/resource.k8s.io/v1"
DRIVER = "gpu.example.com"


def gpu_slice(node: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": node},
            "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}}


def shared_claim(namespace: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "shared-gpu", "namespace": namespace},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}


def pod(name: str, zone: str, namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"nodeSelector": {"zone": zone}, "automountServiceAccountToken": False,
                     "containers": [{"name": "c", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared-gpu"}]}}


def seed(api: LiveApiServer) -> None:
    api.apply(f"{RG}/deviceclasses", {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                                      "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    for node, zone in (("node-a", "a"), ("node-b", "b")):
        api.apply("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                    "metadata": {"name": node, "labels": {"kubernetes.io/hostname": node, "zone": zone}}})
        api.apply(f"{RG}/resourceslices", gpu_slice(node))
        # the API server taints a new Node not-ready (no kubelet here to lift it): a pod that can run
        # nowhere yet is undecided, and an undecided pod pins nothing — the nodes made ready, as a cluster's are
        status, _ = api.request("PATCH", f"/api/v1/nodes/{node}", {"spec": {"taints": None}},
                                ctype="application/merge-patch+json")
        assert status == 200
    api.apply("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-b"}})
    for ns in ("default", "team-b"):  # no controller-manager here: the ServiceAccount admission needs it
        api.apply(f"/api/v1/namespaces/{ns}/serviceaccounts",
                  {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": ns}})
        api.apply(f"{RG}/namespaces/{ns}/resourceclaims", shared_claim(ns))


def validate(client: httpx.Client, obj: dict[str, Any]) -> dict[str, Any]:
    review = admission_review(obj, kind="Pod", group="", version="v1")
    got: dict[str, Any] = client.post("/validate", json=review).json()["response"]
    return got


def test_a_pod_that_a_stored_pod_may_shut_out_of_their_shared_claim_is_warned_never_denied(tmp_path: Path) -> None:
    require()
    with LiveApiServer(feature_gates="") as api:
        seed(api)
        api.apply("/api/v1/namespaces/default/pods", pod("first", "a"))  # stored for real: not a dry run
        api.apply("/api/v1/namespaces/team-b/pods", pod("theirs", "a", "team-b"))
        with draguard_serve(api.kubeconfig, tmp_path) as dg:
            apart = validate(dg.client, pod("second", "b"))
            assert apart["allowed"] is True, apart
            warnings = apart.get("warnings") or []
            assert [w for w in warnings if "may wait" in w] == [
                'SatisfiabilityUnknown: one of these pods may wait: Pod "first" also uses claim "shared-gpu" '
                "and no node suits both"], warnings
            together = validate(dg.client, pod("second", "a"))
            assert together["allowed"] is True and not together.get("warnings"), together
            # each namespace has its own claim of that name: a review names its own namespace's pods only
            # (default's answer above did not name team-b's "theirs"; team-b's does not name "first")
            other = validate(dg.client, pod("second", "b", "team-b"))
            assert other["allowed"] is True, other
            assert ['Pod "theirs"' in w and '"first"' not in w for w in other.get("warnings") or []] == [True], other
            # "first" gone: the next review lists again and has nothing to say
            status, _ = api.request("DELETE", "/api/v1/namespaces/default/pods/first?gracePeriodSeconds=0")
            assert status in (200, 202)
            alone = validate(dg.client, pod("second", "b"))
            assert alone["allowed"] is True and not alone.get("warnings"), alone
