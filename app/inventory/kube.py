"""Live inventory: list + watch DeviceClasses, ResourceSlices, Nodes and DeviceTaintRules from a Kubernetes API server.

Why a hand-written watcher on httpx rather than a client library: the webhook needs a few
cluster-scoped lists, must never block a review on the network, and must say precisely
how current its picture is (``synced``, age, restarts) so that an unsynced or stale inventory
turns into ``SatisfiabilityUnknown`` warnings instead of false rejections (README "What denies, what warns, and why").

The loop per resource follows client-go's reflector: list (paged) → watch from the list's
``resourceVersion`` with ``allowWatchBookmarks`` → on a normal end, watch again from the last
version seen; on ``410 Gone`` (or a malformed stream) relist; on any other error back off with
jitter and retry.  Raw objects live in a store; after changes a debounced task rebuilds the
:class:`~app.inventory.Inventory` snapshot in a worker thread and swaps it in with one
assignment, so readers (review threads) always see a complete snapshot.

ResourceClaims and templates are the exception to "rebuild": each of their watch events is
applied where it arrives to :class:`~.live.LiveClaims` (what the claim held taken away, what it
holds now added, the few devices of the held view it touches made again — microseconds), and
the debounced task only publishes the result (copies, milliseconds).  A full build — every claim
summed again, in the worker thread — happens when the devices change or the claims are listed
again (a relist after ``410 Gone``, a first list); events arriving while it runs are kept in a
bounded journal and applied to its result.

Freshness (README "Live inventory: how fresh, and what happens when it is not"): a device event
(class, slice, node, taint rule) publishes a new picture within the debounce — it cuts short the pacing of
claims-only publishes; only the allocation view ("now") is paced.  A device watch that fails
(connection error, error status, ``410`` not yet relisted) makes the picture *stale* after
:data:`STALE_AFTER_SECONDS`; one that stays silent — no event and no bookmark, where the API
server sends a bookmark about every minute (not to every quiet watch: see
:data:`WATCH_SILENT_SECONDS`) — for :data:`WATCH_SILENT_SECONDS` is cut and made again, and counts
as failed from then.  A device watch that failed for longer than the bound is listed again rather
than resumed — an accepted watch proves nothing about what was missed (a restarted API server
answers the old resume point with ``410`` after accepting it) — and the picture stays stale until
the snapshot built from that list is published.  While stale, :meth:`KubeInventory.problem` names
the resource and since when: no satisfiability answer (hence no denial) is made from the picture,
every answer carries the warning (``app/server/answers.py``), and ``/readyz``, the metrics and the
log say so at once.  Retries back off to at most :data:`RECONNECT_BACKOFF_MAX` seconds.

DeviceTaintRules are an *optional* device resource (:attr:`Resource.optional`): served as
``resource.k8s.io/v1`` from 1.37, ``v1beta2`` on 1.36 and ``v1alpha3`` on 1.35, only with the
``DRADeviceTaintRules`` gate, and left out of an install's RBAC by older manifests.  The versions
are tried newest first (a ``404`` moves to the next); a resource no version of which is served
(``404``) or that RBAC refuses (``403``) is *absent*: no rule is known, so no device counts as
tainted by one — only more permissive, never a false denial — readiness does not wait for it,
it never makes the picture stale, ``/readyz`` shows why (``watches``), the log says it once, and
it is asked again every :data:`ABSENT_RETRY_SECONDS`.  Once listed, its watch is held to the same
bound as the others: a rule deleted while it is broken would otherwise keep its taint.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from ..k8s import DEFAULT_TARGET, Target
from .build import POTENTIAL_ANNOTATION, InventoryBuilder
from .claims import ClaimReducer
from .cluster import HeldClaim, ObjectKey
from .kubeconfig import KubeConfig, KubeError, make_client
from .live import LiveClaims
from .reflector import (
    ApiError,
    Backoff,
    GoneError,
    MalformedWatchError,
    list_pages,
    reflect,
    run_together,
    watch_events,
)

if TYPE_CHECKING:
    from ..k8s import Finding
    from . import Inventory

__all__ = [
    "ABSENT_RETRY_SECONDS",
    "CLAIM_RESOURCES",
    "DEVICE_RESOURCES",
    "RECONNECT_BACKOFF_MAX",
    "RESOURCES",
    "STALE_AFTER_SECONDS",
    "WATCH_SILENT_SECONDS",
    "KubeInventory",
    "Resource",
    "SilentWatchError",
]

log = logging.getLogger("draguard.inventory")

_CLAIMS_PACE_FACTOR = 10.0
"""A claims-only publish waits this many times the previous one's duration: at most about an
eleventh of the time goes to publishing under steady churn.  Publishing runs on the event loop
and holds the GIL, so the share of requests that meet one must stay near 1 % for the review p99
to stay put.  Since claim events are applied one by one (:mod:`.live`) a publish costs copies
of the claims map and of the held view's device list — milliseconds at 50,000 claims — so the
pace is below the debounce and the "now" state follows the cluster within it; the factor only
matters if publishing ever becomes expensive.  (When every claims-only rebuild re-summed all
claims, ~0.3–0.4 s, it set the pace: p99 1.65–1.87x the figure without claims at 4x,
0.92–1.04x at 10x, measured with ``bench_state.py``.)"""
_CLAIMS_INTERVAL = 10.0
"""Seconds: the least time between two claims-only snapshots.  Not for the publishing itself
(milliseconds) but for what a new snapshot costs its readers: every "now" answer starts from
cold caches (candidates, projections and node classes of the new held view: ~0.4–0.5 s of CPU
over the first reviews of the twelve claims of ``bench_state.py`` at 10k devices, in-process on
an idle core; 2–3x that on a loaded machine) and the answer memo starts empty (it is keyed by
the snapshot).  Those first reviews are the slow ones: at one client and ~900 reviews/s they
must stay well below 1 % of the reviews between two snapshots for the p99 to stay put — 12 in
~8,000 at 10 s; at 3 s they were over 1 % (p99 6.9x the figure without claims, measured).  The
old pacing (10x a full rebuild of 0.35–1.7 s) gave 3.5–17 s; "now" now lags the cluster by at
most about 10 s, which a warning (CapacityInUse) can afford."""
_CLAIMS_PACE_MAX = 30.0
"""Seconds: the longest the "now" state may lag behind the cluster's claims under churn."""
STALE_AFTER_SECONDS = 5.0
"""Seconds a device watch may stay failed (connection refused or reset, an error status, a
``410`` not yet relisted) before the picture counts as stale and no denial is made from it.
Short, because an event missed meanwhile (a slice deleted through another API server) would
otherwise be decided on; not zero, because a ``410`` relist or a reconnect to a restarted API
server (:data:`RECONNECT_BACKOFF_MAX`) normally completes within it without any gap in
answers.  The ``--stale-after-seconds`` of ``draguard serve`` defaults to this."""
WATCH_SILENT_SECONDS = 75.0
"""Seconds without any byte on an open watch (no event, no bookmark) after which it is taken for
broken, cut and made again: the API server sends every watch that asked for bookmarks one
about every minute (``defaultBookmarkFrequency`` of the watch cache); 15 s of margin as the watch
cache keeps for its own bookmarks.  Not every quiet watch, though: the watch cache drops a
bookmark whose resourceVersion is not above the one the watch started from, and its version of a
kind moves only with that kind's events — so the watch of a kind nothing changed since the list
(no DeviceTaintRules, no templates) stays silent, and is cut and made again every 75 s
(measured on 1.36.2 with the team's chaos harness).  A cut is therefore logged as news (info),
not as a failure; it counts as failed from then (:data:`STALE_AFTER_SECONDS` more before
"stale"), and if making it again fails, that failure is the warning."""
RECONNECT_BACKOFF_MAX = 2.0
"""Seconds: the longest pause between two attempts to list or watch again (full jitter below it),
so a watch is back within a few seconds of the API server's return."""
RECONNECT_BACKOFF_INITIAL = 0.5
ABSENT_RETRY_SECONDS = 60.0
"""Seconds between two attempts to read an optional resource that was absent (not served, or
refused by RBAC): an upgrade, an enabled gate or a granted role is seen within that time."""
_ABSENT_STATUSES = (403, 404)
_REPORT_EVERY = 60.0
"""Seconds between two log lines about the same unreachable API server or stale picture (the
first one is logged at once)."""
_WATCHDOG_TICK = 0.25
"""Seconds between two looks of the watchdog that logs staleness as it starts and ends."""
_JOURNAL_MAX = 100_000
"""Claim and template events kept while a full build runs in the worker thread (to apply to its
result); past that many the result is published as it is and another full build follows."""

class SilentWatchError(KubeError):
    """A watch that brought no byte for ``silent_after`` seconds: taken for broken and made again."""


class _StaleResumeError(KubeError):
    """A watch accepted from the old resume point after the picture went stale (the bound passed
    while it was being made): ended at once for a list, the only proof of what the API server holds now."""


# ------------------------------------------------------------------ resources
@dataclass(frozen=True)
class Resource:
    """One list endpoint (cluster-scoped, or every namespace's objects).

    ``metadata_only``: list and watch ``PartialObjectMetadata`` (name, labels, resourceVersion…)
    instead of whole objects, as client-go's metadata informers do, through the ``Accept``
    header.  No resource needs that today (Nodes are read whole for their taints and allocatable,
    and trimmed on arrival: :func:`trim_node`); it stays for kinds whose labels are all that matters.

    ``held``: the objects are claims (``"claim"``) or templates (``"template"``), kept reduced
    (:mod:`.claims`) — never as raw objects — and keyed ``namespace/name``.  Such streams are
    *optional*: readiness does not wait for them and their failures do not make answers
    unknown (without them the cluster's claims are simply not known, and nothing is "not now").
    """

    kind: str
    path: str  # e.g. /apis/resource.k8s.io/v1/resourceslices
    api_version: str = ""
    metadata_only: bool = False
    trim: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """Reduces each object to what the inventory reads as soon as it arrives (bounded memory)."""
    held: str = ""
    optional: bool = False
    """A device resource the cluster may not serve (its API version or gate off) or RBAC may not
    grant: a ``404`` on every version or a ``403`` makes it *absent* (none of its objects known)
    instead of a failure — readiness does not wait for it, and only a failure after it was listed
    counts towards staleness.  Sound only for kinds whose absence makes answers more permissive
    (DeviceTaintRules: fewer taints)."""
    alternatives: tuple[tuple[str, str], ...] = ()
    """Older ``(path, apiVersion)`` pairs of the same resource, tried in order when the newer one
    answers ``404`` (not served by this API server)."""

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    def versions(self) -> tuple[Resource, ...]:
        """This resource as served at each of its versions, newest (``path``) first."""
        return (self, *(dataclasses.replace(self, path=p, api_version=v, alternatives=())
                        for p, v in self.alternatives))

    def accept(self, *, watch: bool) -> str:
        if not self.metadata_only:
            return "application/json"
        kind = "PartialObjectMetadata" if watch else "PartialObjectMetadataList"
        return f"application/json;as={kind};g=meta.k8s.io;v=v1,application/json"

    def restore_kind(self, obj: dict[str, Any]) -> None:
        """Give a listed or watched object its kind back (metadata-only answers are
        ``PartialObjectMetadata``; list items may carry no kind at all)."""
        if self.metadata_only or "kind" not in obj:
            obj["kind"] = self.kind
            if self.api_version:
                obj["apiVersion"] = self.api_version
        if self.api_version and not obj.get("apiVersion"):  # a real API server's List items carry neither
            obj["apiVersion"] = self.api_version

    def keep(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The object as stored: kind restored, then trimmed."""
        self.restore_kind(obj)
        return self.trim(obj) if self.trim is not None else obj


def trim_node(obj: dict[str, Any]) -> dict[str, Any]:
    """What scheduling reads of a Node: name, labels, the potential mark, taints, cordon and the
    allocatable amounts of extended resources (device plugins; native resources are dropped).

    Why whole Nodes are watched and trimmed instead of metadata only: taints, ``unschedulable``
    and device-plugin allocatable decide which nodes a pod may use; a full Node (images,
    conditions: tens of KiB) is let go as soon as it is read, so the store holds ~1 KiB per node.
    """
    got = obj.get("metadata")
    meta: dict[str, Any] = got if isinstance(got, dict) else {}
    kept_meta: dict[str, Any] = {k: meta[k] for k in ("name", "uid", "resourceVersion", "labels") if k in meta}
    annotations = meta.get("annotations")
    if isinstance(annotations, dict) and POTENTIAL_ANNOTATION in annotations:
        kept_meta["annotations"] = {POTENTIAL_ANNOTATION: annotations[POTENTIAL_ANNOTATION]}
    out: dict[str, Any] = {"kind": obj.get("kind", "Node"), "apiVersion": obj.get("apiVersion", "v1"), "metadata": kept_meta}
    spec = obj.get("spec")
    if isinstance(spec, dict):
        kept_spec = {k: spec[k] for k in ("taints", "unschedulable") if k in spec}
        if kept_spec:
            out["spec"] = kept_spec
    status = obj.get("status")
    allocatable = status.get("allocatable") if isinstance(status, dict) else None
    if isinstance(allocatable, dict):
        extended = {k: v for k, v in allocatable.items() if isinstance(k, str) and "/" in k and "kubernetes.io/" not in k}
        if extended:
            out["status"] = {"allocatable": extended}
    return out


DEVICE_TAINT_RULES = Resource(
    "DeviceTaintRule", "/apis/resource.k8s.io/v1/devicetaintrules", api_version="resource.k8s.io/v1", optional=True,
    alternatives=(("/apis/resource.k8s.io/v1beta2/devicetaintrules", "resource.k8s.io/v1beta2"),
                  ("/apis/resource.k8s.io/v1alpha3/devicetaintrules", "resource.k8s.io/v1alpha3")),
)
"""Served as v1 from 1.37, v1beta2 on 1.36, v1alpha3 on 1.35 — each only with ``DRADeviceTaintRules``."""
DEVICE_RESOURCES: tuple[Resource, ...] = (
    Resource("DeviceClass", "/apis/resource.k8s.io/v1/deviceclasses", api_version="resource.k8s.io/v1"),
    Resource("ResourceSlice", "/apis/resource.k8s.io/v1/resourceslices", api_version="resource.k8s.io/v1"),
    Resource("Node", "/api/v1/nodes", api_version="v1", trim=trim_node),
    DEVICE_TAINT_RULES,
)
CLAIM_RESOURCES: tuple[Resource, ...] = (
    Resource("ResourceClaim", "/apis/resource.k8s.io/v1/resourceclaims", "resource.k8s.io/v1", held="claim"),
    Resource("ResourceClaimTemplate", "/apis/resource.k8s.io/v1/resourceclaimtemplates", "resource.k8s.io/v1",
             held="template"),
)
RESOURCES: tuple[Resource, ...] = DEVICE_RESOURCES + CLAIM_RESOURCES


# ------------------------------------------------------------------ per-resource state
@dataclass
class _Stream:
    """What one resource's reflector knows: objects, resume point, health."""

    resource: Resource
    objects: dict[str, Any] = field(default_factory=dict)
    """Raw objects by name; for ``held`` resources reduced ones (HeldClaim, template spec) by ``namespace/name``."""
    resource_version: str | None = None
    listed: bool = False
    last_contact: float | None = None
    """When the API server last confirmed this resource (list, watch opened, event, bookmark)."""
    failing_since: float | None = None
    last_error: str = ""
    confirmed_at: float | None = None
    """When the API server answered again (a list) after this resource's watch had failed for
    longer than the stale bound: it stays failing until a snapshot whose objects were copied after
    that moment is published (:meth:`KubeInventory._confirm_published`) — an answer made meanwhile
    would still come from the picture that missed what changed during the outage."""
    connected: bool = False
    """A watch is open (accepted by the API server and not ended)."""
    version: int = 0
    """Which of ``resource.versions()`` is read (optional resources served at older versions)."""
    absent: str = ""
    """Why an optional resource is not read (not served, refused by RBAC); empty when it is."""
    base: Resource | None = None
    """The resource as declared (``resource`` is the version of it being read)."""

    def __post_init__(self) -> None:
        if self.base is None:
            self.base = self.resource

    @property
    def counts(self) -> bool:
        """Whether this stream's health bears on the picture's: a required device resource, or an
        optional one that was listed (its objects are in the picture and may go out of date)."""
        return not self.resource.held and (not self.resource.optional or (self.listed and not self.absent))


def _object_key(obj: dict[str, Any], *, held: bool = False) -> str:
    """The store's key: ``name``, or ``namespace/name``; claims and templates (``held``) always
    ``namespace/name``, a missing namespace read as ``default`` as their reduction does, so one
    key of the store is one (namespace, name) of the cluster state."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        raise MalformedWatchError("object without metadata.name")
    ns = meta.get("namespace")
    if held and not (isinstance(ns, str) and ns):
        ns = "default"
    return f"{ns}/{meta['name']}" if isinstance(ns, str) and ns else str(meta["name"])


def _object_rv(obj: dict[str, Any]) -> str | None:
    meta = obj.get("metadata")
    rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
    return str(rv) if rv else None


class KubeInventory:
    """A live, atomically swapped inventory snapshot fed by list+watch.

    ``run()`` is a coroutine meant to run for the life of the server; everything else is safe
    to call from other threads (it only reads attributes that are replaced, never mutated).
    """

    instant_snapshot = True
    """``snapshot()`` and ``problem()`` never wait (see ``NoInventory``)."""

    def __init__(
        self,
        config: KubeConfig,
        *,
        resources: tuple[Resource, ...] = RESOURCES,
        build: Callable[[Iterable[dict[str, Any]]], Inventory] | None = None,
        debounce: float = 0.25,
        stale_after: float = STALE_AFTER_SECONDS,
        silent_after: float = WATCH_SILENT_SECONDS,
        page_size: int = 500,
        watch_timeout: tuple[int, int] = (240, 300),
        backoff_initial: float = RECONNECT_BACKOFF_INITIAL,
        backoff_max: float = RECONNECT_BACKOFF_MAX,
        clock: Callable[[], float] = time.monotonic,
        claims_interval: float = _CLAIMS_INTERVAL,
        absent_retry: float = ABSENT_RETRY_SECONDS,
        target: Target = DEFAULT_TARGET,
    ) -> None:
        self.config = config
        self._streams = {r.name: _Stream(r) for r in resources}
        # One builder for the life of the watch: each rebuild decodes only the objects whose
        # resourceVersion changed (see InventoryBuilder).
        self._own_builder = build is None
        self._build = build if build is not None else InventoryBuilder(target=target).build
        self._debounce = debounce
        self._claims_pace = 0.0
        """How long a claims-only rebuild waits after the previous build (see :meth:`_rebuild_loop`)."""
        self._claims_interval = claims_interval
        self._published_at = -claims_interval
        """When the last snapshot was published (``time.monotonic``)."""
        self._stale_after = stale_after
        self._silent_after = silent_after
        self._page_size = page_size
        self._watch_timeout = watch_timeout
        self._backoff = (backoff_initial, backoff_max)
        self._absent_retry = absent_retry
        self._clock = clock
        self._snapshot: Inventory | None = None
        self._snapshot_complete = False  # built after every resource had listed once
        self._base: Inventory | None = None  # the last snapshot built from devices, before claims
        self._devices_dirty = True
        self._live: LiveClaims | None = None
        """Claims and templates over ``_base``, kept current event by event; None: a full build is due."""
        self._journal: list[tuple[str, Any, Any]] | None = None
        """While a full build runs: the claim and template events since it took its copy."""
        self._journal_broken = False
        self._reducer = ClaimReducer()
        self._dirty: asyncio.Event | None = None
        self._devices_changed: asyncio.Event | None = None
        """Set by every device event: it ends the pacing of a claims-only publish at once."""
        self.restarts = 0
        self.relists = 0
        self.builds = 0
        self.build_error = ""
        self.fatal_error = ""

    def retarget(self, target: Target) -> None:
        """Build for ``target`` from now on (the cluster's version or gates changed): whether
        DeviceTaintRules apply at all (``DRADeviceTaintRules``), what a rule without selector
        selects, which fields a slice keeps.  A new builder (its decoded objects were decoded for
        the old target) and a full rebuild at once; call it on the event loop that runs :meth:`run`."""
        if not self._own_builder:
            return
        self._build = InventoryBuilder(target=target).build
        self._devices_dirty = True
        if self._devices_changed is not None:
            self._devices_changed.set()
        if self._dirty is not None:
            self._dirty.set()

    # ---------------------------------------------------------------- read side
    @property
    def synced(self) -> bool:
        """True once every device resource was listed and a snapshot including all of them exists
        (claims and templates are optional: see :class:`Resource`)."""
        return self._snapshot_complete

    @property
    def claims_known(self) -> bool:
        """Whether the claim and template streams (if watched) have listed at least once."""
        held = [s for s in self._streams.values() if s.resource.held]
        return bool(held) and all(s.listed for s in held)

    def snapshot(self) -> Inventory | None:
        return self._snapshot

    def last_sync_age(self) -> float | None:
        """Seconds since the least recently confirmed device resource was confirmed (list, watch
        opened, event, bookmark): what ``draguard_inventory_age_seconds`` shows.  A healthy quiet
        watch is confirmed by a bookmark about every minute, or (a kind nothing changed, which the
        watch cache does not bookmark) cut and made again after :data:`WATCH_SILENT_SECONDS`, so
        this stays at most ~75 s; claims and
        templates (optional), and an optional device resource that is absent or not listed, are left out.  None until every device resource was listed."""
        contacts = [s.last_contact for s in self._streams.values() if s.counts]
        if not contacts or any(c is None for c in contacts):
            return None
        return max(0.0, self._clock() - min(c for c in contacts if c is not None))

    def stale(self) -> tuple[str, float] | None:
        """The first device resource whose watch makes the picture stale, and since when (this
        inventory's clock); None while the picture is fresh (or not synced yet: that is
        :meth:`problem`'s other case).

        Stale: the watch has failed for :data:`STALE_AFTER_SECONDS` (``stale_after``) — since it
        failed; or nothing confirmed the resource for ``silent_after`` + ``stale_after`` (a watch
        whose silence was not noticed by its own read timeout) — since it was last confirmed."""
        if not self.synced:
            return None
        now = self._clock()
        for s in self._streams.values():
            if not s.counts:
                continue  # claims, or rules, unknown: only more permissive — answers about "ever" stand
            if s.failing_since is not None and now - s.failing_since >= self._stale_after:
                return s.resource.name, s.failing_since
            if s.last_contact is not None and now - s.last_contact >= self._silent_after + self._stale_after:
                return s.resource.name, s.last_contact
        return None

    def _since(self, moment: float) -> str:
        """``moment`` (this inventory's clock) as a UTC time of day: answers' warnings are cut at
        120 characters, and the time of day is what someone reading one live needs."""
        wall = time.time() - (self._clock() - moment)
        return time.strftime("%H:%M:%SZ", time.gmtime(wall))

    def problem(self) -> str | None:
        """Why satisfiability answers cannot be trusted right now (None when they can)."""
        if not self.synced:
            errors = [f"{s.resource.name}: {s.last_error}" for s in self._streams.values() if s.last_error]
            if self.fatal_error:
                errors.append(f"cannot watch: {self.fatal_error}")
            if self.build_error:
                errors.append(f"building the inventory failed: {self.build_error}")
            detail = f" ({'; '.join(errors)})" if errors else ""
            return f"inventory not synced with the API server yet{detail}"
        found = self.stale()
        if found is None:
            return None
        name, since = found
        stream = self._streams[name]
        what, why = ("failed", stream.last_error) if stream.last_error else ("went silent", "no event or bookmark")
        # the time and the resource first: a warning shows the first 120 characters
        return (f"inventory stale since {self._since(since)}: the {name} watch {what} "
                f"({why}; {self._clock() - since:.0f}s ago, {self.config.server})")

    def watch_health(self) -> dict[str, dict[str, Any]]:
        """Per resource: whether its watch is open, seconds since the API server last confirmed it
        (list, watch opened, event, bookmark; None before the first list), seconds it has been
        failing (None when it is not) and the last error — for ``/readyz`` and the metrics."""
        now = self._clock()
        return {
            name: {
                "connected": s.connected,
                "lastContactAgeSeconds": None if s.last_contact is None else round(max(0.0, now - s.last_contact), 3),
                "failingSeconds": None if s.failing_since is None else round(max(0.0, now - s.failing_since), 3),
                "error": s.last_error,
                "optional": bool(s.resource.held or s.resource.optional),
                **({"apiVersion": s.resource.api_version, "absent": s.absent or None} if s.resource.optional else {}),
            }
            for name, s in self._streams.items()
        }

    def findings(self) -> list[Finding]:
        """None: the API server decoded and validated every object it serves."""
        return []

    def objects(self) -> list[dict[str, Any]]:
        """All raw inventory objects currently in the store (a copy of the lists, not of the
        objects); claims and templates are kept reduced and are in the snapshot's ``cluster``."""
        return [o for s in self._streams.values() if not s.resource.held for o in list(s.objects.values())]

    def status(self) -> dict[str, Any]:
        return {
            "source": "kube",
            "synced": self.synced,
            "problem": self.problem(),
            "last_sync_age_seconds": self.last_sync_age(),
            "stale": self.stale() is not None,
            "staleAfterSeconds": self._stale_after,
            "watches": self.watch_health(),
            "restarts": self.restarts,
            "relists": self.relists,
            "objects": {name: len(s.objects) for name, s in self._streams.items()},
        }

    # ---------------------------------------------------------------- run
    async def run(self) -> None:
        """List+watch every resource and keep the snapshot current until cancelled."""
        self._dirty = asyncio.Event()
        self._devices_changed = asyncio.Event()
        try:
            client = make_client(self.config)
        except KubeError as exc:  # e.g. an unusable client certificate: nothing to retry
            self.fatal_error = str(exc)
            log.error(json.dumps({"msg": "cannot watch the API server", "error": self.fatal_error}))
            return
        async with client:
            tasks = [asyncio.create_task(self._reflect(client, s), name=f"watch-{n}")
                     for n, s in self._streams.items()]
            tasks.append(asyncio.create_task(self._rebuild_loop(), name="inventory-rebuild"))
            tasks.append(asyncio.create_task(self._watchdog(), name="inventory-watchdog"))
            await run_together(tasks)

    def _changed(self, stream: _Stream) -> None:
        if not stream.resource.held:
            self._devices_dirty = True
            if self._devices_changed is not None:
                self._devices_changed.set()
        if self._dirty is not None:
            self._dirty.set()

    async def _watchdog(self) -> None:
        """Log staleness the moment it starts and ends, and an API server that stays unreachable
        (not synced, or stale) once a minute: ``problem()`` is computed where it is read, so
        nothing else would say it until someone asks."""
        reported: str | None = None  # the kind of problem last logged: "stale" or "not synced"
        reported_at = 0.0
        while True:
            await asyncio.sleep(min(_WATCHDOG_TICK, self._stale_after / 4 or _WATCHDOG_TICK))
            problem = self.problem()
            now = self._clock()
            if problem is None:
                if reported is not None:
                    log.warning(json.dumps({"msg": "inventory current again", "after": reported,
                                            "server": self.config.server}))
                reported = None
                continue
            kind = "inventory stale" if self.synced else "inventory not synced"
            if kind == reported and now - reported_at < _REPORT_EVERY:
                continue
            if reported is None and not self.synced and not any(s.last_error for s in self._streams.values()):
                continue  # still listing for the first time, nothing failed: not a problem to log yet
            reported, reported_at = kind, now
            log.error(json.dumps({"msg": kind, "server": self.config.server, "problem": problem}))

    def _keep(self, stream: _Stream, key: str, obj: dict[str, Any]) -> None:
        """Store a listed or watched object: raw, or reduced for claims and templates."""
        held = stream.resource.held
        if not held:
            stream.objects[key] = stream.resource.keep(obj)
            return
        reduced: Any = self._reducer.claim(obj) if held == "claim" else self._reducer.template(obj)
        old = stream.objects.pop(key, None) if reduced is None else stream.objects.get(key)
        if reduced is not None:
            stream.objects[key] = reduced
        self._held_event(held, old, reduced)

    def _held_event(self, held: str, old: Any, new: Any) -> None:
        """A claim or template changed (``new`` None: gone): applied to the live claims at once,
        or kept for the full build under way."""
        if old is None and new is None:
            return
        if self._journal is not None:
            if len(self._journal) < _JOURNAL_MAX:
                self._journal.append((held, old, new))
            else:
                self._journal_broken = True
        elif self._live is not None:
            _replay(self._live, held, old, new)

    def _held_listed(self) -> None:
        """Claims or templates listed again (the set replaced wholesale): a full build is due."""
        self._live = None
        if self._journal is not None:
            self._journal_broken = True

    def _assemble(self, objects: list[dict[str, Any]] | None, held: list[tuple[str, list[Any]]] | None,
                  known: bool) -> tuple[Inventory, LiveClaims | None]:
        """A full build (in a worker thread): devices rebuilt only when ``objects`` (they changed)
        are given; every claim summed over them when ``held`` (the claim and template streams'
        objects, copied on the event loop) is given.  The live claims' first snapshot, with its
        held view, is made here so no review pays for it."""
        base = self._base
        if objects is not None or base is None:
            base = self._build(objects if objects is not None else self.objects())
        if held is None:
            return base, None  # claims not listed yet (or not watched): the cluster's claims are not known
        claims: dict[ObjectKey, HeldClaim] = {}
        templates: dict[ObjectKey, Any] = {}
        for kind, values in held:
            if kind == "claim":
                claims.update(((c.namespace, c.name), c) for c in values)
            else:
                templates.update(values)
        live = LiveClaims(base, claims, templates, known=known)
        live.snapshot()
        return base, live

    async def _full_build(self) -> Inventory:
        """Devices (when they changed) and every claim, in the worker thread; claim events that
        arrive meanwhile are journaled and applied to the result here, on the event loop."""
        objects = self.objects() if self._devices_dirty or self._base is None else None
        self._devices_dirty = False
        held_streams = [s for s in self._streams.values() if s.resource.held]
        held = [(s.resource.held, list(s.objects.values())) for s in held_streams] if any(s.listed for s in held_streams) else None
        self._journal, self._journal_broken = [], False
        try:
            base, live = await asyncio.to_thread(self._assemble, objects, held, self.claims_known)
        except BaseException:
            if objects is not None:
                self._devices_dirty = True
            raise
        finally:
            journal, self._journal = self._journal, None
        self._base = base
        if live is None:
            self._live = None
            return base
        if self._journal_broken:  # a relist or a flood meanwhile: publish this, build again
            self._live = None
            assert self._dirty is not None
            self._dirty.set()
            return live.snapshot()
        for held_kind, old, new in journal:
            _replay(live, held_kind, old, new)
        live.set_known(self.claims_known)
        self._live = live
        return live.snapshot()

    async def _rebuild_loop(self) -> None:
        assert self._dirty is not None
        while True:
            await self._dirty.wait()
            await asyncio.sleep(self._debounce)  # coalesce bursts of events into one build
            if self._claims_only():
                # Only claims changed (allocation churn): pace the publishes by their own cost so
                # that they never take more than about an eleventh of the process from the reviews
                # (they share the GIL), and by what a new snapshot costs its readers
                # (_CLAIMS_INTERVAL).  Allocations are "now" data behind a warning
                # (CapacityInUse), never behind a denial: seconds of lag are fine.  A device
                # event ends the wait at once: devices are behind denials, and are never paced.
                since = time.monotonic() - self._published_at
                wait = max(self._claims_pace - self._debounce, self._claims_interval - since)
                if wait > 0 and await self._devices_change_within(wait):
                    await asyncio.sleep(self._debounce)  # the rest of the device burst
            self._dirty.clear()
            complete = all(s.listed for s in self._streams.values() if not (s.resource.held or s.resource.optional))
            started = time.monotonic()
            copied = self._clock()  # the build copies the store's objects before it yields
            claims_only = self._claims_only()
            try:
                if claims_only:
                    snapshot = self._live.snapshot() if self._live is not None else self._base
                    assert snapshot is not None
                else:
                    snapshot = await self._full_build()
            except Exception as exc:  # a bad object must not kill the watcher
                self._live = None  # whatever failed, the next round builds everything again
                self.build_error = f"{type(exc).__name__}: {exc}"
                log.error(json.dumps({"msg": "inventory build failed", "error": self.build_error}))
                continue
            self.build_error = ""
            if claims_only:
                self._claims_pace = min(_CLAIMS_PACE_MAX, _CLAIMS_PACE_FACTOR * (time.monotonic() - started))
            self._snapshot = snapshot  # one reference assignment: readers see old or new
            self._published_at = time.monotonic()
            self._confirm_published(copied)
            self.builds += 1
            if complete:
                self._snapshot_complete = True

    async def _devices_change_within(self, seconds: float) -> bool:
        """Wait up to ``seconds``; True as soon as a device event arrives (or has arrived)."""
        event = self._devices_changed
        if event is None:
            await asyncio.sleep(seconds)
            return self._devices_dirty
        event.clear()
        if self._devices_dirty:
            return True
        try:
            await asyncio.wait_for(event.wait(), seconds)
        except TimeoutError:
            return False
        return True

    def _claims_only(self) -> bool:
        """Whether the next snapshot is only the live claims published again: the devices did not
        change, and the claims are either kept live or not listed at all."""
        if self._devices_dirty or self._base is None:
            return False
        return self._live is not None or not any(s.resource.held and s.listed for s in self._streams.values())

    async def _reflect(self, client: httpx.AsyncClient, stream: _Stream) -> None:
        backoff = Backoff(*self._backoff)

        async def failed(exc: Exception) -> None:
            stream.connected = False
            if isinstance(exc, _StaleResumeError):
                return  # list at once (_needs_list): the failure run goes on until that is published
            if stream.resource.optional and isinstance(exc, ApiError) and exc.status in _ABSENT_STATUSES:
                await self._not_readable(stream, exc)
                return
            self._note_failure(stream, exc)
            self.restarts += 1
            if isinstance(exc, (GoneError, MalformedWatchError)):
                stream.resource_version = None  # relist: our resume point is unusable
                self.relists += 1
                if isinstance(exc, GoneError):
                    return  # at once: the data is fine, only the resume point is gone
            if isinstance(exc, SilentWatchError):
                return  # cut for its silence (see _watch): make it again at once
            await asyncio.sleep(backoff.next_delay())

        await reflect(needs_list=lambda: self._needs_list(stream), list_once=lambda: self._list(client, stream),
                      watch_once=lambda: self._watch(client, stream, backoff), failed=failed, backoff=backoff)

    def _stale_stream(self, stream: _Stream) -> bool:
        """Whether this device resource's watch has failed for :data:`STALE_AFTER_SECONDS`."""
        return (stream.counts and stream.failing_since is not None
                and self._clock() - stream.failing_since >= self._stale_after)

    def _needs_list(self, stream: _Stream) -> bool:
        """List (rather than resume the watch) when there is no resume point — or when the watch
        failed for longer than the stale bound: only a list says what the API server holds *now*.
        An opened watch is no such proof (a restarted API server accepts the old resume point and
        answers ``410`` after; replayed events reach answers only with the next publish), and the
        picture must stay stale until what the list brought is published.  A failure healed
        within the bound resumes, as client-go's reflector does."""
        if stream.resource_version is None:
            return True
        if self._stale_stream(stream):
            stream.resource_version = None
            self.relists += 1
            return True
        return False

    def _confirm_published(self, copied: float) -> None:
        """A snapshot built from the objects as they were at ``copied`` is published: every stream
        confirmed by a list before that moment is current again."""
        for s in self._streams.values():
            if s.confirmed_at is not None and s.confirmed_at <= copied:
                s.confirmed_at = None
                s.failing_since = None
                s.last_error = ""

    async def _not_readable(self, stream: _Stream, exc: ApiError) -> None:
        """An optional resource answered ``404`` or ``403``: the next older version at once after a
        ``404``; else absent — its objects dropped (no rule known: only more permissive), said once,
        asked again after :attr:`_absent_retry` from the newest version."""
        versions = stream.base.versions() if stream.base is not None else (stream.resource,)
        stream.resource_version = None
        if exc.status == 404 and stream.version + 1 < len(versions):
            stream.version += 1
            stream.resource = versions[stream.version]
            return
        if exc.status == 404:
            why = f"not served (HTTP 404 at {', '.join(v.api_version for v in versions)})"
        else:
            why = f"not allowed (HTTP 403: the service account may not list and watch {stream.resource.name})"
        if why != stream.absent:  # once per cause, not once per attempt
            level = logging.WARNING if exc.status == 403 else logging.INFO
            log.log(level, json.dumps({"msg": f"{stream.resource.name} not read: none of them known, no device counts "
                                              "as tainted by one", "resource": stream.resource.name,
                                       "server": self.config.server, "why": why, "error": str(exc)}))
        stream.absent = why
        stream.failing_since = None
        stream.confirmed_at = None
        stream.last_error = ""
        stream.listed = False
        if stream.objects:
            stream.objects = {}
            self._changed(stream)  # the picture without them, at once
        stream.version = 0
        stream.resource = versions[0]
        await asyncio.sleep(self._absent_retry)

    def _note_failure(self, stream: _Stream, exc: BaseException) -> None:
        error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        silent = isinstance(exc, SilentWatchError)
        after_cut = stream.last_error.startswith(SilentWatchError.__name__)
        stream.last_error = error
        stream.confirmed_at = None  # failed again before the confirmation was published
        first = stream.failing_since is None
        if first:
            stream.failing_since = self._clock()
        # the first failure of a run of them is a warning — a silent watch cut is news only (a quiet
        # kind's watch is cut every WATCH_SILENT_SECONDS), and then the failure after it is the
        # warning; the watchdog reports one that lasts
        if silent:
            level = logging.INFO if first else logging.DEBUG
        else:
            level = logging.WARNING if first or after_cut else logging.DEBUG
        log.log(level, json.dumps({"msg": "watch restart", "resource": stream.resource.name,
                                   "server": self.config.server, "error": error}))

    def _note_contact(self, stream: _Stream) -> None:
        stream.last_contact = self._clock()
        if stream.failing_since is None:
            return
        if self._stale_stream(stream):
            # stale: current again once the picture with what the API server said is published
            if stream.confirmed_at is None:
                stream.confirmed_at = stream.last_contact
                self._changed(stream)
            return
        stream.failing_since = None
        stream.last_error = ""

    def _opened(self, stream: _Stream) -> None:
        if stream.confirmed_at is None and self._stale_stream(stream):  # not the watch from that list
            raise _StaleResumeError(f"{stream.resource.name}: stale, listing instead of resuming")
        stream.connected = True
        self._note_contact(stream)

    async def _list(self, client: httpx.AsyncClient, stream: _Stream) -> None:
        objects: dict[str, Any] = {}
        resource = stream.resource

        def keep(item: dict[str, Any]) -> None:
            resource.restore_kind(item)
            key = _object_key(item, held=bool(resource.held))
            if resource.held:
                reduced: Any = self._reducer.claim(item) if resource.held == "claim" else self._reducer.template(item)
                if reduced is not None:
                    objects[key] = reduced
            else:
                objects[key] = resource.keep(item)

        rv = await list_pages(client, resource.path, page_size=self._page_size, what=resource.name, keep=keep,
                              headers={"Accept": resource.accept(watch=False)})
        stream.objects = objects  # replace wholesale: deletions during a gap disappear too
        if resource.held:
            self._held_listed()
        stream.resource_version = rv
        stream.listed = True
        if stream.absent:
            log.info(json.dumps({"msg": f"{resource.name} read again", "resource": resource.name,
                                 "apiVersion": resource.api_version, "server": self.config.server}))
        stream.absent = ""
        self._note_contact(stream)
        self._changed(stream)

    async def _watch(self, client: httpx.AsyncClient, stream: _Stream, backoff: Backoff) -> None:
        """One watch until it ends; the read timeout is ``silent_after``: a watch that brings no
        byte for that long (a healthy one has a bookmark every minute) is cut as broken."""
        events = watch_events(client, stream.resource.path, resource_version=stream.resource_version,
                              timeout_seconds=self._watch_timeout, headers={"Accept": stream.resource.accept(watch=True)},
                              on_open=lambda: self._opened(stream), read_timeout=self._silent_after)
        try:
            async for event in events:
                self._apply(stream, event)
                backoff.reset()
        except httpx.ReadTimeout as exc:
            raise SilentWatchError(f"no event or bookmark for {self._silent_after:g}s") from exc
        finally:
            stream.connected = False

    def _apply(self, stream: _Stream, event: dict[str, Any]) -> None:
        etype = event["type"]
        obj = event["object"]
        rv = _object_rv(obj)
        if etype == "BOOKMARK":
            if rv:
                stream.resource_version = rv
            self._note_contact(stream)
            return
        key = _object_key(obj, held=bool(stream.resource.held))
        if etype in ("ADDED", "MODIFIED"):
            stream.resource.restore_kind(obj)
            self._keep(stream, key, obj)
        elif etype == "DELETED":
            old = stream.objects.pop(key, None)
            if stream.resource.held:
                self._held_event(stream.resource.held, old, None)
        else:
            raise MalformedWatchError(f"unknown watch event type {etype!r}")
        if rv:
            stream.resource_version = rv
        self._note_contact(stream)
        self._changed(stream)


def _replay(live: LiveClaims, held: str, old: Any, new: Any) -> None:
    """Apply one claim (:class:`HeldClaim`) or template (``(key, spec)``) event to ``live``: one
    store key is one (namespace, name), so ``old`` and ``new`` share it."""
    if held == "claim":
        if new is not None:
            live.put((new.namespace, new.name), new)
        else:
            live.delete((old.namespace, old.name))
    elif new is not None:
        live.put_template(*new)
    else:
        live.delete_template(old[0])
