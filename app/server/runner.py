"""Running an ASGI app under uvicorn: in the foreground (``draguard serve``) or in a thread.

Why our own wrapper: draguard passes uvicorn a ready-made :class:`ssl.SSLContext` (one that
swaps certificates on rotation, see :mod:`app.server.tls`) instead of file names, which
uvicorn's public options cannot express; and tests, the benchmark and the fake API server all
need "serve this app on an ephemeral loopback port in the background and stop it promptly".
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn

from .limits import ConnectionGuard, guarded_protocol

__all__ = ["BackgroundServer", "bind_socket", "make_server"]


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket; port 0 picks a free port (read it back from ``getsockname``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on accepted sockets whose proto
    # says TCP, and without it Nagle + delayed ACK add ~40 ms to every response
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(1024)
    sock.set_inheritable(True)
    return sock


def make_server(
    app: Any,
    *,
    ssl_context: ssl.SSLContext | None = None,
    log_level: str = "warning",
    graceful_shutdown: int = 2,
    guard: ConnectionGuard | None = None,
    server_class: Callable[[uvicorn.Config], uvicorn.Server] = uvicorn.Server,
    **config: Any,
) -> uvicorn.Server:
    """A uvicorn server for ``app`` that will serve TLS with ``ssl_context`` as given, with the
    connection limits of ``guard`` (header size and time, connection count: :mod:`limits`)."""
    config.setdefault("http", guarded_protocol(guard or ConnectionGuard()))
    config.setdefault("ws", "none")  # no websockets: one less upgrade path to defend
    cfg = uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        timeout_graceful_shutdown=graceful_shutdown,
        timeout_keep_alive=30,  # longer than the API server's idle connections churn
        server_header=False,
        log_config=None,  # keep our JSON log handlers (app.server.logs) instead of uvicorn's
        **config,
    )
    cfg.load()
    cfg.ssl = ssl_context  # after load(): uvicorn would otherwise build its own from files
    return server_class(cfg)


class BackgroundServer:
    """Serve an app on a loopback socket from a daemon thread; ``with`` starts and stops it."""

    def __init__(
        self,
        app: Any,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        ssl_context: ssl.SSLContext | None = None,
        log_level: str = "critical",
        guard: ConnectionGuard | None = None,
        **config: Any,
    ) -> None:
        self.sock = bind_socket(host, port)
        self.guard = guard or ConnectionGuard()
        self.host = host
        self.port: int = self.sock.getsockname()[1]
        self.ssl = ssl_context is not None
        self.server = make_server(app, ssl_context=ssl_context, log_level=log_level, guard=self.guard, **config)
        self._thread = threading.Thread(target=self._run, name=f"uvicorn-{self.port}", daemon=True)
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.ssl else 'http'}://{self.host}:{self.port}"

    def _run(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            await self.server.serve(sockets=[self.sock])

        asyncio.run(main())

    def start(self, timeout: float = 10.0) -> BackgroundServer:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"server on port {self.port} did not start")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.server.should_exit = True
        self._thread.join(timeout)
        if self._thread.is_alive():  # open streams outlived the graceful period
            self.server.force_exit = True
            self._thread.join(timeout)
        self.sock.close()

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
