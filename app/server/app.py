"""The FastAPI app: thin routes over :mod:`webhook`, :mod:`lint`, metrics and health.

Why the routes read raw bytes instead of declaring pydantic bodies: a body that is too large,
too slow or not an AdmissionReview must get a precise 400/408/413 JSON answer (never a 500 or
a 422 validation dump the API server cannot show), and the size limit must hold *while*
reading, not after buffering whatever the client sends.

Review work is CPU-bound Python, so it runs on a small thread pool under ``asyncio.timeout``;
when the deadline passes the request is allowed with a warning and the event loop — which
also answers probes and other reviews — never stalls.

``POST /validate`` and ``/mutate`` enter through the admission door's front (:mod:`door`): a
remembered answer is given there, before FastAPI's routing; every other request reaches the
routes below with what the front read (:class:`~.door.Handoff`), and both end in
:meth:`~.door.AdmissionDoor.finish`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.types import Receive, Scope, Send

from ..k8s import BudgetExceeded, budget_scope
from ..lazy import load_all
from .answers import answer_call, lookup, review_and_remember
from .door import HANDOFF, ROUTES, AdmissionDoor, Handoff
from .lint import lint_bytes, options_for_query, parse_format
from .logs import log_review
from .metrics import Metrics
from .safe_render import SafeJSONResponse, encode_body
from .state import ServerState
from .webhook import (
    AdmissionCall,
    Answer,
    BadReview,
    Route,
    fallback_answer,
    needs_review,
    parse_admission_review,
)

__all__ = ["create_app"]

log = logging.getLogger("draguard.review")

T = TypeVar("T")
_ANSWER_MARGIN_SECONDS = 0.2  # a review's budget ends this long before its deadline: time to answer
_DRAIN_LIMIT_FACTOR = 4  # read (and drop) up to 4× the limit so the client sees the 413


class _StatusError(HTTPException):
    """Starlette's HTTP error plus the ``metav1.Status`` reason word (``RequestEntityTooLarge``)
    that the answer, the log line and the metric label carry."""

    def __init__(self, status_code: int, reason: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(status_code, message, headers)
        self.reason = reason


def _status(exc: _StatusError) -> JSONResponse:
    """A ``metav1.Status``-shaped JSON error: readable by kubectl users and scripts alike."""
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": exc.status_code,
            "reason": exc.reason, "message": exc.detail}
    return SafeJSONResponse(body, status_code=exc.status_code, headers=exc.headers)


async def _read_body(request: Request, limit: int) -> bytes:
    """The body, refusing more than ``limit`` bytes (413) whatever Content-Length claims."""
    declared = request.headers.get("content-length")
    too_large = declared is not None and declared.isdigit() and int(declared) > limit
    chunks: list[bytes] = []
    total = 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > limit:
            too_large = True
        if too_large:
            if total > limit * _DRAIN_LIMIT_FACTOR:
                break
            continue
        chunks.append(chunk)
    if too_large:
        raise _StatusError(413, "RequestEntityTooLarge", f"request body larger than {limit} bytes")
    return b"".join(chunks)


async def _read_with_deadline(request: Request, state: ServerState, deadline: float,
                              remaining: float | None = None) -> bytes:
    """The body within ``remaining`` seconds (default ``deadline``: the whole of it)."""
    try:
        async with asyncio.timeout(deadline if remaining is None else remaining):  # not wait_for: no task per request
            return await _read_body(request, state.max_body_bytes)
    except TimeoutError as exc:
        raise _StatusError(408, "Timeout", f"request body not received within {deadline:g}s") from exc
    except ClientDisconnect as exc:  # nobody will read the answer: one log line, no traceback
        raise _StatusError(400, "ClientDisconnected", "the client disconnected before sending the whole body") from exc


class _DraguardApp(FastAPI):
    """FastAPI, with ``POST /validate`` and ``/mutate`` entering through the admission door's
    front (``door.py``): a remembered answer is given there, everything else reaches the routes."""

    door: AdmissionDoor

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and not scope.get("root_path"):
            route = ROUTES.get(scope["path"])
            if route is not None:
                await self.door.front(scope, receive, send, route, super().__call__)
                return
        await super().__call__(scope, receive, send)


def create_app(state: ServerState) -> FastAPI:
    """The ASGI app for ``state``; background work (watch, cert reload) runs in its lifespan."""
    load_all()  # the pod machinery too: the first pod's review must not import it (app/lazy.py)
    metrics = Metrics(state.stats)
    door = AdmissionDoor(state, metrics)
    memo = state.answers
    executor = ThreadPoolExecutor(max_workers=state.workers, thread_name_prefix="draguard-review")
    lint_executor = ThreadPoolExecutor(max_workers=state.lint_workers, thread_name_prefix="draguard-lint")
    lint_slots = asyncio.Semaphore(state.lint_concurrency) if state.lint_concurrency > 0 else None

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        tasks = [asyncio.create_task(job()) for job in state.background]
        if state.tls is not None:
            tasks.append(asyncio.create_task(state.tls.run()))
        try:
            yield
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            executor.shutdown(wait=False, cancel_futures=True)
            lint_executor.shutdown(wait=False, cancel_futures=True)

    app = _DraguardApp(title="draguard", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.draguard = state
    app.state.metrics = metrics

    app.door = door

    async def in_worker(fn: Callable[[], T], timeout: float, pool: ThreadPoolExecutor = executor) -> T:
        """Run ``fn`` on ``pool`` under a work budget that ends just before ``timeout``, so the
        thread returns its own (undecided) answer in time and stops burning CPU once the caller
        has answered (``app.k8s.budget``)."""
        loop = asyncio.get_running_loop()
        submitted = time.monotonic()

        def budgeted() -> T:
            left = timeout - (time.monotonic() - submitted)  # time spent queued counts
            with budget_scope(max(left - _ANSWER_MARGIN_SECONDS, 0.0)):
                return fn()

        async with asyncio.timeout(max(timeout, 0.01)):
            return await loop.run_in_executor(pool, budgeted)

    async def admission(request: Request, route: Route) -> Response:
        handoff = request.scope.get(HANDOFF)  # what the door's front read already (door.py)
        started = handoff.started if isinstance(handoff, Handoff) else time.perf_counter()
        call: AdmissionCall | None = None
        try:
            if isinstance(handoff, Handoff) and handoff.body is not None:
                body = handoff.body
                call = handoff.call
            else:
                body = await _read_with_deadline(request, state, state.deadline_seconds,
                                                 state.deadline_seconds - (time.perf_counter() - started))
            if call is None:
                try:
                    call = parse_admission_review(body)
                except BadReview as exc:
                    raise _StatusError(400, "BadRequest", str(exc)) from exc
            answer = needs_review(call, route, door.options(route).workload_kinds)
            if answer is None:
                answer = await _run_review(call, route, started, len(body))
        except _StatusError as exc:
            elapsed = time.perf_counter() - started
            metrics.observe(route, "error", exc.reason, elapsed)
            log_review(route=route, uid=call.uid if call else "", decision="error", reason=exc.reason,
                       error=exc.detail, ms=round(elapsed * 1000, 2))
            return _status(exc)
        return Response(door.finish(call, route, answer, started), media_type="application/json")

    async def _run_review(call: AdmissionCall, route: Route, started: float, size: int) -> Answer:
        """The answer remembered for an equal object — looked up here on the event loop when the
        inventory source never waits, so a hit needs no worker thread — else the pipeline's, in a
        worker thread (``answers.py``)."""
        remaining = state.deadline_seconds - (time.perf_counter() - started)
        options = door.options(route)
        generation = door.generation()  # stands for both routes' options: a change of them empties the memo
        source = state.inventory
        try:
            if getattr(source, "instant_snapshot", False):
                snapshot, problem = source.snapshot(), source.problem()
                key, remembered = lookup(memo, call, route, snapshot, problem, generation, size=size)
                if remembered is not None:
                    return remembered.answer(call, route)
                work = partial(review_and_remember, memo, call, route, source, snapshot, problem, options, generation,
                               key)
            else:
                work = partial(answer_call, memo, call, route, source, options, generation, size=size)
            return await in_worker(work, remaining)
        except TimeoutError:
            return fallback_answer(call, route, "Timeout", f"{state.deadline_seconds:g}s")
        except Exception as exc:  # a bug in a check must not block the cluster: fail open, loudly
            log.exception("review failed", extra={"fields": {"uid": call.uid}})
            return fallback_answer(call, route, "InternalError", type(exc).__name__)

    @app.post("/validate")
    async def validate(request: Request) -> Response:
        return await admission(request, "validate")

    @app.post("/mutate")
    async def mutate(request: Request) -> Response:
        return await admission(request, "mutate")

    @app.post("/lint")
    async def lint(request: Request) -> Response:
        started = time.perf_counter()
        try:
            if state.lint_disabled is not None:
                raise _StatusError(403, "Forbidden", state.lint_disabled)
            if state.lint_token is not None:
                given = request.headers.get("authorization", "")
                if not hmac.compare_digest(given.encode(), f"Bearer {state.lint_token}".encode()):
                    raise _StatusError(401, "Unauthorized", "a valid bearer token is required for /lint",
                                       {"WWW-Authenticate": "Bearer"})
            try:
                fmt = parse_format(request.query_params.get("format"))
            except ValueError as exc:
                raise _StatusError(400, "BadRequest", str(exc)) from exc
            try:
                options = options_for_query(state.lint_options, request.query_params)
            except ValueError as exc:
                raise _StatusError(400, "BadRequest", str(exc)) from exc
            if lint_slots is not None and lint_slots.locked():
                raise _StatusError(429, "TooManyRequests",
                                   f"/lint is busy ({state.lint_concurrency} calls at once); retry later",
                                   {"Retry-After": "1"})
            async with lint_slots if lint_slots is not None else contextlib.nullcontext():
                body = await _read_with_deadline(request, state, state.deadline_seconds)
                source = request.query_params.get("file", "")
                try:
                    result = await in_worker(
                        lambda: lint_bytes(body, fmt, state.inventory, options, source=source),
                        state.lint_deadline_seconds - (time.perf_counter() - started),
                        lint_executor,
                    )
                except (TimeoutError, BudgetExceeded) as exc:
                    raise _StatusError(503, "Timeout",
                                     f"lint did not finish within {state.lint_deadline_seconds:g}s") from exc
        except _StatusError as exc:
            elapsed = time.perf_counter() - started
            metrics.observe_lint(exc.reason, elapsed)
            log_review(route="lint", decision="error", reason=exc.reason, error=exc.detail,
                       ms=round(elapsed * 1000, 2))
            return _status(exc)
        metrics.observe_lint("errors" if result.errors else "clean", time.perf_counter() - started)
        return Response(encode_body(result.body, result.media_type), media_type=result.media_type)

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        ready, detail = state.readiness()
        return JSONResponse(detail, status_code=200 if ready else 503)

    @app.get("/metrics")
    async def metrics_route() -> Response:
        return Response(metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    return app
