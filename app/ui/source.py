"""Where the page's picture comes from: files read once, or the cluster followed by list+watch
with the user's own credentials (:mod:`.follow`).

What is read, and what a refusal means, is what :func:`~app.inventory.read_cluster` (the one
``explain`` and ``capacity`` use) reads and means: DeviceClasses, ResourceSlices, Nodes (a 403 a
gap), the claims of every namespace else of the user's namespace (the tenant rule), the user's
namespace's templates; here also the Pods (every namespace, else the user's) and the audit's
PolicyReports.  What is never read is never shown, so a name from a namespace the user cannot read
cannot reach the page.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..inventory import (
    ClaimReducer,
    HeldClaim,
    InputError,
    Inventory,
    InventoryBuilder,
    KubeConfig,
    ObjectKey,
    StaticInventory,
    load_paths,
    with_cluster,
)
from ..k8s import DEFAULT_TARGET, DraguardError, Target
from .follow import Followed, Follower, Listing, Picture

__all__ = ["START_SECONDS", "ClusterSource", "FileSource", "Reading", "SourceError", "assemble", "cluster_resources"]

START_SECONDS = 30.0
"""Seconds ``draguard ui`` waits for the first list of every resource before it gives up."""

_GROUP = "/apis/resource.k8s.io/v1"
_REPORTS = "/apis/wgpolicyk8s.io/v1alpha2"


class SourceError(DraguardError):
    """The source cannot be read at all (files missing, API server unreachable at start-up)."""


@dataclass
class Reading:
    """One read of the source: the snapshot (with claims), the pods and reports the user may read."""

    inventory: Inventory
    namespace: str
    """The user's namespace (the context's, ``-n``, or ``default``)."""
    scope: str = "all"
    """Whose claims were read: ``all`` namespaces, the user's ``namespace`` only, or ``none``."""
    pods: list[dict[str, Any]] = field(default_factory=list)
    claims_raw: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    """Claims as written (files only): ``explain`` shows what the API server rejects of them."""
    reports: list[dict[str, Any]] | None = None
    """PolicyReports and ClusterPolicyReports read; None when there are none to read."""
    reports_note: str = ""
    gaps: list[str] = field(default_factory=list)
    where: str = ""
    """What was read, for the page's heading (``files: a, b`` or the API server's address)."""
    at: float = field(default_factory=time.time)


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


class FileSource:
    """DeviceClasses, ResourceSlices, Nodes, claims, pods and PolicyReports from files (a support
    ticket, the demo inventory), read once as ``capacity --inventory`` reads them."""

    def __init__(self, paths: Sequence[str], *, namespace: str = "default", target: Target = DEFAULT_TARGET) -> None:
        try:
            inventory = StaticInventory(list(paths), target=target).snapshot()
            documents = load_paths(list(paths)).documents
        except InputError as exc:
            raise SourceError(str(exc)) from exc
        if inventory is None:
            raise SourceError("the inventory files hold nothing")
        reading = Reading(inventory, namespace, where="files: " + ", ".join(paths))
        reports: list[dict[str, Any]] = []
        for doc in documents:
            obj = doc.obj
            if not isinstance(obj, dict):
                continue
            if doc.kind == "Pod":
                reading.pods.append(obj)
            elif doc.kind == "ResourceClaim":
                meta = _meta(obj)
                reading.claims_raw[(str(meta.get("namespace") or "default"), str(meta.get("name") or ""))] = obj
            elif doc.kind in ("PolicyReport", "ClusterPolicyReport"):
                reports.append(obj)
        reading.reports = reports or None
        reading.reports_note = "" if reports else "no PolicyReport in the files"
        self._reading = reading

    def current(self) -> Reading:
        return self._reading

    def start(self, on_change: Callable[[Reading], None]) -> None:
        """Files do not change under the page: nothing to poll."""

    def stop(self) -> None:
        """Nothing runs."""


# ------------------------------------------------------------------ the cluster
def _slim(obj: dict[str, Any]) -> dict[str, Any]:
    """The object without ``metadata.managedFields`` (often more than the rest of it)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        obj["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return obj


def _slim_node(obj: dict[str, Any]) -> dict[str, Any]:
    """What the inventory reads of a Node: its metadata, taints and cordon, and its allocatable
    amounts (a device plugin's resource) — not its images and conditions (tens of KiB)."""
    out: dict[str, Any] = {k: obj[k] for k in ("kind", "apiVersion") if k in obj}
    out["metadata"] = _slim(obj).get("metadata", {})
    spec = obj.get("spec")
    if isinstance(spec, dict):
        out["spec"] = {k: spec[k] for k in ("taints", "unschedulable") if k in spec}
    status = obj.get("status")
    if isinstance(status, dict) and "allocatable" in status:
        out["status"] = {"allocatable": status["allocatable"]}
    return out


def _dra_pod(obj: dict[str, Any]) -> dict[str, Any] | None:
    """A Pod that names claims (the only ones the page explains); others are not kept.  A pod's
    ``spec.resourceClaims`` never changes, so a pod is kept for its whole life or never."""
    spec = obj.get("spec")
    return _slim(obj) if isinstance(spec, dict) and spec.get("resourceClaims") else None


def _draguard_results(obj: dict[str, Any]) -> dict[str, Any]:
    """A PolicyReport with draguard's results only (the page shows no other source's)."""
    results = obj.get("results")
    kept = [r for r in results if isinstance(r, dict) and r.get("source") == "draguard"] if isinstance(results, list) else []
    return {**_slim(obj), "results": kept}


def cluster_resources(namespace: str, reducer: ClaimReducer) -> tuple[Followed, ...]:
    """What the page reads of the cluster as ``namespace``'s user, in the order gaps are listed."""
    rg, ns = "resource.k8s.io/v1", namespace
    return (
        Followed("deviceclasses", "DeviceClasses", "DeviceClass", rg, (f"{_GROUP}/deviceclasses",), _slim),
        Followed("resourceslices", "ResourceSlices", "ResourceSlice", rg, (f"{_GROUP}/resourceslices",), _slim),
        Followed("nodes", "Nodes", "Node", "v1", ("/api/v1/nodes",), _slim_node),
        Followed("resourceclaims", "ResourceClaims", "ResourceClaim", rg,
                 (f"{_GROUP}/resourceclaims", f"{_GROUP}/namespaces/{ns}/resourceclaims"), reducer.claim),
        Followed("resourceclaimtemplates", "ResourceClaimTemplates", "ResourceClaimTemplate", rg,
                 (f"{_GROUP}/namespaces/{ns}/resourceclaimtemplates",), reducer.template),
        Followed("pods", "Pods", "Pod", "v1", ("/api/v1/pods", f"/api/v1/namespaces/{ns}/pods"), _dra_pod),
        Followed("policyreports", "PolicyReports", "PolicyReport", "wgpolicyk8s.io/v1alpha2",
                 (f"{_REPORTS}/policyreports", f"{_REPORTS}/namespaces/{ns}/policyreports"), _draguard_results,
                 fallback_on=frozenset({403})),
        Followed("clusterpolicyreports", "ClusterPolicyReports", "ClusterPolicyReport", "wgpolicyk8s.io/v1alpha2",
                 (f"{_REPORTS}/clusterpolicyreports",), _draguard_results),
    )


_SCOPES = {0: "all", 1: "namespace"}


def _refused_gaps(listing: Listing, whats: Sequence[str]) -> list[str]:
    """``read_cluster``'s words for each path refused: ``<what> not readable (<status>: <message>)``."""
    return [f"{what} not readable ({status}: {message})" for (status, message), what in zip(listing.refused, whats, strict=False)]


def _last_status(listing: Listing) -> int:
    return listing.refused[-1][0] if listing.refused else 0


def assemble(picture: Picture, namespace: str, where: str, builder: InventoryBuilder) -> Reading:
    """The :class:`Reading` of one picture, with the gaps and notes a one-shot read gives."""
    got, ns = picture.listings, namespace
    gaps: list[str] = []
    for name, what in (("deviceclasses", "DeviceClasses"), ("resourceslices", "ResourceSlices"), ("nodes", "Nodes")):
        gaps += _refused_gaps(got[name], [what])
    claims = got["resourceclaims"]
    gaps += _refused_gaps(claims, ["ResourceClaims of every namespace", f"ResourceClaims of namespace {ns}"])
    scope = "none" if claims.path is None else _SCOPES[claims.path]
    gaps += _refused_gaps(got["resourceclaimtemplates"], [f"ResourceClaimTemplates of namespace {ns}"])
    pods = got["pods"]
    if pods.path == 1:
        gaps.append(f"Pods of every namespace not readable: only namespace {ns}'s pods are shown")
    elif pods.path is None:
        gaps.append(f"Pods not readable ({_last_status(pods)})")
    if picture.stale:
        gaps.append(picture.stale)
    inventory = builder.build([*got["deviceclasses"].values, *got["resourceslices"].values, *got["nodes"].values])
    held: dict[ObjectKey, HeldClaim] = {(c.namespace, c.name): c for c in claims.values}
    templates: dict[ObjectKey, object] = dict(got["resourceclaimtemplates"].values)
    inventory = with_cluster(inventory, held, templates, known=scope != "none")
    reading = Reading(inventory, ns, scope, pods=list(pods.values), gaps=gaps, where=where, at=picture.at)
    reports, cluster_reports = got["policyreports"], got["clusterpolicyreports"]
    if reports.path is None:
        status = _last_status(reports)
        reading.reports_note = ("the PolicyReport API (wgpolicyk8s.io/v1alpha2) is not installed" if status == 404
                                else f"PolicyReports not readable ({status})")
    else:
        reading.reports = [*reports.values, *(cluster_reports.values if cluster_reports.path is not None else ())]
        if cluster_reports.path is None:
            reading.reports_note = f"ClusterPolicyReports not readable ({_last_status(cluster_reports)})"
    return reading


class ClusterSource:
    """The cluster, followed by list+watch (:class:`~.follow.Follower`) in a thread of its own with
    the user's kubeconfig.  The constructor waits for the first list of every resource, so a
    cluster that cannot be reached fails the command at once; from then on each change (debounced)
    makes a new :class:`Reading`, and a watch that stays broken one that says the picture is stale
    (the last one kept, never a blank page) until it is back."""

    def __init__(self, config: KubeConfig, namespace: str, *, target: Target = DEFAULT_TARGET,
                 start_seconds: float = START_SECONDS, **follow: Any) -> None:
        self._namespace = namespace
        self._where = str(config.server)
        self._builder = InventoryBuilder(target=target)
        self._on_change: Callable[[Reading], None] | None = None
        self._reading: Reading | None = None
        self._handed: Reading | None = None
        self.follower = Follower(config, cluster_resources(namespace, ClaimReducer()), publish=self._publish, **follow)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name="draguard-ui-watch", daemon=True)
        self._thread.start()
        if not self.follower.ready.wait(start_seconds):
            problem = self.follower.problem() or "no answer"
            self.stop()
            raise SourceError(f"the API server did not answer every list within {start_seconds:g}s ({problem})")
        if self.follower.start_error or self._reading is None:
            self.stop()
            raise SourceError(self.follower.start_error or "the cluster could not be read")

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
            self._started.set()
            await self.follower.run()

        try:
            with contextlib.suppress(asyncio.CancelledError):  # stop()
                asyncio.run(main())
        finally:
            self._started.set()
            self.follower.ready.set()  # nobody waits for a follower that ended

    def _publish(self, picture: Picture) -> None:
        """A new picture (in a worker thread): its reading, handed to the page."""
        reading = assemble(picture, self._namespace, self._where, self._builder)
        self._reading = reading
        on_change = self._on_change
        if on_change is not None:
            self._handed = reading
            on_change(reading)

    def current(self) -> Reading:
        assert self._reading is not None  # the constructor waited for the first one
        self._handed = self._reading
        return self._reading

    def start(self, on_change: Callable[[Reading], None]) -> None:
        """Hand every new reading to ``on_change`` (in the watcher's worker thread), and at once
        one that came since :meth:`current`."""
        self._on_change = on_change
        reading = self._reading
        if reading is not None and reading is not self._handed:
            self._handed = reading
            on_change(reading)

    def stop(self) -> None:
        self._started.wait(5)
        loop, task = self._loop, self._task
        if loop is not None and task is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(task.cancel)
        self._thread.join(timeout=10)



