"""Fixtures: a fake API server over HTTPS with a token, its kubeconfig, and a loop thread."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # make `fakeapi` and `kube` importable

from draguard.certs import generate_bundle, write_bundle
from draguard.server.runner import BackgroundServer
from fakeapi import FakeCluster, serve_fake_api
from kube.helpers import LoopThread, write_kubeconfig

TOKEN = "audit-token"


@pytest.fixture(scope="session")
def api_tls(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    bundle = generate_bundle("kubernetes", "default", extra_sans=["127.0.0.1", "localhost"], days=2)
    return write_bundle(bundle, tmp_path_factory.mktemp("audit-api-tls"))


@pytest.fixture
def cluster() -> FakeCluster:
    return FakeCluster(token=TOKEN)


@pytest.fixture
def fake_api(cluster: FakeCluster, api_tls: dict[str, Path]) -> Iterator[BackgroundServer]:
    with serve_fake_api(cluster, cert=api_tls["cert"], key=api_tls["key"]) as server:
        yield server


@pytest.fixture
def kubeconfig(tmp_path: Path, fake_api: BackgroundServer, api_tls: dict[str, Path]) -> Path:
    return write_kubeconfig(tmp_path / "kubeconfig", fake_api.url, api_tls["ca"].read_bytes(), token=TOKEN)


@pytest.fixture
def loop_thread() -> Iterator[LoopThread]:
    lt = LoopThread()
    try:
        yield lt
    finally:
        lt.stop()
