"""The audit's watches come back within seconds of the API server's return (issue #36, row 3): the
retry backoff is capped like the live inventory's (about 2 s with jitter), not 30 s, and starts
from the shortest pause again once a watch is accepted."""

from __future__ import annotations

import time
from pathlib import Path

from draguard.inventory import Backoff
from draguard.inventory.kube import RECONNECT_BACKOFF_MAX
from draguard.inventory.kubeconfig import load_kube_config
from draguard.server.audit import AuditObjects
from fakeapi import FakeCluster
from kube.helpers import LoopThread, wait_for

CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "c", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}


def test_the_backoff_never_waits_more_than_its_cap() -> None:
    backoff = Backoff(0.5, RECONNECT_BACKOFF_MAX)
    delays = [backoff.next_delay() for _ in range(40)]
    assert max(delays) <= RECONNECT_BACKOFF_MAX
    assert max(delays) >= RECONNECT_BACKOFF_MAX / 2  # it does grow to the cap (jitter: half to all of it)
    backoff.reset()
    assert backoff.next_delay() <= 0.5


def test_the_audit_watches_are_back_within_5s_of_the_api_server_s_return(
    cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread
) -> None:
    """The API server away long enough for a 30 s-capped backoff to reach 16 s; the audit's
    default backoff (the production one) brings it back within 5 s of the return."""
    objects = AuditObjects(load_kube_config(kubeconfig))
    loop_thread.submit(objects.run())
    wait_for(lambda: objects.synced, what="audit objects listed")
    wait_for(lambda: cluster.watching("resourceclaims") == 1, what="the claims watch")
    cluster.go_down()
    time.sleep(8.0)  # five failed rounds or more: a 30 s cap would wait 4–16 s for the next by now
    assert objects.restarts >= 3
    back = time.monotonic()
    cluster.come_back()
    cluster.put("resourceclaims", CLAIM)
    wait_for(lambda: objects.status()["objects"]["resourceclaims"] == 1, timeout=15, what="the claim seen again")
    assert time.monotonic() - back < 5.0, time.monotonic() - back
