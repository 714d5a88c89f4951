"""Connection-level limits, as the API server has them: header size, header-read time, connections.

Why at the protocol and not in the app: by the time an ASGI app sees a request, uvicorn has
already buffered every header byte (an 8 MiB header was accepted whole) and a client that
never finishes its headers (slowloris) never reaches the app at all.  So draguard serves with
its own subclass of uvicorn's httptools protocol, which

* answers **431** once the request line and headers pass ``max_header_bytes`` (1 MiB, the
  API server's ``MaxHeaderBytes``) — counted as bytes arrive, so no more than one socket read
  past the limit is ever buffered;
* answers **408** and closes a connection whose request headers are not complete within
  ``header_timeout_seconds`` of its opening or of the request's first byte (Go's
  ``ReadHeaderTimeout``; the API server's webhook client sends its headers at once) — except
  a connection that never sent a byte: clients (the API server among them) open connections
  ahead of need and leave some unused, which is no refusal; such a connection is closed
  quietly at the same time, as Go's server does, and only counted (``idle_closed``);
* answers **429** (``Retry-After: 1``) to a connection beyond ``max_connections`` and closes
  it, so one client opening thousands of sockets cannot starve the others.

Each refusal is a small JSON ``metav1.Status`` with ``Connection: close`` and one log line.
The request body has its own size and time limits in the routes (413, 408).
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["ConnectionGuard", "ConnectionLimits", "guarded_protocol"]

log = logging.getLogger("draguard.limits")

MAX_HEADER_BYTES = 1 << 20  # the API server's http.Server MaxHeaderBytes


@dataclass(frozen=True)
class ConnectionLimits:
    """The limits one listener enforces on every connection."""

    max_header_bytes: int = MAX_HEADER_BYTES
    header_timeout_seconds: float = 10.0
    max_connections: int = 1000


@dataclass
class ConnectionGuard:
    """Limits plus how often each one refused a connection (read by tests and metrics)."""

    limits: ConnectionLimits = field(default_factory=ConnectionLimits)
    refused: dict[str, int] = field(default_factory=dict)
    idle_closed: int = 0
    """Connections closed at the header timeout without having sent a byte (not refusals)."""

    def count(self, reason: str) -> None:
        self.refused[reason] = self.refused.get(reason, 0) + 1


def _status_bytes(code: int, reason: str, message: str, extra_headers: tuple[str, ...] = ()) -> bytes:
    body = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code,
                       "reason": reason, "message": message}).encode()
    phrase = {408: "Request Timeout", 429: "Too Many Requests", 431: "Request Header Fields Too Large"}[code]
    head = [f"HTTP/1.1 {code} {phrase}", "content-type: application/json",
            f"content-length: {len(body)}", "connection: close", *extra_headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def guarded_protocol(guard: ConnectionGuard) -> type[asyncio.Protocol]:
    """A uvicorn HTTP protocol class enforcing ``guard``'s limits (pass it as ``http=``)."""
    limits = guard.limits

    class GuardedHttpToolsProtocol(HttpToolsProtocol):
        """uvicorn's httptools protocol with header size/time and connection limits."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._refused = False
            self._sent_anything = False  # any byte of any request on this connection
            self._awaiting_headers = True
            self._received_before_headers = 0  # raw bytes, bounds what the parser buffers
            self._header_bytes = 0  # request line + header lines, exact once headers are complete
            self._header_timer: asyncio.TimerHandle | None = None
            self._headers_due: float | None = None  # when the awaited headers are late; None: not awaited

        # ------------------------------------------------------------ refusing
        def _refuse(self, code: int, reason: str, message: str, *extra: str) -> None:
            if self._refused:
                return
            self._refused = True
            self._cancel_header_timer()
            guard.count(reason)
            log.warning(json.dumps({"msg": "connection refused", "code": code, "reason": reason,
                                    "client": self._client_text()}))
            if not self.transport.is_closing():
                self.transport.write(_status_bytes(code, reason, message, extra))
                self.transport.close()

        # One timer per connection, not per request: a keep-alive connection answers thousands of
        # requests, and arming and cancelling a loop timer for each one's headers cost more than
        # the rest of this class.  Each request's headers get a due time; the timer, when it
        # fires, refuses the connection if the headers it waits for are late, re-arms for the due
        # time of a later request's, or stops when none are awaited (the next request re-arms it).
        def _start_header_timer(self) -> None:
            if self._headers_due is None:
                self._headers_due = self.loop.time() + limits.header_timeout_seconds
            if self._header_timer is None:
                self._header_timer = self.loop.call_at(self._headers_due, self._header_timer_fired)

        def _headers_complete(self) -> None:
            self._headers_due = None  # the timer, if armed, finds nothing awaited and stops

        def _cancel_header_timer(self) -> None:
            self._headers_due = None
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _header_timer_fired(self) -> None:
            self._header_timer = None
            due = self._headers_due
            if due is None:
                return
            if self.loop.time() < due:
                self._header_timer = self.loop.call_at(due, self._header_timer_fired)
                return
            self._headers_due = None
            self._headers_too_slow()

        def _headers_too_slow(self) -> None:
            if not self._sent_anything:
                self._close_idle()
                return
            if self._awaiting_headers and (self.cycle is None or self.cycle.response_complete):
                self._refuse(408, "Timeout",
                             f"request headers not received within {limits.header_timeout_seconds:g}s")

        def _close_idle(self) -> None:
            """A connection opened and never used: closed without an answer or a warning."""
            if self._refused:
                return
            self._refused = True
            guard.idle_closed += 1
            log.debug(json.dumps({"msg": "idle connection closed", "client": self._client_text()}))
            if not self.transport.is_closing():
                self.transport.close()

        def _client_text(self) -> str:
            return f"{self.client[0]}:{self.client[1]}" if self.client else ""

        # ------------------------------------------------------------ protocol events
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections:
                self._refuse(429, "TooManyRequests",
                             f"more than {limits.max_connections} open connections; retry later",
                             "retry-after: 1")
                return
            self._start_header_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_header_timer()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            self._sent_anything = True
            if self._awaiting_headers:
                self._received_before_headers += len(data)
            super().data_received(data)
            if self._awaiting_headers and self._received_before_headers > limits.max_header_bytes:
                self._header_limit_reached()

        def send_400_response(self, msg: str) -> None:
            if not self._refused:
                super().send_400_response(msg)

        def _header_limit_reached(self) -> None:
            self._refuse(431, "RequestHeaderFieldsTooLarge",
                         f"request headers larger than {limits.max_header_bytes} bytes")

        # ------------------------------------------------------------ parser callbacks
        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._awaiting_headers = True
            self._received_before_headers = 0
            self._header_bytes = 0
            self._start_header_timer()  # due from the connection's opening, else from this first byte

        def on_url(self, url: bytes) -> None:
            if self._refused:
                return
            self._header_bytes += len(url)
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            if self._refused:
                return
            self._header_bytes += len(name) + len(value) + 4  # ": " and CRLF
            super().on_header(name, value)

        def on_headers_complete(self) -> None:
            self._awaiting_headers = False
            self._headers_complete()
            if self._refused:
                return
            if self._header_bytes > limits.max_header_bytes:
                self._header_limit_reached()
                return
            super().on_headers_complete()

        def on_body(self, body: bytes) -> None:
            if not self._refused and self.cycle is not None:
                super().on_body(body)

        def on_message_complete(self) -> None:
            if not self._refused and self.cycle is not None:
                super().on_message_complete()

    return GuardedHttpToolsProtocol
