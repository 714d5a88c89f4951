"""Graceful shutdown for a webhook behind a Service: fail readiness first, then stop.

Why: when Kubernetes stops a pod it sends SIGTERM and, at the same time, starts removing the
pod from the Service's endpoints — which takes the API servers a few seconds to notice.  A
server that closes its listener on SIGTERM makes the calls still routed to it fail, and with
``failurePolicy: Fail`` a failed call is a rejected claim.  So on the first SIGTERM (or SIGINT)
draguard only *drains*: ``/readyz`` answers 503 ("shutting down") while every route keeps
serving, for ``drain_seconds``; then uvicorn's own graceful shutdown closes the listener and
lets in-flight reviews finish.  A second signal stops at once.
"""

from __future__ import annotations

import json
import logging
import time
from types import FrameType

import uvicorn

from .state import ServerState

__all__ = ["DrainingServer"]

log = logging.getLogger("draguard.serve")


class DrainingServer(uvicorn.Server):
    """A uvicorn server whose first exit signal starts a drain period instead of the shutdown."""

    def __init__(self, config: uvicorn.Config, *, state: ServerState, drain_seconds: float) -> None:
        super().__init__(config)
        self.state = state
        self.drain_seconds = drain_seconds
        self._drain_ends: float | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._drain_ends is None and self.drain_seconds > 0:
            self._captured_signals.append(sig)  # re-raised by uvicorn after the shutdown, as usual
            self._drain_ends = time.monotonic() + self.drain_seconds
            self.state.draining = True
            log.info(json.dumps({"msg": "shutting down: readiness fails while connections drain",
                                 "signal": sig, "drain_seconds": self.drain_seconds}))
            return
        self.state.draining = True
        super().handle_exit(sig, frame)

    async def on_tick(self, counter: int) -> bool:
        if self._drain_ends is not None and time.monotonic() >= self._drain_ends and not self.should_exit:
            log.info(json.dumps({"msg": "drain period over: closing the listener, finishing reviews in flight"}))
            self.should_exit = True
        return await super().on_tick(counter)
