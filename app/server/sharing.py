"""Pods that share a claim, live (issue #37 item 1): the pods of the review's namespace that already
use a claim the reviewed pod names, while that claim is not allocated yet.

Why: a ResourceClaim named by several pods (``resourceClaimName``) is allocated once, for the first
of them the scheduler places, and then pins every other to the nodes its devices reach.  A pod
admitted while the claim is still unallocated and another pod that uses it already exists
(pending, or bound before the allocation reached the picture): when the two can use no common
node the claim's devices reach, whichever is placed first shuts the other out.  Which one that is
depends on the scheduler's queue, which the webhook does not see — so the answer is a warning
naming the claim and the other pod (:meth:`app.satisfy.joint.SharedClaims.versus`), never a
denial.  An allocated claim needs none of this: its node selector pins the pod already, and the
pod's own check reads it.

Where the other pods come from: the live inventory does not watch Pods (a cluster's pods are many
and change often; nothing else needs them), so the webhook LISTs the Pods of the review's own
namespace — only when the reviewed object names a claim by name that the picture holds
unallocated — and keeps those that name one of the same claims and have not ended.

Bounds, so that a flood of reviews never becomes a flood of LISTs:

* one page of at most :data:`LIST_LIMIT` pods (``fieldSelector`` leaves ended pods out), within
  :data:`LIST_TIMEOUT` and a share of the review's budget; at most :data:`MAX_PODS` pods handed
  to the review (the oldest first);
* one LIST in flight per namespace: reviews that arrive while it runs wait for it and share its
  answer (a pod stored after it started is missed by them — one whose own review overlapped
  theirs, whose order against them is no more known than theirs against each other).  A finished
  LIST is not kept for later reviews: a pod admitted a moment ago (``kubectl apply`` of two pods
  sends the second's review right after the first was stored) is seen only by a LIST made after
  it — a cache of even a second would hide exactly the pod that matters.

Anything that goes wrong (``403`` without the RBAC grant, a timeout, an API server away, no time
left) says nothing: the review goes on as before.  Tenancy: only the request's namespace is listed,
so no message names another namespace's pods.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from ..inventory import Inventory

__all__ = [
    "LIST_LIMIT",
    "LIST_TIMEOUT",
    "MAX_PODS",
    "Listed",
    "PodLister",
    "claims_by_name",
    "sharing_pods",
    "with_sharing_pods",
]

LIST_LIMIT = 500
"""Pods of one LIST page at most (one page is read: a namespace of more pods has some left unseen,
which only leaves a warning unsaid)."""
LIST_TIMEOUT = 0.5
"""Seconds one LIST may take at most (less when the review's budget has less left)."""
MAX_PODS = 8
"""Pods that use the claims handed to one review at most (each is checked as the reviewed pod is)."""
_MIN_SECONDS = 0.05
_NO_TIME = "no time left in the review"
_ENDED = "status.phase!=Succeeded,status.phase!=Failed"


@dataclass(frozen=True, slots=True)
class Listed:
    """What one LIST said: the namespace's pods that have not ended, trimmed, in creation order."""

    state: Literal["listed", "unknown"]
    pods: tuple[Mapping[str, Any], ...] = ()
    why: str = ""


@dataclass
class _Flight:
    """One LIST in progress: the reviews that arrive meanwhile wait on ``done`` and share ``result``."""

    done: threading.Event
    result: Listed | None = None


class PodLister:
    """One LIST of a namespace's pods at a time, shared by the reviews that wait for it (the module
    docstring says why nothing is cached past it).  Safe to call from the review threads at once."""

    def __init__(self, client: Callable[[], httpx.Client], *, timeout: float = LIST_TIMEOUT,
                 limit: int = LIST_LIMIT) -> None:
        self._client = client
        self._timeout = timeout
        self._limit = max(1, limit)
        self._lock = threading.Lock()
        self._flights: dict[str, _Flight] = {}
        self.lists = 0
        self.shared = 0

    def stats(self) -> dict[str, int]:
        """LISTs made, and answers shared with a review that waited for one in flight."""
        return {"lists": self.lists, "shared": self.shared}

    def pods(self, namespace: str, *, seconds: float | None = None) -> Listed:
        """The pods of ``namespace`` that have not ended (``seconds``: the most this call may take)."""
        limit = self._timeout if seconds is None else min(self._timeout, seconds)
        with self._lock:
            flight = self._flights.get(namespace)
            mine = flight is None
            if flight is None:
                flight = self._flights[namespace] = _Flight(threading.Event())
        if not mine:
            if limit <= 0 or not flight.done.wait(limit) or flight.result is None:
                return Listed("unknown", why="timeout")
            self.shared += 1
            return flight.result
        try:
            flight.result = self._list(namespace, limit)
            return flight.result
        finally:
            with self._lock:
                del self._flights[namespace]
            flight.done.set()

    def _list(self, namespace: str, seconds: float) -> Listed:
        if seconds < _MIN_SECONDS:
            return Listed("unknown", why=_NO_TIME)
        self.lists += 1
        try:
            response = self._client().get(f"/api/v1/namespaces/{namespace}/pods",
                                          params={"limit": str(self._limit), "fieldSelector": _ENDED},
                                          timeout=httpx.Timeout(seconds))
        except httpx.TimeoutException:
            return Listed("unknown", why="timeout")
        except Exception as exc:  # connection refused, TLS, a credential plugin that failed: not a fact
            return Listed("unknown", why=type(exc).__name__)
        if response.status_code != 200:
            return Listed("unknown", why="forbidden" if response.status_code == 403 else f"status {response.status_code}")
        try:
            body = response.json()
        except ValueError:
            return Listed("unknown", why="unreadable")
        items = body.get("items") if isinstance(body, Mapping) else None
        if not isinstance(items, list):
            return Listed("unknown", why="unreadable")
        return Listed("listed", tuple(_ordered(p for p in (_trimmed(i, namespace) for i in items) if p is not None)))


def _trimmed(item: Any, namespace: str) -> Mapping[str, Any] | None:
    """What the review reads of a listed pod (name, creation time, spec) — None for one that ended,
    is being deleted, or is not of the namespace asked."""
    if not isinstance(item, Mapping):
        return None
    meta, spec, status = item.get("metadata"), item.get("spec"), item.get("status")
    if not isinstance(meta, Mapping) or not isinstance(spec, Mapping):
        return None
    name = meta.get("name")
    if not isinstance(name, str) or not name or meta.get("namespace") != namespace or meta.get("deletionTimestamp"):
        return None
    if isinstance(status, Mapping) and status.get("phase") in ("Succeeded", "Failed"):
        return None
    created = meta.get("creationTimestamp")
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": created if isinstance(created, str) else ""},
            "spec": spec}


def _ordered(pods: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Oldest first (the scheduler's queue starts from creation order; RFC 3339 times sort as text)."""
    return sorted(pods, key=lambda p: (p["metadata"]["creationTimestamp"], p["metadata"]["name"]))


def claims_by_name(spec: Any) -> frozenset[str]:
    """The claims a pod spec names by ``resourceClaimName`` (one object shared by every pod naming it)."""
    entries = spec.get("resourceClaims") if isinstance(spec, Mapping) else None
    out: set[str] = set()
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, Mapping) and entry.get("resourceClaimTemplateName") is None:
            name = entry.get("resourceClaimName")
            if isinstance(name, str) and name:
                out.add(name)
    return frozenset(out)


def sharing_pods(pods: Sequence[Mapping[str, Any]], claims: frozenset[str], *, exclude: str = "",
                 limit: int = MAX_PODS) -> tuple[Mapping[str, Any], ...]:
    """The pods of ``pods`` that name one of ``claims`` by name, but not the one named ``exclude``
    (the reviewed pod itself), at most ``limit``, in the order given."""
    out: list[Mapping[str, Any]] = []
    for pod in pods:
        if len(out) >= limit:
            break
        if pod["metadata"]["name"] != exclude and claims_by_name(pod.get("spec")) & claims:
            out.append(pod)
    return tuple(out)


def with_sharing_pods(snapshot: Inventory, pods: tuple[Mapping[str, Any], ...]) -> Inventory:
    """``snapshot`` whose cluster also carries ``pods``, for one review (its held view carried over,
    as :func:`app.server.references.with_found` does)."""
    view = snapshot.held_view()
    out = dataclasses.replace(snapshot, cluster=dataclasses.replace(snapshot.cluster, sharing_pods=pods))
    object.__setattr__(out, "_held", view)  # Inventory.held_view()'s slot (as app.inventory.live does)
    return out
