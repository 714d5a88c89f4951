"""``draguard ui``: bind, print the address, keep the picture fresh, serve until interrupted."""

from __future__ import annotations

import argparse
import ipaddress
import socket
import sys
from collections.abc import Callable
from typing import Protocol

from ..k8s import Target
from .http import UiState, make_app
from .source import Reading

__all__ = ["DEFAULT_PORT", "UiSource", "add_listen_arguments", "serve_ui"]

DEFAULT_PORT = 8765


class UiSource(Protocol):
    """Files (:class:`~.source.FileSource`) or the cluster (:class:`~.source.ClusterSource`)."""

    def current(self) -> Reading: ...
    def start(self, on_change: Callable[[Reading], None]) -> None: ...
    def stop(self) -> None: ...


def add_listen_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--address", default="127.0.0.1",
                        help="listen on this address (default 127.0.0.1: only this machine; the page shows "
                             "what your kubeconfig may read)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"listen on this port (default {DEFAULT_PORT}; 0: any free port, printed)")


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return address == "localhost"


def serve_ui(source: UiSource, *, address: str, port: int, target: Target, deadline: float) -> int:
    """Serve the page for ``source`` on ``address:port`` until interrupted; prints the URL first."""
    import uvicorn

    state = UiState(source.current(), target=target, deadline=deadline)
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((address, port))
    except OSError as exc:
        print(f"draguard: ui: cannot listen on {address}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    bound = sock.getsockname()[1]
    allowed = frozenset({address.lower(), "localhost", "127.0.0.1", "::1"}) if _loopback(address) else None
    host = f"[{address}]" if family == socket.AF_INET6 else address

    def ready() -> None:
        print(f"draguard ui: http://{host}:{bound}/ (reading {state.view.reading.where}; Ctrl-C stops)", flush=True)
        if not _loopback(address):
            print(f"draguard ui: warning: {address} is not loopback: anyone who reaches it sees what your "
                  "credentials may read", file=sys.stderr, flush=True)

    app = make_app(state, allowed_hosts=allowed, on_ready=ready)
    source.start(state.update)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    try:
        server.run(sockets=[sock])
    finally:
        source.stop()
    return 0
