"""The page's HTTP server: the page and its files, one JSON endpoint per panel, the paste box.

Why a Host check: the server answers with what the user's kubeconfig may read, on loopback.  A
web page elsewhere could point a name of its own at 127.0.0.1 (DNS rebinding) and read those
answers from the user's browser; a request whose ``Host`` is not the address the server listens
on (or ``localhost``) is refused, so only pages served from here can read them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from ..k8s import Target
from .check import CheckError, check_paste
from .source import Reading
from .view import View, build_view

__all__ = ["STATIC_FILES", "UiState", "make_app"]

log = logging.getLogger("draguard.ui")

STATIC_FILES = {"index.html": "text/html; charset=utf-8", "app.js": "text/javascript; charset=utf-8",
                "style.css": "text/css; charset=utf-8"}
"""Everything the page loads, shipped in the package (no CDN)."""

PANELS = ("capacity", "devices", "claims", "pending", "findings")


class UiState:
    """The current view, replaced whole when a new reading arrives (readers never see half of one)."""

    def __init__(self, reading: Reading, *, target: Target, deadline: float) -> None:
        self.target = target
        self.deadline = deadline
        self._lock = threading.Lock()
        self.view: View = build_view(reading, deadline=deadline, target=target)

    def update(self, reading: Reading) -> None:
        with self._lock:
            self.view = build_view(reading, deadline=self.deadline, target=self.target, previous=self.view)


def _static(name: str) -> bytes:
    return (resources.files(__package__) / "static" / name).read_bytes()


def make_app(state: UiState, *, allowed_hosts: frozenset[str] | None = None,
             on_ready: Callable[[], None] | None = None) -> FastAPI:
    """The app; ``allowed_hosts`` (host names without port) are the ``Host`` values accepted
    (None: any, for tests that call it in-process); ``on_ready`` runs once the server accepts
    requests (the address is printed then, so whoever reads it can connect at once)."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if on_ready is not None:
            on_ready()
        yield

    app = FastAPI(title="draguard ui", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)

    @app.middleware("http")
    async def host_guard(request: Request, call_next: Any) -> Any:
        if allowed_hosts is not None:
            host = request.headers.get("host", "").rsplit(":", 1)[0].strip("[]").lower()
            if host not in allowed_hosts:
                return JSONResponse({"error": f"Host {host!r} not served: open the address draguard ui printed"},
                                    status_code=403)
        response = await call_next(request)
        response.headers["Cache-Control"] = "no-store"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Content-Security-Policy"] = "default-src 'self'; img-src 'self' data:"
        return response

    @app.get("/")
    def index() -> Response:
        return Response(_static("index.html"), media_type=STATIC_FILES["index.html"])

    @app.get("/static/{name}")
    def static(name: str) -> Response:
        if name not in STATIC_FILES:
            return JSONResponse({"error": f"no file {name!r}"}, status_code=404)
        return Response(_static(name), media_type=STATIC_FILES[name])

    @app.get("/api/summary")
    def summary() -> dict[str, Any]:
        return state.view.summary()

    @app.get("/api/{panel}")
    def panel(panel: str) -> Response:
        if panel not in PANELS:
            return JSONResponse({"error": f"no panel {panel!r}: one of {', '.join(PANELS)}"}, status_code=404)
        view = state.view
        return JSONResponse({"generation": view.generation, **view.panels[panel]})

    @app.post("/api/check")
    async def check(request: Request) -> Response:
        body = await request.body()
        view = state.view
        try:
            answer = await anyio.to_thread.run_sync(
                lambda: check_paste(body, view.reading.inventory, target=state.target, deadline=state.deadline))
        except CheckError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        except Exception as exc:  # bad input never crashes the page: say what failed
            log.exception("draguard ui: check failed")
            return JSONResponse({"error": f"body: could not be checked: {type(exc).__name__}: {exc}"}, status_code=400)
        return JSONResponse(answer)

    return app
