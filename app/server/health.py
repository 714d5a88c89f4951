"""The plain-HTTP health door: ``/healthz``, ``/readyz`` and ``/metrics`` only.

Why a second listener: with ``--client-ca`` the HTTPS port demands a client certificate on
every connection, and kubelet probes have none.  ``--health-port`` serves the *same* app —
same readiness, same metrics registry — on a plain HTTP port, with every other path answered
404, so the admission and lint routes stay behind client-certificate TLS.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["HEALTH_PATHS", "health_only"]

HEALTH_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})

Scope = dict[str, Any]


def health_only(app: Any) -> Any:
    """Wrap an ASGI app so that only the health paths reach it (GET), everything else is 404."""

    async def wrapped(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return  # no lifespan here: the HTTPS server runs the app's background work
        if scope.get("path") in HEALTH_PATHS and scope.get("method") in ("GET", "HEAD"):
            await app(scope, receive, send)
            return
        body = json.dumps({"reason": "NotFound", "message": "only /healthz, /readyz and /metrics are served here"})
        await send({"type": "http.response.start", "status": 404,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body.encode()})

    return wrapped
