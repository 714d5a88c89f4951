"""``draguard serve --kubeconfig`` answers for the version of the API server it watches, without
configuration (issue #34 item 4): against the real 1.36.3, 1.37.2 and 1.38 binaries it says 1.36,
1.37 and 1.38; given
``--kubernetes-version`` it keeps the operator's choice; against a build that reports no release
version (the team's 1.36.2 binary says ``v0.0.0-master``) it keeps the default and says why.
Skipped, with the reason, where a version's binaries are absent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from draguard.certs import generate_bundle, write_bundle
from draguard.k8s.features import DEFAULT_VERSION
from draguard.server.runner import BackgroundServer
from kube.helpers import wait_for
from realapi import LiveApiServer, find_binary_of
from server.conftest import client_context

ROOT = Path(__file__).resolve().parents[2]


def _readyz(kubeconfig: Path, tmp_path: Path, *extra: str) -> dict[str, Any]:
    """Start ``draguard serve --kubeconfig``, return its /readyz detail once ready, stop it."""
    paths = write_bundle(generate_bundle("draguard", "draguard", extra_sans=["127.0.0.1"]), tmp_path / "tls")
    probe = BackgroundServer(lambda *a: None)
    port = probe.port
    probe.sock.close()
    proc = subprocess.Popen(
        [sys.executable, "-m", "draguard", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--tls-cert", str(paths["cert"]), "--tls-key", str(paths["key"]), "--kubeconfig", str(kubeconfig),
         "--allow-insecure-kubeconfig", "--shutdown-drain-seconds", "0.2", *extra],
        cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    detail: dict[str, Any] = {}
    try:
        client = httpx.Client(base_url=f"https://127.0.0.1:{port}", verify=client_context(paths["ca"]), timeout=5)

        def ready() -> bool:
            try:
                response = client.get("/readyz")
            except httpx.TransportError:
                return proc.poll() is not None
            detail.update(response.json())
            return response.status_code == 200

        wait_for(ready, timeout=60, what="draguard serve to sync")
        assert proc.poll() is None, proc.communicate(timeout=5)
        client.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=15)
    return detail


@pytest.mark.parametrize("minor", ["1.36", "1.37", "1.38"])
def test_serve_takes_the_version_of_the_api_server_it_watches(minor: str, tmp_path: Path) -> None:
    if find_binary_of("kube-apiserver", minor) is None:  # 1.36: a release build, not the team's dev build
        pytest.skip(f"no kube-apiserver of Kubernetes {minor} built in .cache/kube/ (scripts/setup-kubernetes-versions.sh)")
    with LiveApiServer(kube_version=minor) as api:
        target = _readyz(api.kubeconfig, tmp_path)["target"]
    assert target["kubernetesVersion"] == minor
    assert target["clusterVersion"].startswith(f"v{minor}.")
    assert "problem" not in target and "notice" not in target


def test_an_explicit_version_is_kept(tmp_path: Path) -> None:
    with LiveApiServer(kube_version="1.37") as api:
        target = _readyz(api.kubeconfig, tmp_path, "--kubernetes-version", "1.35")["target"]
    assert target == {"kubernetesVersion": "1.35", "featureGates": "", "gatesFrom": "configured"}


def test_a_development_build_keeps_the_default_and_says_why(tmp_path: Path) -> None:
    with LiveApiServer() as api:  # the team's 1.36.2 binary: gitVersion v0.0.0-master
        status, version = api.request("GET", "/version")
        if status != 200 or not str(version.get("gitVersion", "")).startswith("v0.0.0"):
            pytest.skip(f"this kube-apiserver reports {version.get('gitVersion')!r}, a release version")
        target = _readyz(api.kubeconfig, tmp_path)["target"]
    assert target["kubernetesVersion"] == DEFAULT_VERSION
    assert "development build" in target["problem"]
