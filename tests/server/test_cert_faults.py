"""Certificate files that go wrong while serving: missing, corrupt, expired — the old pair stays.

Each fault is followed by a good rotation, to show the reloader is not stuck afterwards.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography import x509
from draguard.certs import generate_leaf
from draguard.server.state import ServerState

from server.conftest import Served
from server.test_live_and_rotation import peer_serial, wait_for

SANS = ["127.0.0.1", "localhost"]


def _leaf(tls_paths: dict[str, Path], *, days: int, issued_days_ago: int = 0) -> tuple[bytes, bytes, int]:
    ca_dir = tls_paths["ca"].parent
    now = dt.datetime.now(dt.UTC) - dt.timedelta(days=issued_days_ago)
    cert, key = generate_leaf(tls_paths["ca"].read_bytes(), (ca_dir / "ca.key").read_bytes(), SANS, days, now)
    return cert, key, x509.load_pem_x509_certificate(cert).serial_number


def _install(tls_paths: dict[str, Path], cert: bytes, key: bytes) -> None:
    tls_paths["key"].write_bytes(key)
    tls_paths["cert"].write_bytes(cert)


def _rotates_again(s: Served, tls_paths: dict[str, Path]) -> None:
    cert, key, serial = _leaf(tls_paths, days=2)
    _install(tls_paths, cert, key)
    wait_for(lambda: peer_serial(s.server.port, tls_paths["ca"]) == serial, what="good rotation served")


def test_expired_replacement_is_refused_logged_at_error_and_counted(
    serve: Callable[..., Served], tls_paths: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="draguard.tls")
    s = serve(ServerState(), reload=0.05)
    assert s.state.tls is not None
    before = peer_serial(s.server.port, tls_paths["ca"])
    cert, key, _ = _leaf(tls_paths, days=2, issued_days_ago=10)  # expired 8 days ago
    _install(tls_paths, cert, key)
    wait_for(lambda: s.state.tls is not None and s.state.tls.failures.get("expired") == 1, what="refusal")
    assert peer_serial(s.server.port, tls_paths["ca"]) == before
    refusals = [r for r in caplog.records if "expired certificate refused" in r.getMessage()]
    assert len(refusals) == 1 and refusals[0].levelno == logging.ERROR  # once per file change, not per tick
    metrics = s.client.get("/metrics").text
    assert 'draguard_certificate_reload_failures_total{reason="expired"} 1.0' in metrics
    assert s.client.get("/readyz").json()["certificate"]["lastError"].endswith("has expired")
    _rotates_again(s, tls_paths)
    assert s.state.tls.last_error == ""


def test_valid_replacement_is_taken(serve: Callable[..., Served], tls_paths: dict[str, Path]) -> None:
    s = serve(ServerState(), reload=0.05)
    _rotates_again(s, tls_paths)
    assert s.state.tls is not None and s.state.tls.failures == {}


def test_missing_certificate_file_keeps_the_old_one(serve: Callable[..., Served], tls_paths: dict[str, Path]) -> None:
    s = serve(ServerState(), reload=0.05)
    before = peer_serial(s.server.port, tls_paths["ca"])
    tls_paths["cert"].unlink()
    wait_for(lambda: s.state.tls is not None and s.state.tls.failures.get("unloadable", 0) >= 1, what="failure")
    assert peer_serial(s.server.port, tls_paths["ca"]) == before
    assert s.client.get("/healthz").status_code == 200
    assert 'draguard_certificate_reload_failures_total{reason="unloadable"}' in s.client.get("/metrics").text
    _rotates_again(s, tls_paths)


def test_corrupt_certificate_file_keeps_the_old_one(serve: Callable[..., Served], tls_paths: dict[str, Path]) -> None:
    s = serve(ServerState(), reload=0.05)
    before = peer_serial(s.server.port, tls_paths["ca"])
    tls_paths["cert"].write_bytes(b"-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n")
    wait_for(lambda: s.state.tls is not None and s.state.tls.failures.get("unloadable", 0) >= 1, what="failure")
    assert peer_serial(s.server.port, tls_paths["ca"]) == before
    _rotates_again(s, tls_paths)
