"""Where the page's picture comes from: files read once, or the cluster re-read with the user's
own credentials every couple of seconds.

Why a re-read rather than the webhook's watcher: the page runs as the *user*, who may list
claims of one namespace only, or slices but not Nodes.  :func:`~app.inventory.read_cluster` (the
one ``explain`` and ``capacity`` use) already turns each 403 into a gap and falls back from every
namespace's claims to the user's namespace's; the pending pods and the audit's PolicyReports are
read the same way here.  What is never read is never shown, so a name from a namespace the user
cannot read cannot reach the page.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..inventory import InputError, Inventory, StaticInventory, load_paths
from ..k8s import DEFAULT_TARGET, DraguardError, Target

__all__ = ["POLL_SECONDS", "ClusterSource", "FileSource", "Reading", "SourceError"]

POLL_SECONDS = 1.5
"""How often the cluster is re-read: "updates within a few seconds" with a poll and the page's own."""

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


class ClusterSource:
    """The cluster, re-read every :data:`POLL_SECONDS` with the user's kubeconfig.  The first read
    happens in the constructor, so a cluster that cannot be reached fails the command at once."""

    def __init__(self, config: Any, namespace: str, *, poll_seconds: float = POLL_SECONDS) -> None:
        self._config = config
        self._namespace = namespace
        self._poll = poll_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._reading = self._read()

    def current(self) -> Reading:
        return self._reading

    def _read(self) -> Reading:
        from ..inventory import ReadError, read_cluster

        try:
            read = read_cluster(self._config, namespace=self._namespace)
        except ReadError as exc:
            raise SourceError(str(exc)) from exc
        reading = Reading(read.inventory, self._namespace, read.claims_scope, gaps=list(read.gaps),
                          where=str(self._config.server))
        try:
            asyncio.run(self._read_more(reading))
        except (httpx.HTTPError, DraguardError) as exc:
            raise SourceError(f"cannot read Pods and PolicyReports: {exc}") from exc
        return reading

    async def _read_more(self, reading: Reading) -> None:
        """Pods (every namespace, else the user's) and the audit's reports, a 403 a gap."""
        from ..inventory import make_client

        async with make_client(self._config) as client:
            async def items(path: str) -> tuple[int, list[dict[str, Any]]]:
                try:
                    resp = await client.get(path, params={"limit": "5000"})
                except httpx.HTTPError:  # a network fault is a gap, not a crash
                    return 0, []
                if resp.status_code != 200:
                    return resp.status_code, []
                try:
                    body = resp.json()
                except ValueError:  # not JSON: nothing readable
                    return 0, []
                got = body.get("items") if isinstance(body, dict) else None
                return 200, [i for i in got or [] if isinstance(i, dict)]

            ns = self._namespace
            status, pods = await items("/api/v1/pods")
            if status != 200:
                status, pods = await items(f"/api/v1/namespaces/{ns}/pods")
                reading.gaps.append("Pods of every namespace not readable: only namespace "
                                    f"{ns}'s pods are shown" if status == 200 else f"Pods not readable ({status})")
            reading.pods = pods if status == 200 else []
            status, reports = await items(f"{_REPORTS}/policyreports")
            if status == 403:
                status, reports = await items(f"{_REPORTS}/namespaces/{ns}/policyreports")
            if status == 404:
                reading.reports_note = "the PolicyReport API (wgpolicyk8s.io/v1alpha2) is not installed"
                return
            if status != 200:
                reading.reports_note = f"PolicyReports not readable ({status})"
                return
            cstatus, cluster_reports = await items(f"{_REPORTS}/clusterpolicyreports")
            reading.reports = [*reports, *(cluster_reports if cstatus == 200 else [])]
            if cstatus != 200:
                reading.reports_note = f"ClusterPolicyReports not readable ({cstatus})"

    def start(self, on_change: Callable[[Reading], None]) -> None:
        """Re-read in a thread until :meth:`stop`; ``on_change`` gets every new reading (the
        page's view decides whether anything changed).  A failed read keeps the last picture and
        says so: the page shows it as stale rather than going blank."""

        def loop() -> None:
            while not self._stop.wait(self._poll):
                try:
                    reading = self._read()
                except Exception as exc:  # keep serving the last picture
                    last = self._reading
                    reading = Reading(last.inventory, last.namespace, last.scope, last.pods, last.claims_raw,
                                      last.reports, last.reports_note,
                                      [*(g for g in last.gaps if not g.startswith("stale:")),
                                       f"stale: the last read failed: {exc}"], last.where, last.at)
                self._reading = reading
                on_change(reading)

        self._thread = threading.Thread(target=loop, name="draguard-ui-poll", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
