"""Self-managed certificates end to end against the fake API server: bootstrap from an empty
Secret, renewal near expiry, CA rotation with caBundle patched first, the new certificate
served by the running server — while a real TLS client on loopback, trusting only the
webhooks' current caBundle as the API server does, never sees a failed handshake."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from draguard.certs import generate_bundle, write_bundle
from draguard.inventory.kubeconfig import KubeConfig, load_kube_config, make_client
from draguard.server.app import create_app
from draguard.server.cli_serve import UsageError, build_state
from draguard.server.kube_objects import ObjectClient
from draguard.server.lease import micro_time
from draguard.server.metrics import Metrics
from draguard.server.rotation_plan import RotationPolicy, parse_certificates
from draguard.server.runner import BackgroundServer
from draguard.server.selfcerts import SelfCertError, SelfManagedCerts, SelfManagedSettings
from draguard.server.state import ServerState
from draguard.server.tls import CertReloader
from fakeapi import FakeCluster, serve_fake_api
from kube.helpers import wait_for, write_kubeconfig

from server.test_inventory_policy import serve_args

NS, SECRET, SERVICE = "draguard", "draguard-tls", "draguard"
HOST = f"{SERVICE}.{NS}.svc"  # the name the API server dials (SNI and hostname check)
DAY = dt.timedelta(days=1)
# The TLS client checks validity against the real clock, so the story is told in the past and
# every certificate is valid *now*: issued at NOW - 80 days (CA for 365 days, serving
# certificate for 90, so it has 10 days left: near expiry), renewed at NOW - 30 days (40 days
# left, inside the 45-day margin), and the CA replaced from NOW - 2 days (287 days left, inside
# this test's 300-day CA margin; the default is 180 days of a 3-year CA).
NOW = dt.datetime.now(dt.UTC).replace(microsecond=0)
T0 = NOW - 80 * DAY
T_LEAF = NOW - 30 * DAY
T_CA = NOW - 2 * DAY
POLICY = RotationPolicy(ca_days=365, ca_renew_before=300 * DAY)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> dt.datetime:
        return self.now


def webhook_configs() -> list[tuple[str, dict[str, Any]]]:
    hook = {"admissionReviewVersions": ["v1"], "sideEffects": "None",
            "clientConfig": {"service": {"name": SERVICE, "namespace": NS, "path": "/validate"}, "caBundle": ""}}
    return [
        ("validatingwebhookconfigurations", {"metadata": {"name": "draguard"}, "webhooks": [
            {**hook, "name": "claims.validate.draguard.dev"}, {**hook, "name": "slices.validate.draguard.dev"}]}),
        ("mutatingwebhookconfigurations", {"metadata": {"name": "draguard"}, "webhooks": [
            {**hook, "name": "claims.mutate.draguard.dev"}]}),
    ]


@pytest.fixture
def cluster_and_config(tmp_path: Path) -> Iterator[tuple[FakeCluster, KubeConfig]]:
    paths = write_bundle(generate_bundle("kubernetes", "default", extra_sans=["127.0.0.1"]), tmp_path / "api")
    cluster = FakeCluster(token="t0ken")
    cluster.put_object("secrets", {"metadata": {"name": SECRET, "namespace": NS}, "type": "Opaque"})
    for plural, obj in webhook_configs():
        cluster.put_object(plural, obj)
    with serve_fake_api(cluster, cert=paths["cert"], key=paths["key"]) as server:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url, paths["ca"].read_bytes(), token="t0ken")
        yield cluster, load_kube_config(kubeconfig)


def rotator(config: KubeConfig, tmp_path: Path, clock: Clock, identity: str = "pod-a") -> SelfManagedCerts:
    settings = SelfManagedSettings(
        namespace=NS, secret=SECRET, service=SERVICE, webhook_configurations=["draguard"],
        cert_file=tmp_path / identity / "tls.crt", key_file=tmp_path / identity / "tls.key",
        identity=identity, policy=POLICY,
    )
    return SelfManagedCerts(config, settings, now=clock)


def tick(r: SelfManagedCerts) -> None:
    async def once() -> None:
        async with make_client(r.config) as client:
            await r.tick(ObjectClient(client))

    asyncio.run(once())


def ca_bundles(cluster: FakeCluster) -> set[str]:
    """Every caBundle of every webhook in both configurations."""
    out = set()
    for plural, obj in webhook_configs():
        stored = cluster.get_object(plural, obj["metadata"]["name"])
        assert stored is not None
        out |= {h["clientConfig"]["caBundle"] for h in stored["webhooks"]}
    return out


def secret_data(cluster: FakeCluster) -> dict[str, bytes]:
    stored = cluster.get_object("secrets", SECRET, NS)
    assert stored is not None
    return {k: base64.b64decode(v) for k, v in (stored.get("data") or {}).items()}


class HandshakeProbe:
    """A TLS client that, like the API server, trusts only the webhooks' current caBundle and
    connects by the Service's DNS name; it records every served serial and every failure."""

    def __init__(self, cluster: FakeCluster, port: int) -> None:
        self.cluster, self.port = cluster, port
        self.serials: list[int] = []
        self.bundles_seen: set[str] = set()
        self.failures: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        for _ in range(200_000):  # bounded; stopped long before by the test
            if self.stop.is_set():
                return
            stored = self.cluster.get_object("validatingwebhookconfigurations", "draguard")
            assert stored is not None
            bundle = stored["webhooks"][0]["clientConfig"]["caBundle"]
            try:
                ctx = ssl.create_default_context(cadata=base64.b64decode(bundle).decode())
                with socket.create_connection(("127.0.0.1", self.port), timeout=5) as raw, \
                        ctx.wrap_socket(raw, server_hostname=HOST) as tls:
                    der = tls.getpeercert(binary_form=True)
                assert der is not None
                self.serials.append(x509.load_der_x509_certificate(der).serial_number)
                self.bundles_seen.add(bundle)
            except (OSError, ssl.SSLError, ValueError) as exc:
                self.failures.append(f"{type(exc).__name__}: {exc}")

    def handshakes_after(self, count: int) -> bool:
        return len(self.serials) > count


def served_serial(cluster: FakeCluster) -> int:
    return parse_certificates(secret_data(cluster)["tls.crt"])[0].serial_number


def test_rotation_end_to_end_without_a_failed_handshake(
    cluster_and_config: tuple[FakeCluster, KubeConfig], tmp_path: Path
) -> None:
    cluster, config = cluster_and_config
    clock = Clock()
    r = rotator(config, tmp_path, clock)
    asyncio.run(r.bootstrap(timeout=10, retry=0.05))
    # bootstrap: CA + serving certificate in the Secret, caBundle on all three webhooks
    data = secret_data(cluster)
    assert ca_bundles(cluster) == {base64.b64encode(data["ca.crt"]).decode()}
    assert r.settings.cert_file.read_bytes() == data["tls.crt"]

    reloader = CertReloader(r.settings.cert_file, r.settings.key_file, interval=3600)
    r.reloader = reloader
    with BackgroundServer(create_app(ServerState(tls=reloader)), ssl_context=reloader.context) as server:
        probe = HandshakeProbe(cluster, server.port)
        probe.thread.start()
        try:
            wait_for(lambda: served_serial(cluster) in probe.serials, what="the first certificate served")

            # 1. the serving certificate nears expiry: renewed with the same CA, caBundle untouched
            first, bundle_before = served_serial(cluster), ca_bundles(cluster)
            clock.now = T_LEAF
            tick(r)
            second = served_serial(cluster)
            assert second != first and ca_bundles(cluster) == bundle_before
            assert any("issued a serving certificate" in why for why in r.last_reasons)
            wait_for(lambda: probe.serials[-1] == second, what="the renewed certificate served")

            # 2. the CA nears expiry: the new CA is added to caBundle (old + new) first...
            clock.now = T_CA
            tick(r)
            (patched,) = ca_bundles(cluster)
            assert patched not in bundle_before
            assert len(parse_certificates(base64.b64decode(patched))) == 2
            seen = len(probe.serials)
            wait_for(lambda: patched in probe.bundles_seen and probe.handshakes_after(seen),
                     what="a handshake trusting the patched caBundle")
            # ...and signs only after the propagation time
            clock.now += POLICY.ca_propagation
            tick(r)
            third = served_serial(cluster)
            new_ca = parse_certificates(base64.b64decode(patched))[1]
            served_cert = x509.load_pem_x509_certificate(secret_data(cluster)["tls.crt"])
            assert served_cert.verify_directly_issued_by(new_ca) is None
            wait_for(lambda: probe.serials[-1] == third, what="the certificate of the new CA served")
        finally:
            probe.stop.set()
            probe.thread.join(10)
    assert probe.failures == []
    assert {first, second, third} <= set(probe.serials)
    assert reloader.reloads == 2


def test_one_replica_at_a_time_via_the_lease(
    cluster_and_config: tuple[FakeCluster, KubeConfig], tmp_path: Path
) -> None:
    cluster, config = cluster_and_config
    clock = Clock()
    cluster.put_object("leases", {"metadata": {"name": "draguard-cert-rotation", "namespace": NS}, "spec": {
        "holderIdentity": "pod-b", "leaseDurationSeconds": 60, "renewTime": micro_time(T0)}})
    a = rotator(config, tmp_path, clock, "pod-a")
    tick(a)  # pod-b holds the Lease: pod-a writes nothing
    assert [w for w in cluster.writes if w[1] == "secrets"] == []
    assert not a.settings.cert_file.exists()
    clock.now = T0 + dt.timedelta(seconds=61)  # pod-b's Lease has run out
    tick(a)
    assert [w[:2] for w in cluster.writes if w[1] != "leases"] == [
        ("update", "secrets"), ("update", "validatingwebhookconfigurations"),
        ("update", "mutatingwebhookconfigurations")]
    lease = cluster.get_object("leases", "draguard-cert-rotation", NS)
    assert lease is not None and lease["spec"]["holderIdentity"] is None  # released after the write
    # a second replica finds everything current and writes nothing; it serves the same pair
    b = rotator(config, tmp_path, clock, "pod-b")
    writes = len(cluster.writes)
    tick(b)
    assert len(cluster.writes) == writes
    assert b.settings.cert_file.read_bytes() == a.settings.cert_file.read_bytes()


def test_missing_secret_or_forbidden_update_is_reported_not_raised(
    cluster_and_config: tuple[FakeCluster, KubeConfig], tmp_path: Path
) -> None:
    cluster, config = cluster_and_config
    clock = Clock()
    cluster.forbidden.add(("update", "secrets"))
    r = rotator(config, tmp_path, clock)
    tick(r)
    assert "HTTP 403" in r.last_error and not r.settings.cert_file.exists()
    counted = Metrics(ServerState(self_managed=r).stats).render().decode()
    assert "draguard_self_managed_cert_errors_total 1.0" in counted
    assert "draguard_self_managed_cert_writes_total 0.0" in counted
    cluster.store.pop(("secrets", NS, SECRET))
    with pytest.raises(SelfCertError, match="draguard/draguard-tls does not exist"):
        asyncio.run(r.bootstrap(timeout=0.2, retry=0.05))
    cluster.forbidden.clear()
    cluster.put_object("secrets", {"metadata": {"name": SECRET, "namespace": NS}})
    tick(r)
    assert r.last_error == "" and r.settings.cert_file.exists()
    assert "draguard_self_managed_cert_writes_total 1.0" in Metrics(ServerState(self_managed=r).stats).render().decode()


def test_serve_flags_bootstrap_the_certificate(
    cluster_and_config: tuple[FakeCluster, KubeConfig], tmp_path: Path
) -> None:
    cluster, _ = cluster_and_config
    kubeconfig = str(tmp_path / "kubeconfig")
    cert, key = tmp_path / "certs" / "tls.crt", tmp_path / "certs" / "tls.key"
    with pytest.raises(UsageError, match="--cert-secret needs --tls-cert and --tls-key"):
        build_state(serve_args("--cert-secret", SECRET, "--kubeconfig", kubeconfig, "--namespace", NS))
    state = build_state(serve_args("--cert-secret", SECRET, "--kubeconfig", kubeconfig, "--namespace", NS,
                                   "--tls-cert", str(cert), "--tls-key", str(key)))
    assert state.tls is not None and state.self_managed is not None
    assert cert.read_bytes() == secret_data(cluster)["tls.crt"]
    assert state.tls.serial == served_serial(cluster)
    # the inventory source, the cluster-version follower (no --kubernetes-version) and the rotation loop
    assert len(state.background) == 3
    assert state.readiness()[1]["certificate"]["selfManaged"]["secret"] == f"{NS}/{SECRET}"
