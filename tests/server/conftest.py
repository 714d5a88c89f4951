"""Fixtures: certificates, a static inventory, and real HTTPS servers on loopback."""

from __future__ import annotations

import shutil
import ssl
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # make `fakeapi` importable

from draguard.certs import generate_bundle, write_bundle
from draguard.inventory import StaticInventory
from draguard.server.app import create_app
from draguard.server.limits import ConnectionGuard
from draguard.server.runner import BackgroundServer
from draguard.server.state import ServerState
from draguard.server.tls import CertReloader

DATA = Path(__file__).parent / "data"


@dataclass
class Served:
    """A running draguard server and an HTTPS client that trusts its CA."""

    server: BackgroundServer
    client: httpx.Client
    state: ServerState
    ca: Path

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture(scope="session")
def tls_master(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    bundle = generate_bundle("draguard", "draguard", extra_sans=["127.0.0.1", "localhost"], days=2)
    return write_bundle(bundle, tmp_path_factory.mktemp("tls"))


@pytest.fixture
def tls_paths(tls_master: dict[str, Path], tmp_path: Path) -> dict[str, Path]:
    """A private copy per test (rotation tests rewrite the files)."""
    out = tmp_path / "tls"
    out.mkdir()
    return {k: Path(shutil.copy(v, out / v.name)) for k, v in tls_master.items()}


@pytest.fixture(scope="session")
def static_inventory() -> StaticInventory:
    return StaticInventory([str(DATA / "inventory.yaml")])


def client_context(ca: Path, cert: Path | None = None, key: Path | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(ca))
    if cert and key:
        ctx.load_cert_chain(cert, key)
    return ctx


@pytest.fixture
def serve(tls_paths: dict[str, Path]) -> Iterator[Callable[..., Served]]:
    """Start draguard over HTTPS with a given state: ``serve(state, client_ca=None, reload=5.0, guard=None)``."""
    running: list[Served] = []

    def start(state: ServerState, *, client_ca: Path | None = None, reload: float = 5.0,
              client_cert: tuple[Path, Path] | None = None, guard: ConnectionGuard | None = None,
              **client_kw: Any) -> Served:
        state.tls = CertReloader(tls_paths["cert"], tls_paths["key"], client_ca=client_ca, interval=reload)
        server = BackgroundServer(create_app(state), ssl_context=state.tls.context, guard=guard).start()
        cert, key = client_cert or (None, None)
        client = httpx.Client(base_url=server.url, verify=client_context(tls_paths["ca"], cert, key),
                              timeout=10.0, **client_kw)
        served = Served(server, client, state, tls_paths["ca"])
        running.append(served)
        return served

    yield start
    for s in running:
        s.client.close()
        s.server.stop()
