"""A fake Kubernetes API server for the live-inventory and webhook tests (see server.py)."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from draguard.server.runner import BackgroundServer

from fakeapi.server import OBJECT_KINDS, PATHS, FakeCluster, make_app

__all__ = ["OBJECT_KINDS", "PATHS", "FakeCluster", "make_app", "serve_fake_api"]


@contextmanager
def serve_fake_api(
    cluster: FakeCluster, *, cert: Path | None = None, key: Path | None = None, client_ca: Path | None = None
) -> Iterator[BackgroundServer]:
    """Serve ``cluster`` on 127.0.0.1 (HTTPS when ``cert``/``key`` are given) until the block ends."""
    ctx: ssl.SSLContext | None = None
    if cert and key:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(cert, key)
        if client_ca:
            ctx.load_verify_locations(client_ca)
            ctx.verify_mode = ssl.CERT_REQUIRED
    server = BackgroundServer(make_app(cluster), ssl_context=ctx, graceful_shutdown=1)
    server.start()
    try:
        yield server
    finally:
        cluster.closing = True
        server.stop()
