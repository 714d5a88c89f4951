"""A small fake Kubernetes API server: list (paged) and chunked watch for cluster-scoped kinds.

Why a real HTTP server rather than mocks: the watcher's correctness lives in HTTP details —
chunked streams that end or break, ``410 Gone`` as a status and as an ERROR event, bookmarks,
``resourceVersion`` resumption, tokens and TLS.  Only a real server exercises those.

The test thread mutates :class:`FakeCluster` (under a lock); watch streams poll it every few
milliseconds.  Faults are queued per resource and consumed by the next watch that sees them.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

PATHS = {
    "deviceclasses": ("/apis/resource.k8s.io/v1/deviceclasses", "resource.k8s.io/v1", "DeviceClass"),
    "resourceslices": ("/apis/resource.k8s.io/v1/resourceslices", "resource.k8s.io/v1", "ResourceSlice"),
    "nodes": ("/api/v1/nodes", "v1", "Node"),
}


class _Abort(Exception):
    """Raised inside a streaming body: uvicorn then cuts the connection mid-chunk."""


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code,
            "reason": reason, "message": message}


@dataclass
class FakeCluster:
    """The fake's state; every public method is safe to call from the test thread."""

    token: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    rv: int = 100
    objects: dict[str, dict[str, dict[str, Any]]] = field(
        default_factory=lambda: {name: {} for name in PATHS}
    )
    history: list[tuple[int, str, str, dict[str, Any]]] = field(default_factory=list)
    compacted: int = 0  # watches from a resourceVersion below this get 410
    available: bool = True  # False: every request gets 503
    faults: dict[str, list[str]] = field(default_factory=lambda: {name: [] for name in PATHS})
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    closing: bool = False
    list_gone_once: set[str] = field(default_factory=set)

    # ------------------------------------------------------------ test-side mutations
    def put(self, resource: str, obj: dict[str, Any]) -> int:
        """Create or update ``obj`` (by name); returns the new resourceVersion."""
        with self.lock:
            self.rv += 1
            obj = copy.deepcopy(obj)
            _, api_version, kind = PATHS[resource]
            obj.setdefault("apiVersion", api_version)
            obj.setdefault("kind", kind)
            obj.setdefault("metadata", {})["resourceVersion"] = str(self.rv)
            name = obj["metadata"]["name"]
            etype = "MODIFIED" if name in self.objects[resource] else "ADDED"
            self.objects[resource][name] = obj
            self.history.append((self.rv, resource, etype, obj))
            return self.rv

    def delete(self, resource: str, name: str) -> int:
        with self.lock:
            self.rv += 1
            obj = copy.deepcopy(self.objects[resource].pop(name))
            obj["metadata"]["resourceVersion"] = str(self.rv)
            self.history.append((self.rv, resource, "DELETED", obj))
            return self.rv

    def bookmark(self, resource: str) -> None:
        with self.lock:
            self.rv += 1
            obj = {"kind": PATHS[resource][2], "apiVersion": PATHS[resource][1],
                   "metadata": {"resourceVersion": str(self.rv)}}
            self.history.append((self.rv, resource, "BOOKMARK", obj))

    def compact(self) -> None:
        """Forget history: any watch resuming from an older version gets 410 Gone."""
        with self.lock:
            self.compacted = self.rv + 1

    def fault(self, resource: str, kind: str) -> None:
        """Queue a fault for the next watch of ``resource``: ``drop`` (cut the connection
        after sending pending events), ``gone`` (ERROR event 410), ``malformed`` (a line of
        garbage), ``end`` (end the stream cleanly as on timeoutSeconds)."""
        with self.lock:
            self.faults[resource].append(kind)

    def watch_requests(self, resource: str) -> list[dict[str, str]]:
        with self.lock:
            return [q for p, q in self.requests if p == PATHS[resource][0] and q.get("watch")]

    def list_requests(self, resource: str) -> list[dict[str, str]]:
        with self.lock:
            return [q for p, q in self.requests if p == PATHS[resource][0] and not q.get("watch")]

    # ------------------------------------------------------------ server side
    def _take_fault(self, resource: str) -> str | None:
        with self.lock:
            return self.faults[resource].pop(0) if self.faults[resource] else None

    def _events_after(self, resource: str, since: int) -> list[tuple[int, str, dict[str, Any]]]:
        with self.lock:
            return [(rv, t, o) for rv, r, t, o in self.history if r == resource and rv > since]


def _list(cluster: FakeCluster, resource: str, params: dict[str, str]) -> Response:
    _, api_version, kind = PATHS[resource]
    with cluster.lock:
        if resource in cluster.list_gone_once and params.get("continue"):
            cluster.list_gone_once.discard(resource)
            return JSONResponse(_status(410, "Expired", "continue token expired"), status_code=410)
        items = sorted(cluster.objects[resource].values(), key=lambda o: o["metadata"]["name"])
        rv = cluster.rv
    start = int(params.get("continue") or 0)
    limit = int(params.get("limit") or 0) or len(items) or 1
    page = items[start : start + limit]
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if start + limit < len(items):
        meta["continue"] = str(start + limit)
    return JSONResponse({"kind": f"{kind}List", "apiVersion": api_version, "metadata": meta, "items": page})


async def _watch(cluster: FakeCluster, resource: str, params: dict[str, str]) -> Response:
    since = int(params.get("resourceVersion") or 0)
    if since and since < cluster.compacted:
        return JSONResponse(_status(410, "Expired", f"too old resource version: {since}"), status_code=410)
    timeout = float(params.get("timeoutSeconds") or 300)
    bookmarks = params.get("allowWatchBookmarks") == "true"

    async def body() -> AsyncIterator[bytes]:
        sent = since
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while loop.time() < end and not cluster.closing:
            for rv, etype, obj in cluster._events_after(resource, sent):
                sent = rv
                if etype == "BOOKMARK" and not bookmarks:
                    continue
                yield (json.dumps({"type": etype, "object": obj}) + "\n").encode()
            fault = cluster._take_fault(resource)
            if fault == "drop":
                raise _Abort("connection dropped by the fake API server")
            if fault == "gone":
                yield (json.dumps({"type": "ERROR", "object": _status(410, "Expired", "too old")}) + "\n").encode()
                return
            if fault == "malformed":
                yield b'{"type": "ADDED", "object": \n'
                continue
            if fault == "end":
                return
            await asyncio.sleep(0.005)

    return StreamingResponse(body(), media_type="application/json")


def make_app(cluster: FakeCluster) -> Starlette:
    """The ASGI app serving ``cluster``."""

    def endpoint(resource: str) -> Any:
        async def handle(request: Request) -> Response:
            params = dict(request.query_params)
            with cluster.lock:
                cluster.requests.append((request.url.path, params))
            if not cluster.available:
                return JSONResponse(_status(503, "ServiceUnavailable", "fake API server is down"), 503)
            if cluster.token is not None and request.headers.get("authorization") != f"Bearer {cluster.token}":
                return JSONResponse(_status(401, "Unauthorized", "Unauthorized"), status_code=401)
            if params.get("watch") in ("true", "1"):
                return await _watch(cluster, resource, params)
            return _list(cluster, resource, params)

        return handle

    return Starlette(routes=[Route(path, endpoint(name)) for name, (path, _, _) in PATHS.items()])
