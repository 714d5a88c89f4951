"""DeviceTaintRules in the live inventory (issue #36): watched like slices, optional like nothing else.

* A rule created (or deleted) while the webhook runs reaches its answers within about a second,
  under claim churn: a ``NoSchedule`` rule over every device makes a claim that does not tolerate
  it ``Unsatisfiable`` (the scheduler's tracker adds the rule's taint to the devices it selects),
  a claim that tolerates it stays allowed, and the rule's deletion lifts the denial.
* Served at the version the cluster has (v1 from 1.37, v1beta2 on 1.36): a ``404`` moves on to
  the next older version.
* Not served at any version (404) or refused by RBAC (403): *absent* — no rule known, so no
  device counts as tainted by one (only more permissive); readiness is not held, the picture is
  never stale for it, ``/readyz`` says why, the log says it once, and it is asked again later.
* Once listed, a rules watch that breaks makes the picture stale like a slice watch: a rule
  deleted meanwhile would otherwise keep denying.

Every wait polls; bounds have margin for a loaded 2-core machine.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `fakeapi`, `kube.helpers`, `server`

from draguard.certs import generate_bundle, write_bundle
from draguard.inventory.kube import DEVICE_RESOURCES, KubeInventory
from draguard.inventory.kubeconfig import load_kube_config
from draguard.server.state import ServerState
from fakeapi import FakeCluster, serve_fake_api
from kube.helpers import device_class, node, resource_slice, wait_for, write_kubeconfig
from server.conftest import Served, serve, tls_master, tls_paths  # noqa: F401  (fixtures)
from server.reviews import admission_review

TOKEN = "rules-token"
MARGIN = 3.0
"""Seconds beyond a bound allowed for a loaded machine."""
DRIVER = "gpu.example.com"
RULES = "devicetaintrules"


def rule(name: str = "maintenance", effect: str = "NoSchedule") -> dict[str, Any]:
    return {"kind": "DeviceTaintRule", "metadata": {"name": name},
            "spec": {"deviceSelector": {"driver": DRIVER},
                     "taint": {"key": "example.com/maintenance", "value": "true", "effect": effect}}}


def claim(name: str, *, tolerate: bool = False) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}
    if tolerate:
        exactly["tolerations"] = [{"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[FakeCluster, Path]]:
    paths = write_bundle(generate_bundle("kubernetes", "default", extra_sans=["127.0.0.1"]), tmp_path / "api")
    cluster = FakeCluster(token=TOKEN)
    cluster.put("deviceclasses", device_class("gpu", DRIVER))
    cluster.put("resourceslices", resource_slice("node-1-gpu", "node-1", devices=2, driver=DRIVER))
    cluster.put("nodes", node("node-1"))
    with serve_fake_api(cluster, cert=paths["cert"], key=paths["key"]) as server:
        yield cluster, write_kubeconfig(tmp_path / "kc", server.url, paths["ca"].read_bytes(), token=TOKEN)


Start = Callable[..., tuple[Served, KubeInventory]]


@pytest.fixture
def start(serve: Callable[..., Served], api: tuple[FakeCluster, Path]) -> Start:  # noqa: F811
    """The webhook over a live inventory of the fake API server (claims watched too)."""

    def go(**kw: Any) -> tuple[Served, KubeInventory]:
        kw.setdefault("backoff_initial", 0.02)
        kw.setdefault("backoff_max", 0.1)
        live = KubeInventory(load_kube_config(api[1]), **kw)
        state = ServerState(inventory=live)
        state.background.append(live.run)
        s = serve(state)
        wait_for(lambda: s.client.get("/readyz").status_code == 200, what="ready")
        return s, live

    return go


def answer(s: Served, obj: dict[str, Any]) -> dict[str, Any]:
    got: dict[str, Any] = s.client.post("/validate", json=admission_review(obj)).json()["response"]
    return got


def denied(s: Served, obj: dict[str, Any]) -> bool:
    got = answer(s, obj)
    if got["allowed"]:
        return False
    assert got["status"]["details"]["causes"][0]["reason"] == "Unsatisfiable", got
    return True


def tainted_devices(live: KubeInventory) -> int:
    snap = live.snapshot()
    return sum(1 for d in snap.devices if d.taints) if snap is not None else -1


class Churn:
    """Claims created and changed every 20 ms, as a busy cluster's scheduler does."""

    def __init__(self, cluster: FakeCluster) -> None:
        self.cluster = cluster
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        i = 0
        while not self._stop.wait(0.02):
            obj = claim(f"churn-{i % 20}")
            obj["metadata"]["labels"] = {"round": str(i)}
            self.cluster.put("resourceclaims", obj)
            i += 1

    def __enter__(self) -> Churn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


# ------------------------------------------------------------------ served: applied live
def test_a_rule_created_live_denies_within_a_second_and_its_deletion_lifts_it(
    start: Start, api: tuple[FakeCluster, Path]
) -> None:
    """Under claim churn (claims-only publishes paced to 10 s), a rule's creation and deletion
    each reach the answers within the debounce: rule events are device events."""
    cluster, _ = api
    s, live = start()
    assert not denied(s, claim("c"))  # two untainted devices: allocatable
    health = live.watch_health()[RULES]
    assert health["connected"] and health["optional"] and health["absent"] is None
    assert health["apiVersion"] == "resource.k8s.io/v1"
    with Churn(cluster):
        wait_for(lambda: live.status()["objects"]["resourceclaims"] >= 10, what="claims under churn")
        time.sleep(0.5)  # past the debounce: the rebuild loop is in the claims-only pacing wait
        created = time.monotonic()
        cluster.put(RULES, rule())
        wait_for(lambda: denied(s, claim("c")), timeout=15, what="the rule's denial")
        took_create = time.monotonic() - created
        assert not denied(s, claim("c", tolerate=True))  # the claim that tolerates it: still allowed
        assert tainted_devices(live) == 2
        deleted = time.monotonic()
        cluster.delete(RULES, "maintenance")
        wait_for(lambda: not denied(s, claim("c")), timeout=15, what="the denial lifted")
        took_delete = time.monotonic() - deleted
    assert took_create < 1.0 + MARGIN, took_create
    assert took_delete < 1.0 + MARGIN, took_delete
    assert live.problem() is None


def test_a_rule_with_effect_none_denies_nothing(start: Start, api: tuple[FakeCluster, Path]) -> None:
    """The counterpart of the denial: a rule whose taint has effect ``None`` is read (the device
    shows the taint) and blocks no allocation."""
    cluster, _ = api
    cluster.put(RULES, rule(effect="None"))
    s, live = start()
    wait_for(lambda: tainted_devices(live) == 2, what="the rule's taint on both devices")
    assert not denied(s, claim("c"))


def test_rules_served_at_v1beta2_only_are_read_there(start: Start, api: tuple[FakeCluster, Path]) -> None:
    """A 1.36 API server (gate on): v1 answers 404, v1beta2 serves the rules."""
    cluster, _ = api
    cluster.taint_rules_version = "v1beta2"
    cluster.put(RULES, rule())
    s, live = start()
    wait_for(lambda: live.watch_health()[RULES]["connected"], what="the rules watch")
    assert live.watch_health()[RULES]["apiVersion"] == "resource.k8s.io/v1beta2"
    assert cluster.taint_rule_requests[0] == "v1" and "v1beta2" in cluster.taint_rule_requests
    wait_for(lambda: denied(s, claim("c")), what="the v1beta2 rule's denial")


# ------------------------------------------------------------------ absent: 404 and 403
def test_rules_not_served_at_any_version_are_absent_and_block_nothing(
    start: Start, api: tuple[FakeCluster, Path], caplog: pytest.LogCaptureFixture
) -> None:
    """No version served (gate off): ready, never stale, no rule known (the claim is allowed),
    said once in the log and in /readyz; asked again later, and read once served."""
    cluster, _ = api
    caplog.set_level(logging.INFO, logger="draguard.inventory")
    cluster.taint_rules_version = ""
    s, live = start(absent_retry=0.3, stale_after=0.3)
    health = wait_for(lambda: live.watch_health()[RULES] if live.watch_health()[RULES]["absent"] else None,
                      what="rules absent")
    assert "404" in health["absent"] and "v1alpha3" in health["absent"]
    assert not health["connected"] and health["error"] == ""
    assert set(cluster.taint_rule_requests[:3]) == {"v1", "v1beta2", "v1alpha3"}
    wait_for(lambda: cluster.taint_rule_requests.count("v1") >= 3, what="asked again")  # several rounds
    assert live.synced and live.stale() is None and live.problem() is None
    ready = s.client.get("/readyz")
    assert ready.status_code == 200
    assert "404" in ready.json()["inventory"]["watches"][RULES]["absent"]
    assert not denied(s, claim("c"))
    lines = [r for r in caplog.records if "devicetaintrules not read" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.INFO, [r.getMessage() for r in lines]
    # the cluster starts serving them (an upgrade, the gate turned on): read within the retry
    cluster.taint_rules_version = "v1"
    cluster.put(RULES, rule())
    wait_for(lambda: denied(s, claim("c")), timeout=10, what="the rule read once served")
    assert live.watch_health()[RULES]["absent"] is None


def test_rules_refused_by_rbac_are_absent_and_a_known_rule_is_forgotten(
    start: Start, api: tuple[FakeCluster, Path], caplog: pytest.LogCaptureFixture
) -> None:
    """403 (an install whose role lacks devicetaintrules): absent, a warning once.  A rule known
    before the refusal no longer denies (its deletion could not be seen): more permissive, and
    never stale."""
    cluster, _ = api
    caplog.set_level(logging.INFO, logger="draguard.inventory")
    cluster.put(RULES, rule())
    s, live = start(absent_retry=0.2, stale_after=0.3)
    wait_for(lambda: denied(s, claim("c")), what="the rule's denial")
    cluster.forbidden |= {("list", RULES), ("watch", RULES)}
    cluster.drop_watches()  # the watch is made again, and refused
    wait_for(lambda: live.watch_health()[RULES]["absent"], what="rules absent")
    assert "403" in live.watch_health()[RULES]["absent"]
    wait_for(lambda: not denied(s, claim("c")), what="the forgotten rule no longer denies")
    wait_for(lambda: len(cluster.list_requests(RULES)) >= 4, what="asked again")  # several refused rounds
    assert live.stale() is None and live.problem() is None
    assert s.client.get("/readyz").status_code == 200
    lines = [r for r in caplog.records if "devicetaintrules not read" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING, [r.getMessage() for r in lines]


def test_readiness_never_waits_for_a_rules_resource_that_is_refused_from_the_start(
    api: tuple[FakeCluster, Path]
) -> None:
    """A 403 at the first list (no retry for a minute): synced as soon as the required resources
    are — the counterpart of slices, whose refusal keeps the inventory unsynced."""
    from kube.helpers import LoopThread

    cluster, kubeconfig = api
    cluster.forbidden |= {("list", RULES)}
    lt = LoopThread()
    try:
        live = KubeInventory(load_kube_config(kubeconfig), resources=DEVICE_RESOURCES, backoff_initial=0.02,
                             backoff_max=0.1)
        lt.submit(live.run())
        wait_for(lambda: live.synced, what="synced without the rules")
        assert live.problem() is None
        cluster.forbidden |= {("list", "resourceslices")}
        other = KubeInventory(load_kube_config(kubeconfig), resources=DEVICE_RESOURCES, backoff_initial=0.02,
                              backoff_max=0.1)
        lt.submit(other.run())
        wait_for(lambda: "403" in (other.problem() or ""), what="the refused slices named")
        assert not other.synced
    finally:
        lt.stop()


# ------------------------------------------------------------------ listed, then broken: stale
def test_a_listed_rules_watch_that_breaks_makes_the_picture_stale(start: Start, api: tuple[FakeCluster, Path]) -> None:
    """Once read, the rules are part of the picture: a rules watch silently broken with no API
    server to make it again (another one serving clients) goes stale, and nothing is denied."""
    cluster, _ = api
    cluster.put(RULES, rule())
    cluster.bookmark_every = 0.1
    s, live = start(silent_after=0.8, stale_after=0.5)
    wait_for(lambda: denied(s, claim("c")), what="the rule's denial")
    cluster.fault(RULES, "stall")
    cluster.available = False  # new requests fail; the other open watches go on
    problem = wait_for(live.problem, timeout=0.8 + 0.5 + MARGIN + 5, what="stale")
    assert "the devicetaintrules watch failed" in problem, problem
    got = answer(s, claim("c"))
    assert got["allowed"] is True and any("inventory stale since" in w for w in got["warnings"]), got
    cluster.available = True
    wait_for(lambda: live.problem() is None, timeout=10, what="current again")
    assert denied(s, claim("c"))


# ------------------------------------------------------------------ the target decides whether rules apply
def test_rules_apply_only_where_the_target_s_scheduler_applies_them(api: tuple[FakeCluster, Path]) -> None:
    """1.36 with ``DRADeviceTaintRules`` off (its default) serves v1beta2 rules but its scheduler
    ignores them: read, no device tainted.  The cluster's target changing to 1.37 (an upgrade)
    rebuilds the picture with the rule's taint at once."""
    from draguard.k8s import parse_target
    from kube.helpers import LoopThread

    cluster, kubeconfig = api
    cluster.taint_rules_version = "v1beta2"
    cluster.put(RULES, rule())
    lt = LoopThread()
    try:
        live = KubeInventory(load_kube_config(kubeconfig), resources=DEVICE_RESOURCES, backoff_initial=0.02,
                             backoff_max=0.1, target=parse_target("1.36"))
        lt.submit(live.run())
        wait_for(lambda: live.synced and live.status()["objects"][RULES] == 1, what="the rule read")
        time.sleep(0.5)  # a rebuild after the rule's arrival would have tainted by now
        assert tainted_devices(live) == 0
        lt.loop.call_soon_threadsafe(live.retarget, parse_target("1.37"))
        wait_for(lambda: tainted_devices(live) == 2, what="the rule applied at 1.37")
    finally:
        lt.stop()
