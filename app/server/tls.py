"""Serving TLS with certificate hot-reload (Secret rotation without a restart or dropped connections).

How: uvicorn is given one long-lived :class:`ssl.SSLContext` (the *base*).  Its SNI callback —
which OpenSSL calls for every ClientHello, with or without a server name — points the new
connection at the *current* context.  A reload builds a complete new context from the files
and replaces ``current`` with one assignment, so a handshake sees either the old pair or the
new pair, never a certificate with the wrong key (reloading the base context in place with
``load_cert_chain`` would briefly leave it with a new certificate and the old key).  Open
connections keep their TLS session untouched.

Change detection polls ``stat`` of both files (following symlinks, as kubelet swaps Secret
volumes via a ``..data`` symlink).  A half-written pair fails to load and is retried on the
next tick; the old certificate stays in service meanwhile.  An *expired* replacement (while the
served one is still valid) is refused outright: it would fail every handshake.  It is logged at
error once per file change and counted in ``draguard_certificate_reload_failures{reason}``.

Expiry: from :data:`EXPIRY_WARNING_DAYS` (30) days before ``notAfter`` the reloader logs a
warning (once an hour) and ``/readyz`` and the ``draguard_certificate_expiry_warning`` gauge say
so — in every certificate mode, because a certificate that expires behind ``failurePolicy:
Fail`` blocks every claim.  Self-managed rotation renews 45 days ahead, so the warning means
rotation is failing; with cert-manager or hand-made certificates it is the reminder.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..certs import describe_certificate

__all__ = ["EXPIRY_WARNING_DAYS", "CertReloader"]

EXPIRY_WARNING_DAYS = 30
_WARN_EVERY_SECONDS = 3600.0

log = logging.getLogger("draguard.tls")

_Signature = tuple[tuple[int, int, int], ...]


@dataclass(frozen=True)
class _Loaded:
    """The TLS context in use, with what it was loaded from (to tell when the files change) and the certificate's expiry."""

    context: ssl.SSLContext
    signature: _Signature
    serial: int
    not_after_ts: float


class CertReloader:
    """Owns the server's TLS contexts; :attr:`context` is what the listener uses."""

    def __init__(
        self,
        cert_file: str | Path,
        key_file: str | Path,
        *,
        client_ca: str | Path | None = None,
        interval: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.cert_file = Path(cert_file)
        self.key_file = Path(key_file)
        self.client_ca = Path(client_ca) if client_ca else None
        self.interval = interval
        self.reloads = 0
        self.errors = 0
        self.last_error = ""
        self.failures: dict[str, int] = {}  # reload failures by reason: unloadable | expired
        self._refused: _Signature | None = None  # files already refused: not re-read until they change
        self._clock = clock
        self._last_warned: float | None = None
        self._current = self._load()  # raises at start-up: no certificate, no server
        self.context = self._new_context()
        self.context.load_cert_chain(self.cert_file, self.key_file)
        self.context.sni_callback = self._select

    # ------------------------------------------------------------ contexts
    def _new_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.set_alpn_protocols(["http/1.1"])
        if self.client_ca is not None:
            # the verify settings must be on every context a connection may be switched to
            ctx.load_verify_locations(cafile=self.client_ca)
            ctx.verify_mode = ssl.CERT_REQUIRED
        return ctx

    def _signature(self) -> _Signature:
        out = []
        for path in (self.cert_file, self.key_file):
            st = os.stat(path)
            out.append((st.st_mtime_ns, st.st_size, st.st_ino))
        return tuple(out)

    def _load(self) -> _Loaded:
        signature = self._signature()
        ctx = self._new_context()
        ctx.load_cert_chain(self.cert_file, self.key_file)  # checks that key and cert match
        info = describe_certificate(self.cert_file.read_bytes())
        return _Loaded(ctx, signature, int(info["serial"]), info["not_after"].timestamp())

    def _select(self, sslobj: ssl.SSLObject | ssl.SSLSocket, server_name: str | None, base: ssl.SSLContext) -> None:
        current = self._current.context
        if sslobj.context is not current:
            sslobj.context = current

    # ------------------------------------------------------------ reload
    def check(self) -> bool:
        """Reload if the files changed; True when a new certificate is now being served."""
        try:
            if self._signature() in (self._current.signature, self._refused):
                return False
            loaded = self._load()
        except (OSError, ssl.SSLError, ValueError) as exc:
            self.errors += 1
            self.failures["unloadable"] = self.failures.get("unloadable", 0) + 1
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.warning(json.dumps({"msg": "certificate reload failed; keeping the old one",
                                    "error": self.last_error}))
            return False
        if loaded.not_after_ts <= self._clock() < self._current.not_after_ts:
            # an expired replacement would fail every handshake: the API server rejects it
            self._refused = loaded.signature
            self.errors += 1
            self.failures["expired"] = self.failures.get("expired", 0) + 1
            self.last_error = f"the new certificate (serial {loaded.serial:x}) has expired"
            log.error(json.dumps({"msg": "expired certificate refused; keeping the old one",
                                  "error": self.last_error, "serving_serial": f"{self.serial:x}"}))
            return False
        previous = self._current.serial
        self._current = loaded
        self._refused = None
        self.reloads += 1
        self.last_error = ""
        log.info(json.dumps({"msg": "certificate reloaded", "old_serial": f"{previous:x}",
                             "new_serial": f"{loaded.serial:x}"}))
        return True

    async def run(self) -> None:
        """Poll for changes until cancelled (stat is cheap; the reload itself is rare)."""
        while True:
            await asyncio.sleep(self.interval)
            self.check()
            self.warn_if_expiring()

    def expiry_warning(self) -> str | None:
        """A sentence when the served certificate expires within 30 days (or has expired)."""
        left = self.not_after_ts - self._clock()
        if left >= EXPIRY_WARNING_DAYS * 86400:
            return None
        if left <= 0:
            return "the serving certificate has expired: the API server rejects every call"
        return (f"the serving certificate expires in {left / 86400:.1f} days; renew it "
                f"(self-managed mode renews 45 days ahead: check its errors)")

    def warn_if_expiring(self) -> str | None:
        """Log the expiry warning, at most once an hour; returns it."""
        warning = self.expiry_warning()
        now = self._clock()
        if warning and (self._last_warned is None or now - self._last_warned >= _WARN_EVERY_SECONDS):
            self._last_warned = now
            log.warning(json.dumps({"msg": warning, "serial": f"{self.serial:x}",
                                    "notAfter": self.not_after_ts}))
        return warning

    # ------------------------------------------------------------ read side
    @property
    def loaded(self) -> bool:
        """Always true: construction fails without a usable pair, and a failed reload keeps the
        previous one in service."""
        return True

    @property
    def serial(self) -> int:
        return self._current.serial

    @property
    def not_after_ts(self) -> float:
        return self._current.not_after_ts

    def status(self) -> dict[str, Any]:
        return {
            "serial": f"{self.serial:x}",
            "notAfter": self.not_after_ts,
            "reloads": self.reloads,
            "lastError": self.last_error or None,
            "expiryWarning": self.expiry_warning(),
        }
