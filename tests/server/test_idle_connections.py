"""Connections opened and never used are closed quietly at the header timeout (issue #36, row 5).

Clients — the API server's webhook client among them — open connections ahead of need and leave
some unused; Go's server closes such a connection at its ``ReadHeaderTimeout`` without an answer.
Logging each as "connection refused" (408) and counting it as a refusal made the log and
``draguard_connections_refused_total`` cry wolf.  A connection that sent part of its headers
(slowloris) is still refused with 408, counted and logged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from draguard.inventory import StaticInventory
from draguard.server.limits import ConnectionGuard, ConnectionLimits
from draguard.server.state import ServerState

from server.conftest import Served
from server.test_limits import read_response, status_of, still_serving, tls_socket

SMALL_TIMEOUT = 0.5


@pytest.fixture
def guarded(serve: Callable[..., Served], static_inventory: StaticInventory) -> Served:
    guard = ConnectionGuard(ConnectionLimits(header_timeout_seconds=SMALL_TIMEOUT))
    return serve(ServerState(inventory=static_inventory, guard=guard), guard=guard)


def test_a_connection_that_never_sends_a_byte_is_closed_quietly(
    guarded: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="draguard.limits")
    with tls_socket(guarded) as idle:
        raw = read_response(idle)  # the server closes it at the header timeout
    assert raw == b""  # no 408: nobody asked anything
    guard = guarded.server.guard
    assert guard.refused == {} and guard.idle_closed == 1
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any('"idle connection closed"' in r.getMessage() for r in caplog.records)
    metrics = guarded.client.get("/metrics").text
    assert "draguard_connections_idle_closed_total 1.0" in metrics
    assert "draguard_connections_refused_total{" not in metrics
    assert still_serving(guarded)


def test_a_connection_with_unfinished_headers_is_still_refused_with_408(
    guarded: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="draguard.limits")
    with tls_socket(guarded) as slow:
        slow.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\n")  # ... and nothing more
        code, body = status_of(read_response(slow))
    assert code == 408 and body["reason"] == "Timeout"
    guard = guarded.server.guard
    assert guard.refused == {"Timeout": 1} and guard.idle_closed == 0
    assert any('"connection refused"' in r.getMessage() for r in caplog.records)
