"""Freshness against the real control plane (issue #36): ``draguard serve --kubeconfig`` as the
shipped manifests run it, in front of etcd + a real kube-apiserver, with the faults of the chaos
harness (the team's chaos tool: F4 a slice deleted and re-created under claim churn, F1 the
API server SIGKILLed and restarted on the same port and etcd) reproduced in about a minute each.

* F4: a client asks draguard (``POST /validate``, as the API server's dry-run admission would) 5
  times a second about a claim only one slice can satisfy and a control claim any slice can,
  while real claims are created and deleted through the API server (claim churn: the
  claims-only publishes are paced).  The slice deleted: the claim is denied within the
  debounce + margin; re-created: admitted again as fast; the control claim is never denied.
* F1: the API server killed: within ``--stale-after-seconds`` + margin every answer carries the
  stale warning and nothing is denied (the metrics say so, and no stale denial is counted);
  the API server restarted: watches back and the denial made again within 5 s + margin of its
  readiness.

Skipped, with the reason, without the binaries (``realapi.require``).  Every wait polls.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from draguard.certs import generate_bundle, write_bundle
from draguard.server.runner import BackgroundServer
from kube.helpers import wait_for
from realapi import LiveApiServer, require

from server.conftest import client_context
from server.reviews import admission_review

ROOT = Path(__file__).resolve().parents[2]
RG = "/apis/resource.k8s.io/v1"
DRIVER = "gpu.example.com"
MARGIN = 3.0
"""Seconds beyond a bound for a loaded 2-core machine (the bounds are 1 s and 5 s)."""
STALE_AFTER = 5.0
"""``--stale-after-seconds``' default: the documented bound."""
RATE = 5.0
"""Questions a second, as the issue's client."""


# ------------------------------------------------------------------ the cluster's objects
def gpu_slice(name: str, node: str, model: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"model": {"string": model}}} for i in range(2)]}}


def claim(name: str, model: str | None = None, namespace: str = "default") -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}
    if model is not None:
        exactly["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "{model}"'}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}


H100 = claim("wants-h100", "h100")
"""Only the slice ``node-2-h100`` can satisfy it."""
ANY = claim("wants-any")
"""Any slice can: never denied."""
NEVER = claim("wants-b200", "b200")
"""No slice can: denied whenever the picture is fresh."""


def seed(api: LiveApiServer) -> None:
    api.apply(f"{RG}/deviceclasses", {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                      "metadata": {"name": "gpu"},
                                      "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    for n in ("node-1", "node-2"):
        api.apply("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                    "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}}})
    api.apply(f"{RG}/resourceslices", gpu_slice("node-1-a100", "node-1", "a100"))
    api.apply(f"{RG}/resourceslices", gpu_slice("node-2-h100", "node-2", "h100"))
    api.apply("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "churn"}})


# ------------------------------------------------------------------ the API server process
def kill_apiserver(api: LiveApiServer) -> None:
    """SIGKILL the kube-apiserver this test started (by its process group: its own session)."""
    kas = api._h.kas  # the harness's process record (tests/realapi.py has no public handle for it)
    os.killpg(kas.pid, signal.SIGKILL)
    kas.popen.wait(timeout=30)


def restart_apiserver(api: LiveApiServer) -> None:
    """The same kube-apiserver again: same argv (port, certificates, token file), same etcd, as
    the chaos harness's F1 does; stopped with the rest when the ``with`` block ends."""
    old = api._h.kas
    api._h.kas = api._h.start("kube-apiserver", list(old.argv), api._ek.child_env(), signal.SIGKILL)


def apiserver_ready(api: LiveApiServer) -> bool:
    try:
        status, _ = api.request("GET", "/readyz")
    except Exception:  # connection refused while it starts
        return False
    return status == 200


# ------------------------------------------------------------------ draguard serve
@dataclass
class Draguard:
    proc: subprocess.Popen[bytes]
    client: httpx.Client

    def answer(self, obj: dict[str, Any]) -> dict[str, Any]:
        got: dict[str, Any] = self.client.post("/validate", json=admission_review(obj)).json()["response"]
        return got

    def readyz(self) -> dict[str, Any]:
        got: dict[str, Any] = self.client.get("/readyz").json()
        return got

    def metric(self, series: str) -> float | None:
        found = re.search(rf"^{re.escape(series)} (\S+)$", self.client.get("/metrics").text, re.MULTILINE)
        return float(found.group(1)) if found else None


@contextmanager
def draguard_serve(kubeconfig: Path, tmp_path: Path) -> Iterator[Draguard]:
    """``draguard serve --kubeconfig`` in a subprocess (as the manifests run it), ready and synced."""
    paths = write_bundle(generate_bundle("draguard", "draguard", extra_sans=["127.0.0.1"]), tmp_path / "tls")
    probe = BackgroundServer(lambda *a: None)
    port = probe.port
    probe.sock.close()
    log = (tmp_path / "draguard.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "draguard", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--tls-cert", str(paths["cert"]), "--tls-key", str(paths["key"]), "--kubeconfig", str(kubeconfig),
         "--allow-insecure-kubeconfig", "--shutdown-drain-seconds", "0.2", "--deny=Unsatisfiable",
         "--stale-after-seconds", str(STALE_AFTER)],
        cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=log, stderr=subprocess.STDOUT,
    )
    client = httpx.Client(base_url=f"https://127.0.0.1:{port}", verify=client_context(paths["ca"]), timeout=10)
    try:
        def ready() -> bool:
            assert proc.poll() is None, (tmp_path / "draguard.log").read_text()[-3000:]
            try:
                return client.get("/readyz").status_code == 200
            except httpx.TransportError:
                return False

        wait_for(ready, timeout=90, what="draguard serve to sync")
        yield Draguard(proc, client)
    finally:
        client.close()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


# ------------------------------------------------------------------ the client
@dataclass
class Asked:
    at: float
    what: str
    allowed: bool
    reason: str
    stale: bool


@dataclass
class Client:
    """Asks draguard about ``H100`` / ``ANY`` / ``NEVER`` in turn, ``RATE`` times a second; with
    ``churn`` also creates a real claim through the API server each time and deletes the one made
    ten questions before (claim events: the live inventory's claims-only publishes are paced)."""

    dg: Draguard
    api: LiveApiServer | None = None
    asked: list[Asked] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _run(self) -> None:
        plan = (("h100", H100), ("any", ANY), ("never", NEVER))
        i = 0
        next_at = time.monotonic()
        while not self._stop.is_set():
            what, obj = plan[i % len(plan)]
            try:
                got = self.dg.answer(obj)
                cause = ((got.get("status") or {}).get("details") or {}).get("causes") or [{}]
                self.asked.append(Asked(time.monotonic(), what, bool(got["allowed"]), str(cause[0].get("reason", "")),
                                        any("inventory stale since" in w for w in got.get("warnings") or [])))
            except Exception as exc:  # a timeout or refusal is a finding too
                self.errors.append(f"{type(exc).__name__}: {exc}")
            if self.api is not None:
                self._churn(i)
            i += 1
            next_at += 1.0 / RATE
            self._stop.wait(max(0.0, next_at - time.monotonic()))

    def _churn(self, i: int) -> None:
        try:
            self.api.request("POST", f"{RG}/namespaces/churn/resourceclaims", claim(f"churn-{i}", namespace="churn"))  # type: ignore[union-attr]
            if i >= 10:
                self.api.request("DELETE", f"{RG}/namespaces/churn/resourceclaims/churn-{i - 10}")  # type: ignore[union-attr]
        except Exception:  # the API server is down in F1: churn pauses, questions go on
            pass

    def __enter__(self) -> Client:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(15)

    def since(self, moment: float, what: str | None = None) -> list[Asked]:
        return [a for a in list(self.asked) if a.at >= moment and (what is None or a.what == what)]

    def first(self, moment: float, what: str, pred: Any, timeout: float) -> float:
        """Seconds from ``moment`` to the first answer about ``what`` that satisfies ``pred``."""
        found = wait_for(lambda: next((a for a in self.since(moment, what) if pred(a)), None), timeout=timeout,
                         what=f"an answer about {what} after the change")
        return float(found.at - moment)


def denied_unsatisfiable(a: Asked) -> bool:
    return not a.allowed and a.reason == "Unsatisfiable"


# ------------------------------------------------------------------ F4: a slice deleted and re-created
@pytest.mark.slow
def test_a_slice_deleted_and_recreated_under_claim_churn_reaches_decisions_within_a_second(tmp_path: Path) -> None:
    require()
    with LiveApiServer() as api:
        seed(api)
        with draguard_serve(api.kubeconfig, tmp_path) as dg:
            assert dg.answer(H100)["allowed"] is True
            with Client(dg, api) as client:
                wait_for(lambda: len(client.since(0.0, "h100")) >= 5, timeout=30, what="the client running")
                time.sleep(1.0)  # claim events flowing: the claims-only publish is in its pacing wait
                deleted = time.monotonic()
                status, _ = api.request("DELETE", f"{RG}/resourceslices/node-2-h100")
                assert status == 200
                took_delete = client.first(deleted, "h100", denied_unsatisfiable, timeout=30)
                # stays denied: no answer about it after the first denial admits it
                wait_for(lambda: len(client.since(deleted + took_delete, "h100")) >= 5, timeout=30,
                         what="more answers while the slice is gone")
                assert all(denied_unsatisfiable(a) for a in client.since(deleted + took_delete, "h100"))
                created = time.monotonic()
                api.apply(f"{RG}/resourceslices", gpu_slice("node-2-h100", "node-2", "h100"))
                took_create = client.first(created, "h100", lambda a: a.allowed, timeout=30)
                wait_for(lambda: len(client.since(created + took_create, "h100")) >= 5, timeout=30,
                         what="more answers after the re-create")
            after = client.since(created + took_create, "h100")
            assert all(a.allowed for a in after), after
            assert not any(not a.allowed for a in client.since(0.0, "any")), "a satisfiable claim was denied"
            assert client.errors == []
            inventory = dg.readyz()["inventory"]
            churned = inventory["objects"]["resourceclaims"]
            # 1.36 serves no v1 DeviceTaintRules: read at an older version (1.36.2 serves v1beta2 even
            # with DRADeviceTaintRules off) or absent (404 at every version) — ready either way
            rules = inventory["watches"]["devicetaintrules"]
            assert (rules["connected"] and rules["apiVersion"] != "resource.k8s.io/v1") \
                or "404" in (rules["absent"] or ""), rules
    print(f"slice deleted -> denied after {took_delete:.2f}s; re-created -> admitted after {took_create:.2f}s")
    assert took_delete < 1.0 + MARGIN, took_delete
    assert took_create < 1.0 + MARGIN, took_create
    assert churned >= 1  # the claims were watched: the churn reached the live inventory


# ------------------------------------------------------------------ F1: the API server killed and restarted
@pytest.mark.slow
def test_the_api_server_killed_makes_every_answer_stale_and_its_restart_brings_denials_back(tmp_path: Path) -> None:
    require()
    with LiveApiServer() as api:
        seed(api)
        with draguard_serve(api.kubeconfig, tmp_path) as dg:
            assert denied_unsatisfiable_answer(dg.answer(NEVER))
            assert dg.metric("draguard_inventory_stale") == 0.0
            with Client(dg) as client:
                wait_for(lambda: len(client.since(0.0, "never")) >= 3, timeout=30, what="the client running")
                killed = time.monotonic()
                kill_apiserver(api)
                # within the bound + margin every answer is stale and nothing is denied
                stale_after = client.first(killed, "never", lambda a: a.stale and a.allowed,
                                           timeout=STALE_AFTER + MARGIN + 10)
                assert stale_after >= STALE_AFTER - 0.5, stale_after  # never before the bound
                stale_since = killed + stale_after
                wait_for(lambda: len(client.since(stale_since)) >= 10, timeout=30, what="answers while stale")
                assert dg.metric("draguard_inventory_stale") == 1.0
                ready = dg.client.get("/readyz")
                assert ready.status_code == 200 and ready.json()["inventory"]["stale"] is True  # still ready
                restarted = time.monotonic()  # (draguard may watch it again before its /readyz says 200)
                while_stale = [a for a in client.since(stale_since) if a.at < restarted]
                restart_apiserver(api)
                wait_for(lambda: apiserver_ready(api), timeout=120, what="kube-apiserver ready again")
                back = time.monotonic()
                took_back = client.first(back, "never", denied_unsatisfiable, timeout=5.0 + MARGIN + 10)
                assert not dg.readyz()["inventory"]["stale"]
            assert while_stale and all(a.stale and a.allowed for a in while_stale), \
                [a for a in while_stale if not (a.stale and a.allowed)]
            assert not any(not a.allowed for a in client.since(0.0, "any")), "a satisfiable claim was denied"
            assert client.errors == []
            assert dg.metric("draguard_inventory_stale") == 0.0
            allowed_stale = dg.metric('draguard_stale_decisions_total{decision="allowed",reason="SatisfiabilityUnknown"}')
            assert allowed_stale is not None and allowed_stale >= 1
            assert (dg.metric('draguard_stale_decisions_total{decision="denied",reason="Unsatisfiable"}') or 0.0) == 0.0
    print(f"killed -> stale answers after {stale_after:.2f}s; ready again -> denial after {took_back:.2f}s")
    assert stale_after < STALE_AFTER + MARGIN, stale_after
    assert took_back < 5.0 + MARGIN, took_back


def denied_unsatisfiable_answer(got: dict[str, Any]) -> bool:
    cause = ((got.get("status") or {}).get("details") or {}).get("causes") or [{}]
    return got["allowed"] is False and cause[0].get("reason") == "Unsatisfiable"
