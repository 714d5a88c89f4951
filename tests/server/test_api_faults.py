"""A slow API server never slows the webhook: reviews are answered from what draguard has (or
allowed with SatisfiabilityUnknown before the first sync), and the inventory catches up."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from draguard.inventory.kube import KubeInventory
from draguard.inventory.kubeconfig import load_kube_config
from draguard.server.state import ServerState
from fakeapi import FakeCluster
from kube.helpers import wait_for

from server.conftest import Served
from server.reviews import admission_review, claim, resource_slice
from server.test_live_and_rotation import api, load_inventory_into

__all__ = ["api"]  # the fixture, re-used

LATENCY = 1.5  # seconds the fake API server sits on every list and watch request


def test_slow_api_server_does_not_hold_reviews(serve: Callable[..., Served], api: tuple[FakeCluster, Path]) -> None:
    cluster, kubeconfig = api
    load_inventory_into(cluster)
    cluster.latency = LATENCY
    live = KubeInventory(load_kube_config(kubeconfig), debounce=0.02, backoff_initial=0.02, backoff_max=0.1)
    state = ServerState(inventory=live)
    state.background.append(live.run)
    s = serve(state)
    # while the lists are still in flight: answered at once, satisfiability unknown, not ready
    big = admission_review(claim("big", memory="50Gi"))
    response = s.client.post("/validate", json=big, timeout=LATENCY / 2).json()["response"]
    assert response["allowed"] is True and response["warnings"][0].startswith("SatisfiabilityUnknown")
    assert s.client.get("/readyz", timeout=LATENCY / 2).status_code == 503
    wait_for(lambda: live.synced, timeout=30, what="a sync through the slow API server")
    response = s.client.post("/validate", json=big).json()["response"]
    assert response["allowed"] is False
    assert response["status"]["details"]["causes"][0]["reason"] == "Unsatisfiable"
    # a change still arrives (each watch restart also waits LATENCY)
    cluster.put("resourceslices", resource_slice("node-b-gpus", step="1Gi"))
    wait_for(lambda: live.snapshot() is not None and live.snapshot().device_count == 2, timeout=30,  # type: ignore[union-attr]
             what="the new slice")
    assert s.client.get("/healthz").status_code == 200
