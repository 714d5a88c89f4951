"""Live references are never a guess (issue #35): before the webhook says that a claim or template
a pod or workload names is missing, it asks the API server.

Why: the live picture (``serve --kube``) learns of a new ResourceClaimTemplate from its watch, and
its claims and templates are published at a pace (``app/inventory/kube.py``); ``kubectl apply -f``
of a template and the Deployment that uses it sends the Deployment's review a few milliseconds
after the template was stored — before its watch event arrived.  The review then said
``ReferenceNotFound … is in none of the cluster`` every time and, the template unread, checked
nothing else of the Deployment.  A GET of that one object reads the API server's own store, so
an object created earlier in the same apply is seen (read-your-writes), and the workload is
checked in full against it.

Bounds, so that a flood of reviews never becomes a flood of GETs:

* only a reference that is absent from a live picture that claims to be complete
  (``ClusterState.known``) is asked, at most :data:`MAX_ASKED` per review, each GET within
  :data:`LOOKUP_TIMEOUT` and within the review's own budget (never past its deadline);
* answers are cached in a small table (:data:`CACHE_ENTRIES`, least recently used out):
  found for :data:`FOUND_SECONDS`, absent for :data:`ABSENT_SECONDS` (an object created a moment
  later is seen soon), refused by RBAC for :data:`FOUND_SECONDS`, other failures for
  :data:`ABSENT_SECONDS`; concurrent reviews of one name wait for the one GET in flight.

Tenancy: only the review's own namespace is ever asked (the AdmissionRequest's ``namespace``), so
nothing of another namespace can reach an answer.  A GET that fails (``403`` without the RBAC
grant, a timeout, an API server away) leaves the answer as it was: the ``ReferenceNotFound``
warning — never a denial.  An answer that used a GET is never remembered by the answer memo
(``answers.py``): it depends on what the API server said just now, not on the snapshot.

The same review also asks for the pods of its namespace that already use a claim the object names
and the picture holds unallocated (issue #37: one of them may wait for the other;
:mod:`app.server.sharing` says how that LIST is bounded).
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from ..inventory import ClaimReducer, ClusterState, HeldClaim, Inventory, KubeConfig, ObjectKey
from ..k8s import (
    DRA_KINDS,
    ResourceClaimSpec,
    WorkloadKind,
    current_budget,
    equal,
    find_pod_templates,
    workload_kind_for,
)
from .sharing import PodLister, sharing_pods, with_sharing_pods

__all__ = [
    "ABSENT_SECONDS",
    "CACHE_ENTRIES",
    "FOUND_SECONDS",
    "LOOKUP_TIMEOUT",
    "MAX_ASKED",
    "PLURALS",
    "Fetched",
    "ReferenceLookup",
    "Resolved",
    "SourceLookups",
    "references_of",
    "resolve_references",
]

LOOKUP_TIMEOUT = 0.5
"""Seconds one GET may take at most (less when the review's budget has less left)."""
CACHE_ENTRIES = 256
"""Answers kept (one per claim or template asked), least recently used out."""
FOUND_SECONDS = 5.0
"""How long a found object (or a ``403``: RBAC changes slowly) is answered from the cache."""
ABSENT_SECONDS = 1.0
"""How long an absent object (or a failed GET) is: short, so an object created a moment later is seen."""
MAX_ASKED = 8
"""References asked per review at most; the rest keep the picture's answer."""
_MIN_SECONDS = 0.05
"""A GET is not started with less time than this left in the review's budget."""
_BUDGET_SHARE = 0.25
"""A GET takes at most this share of what is left of the review's budget."""
_NO_TIME = "no time left in the review"
PLURALS = {"claim": "resourceclaims", "template": "resourceclaimtemplates"}
_API = "/apis/resource.k8s.io/v1/namespaces"
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")

Which = Literal["claim", "template"]


@dataclass(frozen=True, slots=True)
class Fetched:
    """What the API server said about one claim or template."""

    state: Literal["found", "absent", "unknown"]
    claim: HeldClaim | None = None
    """A found ResourceClaim, reduced as the watch reduces it."""
    spec: ResourceClaimSpec | None = None
    """A found ResourceClaimTemplate's claim spec (None: unreadable, as in the picture)."""
    why: str = ""
    """Why the answer is unknown (``forbidden``, ``timeout``, the status)."""


class _Bearer(httpx.Auth):
    """The kubeconfig's token, read afresh per request; one retry with a fresh exec credential
    after a ``401`` (what the watch's client does, synchronously: GETs run in review threads)."""

    def __init__(self, config: KubeConfig) -> None:
        self._config = config

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self._config.bearer_token()
        if token:
            request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code == 401 and token and self._config.refreshable:
            fresh = self._config.bearer_token(rejected=token)
            if fresh and fresh != token:
                request.headers["Authorization"] = f"Bearer {fresh}"
                yield request


def _is_not_found_of(body: Any, name: str) -> bool:
    """A ``404`` about this very object (``details.name``), not about the resource not being served."""
    if not isinstance(body, Mapping) or body.get("reason") != "NotFound":
        return False
    details = body.get("details")
    return isinstance(details, Mapping) and details.get("name") == name


class ReferenceLookup:
    """Bounded, cached GETs of single ResourceClaims and ResourceClaimTemplates.

    Safe to call from the review threads at once: the cache is under a lock, one GET per name is
    in flight at a time, and the HTTP client (made on first use) is shared.
    """

    def __init__(
        self,
        config: KubeConfig,
        *,
        timeout: float = LOOKUP_TIMEOUT,
        entries: int = CACHE_ENTRIES,
        found_seconds: float = FOUND_SECONDS,
        absent_seconds: float = ABSENT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        client: httpx.Client | None = None,
    ) -> None:
        self.config = config
        self._timeout = timeout
        self._entries = max(1, entries)
        self._ttl = {"found": found_seconds, "absent": absent_seconds}
        self._clock = clock
        self._client = client
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str, str], tuple[float, Fetched]] = OrderedDict()
        self._inflight: dict[tuple[str, str, str], threading.Event] = {}
        self.gets = 0
        self.hits = 0
        self._pods: PodLister | None = None

    @property
    def pods(self) -> PodLister:
        """The LIST of a namespace's pods that share a claim with the reviewed object (``sharing.py``),
        on the same client."""
        if self._pods is None:
            with self._lock:
                if self._pods is None:
                    self._pods = PodLister(self._http)
        return self._pods

    def __len__(self) -> int:
        return len(self._cache)

    def stats(self) -> dict[str, int]:
        """Entries, GETs made and answers given from the cache."""
        return {"entries": len(self._cache), "gets": self.gets, "hits": self.hits}

    def get(self, which: Which, namespace: str, name: str, *, seconds: float | None = None) -> Fetched:
        """The API server's answer about ``which`` ``namespace``/``name``, from the cache while
        fresh; ``seconds``: the most this call may take (the review's budget)."""
        if not (_DNS_LABEL.match(namespace) and _DNS_SUBDOMAIN.match(name)):
            return Fetched("unknown", why="not a valid name")  # the API server refused the object already
        key = (which, namespace, name)
        limit = self._timeout if seconds is None else min(self._timeout, seconds)
        while True:
            with self._lock:
                cached = self._cached(key)
                if cached is not None:
                    self.hits += 1
                    return cached
                waiting = self._inflight.get(key)
                if waiting is None:
                    done = self._inflight[key] = threading.Event()
                    break
            if limit <= 0 or not waiting.wait(limit):  # the GET in flight did not end in time
                return Fetched("unknown", why="timeout")
            limit = 0.0  # answered now (or failed without an entry): one more look, no more waiting
        try:
            fetched = self._fetch(which, namespace, name, limit)
            if fetched.why != _NO_TIME:  # this review's own lack of time says nothing about the object
                with self._lock:
                    self._store(key, fetched)
            return fetched
        finally:
            with self._lock:
                del self._inflight[key]
            done.set()

    def _cached(self, key: tuple[str, str, str]) -> Fetched | None:
        entry = self._cache.get(key)
        if entry is None:
            return None
        if entry[0] <= self._clock():
            del self._cache[key]
            return None
        self._cache.move_to_end(key)
        return entry[1]

    def _store(self, key: tuple[str, str, str], fetched: Fetched) -> None:
        ttl = self._ttl["found" if fetched.state == "found" or fetched.why == "forbidden" else "absent"]
        self._cache[key] = (self._clock() + ttl, fetched)
        self._cache.move_to_end(key)
        while len(self._cache) > self._entries:
            self._cache.popitem(last=False)

    def _http(self) -> httpx.Client:
        client = self._client
        if client is None:
            config = self.config
            client = self._client = httpx.Client(
                base_url=config.server, verify=config.ssl_context(), auth=_Bearer(config),
                headers={"Accept": "application/json", "User-Agent": "draguard"}, trust_env=False,
                timeout=httpx.Timeout(self._timeout),
            )
        return client

    def _fetch(self, which: Which, namespace: str, name: str, seconds: float) -> Fetched:
        if seconds < _MIN_SECONDS:
            return Fetched("unknown", why=_NO_TIME)
        self.gets += 1
        try:
            response = self._http().get(f"{_API}/{namespace}/{PLURALS[which]}/{name}", timeout=httpx.Timeout(seconds))
        except httpx.TimeoutException:
            return Fetched("unknown", why="timeout")
        except Exception as exc:  # connection refused, TLS, a credential plugin that failed: not a fact
            return Fetched("unknown", why=type(exc).__name__)
        try:
            body = response.json()
        except ValueError:
            body = None
        status = response.status_code
        if status == 200 and isinstance(body, Mapping):
            return _found(which, body, namespace, name)
        if status == 404 and _is_not_found_of(body, name):
            return Fetched("absent")
        return Fetched("unknown", why="forbidden" if status == 403 else f"status {status}")

    def close(self) -> None:
        client = self._client
        if client is not None:
            client.close()


_REDUCER = ClaimReducer()


def _found(which: Which, body: Mapping[str, Any], namespace: str, name: str) -> Fetched:
    """The object reduced as the watch reduces it — only when it is the one asked for."""
    meta = body.get("metadata")
    if not isinstance(meta, Mapping) or meta.get("name") != name or meta.get("namespace") != namespace:
        return Fetched("unknown", why="another object answered")
    if which == "claim":
        claim = _REDUCER.claim(body)
        return Fetched("found", claim=claim) if claim is not None else Fetched("unknown", why="unreadable")
    got = _REDUCER.template(body)
    return Fetched("found", spec=got[1]) if got is not None else Fetched("unknown", why="unreadable")


class SourceLookups:
    """The server's one :class:`ReferenceLookup`, made for its inventory source's kubeconfig on first
    use (a source without one — files — has none); kept for the life of the server."""

    def __init__(self, factory: Callable[[KubeConfig], ReferenceLookup] = ReferenceLookup) -> None:
        self._factory = factory
        self._made: tuple[KubeConfig, ReferenceLookup] | None = None
        self._lock = threading.Lock()

    def for_source(self, source: object) -> ReferenceLookup | None:
        config = _config_of(source)
        if config is None:
            return None
        made = self._made
        if made is not None and made[0] is config:
            return made[1]
        with self._lock:
            if self._made is None or self._made[0] is not config:
                self._made = (config, self._factory(config))
            return self._made[1]


def _config_of(source: object) -> KubeConfig | None:
    """The kubeconfig of a live source (a wrapper such as ``WithPotential`` looked through by its ``inner``)."""
    for _ in range(4):
        config = getattr(source, "config", None)
        if isinstance(config, KubeConfig):
            return config
        source = getattr(source, "inner", None)
        if source is None:
            break
    return None


# ---------------------------------------------------------------------------- one review
def references_of(obj: Mapping[str, Any] | None, api_version: str, kind: str,
                  workload_kinds: Sequence[WorkloadKind]) -> list[tuple[Which, str]]:
    """The claims and templates the pod templates of ``obj`` name, each once, in order."""
    if obj is None or kind in DRA_KINDS:
        return []
    row = workload_kind_for(api_version, kind, workload_kinds)
    if row is None:
        return []
    out: list[tuple[Which, str]] = []
    for template in find_pod_templates(obj, row):
        spec = template.spec
        entries = spec.get("resourceClaims") if isinstance(spec, Mapping) else None
        for entry in entries if isinstance(entries, list) else ():
            if not isinstance(entry, Mapping):
                continue
            by_name, by_template = entry.get("resourceClaimName"), entry.get("resourceClaimTemplateName")
            ref: tuple[Which, str] | None = None
            if isinstance(by_name, str) and by_name and by_template is None:
                ref = ("claim", by_name)
            elif isinstance(by_template, str) and by_template and by_name is None:
                ref = ("template", by_template)
            if ref is not None and ref not in out:
                out.append(ref)
    return out


@dataclass(frozen=True, slots=True)
class Resolved:
    """The snapshot a review runs on, and what was asked to make it."""

    snapshot: Inventory | None
    asked: int = 0
    """References the API server was asked about (from the cache or not), plus 1 when the pods that
    share a claim with the object were (``sharing.py``): the answer is not the snapshot's alone."""
    found: int = 0


class _Over(Mapping[ObjectKey, Any]):
    """The picture's claims (or templates) with the few found by GET added."""

    __slots__ = ("_base", "_extra")

    def __init__(self, base: Mapping[ObjectKey, Any], extra: Mapping[ObjectKey, Any]) -> None:
        self._base, self._extra = base, extra

    def __getitem__(self, key: ObjectKey) -> Any:
        try:
            return self._base[key]
        except KeyError:
            return self._extra[key]

    def __iter__(self) -> Iterator[ObjectKey]:
        yield from self._base
        yield from (key for key in self._extra if key not in self._base)

    def __len__(self) -> int:
        return len(self._base) + sum(1 for key in self._extra if key not in self._base)


def with_found(snapshot: Inventory, claims: Mapping[ObjectKey, HeldClaim],
               templates: Mapping[ObjectKey, ResourceClaimSpec | None]) -> Inventory:
    """``snapshot`` whose cluster also holds ``claims`` and ``templates`` (found by GET), for one review.

    Everything else is the snapshot's own — devices, caches and its held view ("now"), which is
    carried over rather than made again (at 50,000 claims that is tenths of a second): a found
    claim's allocation is not taken away in it, as it would not be in the picture until its watch
    event arrives either.
    """
    state: ClusterState = snapshot.cluster
    cluster = dataclasses.replace(state, claims=_Over(state.claims, claims), templates=_Over(state.templates, templates))
    view = snapshot.held_view()
    out = dataclasses.replace(snapshot, cluster=cluster)
    object.__setattr__(out, "_held", view)  # Inventory.held_view()'s slot (as app.inventory.live does)
    return out


def _budget_left() -> float | None:
    budget = current_budget()
    return None if budget is None else budget.remaining() * _BUDGET_SHARE


def _templates_changed(obj: Mapping[str, Any] | None, old: Mapping[str, Any] | None, api_version: str, kind: str,
                       workload_kinds: Sequence[WorkloadKind]) -> bool:
    row = workload_kind_for(api_version, kind, workload_kinds)
    if row is None or obj is None or old is None:
        return True
    return not equal([t.spec for t in find_pod_templates(obj, row)], [t.spec for t in find_pod_templates(old, row)])


def resolve_references(
    lookup: ReferenceLookup | None,
    snapshot: Inventory | None,
    *,
    kind: str,
    api_version: str,
    operation: str,
    namespace: str,
    obj: Mapping[str, Any] | None,
    old_obj: Mapping[str, Any] | None,
    workload_kinds: Sequence[WorkloadKind],
) -> Resolved:
    """The snapshot to review a pod or workload on: ``snapshot`` itself, or — when a claim or
    template it names is absent from a complete live picture and the API server has it — the
    snapshot with that object added.  Only ``namespace`` (the request's) is ever asked."""
    if lookup is None or snapshot is None or not snapshot.cluster.known or not namespace or obj is None:
        return Resolved(snapshot)
    if operation not in ("CREATE", "UPDATE"):
        return Resolved(snapshot)
    meta = obj.get("metadata")
    own = meta.get("namespace") if isinstance(meta, Mapping) else None
    if own not in (None, "", namespace):
        return Resolved(snapshot)  # the API server refuses a namespace that is not the request's
    refs = references_of(obj, api_version, kind, workload_kinds)
    if not refs:
        return Resolved(snapshot)
    is_pod = kind == "Pod" and api_version == "v1"
    if operation == "UPDATE" and (is_pod or not _templates_changed(obj, old_obj, api_version, kind, workload_kinds)):
        return Resolved(snapshot)  # not reviewed again (``review_admission``): nothing to ask
    cluster = snapshot.cluster
    claims: dict[ObjectKey, HeldClaim] = {}
    templates: dict[ObjectKey, ResourceClaimSpec | None] = {}
    asked = 0
    for which, name in refs:
        key = (namespace, name)
        if key in (cluster.claims if which == "claim" else cluster.templates):
            continue
        if asked >= MAX_ASKED:
            break
        asked += 1
        fetched = lookup.get(which, namespace, name, seconds=_budget_left())
        if fetched.state != "found":
            continue
        if which == "claim" and fetched.claim is not None:
            claims[key] = fetched.claim
        elif which == "template":
            templates[key] = fetched.spec
    out = with_found(snapshot, claims, templates) if claims or templates else snapshot
    shared, out = _with_sharing_pods(lookup, out, namespace, obj, kind, api_version,
                                     [name for which, name in refs if which == "claim"])
    return Resolved(out, asked + shared, len(claims) + len(templates))


def _with_sharing_pods(lookup: ReferenceLookup, snapshot: Inventory, namespace: str, obj: Mapping[str, Any], kind: str,
                       api_version: str, named: Sequence[str]) -> tuple[int, Inventory]:
    """``snapshot`` with the pods of ``namespace`` that already use a claim the object names and the
    picture holds unallocated (``sharing.py``), and 1 when they were asked for — even when the LIST
    could not be made: the answer is then not to be remembered either, or an equal pod reviewed a
    moment later would get it without the question."""
    held = snapshot.cluster.claims
    unallocated = frozenset(name for name in named
                            if (claim := held.get((namespace, name))) is not None and claim.allocation is None)
    if not unallocated:
        return 0, snapshot
    listed = lookup.pods.pods(namespace, seconds=_budget_left())
    if listed.state != "listed":
        return 1, snapshot
    meta = obj.get("metadata")
    own = meta.get("name") if isinstance(meta, Mapping) and kind == "Pod" and api_version == "v1" else None
    pods = sharing_pods(listed.pods, unallocated, exclude=own if isinstance(own, str) else "")
    return 1, (with_sharing_pods(snapshot, pods) if pods else snapshot)
