"""Following the cluster for the page: one list + watch per resource, with the user's credentials.

Why not the webhook's :class:`~app.inventory.kube.KubeInventory` as it is: it is made for a
ServiceAccount that may list and watch every resource it reads, cluster-wide.  A 403 on Nodes
keeps it "not synced" for ever; it has no fallback from every namespace's claims to the user's
own (the tenant rule); it knows neither Pods nor PolicyReports, and it paces the claims it
publishes (seconds) for the reviews it answers.  The page runs as the *user*.  So this is the
smallest adapter over the same protocol code, :mod:`app.inventory.reflector` — ``reflect`` (the
reflector loop), ``list_pages``, ``watch_events`` (bookmarks, ``ERROR`` events), ``Backoff`` and
its error classes.  What it adds:

* per resource, the paths tried in order (every namespace's objects, then the user's namespace's):
  a ``403`` or ``404`` on every path is a *gap* (said on the page, asked again every
  :data:`REFUSED_RETRY_SECONDS`), not a failure — what ``explain`` and ``capacity`` do in one read;
  a watch refused where the list was allowed is listed again every :data:`LIST_ONLY_SECONDS`;
* objects reduced as they arrive (one copy each: :attr:`Followed.keep`), and a changed set only
  when a kept object changed: a bookmark, a reconnect or a relist that found what was known does
  not rebuild the picture;
* the picture handed to ``publish`` (in a worker thread) at most every :attr:`debounce` seconds
  after a change, and again when a watch has failed for :data:`STALE_AFTER_SECONDS` (the page then
  says "stale since …") and when it is back.

Like client-go's reflector (and :mod:`app.inventory.kube`): list, watch from the list's
``resourceVersion`` with bookmarks; a watch that ends is made again from the last version seen;
``410 Gone`` relists at once; any other failure retries after a jittered backoff of at most
:data:`RECONNECT_BACKOFF_MAX` seconds; a watch that failed for longer than the stale bound is
listed again rather than resumed (only a list says what the API server holds now).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..inventory import (
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
from ..k8s import DraguardError

__all__ = [
    "LIST_ONLY_SECONDS",
    "REFUSED_RETRY_SECONDS",
    "STALE_AFTER_SECONDS",
    "Followed",
    "Follower",
    "Listing",
    "Picture",
]

log = logging.getLogger("draguard.ui")

STALE_AFTER_SECONDS = 3.0
"""Seconds a watch may stay failed before the page says its picture is stale.  Not zero: a
dropped connection or a ``410`` relist normally heals in well under a second; short, because the
person looking at the page should not take an old picture for the cluster."""
REFUSED_RETRY_SECONDS = 60.0
"""Seconds between two attempts to read a resource every path of which was refused (403/404): a
role granted meanwhile, or the PolicyReport CRD installed, is seen within that time."""
WATCH_SILENT_SECONDS = 75.0
"""Seconds without a byte on an open watch after which it is cut and made again: the API server
sends a bookmark about every minute (as :data:`app.inventory.kube.WATCH_SILENT_SECONDS`)."""
LIST_ONLY_SECONDS = 2.0
"""Seconds between two lists of a resource the user may list but not watch (the page then follows
it by polling, at the pace of the longest reconnect)."""
DEBOUNCE_SECONDS = 0.25
"""Seconds between the first event of a burst and the picture built from it."""
_WATCHDOG_TICK = 0.25
_REFUSED = (403, 404)


@dataclass(frozen=True)
class Followed:
    """One resource the page reads: the list paths tried in order and what is kept of an object."""

    name: str
    """Key of its :class:`Listing` in the :class:`Picture`."""
    label: str
    """How the page names it (``ResourceSlices``)."""
    kind: str
    api_version: str
    paths: tuple[str, ...]
    """Tried in order; a status of :attr:`fallback_on` moves to the next (every namespace → the user's)."""
    keep: Callable[[dict[str, Any]], Any] | None = None
    """The object as kept (reduced); ``None`` from it: not kept at all.  Default: as read."""
    fallback_on: frozenset[int] = frozenset(_REFUSED)


@dataclass(frozen=True)
class Listing:
    """What one resource holds now, as the assembly reads it."""

    values: list[Any]
    path: int | None
    """Index of the path read; None: every path was refused."""
    refused: tuple[tuple[int, str], ...]
    """(status, message) of each path refused at the last list, in order."""


@dataclass(frozen=True)
class Picture:
    """Every resource's listing, and whether it can be trusted."""

    listings: Mapping[str, Listing]
    stale: str
    """Empty while every readable resource's watch is healthy; else ``stale: …`` naming one."""
    at: float
    """Wall-clock time the picture is current as of: now, or when the stale watch failed."""


class _Refused(DraguardError):
    """Every path of a resource was refused: a gap on the page, asked again later."""


@dataclass
class _Stream:
    """What the page knows of one followed resource: its objects, the resourceVersion to watch from,
    which of its paths answered, and what was refused."""

    spec: Followed
    objects: dict[str, tuple[str, Any]] = field(default_factory=dict)
    """key → (resourceVersion, value as kept)."""
    rv: str | None = None
    path: int | None = None
    refused: tuple[tuple[int, str], ...] = ()
    resolved: bool = False
    """Listed (or refused on every path) at least once."""
    failing_since: float | None = None
    last_error: str = ""
    connected: bool = False
    gone_at: float | None = None
    """When the last ``410 Gone`` came: a second one within a second relists after a backoff."""


def _bare(exc: ApiError) -> str:
    """The API server's message without the ``HTTP <status>: `` :class:`ApiError` puts before it."""
    return str(exc).removeprefix(f"HTTP {exc.status}: ")


def _key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str):
        raise MalformedWatchError("object without metadata.name")
    ns = meta.get("namespace")
    return f"{ns}/{meta['name']}" if isinstance(ns, str) and ns else str(meta["name"])


def _rv(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    rv = meta.get("resourceVersion") if isinstance(meta, Mapping) else None
    return str(rv) if rv else ""


def _start_failure(exc: Exception) -> str | None:
    """What makes ``draguard ui`` fail at start rather than wait: the API server unreachable, or
    the credentials refused (the words of :func:`~app.inventory.read_cluster`)."""
    if isinstance(exc, httpx.TransportError):
        return f"cannot reach the API server: {type(exc).__name__}: {exc}"
    if isinstance(exc, ApiError) and exc.status == 401:
        return f"the API server refused the credentials: {_bare(exc)}"
    return None


class Follower:
    """List+watch ``resources`` through ``config`` until cancelled; every new :class:`Picture` goes
    to ``publish`` (called in a worker thread, one call at a time).  ``ready`` is set once the
    first picture was published — or ``start_error`` says why none will be."""

    def __init__(
        self,
        config: KubeConfig,
        resources: tuple[Followed, ...],
        *,
        publish: Callable[[Picture], None],
        debounce: float = DEBOUNCE_SECONDS,
        stale_after: float = STALE_AFTER_SECONDS,
        silent_after: float = WATCH_SILENT_SECONDS,
        refused_retry: float = REFUSED_RETRY_SECONDS,
        list_only: float = LIST_ONLY_SECONDS,
        backoff: tuple[float, float] = (RECONNECT_BACKOFF_INITIAL, RECONNECT_BACKOFF_MAX),
        watch_timeout: tuple[int, int] = (240, 300),
        page_size: int = 500,
    ) -> None:
        self.config = config
        self._streams = {r.name: _Stream(r) for r in resources}
        self._publish = publish
        self._debounce = debounce
        self._stale_after = stale_after
        self._silent_after = silent_after
        self._refused_retry = refused_retry
        self._list_only = list_only
        self._backoff = backoff
        self._watch_timeout = watch_timeout
        self._page_size = page_size
        self._dirty: asyncio.Event | None = None
        self._published_stale: tuple[tuple[str, float], ...] = ()
        self.ready = threading.Event()
        self.start_error = ""
        self.events = 0
        """Watch events that changed a kept object (for tests and the log)."""
        self.pictures = 0
        self.build_error = ""

    # ---------------------------------------------------------------- health
    def problem(self) -> str:
        """What failed last, per resource (for the start-up error)."""
        return "; ".join(f"{s.spec.label}: {s.last_error}" for s in self._streams.values() if s.last_error)

    def _stale(self, stream: _Stream, now: float) -> bool:
        """A resource read (not refused) whose watch has failed for the stale bound."""
        return (stream.path is not None and stream.failing_since is not None
                and now - stream.failing_since >= self._stale_after)

    def _stale_key(self) -> tuple[tuple[str, float], ...]:
        now = time.monotonic()
        return tuple((s.spec.name, s.failing_since) for s in self._streams.values()
                     if self._stale(s, now) and s.failing_since is not None)

    def _picture(self) -> Picture:
        """The listings (copies of the lists, on the event loop) and the staleness as of now."""
        listings = {name: Listing([v for _, v in s.objects.values()], s.path, s.refused)
                    for name, s in self._streams.items()}
        now, wall = time.monotonic(), time.time()
        stale = [s for s in self._streams.values() if self._stale(s, now)]
        if not stale:
            return Picture(listings, "", wall)
        first = min(stale, key=lambda s: s.failing_since or now)
        since = wall - (now - (first.failing_since or now))
        more = f" (and {len(stale) - 1} more)" if len(stale) > 1 else ""
        text = (f"stale: the {first.spec.label} watch has failed since "
                f"{time.strftime('%H:%M:%SZ', time.gmtime(since))}: {first.last_error}{more}")
        return Picture(listings, text, since)

    # ---------------------------------------------------------------- run
    async def run(self) -> None:
        """Every resource's reflector, the publisher and the watchdog, until cancelled."""
        self._dirty = asyncio.Event()
        try:
            client = make_client(self.config)
        except DraguardError as exc:  # e.g. an unusable client certificate: nothing to retry
            self.start_error = str(exc)
            self.ready.set()
            return
        async with client:
            tasks = [asyncio.create_task(self._reflect(client, s), name=f"ui-watch-{n}")
                     for n, s in self._streams.items()]
            tasks.append(asyncio.create_task(self._publish_loop(), name="ui-publish"))
            tasks.append(asyncio.create_task(self._watchdog(), name="ui-watchdog"))
            await run_together(tasks)

    def _changed(self) -> None:
        if self._dirty is not None:
            self._dirty.set()

    async def _publish_loop(self) -> None:
        assert self._dirty is not None
        while True:
            await self._dirty.wait()
            await asyncio.sleep(self._debounce)  # one picture for a burst of events
            self._dirty.clear()
            if not all(s.resolved for s in self._streams.values()):
                continue  # the first picture waits for every resource (each first list sets dirty)
            picture = self._picture()
            was_stale, self._published_stale = bool(self._published_stale), self._stale_key()
            if picture.stale and not was_stale:  # once per outage, as the page says it
                log.warning("draguard ui: %s", picture.stale)
            elif was_stale and not picture.stale:
                log.warning("draguard ui: current again")
            try:
                await asyncio.to_thread(self._publish, picture)
            except Exception as exc:  # a bad object must not end the page's updates
                self.build_error = f"{type(exc).__name__}: {exc}"
                log.exception("draguard ui: building the picture failed")
                if not self.ready.is_set():  # the first one: it would fail again; say why at start
                    self.start_error = f"building the picture failed: {self.build_error}"
                    self.ready.set()
                continue
            self.build_error = ""
            self.pictures += 1
            self.ready.set()

    async def _watchdog(self) -> None:
        """Publish when a watch goes stale or comes back: no event says so."""
        while True:
            await asyncio.sleep(_WATCHDOG_TICK)
            if self._stale_key() != self._published_stale:
                self._changed()

    async def _reflect(self, client: httpx.AsyncClient, stream: _Stream) -> None:
        backoff = Backoff(*self._backoff)

        async def failed(exc: Exception) -> None:
            stream.connected = False
            if isinstance(exc, _Refused):
                await asyncio.sleep(self._refused_retry)
                return
            if isinstance(exc, ApiError) and exc.status in _REFUSED:
                # the list was allowed (its refusals end in _Refused), the watch is not: a role
                # with list but not watch.  Not an outage: listed again after a pause instead
                stream.rv = None
                await asyncio.sleep(self._list_only)
                return
            if not self.ready.is_set():
                fatal = _start_failure(exc)
                if fatal is not None:
                    self.start_error = fatal
                    self.ready.set()
            if stream.failing_since is None:
                stream.failing_since = time.monotonic()
                log.debug("draguard ui: the %s watch failed: %s", stream.spec.label, exc)
            stream.last_error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            if isinstance(exc, (GoneError, MalformedWatchError)):
                stream.rv = None  # relist: the resume point is gone, or the stream cannot be trusted
            if isinstance(exc, GoneError):
                now = time.monotonic()
                again, stream.gone_at = stream.gone_at is not None and now - stream.gone_at < 1.0, now
                if not again:
                    return  # at once: only the resume point is gone (a server that keeps saying so waits)
            await asyncio.sleep(backoff.next_delay())

        await reflect(needs_list=lambda: self._needs_list(stream), list_once=lambda: self._list(client, stream),
                      watch_once=lambda: self._watch(client, stream, backoff), failed=failed, backoff=backoff)

    def _needs_list(self, stream: _Stream) -> bool:
        """List when there is no resume point, or when the watch failed for longer than the stale
        bound (what was missed meanwhile is known only from a list)."""
        if stream.rv is not None and self._stale(stream, time.monotonic()):
            stream.rv = None
        return stream.rv is None

    async def _list(self, client: httpx.AsyncClient, stream: _Stream) -> None:
        spec = stream.spec
        refused: list[tuple[int, str]] = []
        for index, path in enumerate(spec.paths):
            objects: dict[str, tuple[str, Any]] = {}

            def keep(item: dict[str, Any], objects: dict[str, tuple[str, Any]] = objects) -> None:
                item.setdefault("kind", spec.kind)  # a real API server's List items carry neither
                item.setdefault("apiVersion", spec.api_version)
                value = spec.keep(item) if spec.keep is not None else item
                if value is not None:
                    objects[_key(item)] = (_rv(item), value)

            try:
                rv = await list_pages(client, path, page_size=self._page_size, what=spec.label, keep=keep)
            except ApiError as exc:
                if exc.status not in _REFUSED or isinstance(exc, GoneError):
                    raise
                refused.append((exc.status, _bare(exc)))
                if exc.status in spec.fallback_on:
                    continue
                break
            self._listed(stream, objects, rv, index, refused)
            return
        self._listed(stream, {}, None, None, refused)
        raise _Refused(f"{spec.label}: " + "; ".join(f"HTTP {s}: {m}" for s, m in refused))

    def _listed(self, stream: _Stream, objects: dict[str, tuple[str, Any]], rv: str | None, path: int | None,
                refused: list[tuple[int, str]]) -> None:
        """A list answered: the set replaced wholesale (deletions during a gap disappear too); a
        new picture only when what is kept, or what was refused, differs."""
        same = (stream.resolved and stream.path == path and stream.refused == tuple(refused)
                and stream.objects.keys() == objects.keys()
                and all(stream.objects[k][0] == v[0] for k, v in objects.items()))
        stream.objects = objects
        stream.rv = rv
        stream.path = path
        stream.refused = tuple(refused)
        stream.resolved = True
        stream.failing_since = None
        stream.last_error = ""
        if not same:
            self._changed()

    def _opened(self, stream: _Stream) -> None:
        stream.connected = True
        stream.failing_since = None
        stream.last_error = ""

    async def _watch(self, client: httpx.AsyncClient, stream: _Stream, backoff: Backoff) -> None:
        path = stream.spec.paths[stream.path or 0]
        events = watch_events(client, path, resource_version=stream.rv, timeout_seconds=self._watch_timeout,
                              on_open=lambda: self._opened(stream), read_timeout=self._silent_after)
        try:
            async for event in events:
                self._apply(stream, event)
                backoff.reset()
        finally:
            stream.connected = False

    def _apply(self, stream: _Stream, event: dict[str, Any]) -> None:
        etype = event["type"]
        obj = event["object"]
        rv = _rv(obj)
        if etype == "BOOKMARK":
            stream.rv = rv or stream.rv
            return
        key = _key(obj)
        spec = stream.spec
        if etype in ("ADDED", "MODIFIED"):
            obj.setdefault("kind", spec.kind)
            obj.setdefault("apiVersion", spec.api_version)
            value = spec.keep(obj) if spec.keep is not None else obj
            changed = True
            if value is None:
                changed = stream.objects.pop(key, None) is not None
            else:
                stream.objects[key] = (rv, value)
        elif etype == "DELETED":
            changed = stream.objects.pop(key, None) is not None
        else:
            raise MalformedWatchError(f"unknown watch event type {etype!r}")
        stream.rv = rv or stream.rv
        if changed:
            self.events += 1
            self._changed()
