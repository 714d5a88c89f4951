"""Read a cluster once, with the user's own credentials — for ``draguard explain`` and ``capacity``.

Why not the watcher: a command-line user is not the webhook's ServiceAccount.  They may read
their namespace's claims but not every namespace's, or slices but not Nodes; the answer must
still come, saying what could not be read and what that means ("claims of other namespaces not
readable: what they hold is not counted").  So every list here is tried once (paged, like
``kubectl get``), a 403 or 404 becomes a *gap* in the result instead of an error, and only a
cluster that cannot be reached at all fails the command.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..k8s import DraguardError
from .build import build_inventory
from .claims import ClaimReducer
from .cluster import HeldClaim, ObjectKey
from .held import with_cluster
from .kubeconfig import KubeConfig, KubeError, make_client
from .reflector import status_message
from .snapshot import Inventory

__all__ = ["ClusterRead", "ReadError", "read_cluster"]

_GROUP = "/apis/resource.k8s.io/v1"
_MAX_PAGES = 10_000


class ReadError(DraguardError):
    """The API server could not be reached, or refused the credentials outright."""


@dataclass
class ClusterRead:
    """What one read of the cluster gave: the snapshot (with claims), objects asked for by name,
    and the gaps (what could not be read, in words)."""

    inventory: Inventory
    objects: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    """(kind, namespace, name) → raw object fetched by name (the pod, its claims, templates)."""
    gaps: list[str] = field(default_factory=list)
    claims_scope: str = "all"
    """``all`` (every namespace's claims were read), ``namespace`` (only the asking namespace's), ``none``."""


class _Forbidden(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def _get(client: httpx.AsyncClient, path: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    try:
        resp = await client.get(path, params=dict(params or {}))
    except httpx.HTTPError as exc:
        raise ReadError(f"cannot reach the API server: {type(exc).__name__}: {exc}") from exc
    if resp.status_code == 401:
        raise ReadError(f"the API server refused the credentials: {status_message(resp)}")
    if resp.status_code in (403, 404):
        raise _Forbidden(resp.status_code, status_message(resp))
    if resp.status_code >= 300:
        raise ReadError(f"GET {path}: HTTP {resp.status_code}: {status_message(resp)}")
    try:
        body = resp.json()
    except ValueError as exc:
        raise ReadError(f"GET {path}: the answer is not JSON") from exc
    if not isinstance(body, dict):
        raise ReadError(f"GET {path}: the answer is not an object")
    return body


async def _list(client: httpx.AsyncClient, path: str, kind: str, api_version: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cont = ""
    for _ in range(_MAX_PAGES):
        params: dict[str, Any] = {"limit": 500}
        if cont:
            params["continue"] = cont
        body = await _get(client, path, params)
        for item in body.get("items") or []:
            if isinstance(item, dict):
                item.setdefault("kind", kind)
                item.setdefault("apiVersion", api_version)
                items.append(item)
        meta = body.get("metadata")
        cont = str(meta.get("continue") or "") if isinstance(meta, dict) else ""
        if not cont:
            break
    return items


async def _read(config: KubeConfig, namespace: str, named: Sequence[tuple[str, str, str]]) -> ClusterRead:
    try:
        client = make_client(config)
    except KubeError as exc:
        raise ReadError(str(exc)) from exc
    gaps: list[str] = []
    async with client:
        async def listed(path: str, kind: str, api_version: str, what: str) -> list[dict[str, Any]] | None:
            try:
                return await _list(client, path, kind, api_version)
            except _Forbidden as exc:
                gaps.append(f"{what} not readable ({exc.status}: {exc})")
                return None

        classes, slices, nodes = await asyncio.gather(
            listed(f"{_GROUP}/deviceclasses", "DeviceClass", "resource.k8s.io/v1", "DeviceClasses"),
            listed(f"{_GROUP}/resourceslices", "ResourceSlice", "resource.k8s.io/v1", "ResourceSlices"),
            listed("/api/v1/nodes", "Node", "v1", "Nodes"),
        )
        claims = await listed(f"{_GROUP}/resourceclaims", "ResourceClaim", "resource.k8s.io/v1",
                              "ResourceClaims of every namespace")
        scope = "all"
        if claims is None:
            claims = await listed(f"{_GROUP}/namespaces/{namespace}/resourceclaims", "ResourceClaim",
                                  "resource.k8s.io/v1", f"ResourceClaims of namespace {namespace}")
            scope = "namespace" if claims is not None else "none"
        templates = await listed(f"{_GROUP}/namespaces/{namespace}/resourceclaimtemplates", "ResourceClaimTemplate",
                                 "resource.k8s.io/v1", f"ResourceClaimTemplates of namespace {namespace}")
        objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        for kind, ns, name in named:
            path = _named_path(kind, ns, name)
            try:
                obj = await _get(client, path)
            except _Forbidden as exc:
                if exc.status == 403:
                    gaps.append(f"{kind} {ns}/{name} not readable ({exc})")
                continue
            objects[(kind, ns, name)] = obj
    reducer = ClaimReducer()
    held: dict[ObjectKey, HeldClaim] = {}
    for raw in claims or ():
        claim = reducer.claim(raw)
        if claim is not None:
            held[(claim.namespace, claim.name)] = claim
    specs: dict[ObjectKey, object] = {}
    for raw in templates or ():
        got = reducer.template(raw)
        if got is not None:
            specs[got[0]] = got[1]
    inventory = build_inventory([*(classes or ()), *(slices or ()), *(nodes or ())])
    inventory = with_cluster(inventory, held, specs, known=scope != "none")
    return ClusterRead(inventory, objects, gaps, scope)


def _named_path(kind: str, namespace: str, name: str) -> str:
    if kind == "Pod":
        return f"/api/v1/namespaces/{namespace}/pods/{name}"
    plural = {"ResourceClaim": "resourceclaims", "ResourceClaimTemplate": "resourceclaimtemplates"}[kind]
    return f"{_GROUP}/namespaces/{namespace}/{plural}/{name}"


def read_cluster(config: KubeConfig, *, namespace: str, named: Sequence[tuple[str, str, str]] = ()) -> ClusterRead:
    """Read classes, slices, nodes, claims (every namespace, else ``namespace``'s) and templates of
    ``namespace`` once, plus the objects ``named`` ((kind, namespace, name): Pod, ResourceClaim,
    ResourceClaimTemplate).  Raises :class:`ReadError` when the cluster cannot be read at all."""
    return asyncio.run(_read(config, namespace, named))
