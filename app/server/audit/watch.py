"""List+watch of what the audit re-evaluates: ResourceClaims, ResourceClaimTemplates, Pods and the
workload kinds, across all namespaces.

Why its own reflector rather than the inventory's: the inventory watches cluster-scoped kinds and
keeps objects by name; the audit's kinds are namespaced (keyed by namespace and name), it keeps
only the parts a review reads (``metadata`` without ``managedFields``, ``spec``, and the two
status facts that decide whether an object is audited at all), and it must tell the audit loop
*which* objects changed so that a pass re-reviews only those.  How it talks to the API server is
the inventory's own (``app/inventory/reflector.py``, client-go's reflector): paged list → watch
from its ``resourceVersion`` with bookmarks → resume, relist on ``410 Gone`` or a malformed
stream, back off with jitter on any other error — to at most the live inventory's
:data:`~app.inventory.kube.RECONNECT_BACKOFF_MAX` (2 s), so the audit is back within a few seconds
of the API server's return, and from the start again once a watch delivers.  A resource the API server refuses (403: RBAC
left it out; 404: not served) is reported and retried slowly; the audit runs on the others.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import Any

import httpx

from ...inventory import (
    RECONNECT_BACKOFF_INITIAL,
    RECONNECT_BACKOFF_MAX,
    ApiError,
    Backoff,
    GoneError,
    KubeConfig,
    MalformedWatchError,
    list_pages,
    make_client,
    reflect,
    run_together,
    watch_events,
)
from .evaluate import audited

__all__ = ["AUDIT_RESOURCES", "AuditObjects", "AuditResource", "ObjectKey", "trim"]

log = logging.getLogger("draguard.audit")

ObjectKey = tuple[str, str, str]
"""(kind, namespace, name)."""


@dataclass(frozen=True)
class AuditResource:
    """One resource the audit lists and watches (kind, list path, API version, field selector)."""

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


_CHANGES_SLACK = 4096
"""Changed keys remembered beyond the number of objects held before "everything changed" is
remembered instead (:meth:`AuditObjects.take_changes`)."""

_REFUSED = (403, 404)
"""Statuses that mean "this resource cannot be read" (RBAC left it out, or it is not served):
reported, retried slowly, and the audit runs on the others."""


@dataclass
class _Stream:
    """The watched objects of one resource, where the watch stands, and why it last failed."""

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
        backoff: tuple[float, float] = (RECONNECT_BACKOFF_INITIAL, RECONNECT_BACKOFF_MAX),
        refused_retry: float = 60.0,
    ) -> None:
        self.config = config
        self._streams = {r.name: _Stream(r) for r in resources}
        self._page_size = page_size
        self._watch_timeout = watch_timeout
        self._backoff = backoff
        self._refused_retry = refused_retry
        self._changed: set[ObjectKey] = set()
        self._overflowed = False
        """More changes than the bound since the last :meth:`take_changes`: all of them."""
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
        """Keys changed (added, modified, deleted) since the last call; after more changes than
        :data:`_CHANGES_SLACK` beyond the objects held, every key held (what a relist would say)."""
        out, self._changed = self._changed, set()
        if self._overflowed:
            self._overflowed = False
            out = {(s.resource.kind, *k) for s in self._streams.values() for k in s.objects}
        return out

    def _note_change(self, key: ObjectKey) -> None:
        """Remember a changed key — within a bound.  Why a bound: only an audit pass takes the
        changes, and a standby replica (not holding the Lease) or one whose passes are skipped (the
        inventory not synced or stale) makes none; under churn (20 claims/s, each a new name) the
        set of keys would grow for as long as that lasts."""
        if self._overflowed:
            return
        self._changed.add(key)
        if len(self._changed) > _CHANGES_SLACK + sum(len(s.objects) for s in self._streams.values()):
            self._overflowed = True
            self._changed = set()

    def status(self) -> dict[str, Any]:
        return {"synced": self.synced, "objects": {n: len(s.objects) for n, s in self._streams.items()},
                "refused": self.refused(), "restarts": self.restarts}

    # ------------------------------------------------------------ test and embedding side
    def replace_all(self, objects: list[dict[str, Any]]) -> None:
        """Load objects directly (benchmarks, tests, a file dump): as if every resource listed them."""
        by_kind = {s.resource.kind: s for s in self._streams.values()}
        for s in self._streams.values():
            for k in s.objects:
                self._note_change((s.resource.kind, *k))
            s.objects = {}
            s.listed = True
        for obj in objects:
            stream = by_kind.get(str(obj.get("kind")))
            if stream is not None:
                key = _key(obj)
                stream.objects[key] = trim(obj, stream.resource)
                self._note_change((stream.resource.kind, *key))
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
            await run_together(tasks)

    async def _reflect(self, client: httpx.AsyncClient, stream: _Stream) -> None:
        backoff = Backoff(*self._backoff)

        async def failed(exc: Exception) -> None:
            if isinstance(exc, GoneError):
                stream.resource_version = None  # relist at once
                self.restarts += 1
            elif isinstance(exc, ApiError) and exc.status in _REFUSED:
                if not stream.refused:
                    log.warning(json.dumps({"msg": "audit cannot read a resource; auditing the others",
                                            "resource": stream.resource.name, "error": str(exc)}))
                stream.refused = str(exc)
                self._touch()
                await asyncio.sleep(self._refused_retry)
            else:
                stream.last_error = f"{type(exc).__name__}: {exc}"
                self.restarts += 1
                await asyncio.sleep(backoff.next_delay())
                if isinstance(exc, (ValueError, MalformedWatchError)):
                    stream.resource_version = None  # a malformed stream: relist

        await reflect(needs_list=lambda: stream.resource_version is None, list_once=lambda: self._list(client, stream),
                      watch_once=lambda: self._watch(client, stream, backoff), failed=failed, backoff=backoff)

    def _params(self, stream: _Stream) -> dict[str, str]:
        selector = stream.resource.field_selector
        return {"fieldSelector": selector} if selector else {}

    async def _list(self, client: httpx.AsyncClient, stream: _Stream) -> None:
        objects: dict[tuple[str, str], dict[str, Any]] = {}

        def keep(item: dict[str, Any]) -> None:
            objects[_key(item)] = trim(item, stream.resource)

        rv = await list_pages(client, stream.resource.path, page_size=self._page_size, what=stream.resource.name,
                              keep=keep, params=self._params(stream))
        kind = stream.resource.kind
        for key in objects.keys() | stream.objects.keys():
            if objects.get(key) != stream.objects.get(key):
                self._note_change((kind, *key))
        stream.objects = objects
        stream.resource_version = rv
        stream.listed = True
        stream.refused = ""
        stream.last_error = ""
        self._touch()

    async def _watch(self, client: httpx.AsyncClient, stream: _Stream, backoff: Backoff) -> None:
        events = watch_events(client, stream.resource.path, resource_version=stream.resource_version,
                              timeout_seconds=self._watch_timeout, params=self._params(stream),
                              on_open=backoff.reset)  # accepted: the next failure starts from the shortest pause
        async for event in events:
            self._apply(stream, event)

    def _apply(self, stream: _Stream, event: dict[str, Any]) -> None:
        etype, obj = event["type"], event["object"]
        rv = (obj.get("metadata") or {}).get("resourceVersion") if isinstance(obj.get("metadata"), dict) else None
        if etype != "BOOKMARK":
            key = _key(obj)
            if etype in ("ADDED", "MODIFIED"):
                stream.objects[key] = trim(obj, stream.resource)
            elif etype == "DELETED":
                stream.objects.pop(key, None)
            else:
                raise ValueError(f"unknown watch event type {etype!r}")
            self._note_change((stream.resource.kind, *key))
            self._touch()
        if rv:
            stream.resource_version = str(rv)
