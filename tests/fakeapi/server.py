"""A small fake Kubernetes API server: list (paged) and chunked watch for cluster-scoped kinds and,
across all namespaces, for the namespaced kinds the audit re-evaluates (claims, templates, Pods,
workloads) and DeviceTaintRules (at one version, or none); plus get/list/create/update/delete of single objects (Secrets, Leases, webhook
configurations, PolicyReports, Events) with ``resourceVersion`` conflicts, for the self-managed
certificate rotation and the audit's writer.  The ``wgpolicyk8s.io`` group can be switched off
(``policy_reports_installed``: the CRD is not installed, every path of the group is 404), and
single-object requests can be given queued faults (403, 409, 429, 500).  Claims and templates can
also be read one at a time (``GET .../namespaces/NS/resourceclaimtemplates/NAME``), and
``watch_delay`` holds every event back from the watches for that long after the object was stored:
the window in which a GET sees an object its watch has not delivered yet (read-your-writes).

Why a real HTTP server rather than mocks: the watcher's correctness lives in HTTP details —
chunked streams that end or break, ``410 Gone`` as a status and as an ERROR event, bookmarks,
``resourceVersion`` resumption, tokens and TLS.  Only a real server exercises those.

The test thread mutates :class:`FakeCluster` (under a lock); watch streams poll it every few
milliseconds.  Faults are queued per resource and consumed by the next watch that sees them.
Like the real one, a watch that asked for bookmarks gets one when it has been sent nothing for
``bookmark_every`` seconds (the real API server: about a minute; 0 here by default: none);
:meth:`FakeCluster.go_down` is an API server that goes away (every open watch cut, every request
503) and :meth:`FakeCluster.come_back` its return.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
import time
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
    # served at the version of FakeCluster.taint_rules_version (v1, v1beta2, v1alpha3; "": none)
    "devicetaintrules": ("/apis/resource.k8s.io/v1/devicetaintrules", "resource.k8s.io/v1", "DeviceTaintRule"),
    # namespaced kinds, listed and watched across all namespaces (objects keyed "namespace/name")
    "resourceclaims": ("/apis/resource.k8s.io/v1/resourceclaims", "resource.k8s.io/v1", "ResourceClaim"),
    "resourceclaimtemplates": ("/apis/resource.k8s.io/v1/resourceclaimtemplates", "resource.k8s.io/v1",
                               "ResourceClaimTemplate"),
    "pods": ("/api/v1/pods", "v1", "Pod"),
    "deployments": ("/apis/apps/v1/deployments", "apps/v1", "Deployment"),
    "replicasets": ("/apis/apps/v1/replicasets", "apps/v1", "ReplicaSet"),
    "statefulsets": ("/apis/apps/v1/statefulsets", "apps/v1", "StatefulSet"),
    "daemonsets": ("/apis/apps/v1/daemonsets", "apps/v1", "DaemonSet"),
    "jobs": ("/apis/batch/v1/jobs", "batch/v1", "Job"),
    "cronjobs": ("/apis/batch/v1/cronjobs", "batch/v1", "CronJob"),
}
NAMESPACED_LISTS = frozenset(PATHS) - {"deviceclasses", "resourceslices", "nodes", "devicetaintrules"}
TAINT_RULE_VERSIONS = ("v1", "v1beta2", "v1alpha3")


# Single-object kinds: URL prefix (before ``namespaces/NS/`` or the name) → (apiVersion, kind, plural).
OBJECT_KINDS = {
    "secrets": ("/api/v1", "v1", "Secret"),
    "leases": ("/apis/coordination.k8s.io/v1", "coordination.k8s.io/v1", "Lease"),
    "validatingwebhookconfigurations": (
        "/apis/admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
    "mutatingwebhookconfigurations": (
        "/apis/admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
    "policyreports": ("/apis/wgpolicyk8s.io/v1alpha2", "wgpolicyk8s.io/v1alpha2", "PolicyReport"),
    "clusterpolicyreports": ("/apis/wgpolicyk8s.io/v1alpha2", "wgpolicyk8s.io/v1alpha2", "ClusterPolicyReport"),
    "events": ("/api/v1", "v1", "Event"),
}
NAMESPACED = {"secrets", "leases", "policyreports", "events"}
POLICY_GROUP = "/apis/wgpolicyk8s.io/v1alpha2"


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
    latency: float = 0.0  # seconds every list and watch request waits before it is answered (a slow API server)
    faults: dict[str, list[str]] = field(default_factory=lambda: {name: [] for name in PATHS})
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    closing: bool = False
    list_gone_once: set[str] = field(default_factory=set)
    # single objects by (plural, namespace or "", name); writes are recorded for assertions
    store: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    writes: list[tuple[str, str, str, str]] = field(default_factory=list)  # (verb, plural, ns, name)
    forbidden: set[tuple[str, str]] = field(default_factory=set)  # (verb, plural) answered 403
    accepts: list[tuple[str, str]] = field(default_factory=list)  # (path, Accept header) of list/watch
    policy_reports_installed: bool = True  # False: the wgpolicyk8s.io CRDs are absent (404 everywhere)
    # GET /version's gitVersion, and GET /metrics' text (None: 403, as without the RBAC grant)
    git_version: str = "v1.37.2"
    metrics_text: str | None = None
    # queued HTTP statuses per (verb, plural), answered (and consumed) by the next such request
    object_faults: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    bookmark_every: float = 0.0  # seconds of nothing sent after which a watch gets a BOOKMARK (0: never)
    watch_generation: int = 0  # bumped by drop_watches(): every watch opened before it is cut
    open_watches: dict[str, int] = field(default_factory=lambda: {name: 0 for name in PATHS})
    taint_rules_version: str = "v1"
    """The one version DeviceTaintRules are served at (1.37: v1, 1.36: v1beta2, 1.35: v1alpha3);
    "": not served at all (404 at every version, as without the DRADeviceTaintRules gate)."""
    taint_rule_requests: list[str] = field(default_factory=list)  # the version of every list/watch asked
    watch_delay: float = 0.0
    """Seconds an event is held back from every watch after its object was stored (a GET sees it at once)."""
    stamps: dict[int, float] = field(default_factory=dict)  # resourceVersion -> when stored (time.monotonic)

    def drop_watches(self) -> None:
        """Cut every open watch at once, as an API server process that dies does."""
        with self.lock:
            self.watch_generation += 1

    def go_down(self) -> None:
        """The API server goes away: open watches are cut and every new request gets 503."""
        self.available = False
        self.drop_watches()

    def come_back(self) -> None:
        self.available = True

    def watching(self, resource: str) -> int:
        """How many watches of ``resource`` are open now."""
        with self.lock:
            return self.open_watches[resource]

    def object_fault(self, verb: str, plural: str, *statuses: int) -> None:
        """Answer the next ``len(statuses)`` ``verb`` requests on ``plural`` with these statuses
        (403, 409, 429 with ``Retry-After: 0``, 500, ...)."""
        with self.lock:
            self.object_faults.setdefault((verb, plural), []).extend(statuses)

    def objects_of(self, plural: str) -> list[dict[str, Any]]:
        """Every stored single object of ``plural`` (PolicyReports, Events, ...)."""
        with self.lock:
            return [copy.deepcopy(o) for (p, _, _), o in sorted(self.store.items()) if p == plural]

    # ------------------------------------------------------------ single objects
    def put_object(self, plural: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Create or replace a single object from the test side (no conflict check)."""
        with self.lock:
            return self._store(plural, copy.deepcopy(obj))

    def get_object(self, plural: str, name: str, namespace: str = "") -> dict[str, Any] | None:
        with self.lock:
            obj = self.store.get((plural, namespace, name))
            return copy.deepcopy(obj) if obj is not None else None

    def _store(self, plural: str, obj: dict[str, Any]) -> dict[str, Any]:
        self.rv += 1
        _, api_version, kind = OBJECT_KINDS[plural]
        obj.setdefault("apiVersion", api_version)
        obj.setdefault("kind", kind)
        meta = obj.setdefault("metadata", {})
        meta["resourceVersion"] = str(self.rv)
        self.store[(plural, meta.get("namespace", ""), meta["name"])] = obj
        return copy.deepcopy(obj)

    # ------------------------------------------------------------ test-side mutations
    def put(self, resource: str, obj: dict[str, Any]) -> int:
        """Create or update ``obj`` (by name); returns the new resourceVersion."""
        with self.lock:
            self.rv += 1
            obj = copy.deepcopy(obj)
            _, api_version, kind = PATHS[resource]
            if resource == "devicetaintrules" and self.taint_rules_version:
                api_version = f"resource.k8s.io/{self.taint_rules_version}"
            obj.setdefault("apiVersion", api_version)
            obj.setdefault("kind", kind)
            obj.setdefault("metadata", {})["resourceVersion"] = str(self.rv)
            name = _list_key(resource, obj)
            etype = "MODIFIED" if name in self.objects[resource] else "ADDED"
            self.objects[resource][name] = obj
            self.history.append((self.rv, resource, etype, obj))
            self.stamps[self.rv] = time.monotonic()
            return self.rv

    def delete(self, resource: str, name: str, namespace: str = "") -> int:
        """Delete by name (``namespace/name``, or ``namespace=``, for namespaced kinds)."""
        with self.lock:
            self.rv += 1
            obj = copy.deepcopy(self.objects[resource].pop(f"{namespace}/{name}" if namespace else name))
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
        garbage), ``end`` (end the stream cleanly as on timeoutSeconds), ``stall`` (send nothing
        more, bookmarks neither, and keep the connection open: a silently broken path)."""
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
            events = [(rv, t, o) for rv, r, t, o in self.history if r == resource and rv > since]
            if self.watch_delay:  # in order, up to the first one still held back
                due = time.monotonic() - self.watch_delay
                held = next((i for i, (rv, _, _) in enumerate(events) if self.stamps.get(rv, 0.0) > due), None)
                events = events if held is None else events[:held]
            return events

    def gets(self, resource: str) -> list[str]:
        """The paths of every single-object GET of ``resource`` (claims, templates) so far."""
        with self.lock:
            return [p for p, q in self.requests if q.get("verb") == "get" and f"/{resource}/" in p]


def _list_key(resource: str, obj: dict[str, Any]) -> str:
    """Cluster-scoped objects by name; namespaced ones by ``namespace/name`` (default namespace)."""
    meta = obj["metadata"]
    if resource in NAMESPACED_LISTS:
        meta.setdefault("namespace", "default")
        return f"{meta['namespace']}/{meta['name']}"
    return str(meta["name"])


def _metadata_only(obj: dict[str, Any]) -> dict[str, Any]:
    """What the API server answers for ``Accept: ...;as=PartialObjectMetadata...``."""
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": copy.deepcopy(obj.get("metadata") or {})}


def _field_selected(obj: dict[str, Any], selector: str) -> bool:
    """``fieldSelector`` with ``path=value`` terms (``spec.nodeName=``: the unscheduled Pods)."""
    for term in filter(None, selector.split(",")):
        path, _, value = term.partition("=")
        node: Any = obj
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if str(node or "") != value:
            return False
    return True


def _list(cluster: FakeCluster, resource: str, params: dict[str, str], meta_only: bool = False) -> Response:
    _, api_version, kind = PATHS[resource]
    with cluster.lock:
        if resource in cluster.list_gone_once and params.get("continue"):
            cluster.list_gone_once.discard(resource)
            return JSONResponse(_status(410, "Expired", "continue token expired"), status_code=410)
        selector = params.get("fieldSelector", "")
        items = [o for _, o in sorted(cluster.objects[resource].items()) if _field_selected(o, selector)]
        rv = cluster.rv
    start = int(params.get("continue") or 0)
    limit = int(params.get("limit") or 0) or len(items) or 1
    page = items[start : start + limit]
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if start + limit < len(items):
        meta["continue"] = str(start + limit)
    if meta_only:
        return JSONResponse({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                             # as the real one: an empty list is Go's nil slice, "items": null
                             "metadata": meta, "items": [_metadata_only(o) for o in page] or None})
    # as the real one: the items of a typed List carry no kind and no apiVersion (the List has them)
    page = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in page]
    return JSONResponse({"kind": f"{kind}List", "apiVersion": api_version, "metadata": meta, "items": page})


async def _watch(cluster: FakeCluster, resource: str, params: dict[str, str], meta_only: bool = False) -> Response:
    since = int(params.get("resourceVersion") or 0)
    if since and since < cluster.compacted:
        return JSONResponse(_status(410, "Expired", f"too old resource version: {since}"), status_code=410)
    timeout = float(params.get("timeoutSeconds") or 300)
    bookmarks = params.get("allowWatchBookmarks") == "true"
    selector = params.get("fieldSelector", "")

    async def body() -> AsyncIterator[bytes]:
        sent = since
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        last_sent = loop.time()
        with cluster.lock:
            generation = cluster.watch_generation
            cluster.open_watches[resource] += 1
        try:
            while loop.time() < end and not cluster.closing:
                if cluster.watch_generation != generation:
                    raise _Abort("every watch cut by the fake API server")
                for rv, etype, obj in cluster._events_after(resource, sent):
                    sent = rv
                    if etype == "BOOKMARK" and not bookmarks:
                        continue
                    if selector and etype != "BOOKMARK" and not _field_selected(obj, selector):
                        etype = "DELETED"  # as the real one: an object that stops matching leaves the watch
                    if meta_only and etype != "BOOKMARK":
                        obj = _metadata_only(obj)
                    last_sent = loop.time()
                    yield (json.dumps({"type": etype, "object": obj}) + "\n").encode()
                if bookmarks and cluster.bookmark_every and loop.time() - last_sent >= cluster.bookmark_every:
                    last_sent = loop.time()
                    mark = {"kind": PATHS[resource][2], "apiVersion": PATHS[resource][1],
                            "metadata": {"resourceVersion": str(sent)}}
                    yield (json.dumps({"type": "BOOKMARK", "object": mark}) + "\n").encode()
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
                if fault == "stall":
                    while loop.time() < end and not cluster.closing and cluster.watch_generation == generation:
                        await asyncio.sleep(0.02)
                    raise _Abort("stalled watch cut by the fake API server")
                await asyncio.sleep(0.005)
        finally:
            with cluster.lock:
                cluster.open_watches[resource] -= 1

    return StreamingResponse(body(), media_type="application/json")


def _selected(obj: dict[str, Any], selector: str) -> bool:
    """``labelSelector`` with ``key=value`` terms (all the clients here send)."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for term in filter(None, selector.split(",")):
        key, _, value = term.partition("=")
        if labels.get(key) != value:
            return False
    return True


def _object_endpoint(cluster: FakeCluster, plural: str) -> Any:
    """GET/PUT/DELETE ``.../NAME``, POST and GET (list) on the collection, with optimistic
    concurrency like the real API server: a PUT whose ``metadata.resourceVersion`` is not the
    stored one gets 409."""

    async def handle(request: Request) -> Response:
        namespace = request.path_params.get("namespace", "")
        name = request.path_params.get("name")
        verbs = {"GET": "get" if name else "list", "PUT": "update", "POST": "create", "DELETE": "delete"}
        verb = verbs.get(request.method, request.method.lower())
        with cluster.lock:
            cluster.requests.append((request.url.path, {"verb": verb}))
        if not cluster.available:
            return JSONResponse(_status(503, "ServiceUnavailable", "fake API server is down"), 503)
        if cluster.token is not None and request.headers.get("authorization") != f"Bearer {cluster.token}":
            return JSONResponse(_status(401, "Unauthorized", "Unauthorized"), status_code=401)
        if request.url.path.startswith(POLICY_GROUP) and not cluster.policy_reports_installed:
            return Response("404 page not found", status_code=404, media_type="text/plain")
        if (verb, plural) in cluster.forbidden:
            return JSONResponse(_status(403, "Forbidden", f"cannot {verb} {plural}"), status_code=403)
        raw = await request.body() if verb in ("create", "update") else b""  # never await under the lock
        with cluster.lock:
            queued = cluster.object_faults.get((verb, plural))
            fault = queued.pop(0) if queued else None
        if fault is not None:
            headers = {"Retry-After": "0"} if fault == 429 else None
            return JSONResponse(_status(fault, "Injected", f"injected {fault} for {verb} {plural}"), fault,
                                headers=headers)
        with cluster.lock:
            if verb == "list":
                selector = request.query_params.get("labelSelector", "")
                items = [copy.deepcopy(o) for (p, ns, _), o in sorted(cluster.store.items())
                         if p == plural and (not namespace or ns == namespace) and _selected(o, selector)]
                _, api_version, kind = OBJECT_KINDS[plural]
                return JSONResponse({"kind": f"{kind}List", "apiVersion": api_version,
                                     "metadata": {"resourceVersion": str(cluster.rv)}, "items": items})
            if verb == "get":
                obj = cluster.store.get((plural, namespace, name or ""))
                if obj is None:
                    return JSONResponse(_status(404, "NotFound", f'{plural} "{name}" not found'), 404)
                return JSONResponse(obj)
            if verb == "delete":
                gone = cluster.store.pop((plural, namespace, name or ""), None)
                if gone is None:
                    return JSONResponse(_status(404, "NotFound", f'{plural} "{name}" not found'), 404)
                cluster.writes.append((verb, plural, namespace, name or ""))
                return JSONResponse({"kind": "Status", "apiVersion": "v1", "status": "Success"})
            try:
                body = json.loads(raw)
            except ValueError:
                return JSONResponse(_status(400, "BadRequest", "body is not JSON"), 400)
            meta = body.setdefault("metadata", {})
            if namespace:
                meta["namespace"] = namespace
            key = (plural, namespace, str(meta.get("name", "")))
            current = cluster.store.get(key)
            if verb == "create":
                if current is not None:
                    return JSONResponse(_status(409, "AlreadyExists", f'{plural} "{key[2]}" already exists'), 409)
            elif verb == "update":
                if meta.get("name") != name:
                    return JSONResponse(_status(400, "BadRequest", "name in body does not match the URL"), 400)
                if current is None:
                    return JSONResponse(_status(404, "NotFound", f'{plural} "{name}" not found'), 404)
                if meta.get("resourceVersion") != current["metadata"]["resourceVersion"]:
                    return JSONResponse(_status(409, "Conflict", "the object has been modified; "
                                                "please apply your changes to the latest version"), 409)
            else:
                return JSONResponse(_status(405, "MethodNotAllowed", request.method), 405)
            stored = cluster._store(plural, body)
            cluster.writes.append((verb, plural, namespace, key[2]))
        return JSONResponse(stored, status_code=201 if verb == "create" else 200)

    return handle


def _discovery(cluster: FakeCluster) -> Any:
    """``GET /apis/wgpolicyk8s.io/v1alpha2``: the group's resources once its CRDs are installed."""

    async def handle(request: Request) -> Response:
        if not cluster.policy_reports_installed:
            return Response("404 page not found", status_code=404, media_type="text/plain")
        return JSONResponse({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "wgpolicyk8s.io/v1alpha2",
                             "resources": [
                                 {"name": "policyreports", "namespaced": True, "kind": "PolicyReport"},
                                 {"name": "clusterpolicyreports", "namespaced": False, "kind": "ClusterPolicyReport"},
                             ]})

    return handle


def _held_object(cluster: FakeCluster, resource: str) -> Any:
    """``GET /apis/resource.k8s.io/v1/namespaces/NS/<claims or templates>/NAME``: the stored object,
    whether or not its watch event was delivered yet; 404 as the real one says it (``details.name``)."""

    async def handle(request: Request) -> Response:
        namespace, name = request.path_params["namespace"], request.path_params["name"]
        with cluster.lock:
            cluster.requests.append((request.url.path, {"verb": "get"}))
        if not cluster.available:
            return JSONResponse(_status(503, "ServiceUnavailable", "fake API server is down"), 503)
        if cluster.token is not None and request.headers.get("authorization") != f"Bearer {cluster.token}":
            return JSONResponse(_status(401, "Unauthorized", "Unauthorized"), status_code=401)
        if ("get", resource) in cluster.forbidden:
            return JSONResponse(_status(403, "Forbidden", f'{resource} "{name}" is forbidden: cannot get'), 403)
        if cluster.latency:
            await asyncio.sleep(cluster.latency)
        with cluster.lock:
            obj = cluster.objects[resource].get(f"{namespace}/{name}")
            found = copy.deepcopy(obj) if obj is not None else None
        if found is None:
            body = _status(404, "NotFound", f'{resource}.resource.k8s.io "{name}" not found')
            body["details"] = {"name": name, "group": "resource.k8s.io", "kind": resource}
            return JSONResponse(body, 404)
        return JSONResponse(found)

    return handle


def _object_routes(cluster: FakeCluster) -> list[Route]:
    routes = [Route(POLICY_GROUP, _discovery(cluster), methods=["GET"])]
    for plural, (prefix, _, _) in OBJECT_KINDS.items():
        handler = _object_endpoint(cluster, plural)
        base = f"{prefix}/namespaces/{{namespace}}/{plural}" if plural in NAMESPACED else f"{prefix}/{plural}"
        routes.append(Route(base, handler, methods=["POST", "GET"]))
        routes.append(Route(f"{base}/{{name}}", handler, methods=["GET", "PUT", "DELETE"]))
        if plural in NAMESPACED:
            routes.append(Route(f"{prefix}/{plural}", handler, methods=["GET"]))  # across namespaces
    return routes


def make_app(cluster: FakeCluster) -> Starlette:
    """The ASGI app serving ``cluster``."""

    def endpoint(resource: str, version: str = "") -> Any:
        async def handle(request: Request) -> Response:
            params = dict(request.query_params)
            accept = request.headers.get("accept", "")
            meta_only = "as=PartialObjectMetadata" in accept
            with cluster.lock:
                cluster.requests.append((request.url.path, params))
                cluster.accepts.append((request.url.path, accept))
                if version:
                    cluster.taint_rule_requests.append(version)
            if version and version != cluster.taint_rules_version and cluster.available:
                return JSONResponse(_status(404, "NotFound", "the server could not find the requested resource"), 404)
            if cluster.latency:
                await asyncio.sleep(cluster.latency)
            if not cluster.available:
                return JSONResponse(_status(503, "ServiceUnavailable", "fake API server is down"), 503)
            if cluster.token is not None and request.headers.get("authorization") != f"Bearer {cluster.token}":
                return JSONResponse(_status(401, "Unauthorized", "Unauthorized"), status_code=401)
            verb = "watch" if params.get("watch") in ("true", "1") else "list"
            if (verb, resource) in cluster.forbidden:
                return JSONResponse(_status(403, "Forbidden", f"{resource} is forbidden: cannot {verb}"), 403)
            if params.get("watch") in ("true", "1"):
                return await _watch(cluster, resource, params, meta_only)
            return _list(cluster, resource, params, meta_only)

        return handle

    async def version(request: Request) -> Response:
        with cluster.lock:
            cluster.requests.append((request.url.path, {}))
        if not cluster.available:
            return JSONResponse(_status(503, "ServiceUnavailable", "fake API server is down"), 503)
        major, _, rest = cluster.git_version.lstrip("v").partition(".")
        return JSONResponse({"major": major, "minor": rest.partition(".")[0], "gitVersion": cluster.git_version})

    async def metrics(request: Request) -> Response:
        if cluster.metrics_text is None:
            return JSONResponse(_status(403, "Forbidden", 'forbidden: User cannot get path "/metrics"'), 403)
        return Response(cluster.metrics_text, media_type="text/plain")

    routes = [Route(path, endpoint(name)) for name, (path, _, _) in PATHS.items() if name != "devicetaintrules"]
    routes += [Route(f"/apis/resource.k8s.io/{v}/devicetaintrules", endpoint("devicetaintrules", v))
               for v in TAINT_RULE_VERSIONS]
    routes += [Route("/version", version), Route("/metrics", metrics)]
    routes += [Route(f"/apis/resource.k8s.io/v1/namespaces/{{namespace}}/{resource}/{{name}}",
                     _held_object(cluster, resource), methods=["GET"])
               for resource in ("resourceclaims", "resourceclaimtemplates")]
    return Starlette(routes=routes + _object_routes(cluster))
