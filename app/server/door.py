"""The admission door: what every ``/validate`` and ``/mutate`` answer goes through, and the
front that answers a remembered one before FastAPI's routing (issue #21).

Why a front: a review whose answer is remembered (``answers.py``) costs ~30 µs of draguard's
own work — parsing, the key, the log line, the metrics — while FastAPI's per-request machinery
around it (its middleware stack, routing, the ``Request`` object, the dependency solver, the
response class) costs about twice that, on every request.  So :meth:`AdmissionDoor.front`, called
by the app for ``POST /validate`` and ``POST /mutate`` before anything else, reads the first
ASGI message itself and, when the body came whole in it, parses it and looks its answer up; a
hit is answered right there, with the same bytes, headers, log line and metrics as the route
would give.  Everything else — a miss, a body in pieces or too slow, a bad review, a skipped
kind, any exception — is handed to FastAPI unchanged: the message already read is replayed to
it and the parsed call passed on (:class:`Handoff`), so nothing is read or parsed twice and the
route answers exactly as it did before the front existed, deadline counted from the same start.

Both paths end in :meth:`AdmissionDoor.finish` (metrics, fail-open annotation and warning, the
review's log line, the encoded AdmissionReview), so what a client, a log reader or a scrape sees
cannot depend on which one answered.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, replace
from typing import Any

from ..review import ReviewOptions
from .answers import lookup
from .logs import log_review
from .metrics import Metrics
from .safe_render import render_json
from .state import ServerState
from .webhook import AdmissionCall, Answer, BadReview, Route, envelope, needs_review, parse_admission_review

__all__ = ["FAIL_OPEN_AUDIT_KEY", "HANDOFF", "ROUTES", "AdmissionDoor", "Handoff", "first_message"]

log = logging.getLogger("draguard.review")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

FAIL_OPEN_AUDIT_KEY = "fail-open"
"""AdmissionResponse auditAnnotations key (the API server prefixes the webhook's name)."""
HANDOFF = "draguard.handoff"
"""The scope key under which the front passes what it read to the route (:class:`Handoff`)."""
ROUTES: dict[str, Route] = {"/validate": "validate", "/mutate": "mutate"}
_JSON = b"application/json"


@dataclass(frozen=True, slots=True)
class Handoff:
    """What the front read before handing a request to FastAPI's route."""

    started: float
    """``time.perf_counter()`` when the front took the request: the deadline counts from here."""
    body: bytes | None
    """The whole body, when it came in the first message (else the route reads it, replayed)."""
    call: AdmissionCall | None
    """The body parsed, when it parsed (else the route parses it and answers the error)."""


def _replay(first: Message, receive: Receive) -> Receive:
    """``receive`` with ``first`` given back once before it."""
    pending = [first]

    async def again() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return again


async def first_message(receive: Receive, seconds: float) -> Message | None:
    """``await receive()`` for at most ``seconds``; None when they pass.

    ``asyncio.timeout``'s rule (its own cancellation is told from anybody else's by the task's
    cancel count), at half its cost: one loop timer and a closure, no context manager object — it
    is on every admission request's path, and the first message is nearly always there already."""
    task = asyncio.current_task()
    if task is None:  # not in a task (never under uvicorn): nothing to cancel, nothing to bound
        return await receive()
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    cancelling = task.cancelling()
    timer = asyncio.get_running_loop().call_later(seconds, expire)
    try:
        return await receive()
    except asyncio.CancelledError:
        if expired and task.uncancel() <= cancelling:
            return None
        raise
    finally:
        timer.cancel()


def _declared_length(scope: Scope) -> bytes | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return bytes(value)
    return None


class AdmissionDoor:
    """The routes' options, the remembered-answer lookup on the event loop, and the one way an
    admission answer leaves the server."""

    def __init__(self, state: ServerState, metrics: Metrics) -> None:
        self.state = state
        self.metrics = metrics
        self._made: list[tuple[object, ReviewOptions, ReviewOptions]] = []  # (what they follow, /mutate's, /validate's)

    def options(self, route: Route) -> ReviewOptions:
        """The review options of ``route``, made again only when ``state``'s change: ``/validate``
        never computes the default-filling patch (only ``/mutate`` answers with it)."""
        state = self.state
        key = (state.options, state.deadline_seconds)
        made = self._made
        if not made or made[0][0] != key:
            admission = state.admission_options
            made[:] = [(key, admission, replace(admission, mutate=False))]
        return made[0][2] if route == "validate" else made[0][1]

    def generation(self) -> object:
        """What stands for both routes' current options (a change of them empties the memo);
        valid after :meth:`options`."""
        return self._made[0]

    def remembered(self, call: AdmissionCall, route: Route, size: int) -> Answer | None:
        """The remembered answer to ``call``, looked up on the event loop — only for a source
        whose ``snapshot()`` never waits; None on a miss (the route then reviews it)."""
        source = self.state.inventory
        if not getattr(source, "instant_snapshot", False):
            return None
        self.options(route)
        _, found = lookup(self.state.answers, call, route, source.snapshot(), source.problem(), self.generation(),
                          size=size)
        return found.answer(call, route) if found is not None else None

    def finish(self, call: AdmissionCall, route: Route, answer: Answer, started: float) -> bytes:
        """Count, annotate and log ``answer``; the AdmissionReview body that carries it."""
        elapsed = time.perf_counter() - started
        self.metrics.observe(route, answer.decision, answer.reason, elapsed, answer.fail_open)
        if answer.fail_open is not None:  # rare, and must be loud: warning log + metric + audit annotation
            answer.response.setdefault("auditAnnotations", {})[FAIL_OPEN_AUDIT_KEY] = answer.fail_open
            log.warning("review allowed without a full check (fail-open)", extra={"fields": {
                "uid": call.uid, "route": route, "kind": call.kind, "namespace": call.namespace,
                "name": call.name, "failOpen": answer.fail_open, "ms": round(elapsed * 1000, 2)}})
        log_review(
            route=route, uid=call.uid, kind=call.kind, namespace=call.namespace, name=call.name,
            operation=call.operation, dryRun=call.dry_run, decision=answer.decision,
            reason=answer.reason, reasons=answer.reasons, failOpen=answer.fail_open,
            warnings=len(answer.response.get("warnings", [])), patched="patch" in answer.response,
            ms=round(elapsed * 1000, 2),
        )
        return render_json(envelope(call, answer.response))

    async def front(self, scope: Scope, receive: Receive, send: Send, route: Route, inner: ASGIApp) -> None:
        """Answer a remembered review of ``POST /validate`` or ``/mutate`` here; hand every other
        request to ``inner`` (FastAPI) with what was read (module docstring)."""
        started = time.perf_counter()
        state = self.state
        message = await first_message(receive, state.deadline_seconds)  # None: the route's 408
        body: bytes | None = None
        call: AdmissionCall | None = None
        if message is not None and message["type"] == "http.request" and not message.get("more_body", False):
            body = bytes(message.get("body", b""))
            declared = _declared_length(scope)
            if len(body) <= state.max_body_bytes and (declared is None or declared == str(len(body)).encode()):
                try:
                    call = parse_admission_review(body)
                except BadReview:
                    call = None
                if call is not None:
                    try:
                        answer = (self.remembered(call, route, len(body))
                                  if needs_review(call, route, self.options(route).workload_kinds) is None else None)
                    except Exception:  # the route reviews it and answers the error its own way
                        answer = None
                    if answer is not None:
                        payload = self.finish(call, route, answer, started)
                        await send({"type": "http.response.start", "status": 200, "headers": [
                            (b"content-length", str(len(payload)).encode()), (b"content-type", _JSON)]})
                        await send({"type": "http.response.body", "body": payload})
                        return
            else:
                body = None  # too large or not what was declared: the route reads and refuses it
        scope[HANDOFF] = Handoff(started, body, call)
        await inner(scope, _replay(message, receive) if message is not None else receive, send)
