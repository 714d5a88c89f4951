"""List+watch of what the audit re-evaluates: ResourceClaims, ResourceClaimTemplates, Pods and the
workload kinds, across all namespaces.

Why its own reflector rather than the inventory's: the inventory watches cluster-scoped kinds and
keeps objects by name; the audit's kinds are namespaced (keyed by namespace and name), it keeps
only the parts a review reads (``metadata`` without ``managedFields``, ``spec``, and the two
status facts that decide whether an object is audited at all), and it must tell the audit loop
*which* objects changed so that a pass re-reviews only those.  The loop per resource is the same
as :mod:`app.inventory.kube`'s (client-go's reflector): paged list → watch from its
``resourceVersion`` with bookmarks → resume, relist on ``410 Gone``, back off with jitter on any
other error.  A resource the API server refuses (403: RBAC left it out; 404: not served) is
reported and retried slowly; the audit runs on the others.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from ...inventory import KubeConfig, make_client, status_message
from .evaluate import audited

__all__ = ["AUDIT_RESOURCES", "AuditObjects", "AuditResource", "ObjectKey", "trim"]

log = logging.getLogger("draguard.audit")

ObjectKey = tuple[str, str, str]
"""(kind, namespace, name)."""


@dataclass(frozen=True)
class AuditResource:
    kind: str
    path: str  # the list across all namespaces, e.g. /api/v1/pods
    api_version: str
    field_selector: str = ""
    """Only these objects: Pods with ``spec.nodeName=`` (unscheduled), as the scheduler's own
    informer lists them — a busy cluster's running Pods never reach the audit; a Pod that is
    scheduled leaves the watch as a DELETED event."""

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


AUDIT_RESOURCES: tuple[AuditResource, ...] = (
    AuditResource("ResourceClaim", "/apis/resource.k8s.io/v1/resourceclaims", "resource.k8s.io/v1"),
    AuditResource("ResourceClaimTemplate", "/apis/resource.k8s.io/v1/resourceclaimtemplates", "resource.k8s.io/v1"),
    AuditResource("Pod", "/api/v1/pods", "v1", field_selector="spec.nodeName="),
    AuditResource("Deployment", "/apis/apps/v1/deployments", "apps/v1"),
    AuditResource("ReplicaSet", "/apis/apps/v1/replicasets", "apps/v1"),
    AuditResource("StatefulSet", "/apis/apps/v1/statefulsets", "apps/v1"),
    AuditResource("DaemonSet", "/apis/apps/v1/daemonsets", "apps/v1"),
    AuditResource("Job", "/apis/batch/v1/jobs", "batch/v1"),
    AuditResource("CronJob", "/apis/batch/v1/cronjobs", "batch/v1"),
)

_KEPT_METADATA = ("name", "namespace", "uid", "resourceVersion", "generation", "labels", "ownerReferences",
                  "deletionTimestamp", "generateName")


def trim(obj: dict[str, Any], resource: AuditResource) -> dict[str, Any]:
    """The parts of ``obj`` a review reads, plus ``status.phase`` (Pods) and whether a claim is
    allocated (``status.allocation`` is replaced by ``{}``: its content is the inventory's business).
    An object the audit does not re-evaluate (an allocated claim, a Pod without DRA, a ReplicaSet
    of a Deployment) keeps only its metadata: memory follows what is audited."""
    found = obj.get("metadata")
    meta: dict[str, Any] = found if isinstance(found, dict) else {}
    out: dict[str, Any] = {
        "apiVersion": obj.get("apiVersion") or resource.api_version,
        "kind": obj.get("kind") or resource.kind,
        "metadata": {k: meta[k] for k in _KEPT_METADATA if k in meta},
    }
    if "spec" in obj:
        out["spec"] = obj["spec"]
    status = obj.get("status")
    if isinstance(status, dict):
        kept: dict[str, Any] = {}
        if resource.kind == "Pod" and "phase" in status:
            kept["phase"] = status["phase"]
        if resource.kind == "ResourceClaim" and status.get("allocation"):
            kept["allocation"] = {}
        if kept:
            out["status"] = kept
    if not audited(out):
        out.pop("spec", None)
    return out


class _Gone(Exception):
    """410: the resume point is compacted away; relist."""


class _Refused(Exception):
    """403/404 on the list: this resource cannot be read (RBAC, or not served)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


@dataclass
class _Stream:
    resource: AuditResource
    objects: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    resource_version: str | None = None
    listed: bool = False
    refused: str = ""
    last_error: str = ""


def _key(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        raise ValueError("object without metadata.name")
    return str(meta.get("namespace") or ""), str(meta["name"])


class AuditObjects:
    """The audited objects, current as of the last watch event; ``changed`` tells the audit pass
    which keys moved since it last looked (:meth:`take_changes`)."""

    def __init__(
        self,
        config: KubeConfig | None,
        *,
        resources: tuple[AuditResource, ...] = AUDIT_RESOURCES,
        page_size: int = 500,
        watch_timeout: tuple[int, int] = (240, 300),
        backoff: tuple[float, float] = (0.5, 30.0),
        refused_retry: float = 60.0,
    ) -> None:
        self.config = config
        self._streams = {r.name: _Stream(r) for r in resources}
        self._page_size = page_size
        self._watch_timeout = watch_timeout
        self._backoff = backoff
        self._refused_retry = refused_retry
        self._changed: set[ObjectKey] = set()
        self.changes: asyncio.Event | None = None  # made in run(), on the loop that waits on it
        self.version = 0
        self.restarts = 0

    # ------------------------------------------------------------ read side
    @property
    def synced(self) -> bool:
        """Every resource listed once, or refused (then the audit speaks for the others)."""
        return all(s.listed or s.refused for s in self._streams.values())

    def refused(self) -> dict[str, str]:
        return {n: s.refused for n, s in self._streams.items() if s.refused}

    def objects(self) -> list[dict[str, Any]]:
        return [o for s in self._streams.values() for o in list(s.objects.values())]

    def take_changes(self) -> set[ObjectKey]:
        """Keys changed (added, modified, deleted) since the last call."""
        out, self._changed = self._changed, set()
        return out

    def status(self) -> dict[str, Any]:
        return {"synced": self.synced, "objects": {n: len(s.objects) for n, s in self._streams.items()},
                "refused": self.refused(), "restarts": self.restarts}

    # ------------------------------------------------------------ test and embedding side
    def replace_all(self, objects: list[dict[str, Any]]) -> None:
        """Load objects directly (benchmarks, tests, a file dump): as if every resource listed them."""
        by_kind = {s.resource.kind: s for s in self._streams.values()}
        for s in self._streams.values():
            for k in s.objects:
                self._changed.add((s.resource.kind, *k))
            s.objects = {}
            s.listed = True
        for obj in objects:
            stream = by_kind.get(str(obj.get("kind")))
            if stream is not None:
                key = _key(obj)
                stream.objects[key] = trim(obj, stream.resource)
                self._changed.add((stream.resource.kind, *key))
        self._touch()

    def _touch(self) -> None:
        self.version += 1
        if self.changes is not None:
            self.changes.set()

    # ------------------------------------------------------------ run
    async def run(self) -> None:
        """List+watch every resource until cancelled."""
        self.changes = asyncio.Event()
        if self.config is None:
            return
        client = make_client(self.config)
        async with client:
            tasks = [asyncio.create_task(self._reflect(client, s), name=f"audit-watch-{n}")
                     for n, s in self._streams.items()]
            try:
                await asyncio.gather(*tasks)
            finally:
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

    async def _reflect(self, client: httpx.AsyncClient, stream: _Stream) -> None:
        attempt = 0
        while True:
            try:
                if stream.resource_version is None:
                    await self._list(client, stream)
                    attempt = 0
                await self._watch(client, stream)
            except asyncio.CancelledError:
                raise
            except _Refused as exc:
                if not stream.refused:
                    log.warning(json.dumps({"msg": "audit cannot read a resource; auditing the others",
                                            "resource": stream.resource.name, "error": str(exc)}))
                stream.refused = str(exc)
                self._touch()
                await asyncio.sleep(self._refused_retry)
            except _Gone:
                stream.resource_version = None
                self.restarts += 1
            except Exception as exc:  # never let one odd response end the watch
                stream.last_error = f"{type(exc).__name__}: {exc}"
                self.restarts += 1
                cap = min(self._backoff[1], self._backoff[0] * 2 ** min(attempt, 30))
                attempt += 1
                await asyncio.sleep(random.uniform(cap / 2, cap))
                if isinstance(exc, ValueError):
                    stream.resource_version = None  # a malformed stream: relist

    async def _list(self, client: httpx.AsyncClient, stream: _Stream) -> None:
        objects: dict[tuple[str, str], dict[str, Any]] = {}
        cont: str | None = None
        rv: str | None = None
        for _ in range(100_000):
            params: dict[str, str | int] = {"limit": self._page_size}
            if stream.resource.field_selector:
                params["fieldSelector"] = stream.resource.field_selector
            if cont:
                params["continue"] = cont
            resp = await client.get(stream.resource.path, params=params)
            _check(resp)
            body = resp.json()
            if not isinstance(body, dict) or not isinstance(body.get("items") or [], list):
                raise ValueError(f"list of {stream.resource.name} is not a List")
            for item in body.get("items") or []:
                if isinstance(item, dict):
                    objects[_key(item)] = trim(item, stream.resource)
            meta = body.get("metadata") or {}
            rv = str(meta.get("resourceVersion") or "") or None
            cont = meta.get("continue") or None
            if not cont:
                break
        kind = stream.resource.kind
        for key in objects.keys() | stream.objects.keys():
            if objects.get(key) != stream.objects.get(key):
                self._changed.add((kind, *key))
        stream.objects = objects
        stream.resource_version = rv or "0"
        stream.listed = True
        stream.refused = ""
        stream.last_error = ""
        self._touch()

    async def _watch(self, client: httpx.AsyncClient, stream: _Stream) -> None:
        timeout = random.randint(*self._watch_timeout)
        params: dict[str, str | int] = {"watch": "true", "allowWatchBookmarks": "true",
                                        "resourceVersion": stream.resource_version or "0",
                                        "timeoutSeconds": timeout}
        if stream.resource.field_selector:
            params["fieldSelector"] = stream.resource.field_selector
        req_timeout = httpx.Timeout(connect=5.0, read=timeout + 30.0, write=10.0, pool=5.0)
        async with client.stream("GET", stream.resource.path, params=params, timeout=req_timeout) as resp:
            if resp.status_code != 200:
                await resp.aread()
                _check(resp)
            async for event in _events(resp.aiter_lines()):
                self._apply(stream, event)

    def _apply(self, stream: _Stream, event: dict[str, Any]) -> None:
        etype, obj = event["type"], event["object"]
        if etype == "ERROR":
            if obj.get("code") == 410 or obj.get("reason") in ("Expired", "Gone"):
                raise _Gone()
            raise RuntimeError(str(obj.get("message") or "watch error"))
        rv = (obj.get("metadata") or {}).get("resourceVersion") if isinstance(obj.get("metadata"), dict) else None
        if etype != "BOOKMARK":
            key = _key(obj)
            if etype in ("ADDED", "MODIFIED"):
                stream.objects[key] = trim(obj, stream.resource)
            elif etype == "DELETED":
                stream.objects.pop(key, None)
            else:
                raise ValueError(f"unknown watch event type {etype!r}")
            self._changed.add((stream.resource.kind, *key))
            self._touch()
        if rv:
            stream.resource_version = str(rv)


def _check(resp: httpx.Response) -> None:
    if resp.status_code < 300:
        return
    message = status_message(resp)
    if resp.status_code == 410:
        raise _Gone()
    if resp.status_code in (403, 404):
        raise _Refused(resp.status_code, message)
    raise RuntimeError(f"HTTP {resp.status_code}: {message}")


async def _events(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    async for line in lines:
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"watch event is not JSON: {line[:80]!r}") from exc
        if not isinstance(event, dict) or not isinstance(event.get("type"), str) \
                or not isinstance(event.get("object"), dict):
            raise ValueError(f"not a watch event: {line[:80]!r}")
        yield event
