"""Get, list, create, replace and delete single Kubernetes objects — the little REST the
self-managed certificate mode needs (its Secret, its Lease, its two webhook configurations) and
the audit writes (its Lease, PolicyReports, ClusterPolicyReports, Events).

Why not a client library: five verbs on a handful of kinds, over the same httpx client and credentials
the live inventory uses (:func:`app.inventory.kube.make_client`).  Updates are full ``PUT``\\ s
carrying the ``resourceVersion`` that was read, so a concurrent writer produces
:class:`Conflict` (HTTP 409) instead of a lost update; the caller re-reads and decides again.
"""

from __future__ import annotations

from typing import Any

import httpx

from ..inventory import status_message
from ..k8s import DraguardError

__all__ = ["Conflict", "NotFound", "ObjectApiError", "ObjectClient", "object_path"]

_PREFIXES = {
    "secrets": ("/api/v1", True),
    "leases": ("/apis/coordination.k8s.io/v1", True),
    "validatingwebhookconfigurations": ("/apis/admissionregistration.k8s.io/v1", False),
    "mutatingwebhookconfigurations": ("/apis/admissionregistration.k8s.io/v1", False),
    "policyreports": ("/apis/wgpolicyk8s.io/v1alpha2", True),
    "clusterpolicyreports": ("/apis/wgpolicyk8s.io/v1alpha2", False),
    "events": ("/api/v1", True),
}


class ObjectApiError(DraguardError):
    """The API server refused a request (status and its message)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class Conflict(ObjectApiError):
    """409: someone else wrote the object first (or it already exists)."""


class NotFound(ObjectApiError):
    """404 on a write or list: the object, or its whole API (a CRD not installed), is not there."""


def object_path(plural: str, namespace: str, name: str | None = None) -> str:
    """The URL path of a collection (``name=None``) or of one object; a namespaced collection
    with ``namespace=""`` is the one across all namespaces (for list)."""
    prefix, namespaced = _PREFIXES[plural]
    base = f"{prefix}/namespaces/{namespace}/{plural}" if namespaced and namespace else f"{prefix}/{plural}"
    return f"{base}/{name}" if name else base


def _raise(resp: httpx.Response) -> None:
    if resp.status_code < 300:
        return
    message = status_message(resp)
    if resp.status_code == 409:
        raise Conflict(409, message)
    if resp.status_code == 404:
        raise NotFound(404, message)
    raise ObjectApiError(resp.status_code, message)


def _json_object(resp: httpx.Response) -> dict[str, Any]:
    try:
        body = resp.json()
    except ValueError as exc:
        raise ObjectApiError(resp.status_code, "answer is not JSON") from exc
    if not isinstance(body, dict):
        raise ObjectApiError(resp.status_code, "answer is not a JSON object")
    return body


class ObjectClient:
    """Single-object verbs over an ``httpx.AsyncClient`` whose base URL is the API server."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def get(self, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
        """The object, or None when it does not exist."""
        resp = await self.client.get(object_path(plural, namespace, name))
        if resp.status_code == 404:
            return None
        _raise(resp)
        return _json_object(resp)

    async def create(self, plural: str, namespace: str, obj: dict[str, Any]) -> dict[str, Any]:
        resp = await self.client.post(object_path(plural, namespace), json=obj)
        _raise(resp)
        return _json_object(resp)

    async def replace(self, plural: str, namespace: str, obj: dict[str, Any]) -> dict[str, Any]:
        """PUT ``obj`` (with the ``resourceVersion`` it was read at); :class:`Conflict` on a race."""
        name = str(obj["metadata"]["name"])
        resp = await self.client.put(object_path(plural, namespace, name), json=obj)
        _raise(resp)
        return _json_object(resp)

    async def list(self, plural: str, namespace: str = "", *, label_selector: str = "") -> list[dict[str, Any]]:
        """The items of a collection (``namespace=""``: across all namespaces), one page of up to
        the server's default; :class:`NotFound` when the API itself is not served."""
        params = {"labelSelector": label_selector} if label_selector else None
        resp = await self.client.get(object_path(plural, namespace), params=params)
        _raise(resp)
        items = _json_object(resp).get("items")
        return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []

    async def delete(self, plural: str, namespace: str, name: str) -> bool:
        """Delete one object; False when it was already gone."""
        resp = await self.client.delete(object_path(plural, namespace, name))
        if resp.status_code == 404:
            return False
        _raise(resp)
        return True
