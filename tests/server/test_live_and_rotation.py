"""The server with a live inventory from the fake API server, certificate rotation under load,
and ``draguard serve`` as a real process."""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from cryptography import x509
from draguard.certs import CertBundle, generate_bundle, generate_leaf, write_bundle
from draguard.inventory.kube import KubeInventory
from draguard.inventory.kubeconfig import load_kube_config
from draguard.server.runner import BackgroundServer
from draguard.server.state import ServerState
from fakeapi import FakeCluster, serve_fake_api
from kube.helpers import wait_for

from server.conftest import DATA, Served, client_context
from server.reviews import admission_review, claim

ROOT = Path(__file__).resolve().parents[2]


def peer_serial(port: int, ca: Path) -> int:
    """Serial of the certificate a fresh TLS handshake gets."""
    ctx = ssl.create_default_context(cafile=str(ca))
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, ctx.wrap_socket(
        raw, server_hostname="127.0.0.1"
    ) as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


# ------------------------------------------------------------------ live inventory
@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[FakeCluster, Path]]:
    bundle = generate_bundle("kubernetes", "default", extra_sans=["127.0.0.1"])
    paths = write_bundle(bundle, tmp_path / "api")
    cluster = FakeCluster(token="t0ken")
    with serve_fake_api(cluster, cert=paths["cert"], key=paths["key"]) as server:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump({
            "current-context": "c",
            "clusters": [{"name": "k", "cluster": {"server": server.url, "certificate-authority": str(paths["ca"])}}],
            "users": [{"name": "u", "user": {"token": "t0ken"}}],
            "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        }))
        yield cluster, kubeconfig


def load_inventory_into(cluster: FakeCluster) -> None:
    resource = {"DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices", "Node": "nodes"}
    for doc in yaml.safe_load_all((DATA / "inventory.yaml").read_text()):
        cluster.put(resource[doc["kind"]], doc)


def test_api_server_down_at_start_then_synced(
    serve: Callable[..., Served], api: tuple[FakeCluster, Path]
) -> None:
    cluster, kubeconfig = api
    load_inventory_into(cluster)
    cluster.available = False
    live = KubeInventory(load_kube_config(kubeconfig), debounce=0.02, backoff_initial=0.02, backoff_max=0.1)
    state = ServerState(inventory=live)
    state.background.append(live.run)
    s = serve(state)
    wait_for(lambda: live.restarts >= 2, what="failed list attempts")
    ready = s.client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["inventory"]["synced"] is False and "not synced" in ready.json()["inventory"]["problem"]
    # reviews go on: valid claims are allowed, satisfiability is reported as unknown
    response = s.client.post("/validate", json=admission_review(claim("big", memory="50Gi"))).json()["response"]
    assert response["allowed"] is True
    assert response["warnings"][0].startswith("SatisfiabilityUnknown: satisfiability not checked: inventory not")
    # invalid objects are reported (as warnings at the webhook): validation needs no inventory
    bad = s.client.post("/validate", json=admission_review(claim("bad", request="GPU_x"))).json()["response"]
    assert bad["allowed"] is True and any(w.startswith("FieldValueInvalid") for w in bad["warnings"])
    cluster.available = True
    wait_for(lambda: s.client.get("/readyz").status_code == 200, what="ready after the API server is back")
    response = s.client.post("/validate", json=admission_review(claim("big", memory="50Gi"))).json()["response"]
    assert response["allowed"] is False
    assert response["status"]["details"]["causes"][0]["reason"] == "Unsatisfiable"
    metrics = s.client.get("/metrics").text
    assert "draguard_inventory_devices 1.0" in metrics
    assert "draguard_watch_restarts_total 0.0" not in metrics


def test_watch_updates_reach_reviews(serve: Callable[..., Served], api: tuple[FakeCluster, Path]) -> None:
    cluster, kubeconfig = api
    load_inventory_into(cluster)
    live = KubeInventory(load_kube_config(kubeconfig), debounce=0.02, backoff_initial=0.02, backoff_max=0.1)
    state = ServerState(inventory=live)
    state.background.append(live.run)
    s = serve(state)
    wait_for(lambda: s.client.get("/readyz").status_code == 200, what="ready")
    big = admission_review(claim("big", memory="50Gi"))
    assert s.client.post("/validate", json=big).json()["response"]["allowed"] is False
    # a driver publishes a bigger GPU (no request policy): now 50Gi fits on node-b
    cluster.put("nodes", {"metadata": {"name": "node-b", "labels": {"kubernetes.io/hostname": "node-b"}}})
    cluster.put("resourceslices", {"metadata": {"name": "node-b-gpu"}, "spec": {
        "driver": "gpu.example.com", "nodeName": "node-b",
        "pool": {"name": "node-b", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0", "capacity": {"memory": {"value": "80Gi"}}}]}})
    wait_for(lambda: s.client.post("/validate", json=big).json()["response"]["allowed"], what="now satisfiable")
    cluster.fault("resourceslices", "gone")  # a 410 relist keeps serving
    wait_for(lambda: live.relists >= 1, what="relist")
    assert s.client.post("/validate", json=big).json()["response"]["allowed"] is True


# ------------------------------------------------------------------ rotation under load
def test_certificate_rotation_under_load(
    serve: Callable[..., Served], tls_paths: dict[str, Path], tls_master: dict[str, Path]
) -> None:
    s = serve(ServerState(), reload=0.05)
    port = s.server.port
    ca = tls_paths["ca"]
    before = peer_serial(port, ca)
    failures: list[str] = []
    counts = {"fresh": 0, "kept": 0}
    stop = threading.Event()
    review = admission_review(claim("ok"))

    def fresh_connections() -> None:  # a new TLS handshake for every request
        while not stop.is_set():
            try:
                with httpx.Client(base_url=s.url, verify=client_context(ca), timeout=5) as c:
                    r = c.post("/validate", json=review)
                if r.status_code != 200 or r.json()["response"]["allowed"] is not True:
                    failures.append(f"status {r.status_code}")
                counts["fresh"] += 1
            except Exception as exc:  # every failure counts
                failures.append(repr(exc))

    def kept_connection() -> None:  # one keep-alive connection across the rotation
        with httpx.Client(base_url=s.url, verify=client_context(ca), timeout=5) as c:
            while not stop.is_set():
                try:
                    r = c.post("/validate", json=review)
                    if r.status_code != 200:
                        failures.append(f"status {r.status_code}")
                    counts["kept"] += 1
                except Exception as exc:
                    failures.append(repr(exc))

    threads = [threading.Thread(target=fresh_connections) for _ in range(3)]
    threads.append(threading.Thread(target=kept_connection))
    for t in threads:
        t.start()
    try:
        wait_for(lambda: counts["fresh"] > 20, what="load")
        ca_pem, ca_key = tls_master["ca"].read_bytes(), tls_master["ca_key"].read_bytes()
        cert, key = generate_leaf(ca_pem, ca_key, ["127.0.0.1", "draguard.draguard.svc"], 2)
        write_bundle(CertBundle(ca_cert=ca_pem, ca_key=ca_key, cert=cert, key=key), ca.parent)
        new_serial = x509.load_pem_x509_certificate(cert).serial_number
        wait_for(lambda: peer_serial(port, ca) == new_serial, what="new certificate served")
        served_at = counts["fresh"]
        wait_for(lambda: counts["fresh"] > served_at + 20, what="load after rotation")
    finally:
        stop.set()
        for t in threads:
            t.join(10)
    assert before != new_serial
    assert failures == []
    assert counts["kept"] > 0
    # write_bundle replaces ca.crt, tls.crt and tls.key one by one, so a poll between two of
    # them may reload once more (same certificate): what matters is that the new one is served.
    assert s.state.tls is not None and s.state.tls.reloads >= 1
    assert s.client.get("/readyz").json()["certificate"]["serial"] == f"{new_serial:x}"


def test_half_written_rotation_keeps_the_old_certificate(
    serve: Callable[..., Served], tls_paths: dict[str, Path]
) -> None:
    s = serve(ServerState(), reload=0.05)
    before = peer_serial(s.server.port, tls_paths["ca"])
    other = generate_bundle("x", "y", extra_sans=["127.0.0.1"])
    tls_paths["cert"].write_bytes(other.cert)  # certificate without its key
    assert s.state.tls is not None
    wait_for(lambda: s.state.tls is not None and s.state.tls.errors >= 1, what="failed reload")
    assert peer_serial(s.server.port, tls_paths["ca"]) == before
    assert s.client.get("/healthz").status_code == 200


# ------------------------------------------------------------------ the real command
def test_draguard_serve_process(tmp_path: Path) -> None:
    paths = write_bundle(generate_bundle("draguard", "draguard", extra_sans=["127.0.0.1"]), tmp_path / "tls")
    probe = BackgroundServer(lambda *a: None)
    port = probe.port
    probe.sock.close()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "draguard", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--tls-cert", str(paths["cert"]), "--tls-key", str(paths["key"]),
         "--inventory", str(DATA / "inventory.yaml"), "--unsatisfiable", "warn", "--shutdown-drain-seconds", "0.5"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        client = httpx.Client(base_url=f"https://127.0.0.1:{port}", verify=client_context(paths["ca"]), timeout=5)

        def up() -> bool:
            try:
                return client.get("/readyz").status_code == 200
            except httpx.TransportError:
                return proc.poll() is not None  # exited: stop waiting, the assert below reports it

        wait_for(up, timeout=20, what="draguard serve to start")
        assert proc.poll() is None
        response = client.post("/validate", json=admission_review(claim("big", memory="50Gi"))).json()["response"]
        assert response["allowed"] is True and response["warnings"][0].startswith("Unsatisfiable:")
        client.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0
    lines = [line for line in err.decode().splitlines() if '"msg":"review"' in line]
    assert len(lines) == 1 and '"decision":"allowed"' in lines[0] and '"kind":"ResourceClaim"' in lines[0]


def test_draguard_serve_usage_errors(tmp_path: Path) -> None:
    run = [sys.executable, "-m", "draguard", "serve", "--port", "0"]
    out = subprocess.run([*run, "--tls-cert", "x.crt"], cwd=ROOT, capture_output=True, timeout=30)
    assert out.returncode == 2 and b"--tls-cert and --tls-key go together" in out.stderr
    out = subprocess.run([*run, "--inventory", str(tmp_path / "missing")], cwd=ROOT, capture_output=True, timeout=30)
    assert out.returncode == 2 and b"--inventory" in out.stderr
    out = subprocess.run([*run, "--kubeconfig", str(tmp_path / "missing")], cwd=ROOT, capture_output=True,
                         timeout=30)
    assert out.returncode == 2 and b"kubeconfig" in out.stderr
