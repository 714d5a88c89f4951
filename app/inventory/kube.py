"""Live inventory: list + watch DeviceClasses, ResourceSlices and Nodes from a Kubernetes API server.

Why a hand-written watcher on httpx rather than a client library: the webhook needs exactly
three cluster-scoped lists, must never block a review on the network, and must say precisely
how current its picture is (``synced``, age, restarts) so that an unsynced or stale inventory
turns into ``SatisfiabilityUnknown`` warnings instead of false rejections (DESIGN.md §1.3).

The loop per resource follows client-go's reflector: list (paged) → watch from the list's
``resourceVersion`` with ``allowWatchBookmarks`` → on a normal end, watch again from the last
version seen; on ``410 Gone`` (or a malformed stream) relist; on any other error back off with
jitter and retry.  Raw objects live in a store; after changes a debounced task rebuilds the
:class:`~app.inventory.Inventory` snapshot in a worker thread and swaps it in with one
assignment, so readers (review threads) always see a complete snapshot.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import os
import random
import ssl
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Generator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import yaml

if TYPE_CHECKING:
    from app.inventory import Inventory

__all__ = [
    "RESOURCES",
    "ApiError",
    "GoneError",
    "KubeConfig",
    "KubeConfigError",
    "KubeError",
    "KubeInventory",
    "MalformedWatchError",
    "Resource",
    "load_in_cluster",
    "load_kube_config",
]

log = logging.getLogger("draguard.inventory")

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


# ------------------------------------------------------------------ errors
class KubeError(Exception):
    """Anything that went wrong talking to the API server."""


class KubeConfigError(KubeError):
    """The connection settings (in-cluster environment or kubeconfig) are unusable."""


class ApiError(KubeError):
    """The API server answered with an error status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class GoneError(ApiError):
    """``410 Gone``: the resourceVersion we resume from is compacted away; relist."""

    def __init__(self, message: str = "resource version too old") -> None:
        super().__init__(410, message)


class MalformedWatchError(KubeError):
    """A watch event that is not a JSON watch event; the stream cannot be trusted, relist."""


# ------------------------------------------------------------------ resources
@dataclass(frozen=True)
class Resource:
    """One cluster-scoped list endpoint."""

    kind: str
    path: str  # e.g. /apis/resource.k8s.io/v1/resourceslices

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


RESOURCES: tuple[Resource, ...] = (
    Resource("DeviceClass", "/apis/resource.k8s.io/v1/deviceclasses"),
    Resource("ResourceSlice", "/apis/resource.k8s.io/v1/resourceslices"),
    Resource("Node", "/api/v1/nodes"),
)


# ------------------------------------------------------------------ connection settings
@dataclass(frozen=True)
class KubeConfig:
    """How to reach the API server: address, trust, and credentials."""

    server: str
    ca_pem: bytes | None = None
    insecure: bool = False
    token: str | None = None
    token_file: Path | None = None  # re-read per request: projected tokens rotate
    client_cert_pem: bytes | None = None
    client_key_pem: bytes | None = None

    def ssl_context(self) -> ssl.SSLContext | bool:
        """Trust the configured CA only (or the system store when none is given)."""
        if not self.server.startswith("https"):
            return False
        ctx = ssl.create_default_context()
        if self.ca_pem:
            ctx = ssl.create_default_context(cadata=self.ca_pem.decode("ascii"))
        if self.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.client_cert_pem and self.client_key_pem:
            _load_client_cert(ctx, self.client_cert_pem, self.client_key_pem)
        return ctx

    def bearer_token(self) -> str | None:
        if self.token_file is not None:
            try:
                return self.token_file.read_text().strip() or None
            except OSError as exc:
                raise KubeConfigError(f"cannot read token file {self.token_file}: {exc}") from exc
        return self.token


def _load_client_cert(ctx: ssl.SSLContext, cert_pem: bytes, key_pem: bytes) -> None:
    """``load_cert_chain`` wants files; write the PEMs to a private temp dir for the call."""
    with tempfile.TemporaryDirectory(prefix="draguard-kube-") as tmp:
        cert_path = Path(tmp) / "client.crt"
        key_path = Path(tmp) / "client.key"
        for path, data in ((cert_path, cert_pem), (key_path, key_pem)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        try:
            ctx.load_cert_chain(cert_path, key_path)
        except ssl.SSLError as exc:
            raise KubeConfigError(f"client certificate/key unusable: {exc}") from exc


def load_in_cluster(sa_dir: Path = SERVICE_ACCOUNT_DIR, environ: dict[str, str] | None = None) -> KubeConfig:
    """The pod's service account: ``KUBERNETES_SERVICE_HOST``/``PORT``, its token and CA."""
    env = os.environ if environ is None else environ
    host = env.get("KUBERNETES_SERVICE_HOST", "")
    port = env.get("KUBERNETES_SERVICE_PORT", "443")
    if not host:
        raise KubeConfigError("not running in a cluster: KUBERNETES_SERVICE_HOST is not set")
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # IPv6 service address
    token_file = sa_dir / "token"
    if not token_file.exists():
        raise KubeConfigError(f"service account token not found at {token_file}")
    try:
        ca = (sa_dir / "ca.crt").read_bytes()
    except OSError as exc:
        raise KubeConfigError(f"service account CA not readable: {exc}") from exc
    return KubeConfig(server=f"https://{host}:{port}", ca_pem=ca, token_file=token_file)


def _data_or_file(entry: dict[str, Any], key: str, base: Path) -> bytes | None:
    data = entry.get(f"{key}-data")
    if data:
        try:
            return base64.b64decode(data)
        except ValueError as exc:
            raise KubeConfigError(f"{key}-data is not base64") from exc
    path = entry.get(key)
    if path:
        p = Path(path).expanduser()
        if not p.is_absolute():
            p = base / p  # kubeconfig paths are relative to the kubeconfig file
        try:
            return p.read_bytes()
        except OSError as exc:
            raise KubeConfigError(f"cannot read {key} {p}: {exc}") from exc
    return None


def _named(items: Any, name: str, what: str) -> dict[str, Any]:
    for item in items or []:
        if isinstance(item, dict) and item.get("name") == name:
            value = item.get(what)
            return value if isinstance(value, dict) else {}
    raise KubeConfigError(f"kubeconfig has no {what} named {name!r}")


def load_kube_config(path: str | Path, context: str | None = None) -> KubeConfig:
    """A kubeconfig's current (or given) context: server, CA, token or client certificate."""
    path = Path(path).expanduser()
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise KubeConfigError(f"cannot read kubeconfig {path}: {exc}") from exc
    if not isinstance(doc, dict):
        raise KubeConfigError(f"kubeconfig {path} is not a mapping")
    ctx_name = context or doc.get("current-context")
    if not ctx_name:
        raise KubeConfigError(f"kubeconfig {path} has no current-context")
    ctx = _named(doc.get("contexts"), ctx_name, "context")
    cluster = _named(doc.get("clusters"), str(ctx.get("cluster", "")), "cluster")
    user = _named(doc.get("users"), str(ctx.get("user", "")), "user") if ctx.get("user") else {}
    server = str(cluster.get("server", "")).rstrip("/")
    if not server:
        raise KubeConfigError(f"cluster {ctx.get('cluster')!r} in {path} has no server")
    if "exec" in user or "auth-provider" in user:
        raise KubeConfigError("kubeconfig credential plugins (exec/auth-provider) are not supported; "
                              "use a token or a client certificate")
    base = path.parent
    token_file = user.get("tokenFile")
    return KubeConfig(
        server=server,
        ca_pem=_data_or_file(cluster, "certificate-authority", base),
        insecure=bool(cluster.get("insecure-skip-tls-verify", False)),
        token=user.get("token"),
        token_file=(base / token_file) if token_file and not user.get("token") else None,
        client_cert_pem=_data_or_file(user, "client-certificate", base),
        client_key_pem=_data_or_file(user, "client-key", base),
    )


class _BearerAuth(httpx.Auth):
    """Adds the token, read afresh for every request (bound service-account tokens rotate)."""

    def __init__(self, config: KubeConfig) -> None:
        self._config = config

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self._config.bearer_token()
        if token:
            request.headers["Authorization"] = f"Bearer {token}"
        yield request


def make_client(config: KubeConfig) -> httpx.AsyncClient:
    """An httpx client for ``config``; watches set their own read timeout."""
    return httpx.AsyncClient(
        base_url=config.server,
        verify=config.ssl_context(),
        auth=_BearerAuth(config),
        timeout=httpx.Timeout(30.0, connect=5.0),
        headers={"Accept": "application/json", "User-Agent": "draguard"},
        trust_env=False,
    )


# ------------------------------------------------------------------ backoff
@dataclass
class Backoff:
    """Exponential backoff with full jitter, so many replicas do not retry in lockstep."""

    initial: float = 0.5
    maximum: float = 30.0
    _attempt: int = 0

    def next_delay(self) -> float:
        cap = min(self.maximum, self.initial * (2**self._attempt))
        self._attempt = min(self._attempt + 1, 30)
        return random.uniform(cap / 2, cap)

    def reset(self) -> None:
        self._attempt = 0


# ------------------------------------------------------------------ per-resource state
@dataclass
class _Stream:
    """What one resource's reflector knows: objects, resume point, health."""

    resource: Resource
    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    resource_version: str | None = None
    listed: bool = False
    last_contact: float | None = None
    failing_since: float | None = None
    last_error: str = ""


def _object_key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        raise MalformedWatchError("object without metadata.name")
    return str(meta["name"])


def _object_rv(obj: dict[str, Any]) -> str | None:
    meta = obj.get("metadata")
    rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
    return str(rv) if rv else None


def _default_build(objects: Iterable[dict[str, Any]]) -> Inventory:
    from app.inventory import build_inventory

    return build_inventory(objects)


class KubeInventory:
    """A live, atomically swapped inventory snapshot fed by list+watch.

    ``run()`` is a coroutine meant to run for the life of the server; everything else is safe
    to call from other threads (it only reads attributes that are replaced, never mutated).
    """

    def __init__(
        self,
        config: KubeConfig,
        *,
        resources: tuple[Resource, ...] = RESOURCES,
        build: Callable[[Iterable[dict[str, Any]]], Inventory] = _default_build,
        debounce: float = 0.25,
        stale_after: float = 120.0,
        page_size: int = 500,
        watch_timeout: tuple[int, int] = (240, 300),
        backoff_initial: float = 0.5,
        backoff_max: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self._streams = {r.name: _Stream(r) for r in resources}
        self._build = build
        self._debounce = debounce
        self._stale_after = stale_after
        self._page_size = page_size
        self._watch_timeout = watch_timeout
        self._backoff = (backoff_initial, backoff_max)
        self._clock = clock
        self._snapshot: Inventory | None = None
        self._snapshot_complete = False  # built after every resource had listed once
        self._dirty: asyncio.Event | None = None
        self.restarts = 0
        self.relists = 0
        self.builds = 0
        self.build_error = ""
        self.fatal_error = ""

    # ---------------------------------------------------------------- read side
    @property
    def synced(self) -> bool:
        """True once every resource was listed and a snapshot including all of them exists."""
        return self._snapshot_complete

    def snapshot(self) -> Inventory | None:
        return self._snapshot

    def last_sync_age(self) -> float | None:
        """Seconds since the oldest of the per-resource confirmations (list, event, bookmark)."""
        contacts = [s.last_contact for s in self._streams.values()]
        if any(c is None for c in contacts):
            return None
        return max(0.0, self._clock() - min(c for c in contacts if c is not None))

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
        now = self._clock()
        for s in self._streams.values():
            if s.failing_since is not None and now - s.failing_since >= self._stale_after:
                return (
                    f"inventory may be stale: watching {s.resource.name} has failed for "
                    f"{now - s.failing_since:.0f}s ({s.last_error})"
                )
        return None

    def objects(self) -> list[dict[str, Any]]:
        """All raw objects currently in the store (a copy of the lists, not of the objects)."""
        return [o for s in self._streams.values() for o in list(s.objects.values())]

    def status(self) -> dict[str, Any]:
        return {
            "synced": self.synced,
            "problem": self.problem(),
            "last_sync_age_seconds": self.last_sync_age(),
            "restarts": self.restarts,
            "relists": self.relists,
            "objects": {name: len(s.objects) for name, s in self._streams.items()},
        }

    # ---------------------------------------------------------------- run
    async def run(self) -> None:
        """List+watch every resource and keep the snapshot current until cancelled."""
        self._dirty = asyncio.Event()
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
            try:
                await asyncio.gather(*tasks)
            finally:
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

    def _changed(self) -> None:
        if self._dirty is not None:
            self._dirty.set()

    async def _rebuild_loop(self) -> None:
        assert self._dirty is not None
        while True:
            await self._dirty.wait()
            await asyncio.sleep(self._debounce)  # coalesce bursts of events into one build
            self._dirty.clear()
            complete = all(s.listed for s in self._streams.values())
            objects = self.objects()
            try:
                snapshot = await asyncio.to_thread(self._build, objects)
            except Exception as exc:  # a bad object must not kill the watcher
                self.build_error = f"{type(exc).__name__}: {exc}"
                log.error(json.dumps({"msg": "inventory build failed", "error": self.build_error}))
                continue
            self.build_error = ""
            self._snapshot = snapshot  # one reference assignment: readers see old or new
            self.builds += 1
            if complete:
                self._snapshot_complete = True

    async def _reflect(self, client: httpx.AsyncClient, stream: _Stream) -> None:
        backoff = Backoff(*self._backoff)
        while True:
            try:
                if stream.resource_version is None:
                    await self._list(client, stream)
                    backoff.reset()
                await self._watch(client, stream, backoff)
                # a watch that ends normally (server timeout) resumes from the last version
            except asyncio.CancelledError:
                raise
            except (GoneError, MalformedWatchError) as exc:
                self._note_failure(stream, exc)
                stream.resource_version = None  # relist: our resume point is unusable
                self.relists += 1
                self.restarts += 1
                if isinstance(exc, MalformedWatchError):
                    await asyncio.sleep(backoff.next_delay())
            except Exception as exc:  # anything else: never let one odd response end the watch
                self._note_failure(stream, exc)
                self.restarts += 1
                await asyncio.sleep(backoff.next_delay())

    def _note_failure(self, stream: _Stream, exc: BaseException) -> None:
        stream.last_error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if stream.failing_since is None:
            stream.failing_since = self._clock()
        log.warning(json.dumps({"msg": "watch restart", "resource": stream.resource.name,
                                "error": stream.last_error}))

    def _note_contact(self, stream: _Stream) -> None:
        stream.last_contact = self._clock()
        stream.failing_since = None
        stream.last_error = ""

    async def _list(self, client: httpx.AsyncClient, stream: _Stream) -> None:
        objects: dict[str, dict[str, Any]] = {}
        cont: str | None = None
        rv: str | None = None
        for _ in range(100_000):  # bounded: 500 per page
            params: dict[str, str | int] = {"limit": self._page_size}
            if cont:
                params["continue"] = cont
            resp = await client.get(stream.resource.path, params=params)
            _raise_for_status(resp)
            body = resp.json()
            if not isinstance(body, dict) or not isinstance(body.get("items", []), list):
                raise MalformedWatchError(f"list of {stream.resource.name} is not a List")
            for item in body.get("items") or []:
                if isinstance(item, dict):
                    item.setdefault("kind", stream.resource.kind)
                    objects[_object_key(item)] = item
            meta = body.get("metadata") or {}
            rv = str(meta.get("resourceVersion") or "") or None
            cont = meta.get("continue") or None
            if not cont:
                break
        stream.objects = objects  # replace wholesale: deletions during a gap disappear too
        stream.resource_version = rv or "0"
        stream.listed = True
        self._note_contact(stream)
        self._changed()

    async def _watch(self, client: httpx.AsyncClient, stream: _Stream, backoff: Backoff) -> None:
        timeout = random.randint(*self._watch_timeout)
        params: dict[str, str | int] = {
            "watch": "true",
            "allowWatchBookmarks": "true",
            "resourceVersion": stream.resource_version or "0",
            "timeoutSeconds": timeout,
        }
        req_timeout = httpx.Timeout(connect=5.0, read=timeout + 30.0, write=10.0, pool=5.0)
        async with client.stream("GET", stream.resource.path, params=params, timeout=req_timeout) as resp:
            if resp.status_code != 200:
                await resp.aread()
                _raise_for_status(resp)
            self._note_contact(stream)
            async for event in _events(resp.aiter_lines()):
                self._apply(stream, event)
                backoff.reset()

    def _apply(self, stream: _Stream, event: dict[str, Any]) -> None:
        etype = event["type"]
        obj = event["object"]
        if etype == "ERROR":
            code = obj.get("code") if isinstance(obj, dict) else None
            message = str(obj.get("message", "")) if isinstance(obj, dict) else ""
            if code == 410 or (isinstance(obj, dict) and obj.get("reason") in ("Expired", "Gone")):
                raise GoneError(message or "resource version too old")
            raise ApiError(int(code) if isinstance(code, int) else 500, message or "watch error")
        rv = _object_rv(obj)
        if etype == "BOOKMARK":
            if rv:
                stream.resource_version = rv
            self._note_contact(stream)
            return
        key = _object_key(obj)
        if etype in ("ADDED", "MODIFIED"):
            obj.setdefault("kind", stream.resource.kind)
            stream.objects[key] = obj
        elif etype == "DELETED":
            stream.objects.pop(key, None)
        else:
            raise MalformedWatchError(f"unknown watch event type {etype!r}")
        if rv:
            stream.resource_version = rv
        self._note_contact(stream)
        self._changed()


def _raise_for_status(resp: httpx.Response) -> None:
    if resp.status_code < 300:
        return
    message = resp.reason_phrase
    with contextlib.suppress(ValueError, AttributeError):
        body = resp.json()
        if isinstance(body, dict) and body.get("message"):
            message = str(body["message"])
    if resp.status_code == 410:
        raise GoneError(message)
    raise ApiError(resp.status_code, message)


async def _events(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    """Watch events from a line-delimited JSON stream; anything else is a broken stream."""
    async for line in lines:
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError as exc:
            raise MalformedWatchError(f"watch event is not JSON: {line[:80]!r}") from exc
        if (
            not isinstance(event, dict)
            or not isinstance(event.get("type"), str)
            or not isinstance(event.get("object"), dict)
        ):
            raise MalformedWatchError(f"not a watch event: {line[:80]!r}")
        yield event
