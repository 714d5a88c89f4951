"""Writes the audit's PolicyReports, ClusterPolicyReport and Events — only what changed, within
the token bucket, surviving the API server's refusals.

How each refusal is met:

* **CRD missing** (discovery of ``wgpolicyk8s.io/v1alpha2`` is 404, or a write to it is): reports
  are off — said once in the log — and Events and metrics carry on; discovery is asked again
  on every pass, so installing the CRD later turns reports on without a restart.
* **403** (RBAC): logged once per verb and kind, counted, not retried within the pass.
* **409**: someone else wrote the report (a previous writer, a human): re-read it, write ours
  over the version just read, once.
* **429 and 5xx**: retried with exponential backoff, a few times; then the report is left for
  the next pass (the writer remembers only what it *did* write, so it tries again).

Only draguard's own objects are touched: reports named ``draguard`` carrying the
``app.kubernetes.io/managed-by: draguard`` label.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeVar

import httpx

from ..kube_objects import Conflict, NotFound, ObjectApiError, ObjectClient
from .evaluate import AuditFinding
from .ratelimit import TokenBucket
from .reports import LABELS, MANAGED_BY, REPORT_NAME

__all__ = ["EventRecorder", "ReportWriter"]

log = logging.getLogger("draguard.audit")
T = TypeVar("T")

_GROUP_PATH = "/apis/wgpolicyk8s.io/v1alpha2"
_RETRIABLE = frozenset({429, 500, 502, 503, 504})


def _fingerprint(report: Mapping[str, Any]) -> str:
    body = {k: report.get(k) for k in ("summary", "results")}
    body["annotations"] = (report.get("metadata") or {}).get("annotations")
    return hashlib.blake2b(json.dumps(body, sort_keys=True).encode(), digest_size=16).hexdigest()


class _Api:
    """The shared part: token bucket, retries with backoff, 403s logged once, counters."""

    def __init__(self, api: ObjectClient, bucket: TokenBucket, *, retries: int = 4,
                 backoff: tuple[float, float] = (0.2, 5.0)) -> None:
        self.api = api
        self.bucket = bucket
        self.retries = retries
        self.backoff = backoff
        self.counts: Counter[tuple[str, str]] = Counter()  # (what, outcome)
        self._forbidden_logged: set[str] = set()

    async def call(self, what: str, fn: Callable[[], Awaitable[T]]) -> T:
        delay = self.backoff[0]
        for attempt in range(self.retries + 1):
            await self.bucket.take()
            try:
                out = await fn()
            except ObjectApiError as exc:
                if exc.status in _RETRIABLE and attempt < self.retries:
                    self.counts[(what, "retried")] += 1
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, self.backoff[1])
                    continue
                outcome = "forbidden" if exc.status == 403 else "conflict" if exc.status == 409 else (
                    "notfound" if exc.status == 404 else "failed")
                self.counts[(what, outcome)] += 1
                if exc.status == 403 and what not in self._forbidden_logged:
                    self._forbidden_logged.add(what)
                    log.warning(json.dumps({"msg": "audit write refused (RBAC?)", "what": what, "error": str(exc)}))
                raise
            except httpx.HTTPError as exc:
                if attempt < self.retries:
                    self.counts[(what, "retried")] += 1
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, self.backoff[1])
                    continue
                self.counts[(what, "failed")] += 1
                raise ObjectApiError(0, f"{type(exc).__name__}: {exc}") from exc
            self.counts[(what, "ok")] += 1
            return out
        raise AssertionError("unreachable")  # pragma: no cover


class ReportWriter:
    """Keeps the cluster's draguard reports equal to the desired ones."""

    def __init__(self, api: ObjectClient, bucket: TokenBucket, **retry: Any) -> None:
        self._api = _Api(api, bucket, **retry)
        self.client = api.client
        self.installed: bool | None = None  # None: not asked yet
        self._announced: bool | None = None
        self._written: dict[str, tuple[str, str]] = {}  # namespace → (fingerprint, resourceVersion)
        self.failures = 0

    @property
    def counts(self) -> Counter[tuple[str, str]]:
        return self._api.counts

    async def discover(self) -> bool:
        """Whether the PolicyReport API is served now (logged when that changes)."""
        try:
            resp = await self.client.get(_GROUP_PATH)
        except httpx.HTTPError as exc:
            log.warning(json.dumps({"msg": "audit: PolicyReport API discovery failed", "error": str(exc)}))
            return bool(self.installed)
        if resp.status_code == 404:
            self._set_installed(False)
        elif resp.status_code < 300:
            names = {r.get("name") for r in (resp.json().get("resources") or []) if isinstance(r, dict)}
            self._set_installed("policyreports" in names)
        return bool(self.installed)

    def _set_installed(self, installed: bool) -> None:
        if installed != self._announced:
            if installed:
                log.info(json.dumps({"msg": "audit: PolicyReport CRD found; publishing PolicyReports"}))
            else:
                log.warning(json.dumps({"msg": "audit: PolicyReport CRD (wgpolicyk8s.io/v1alpha2) not installed; "
                                               "publishing metrics and Events only"}))
            self._announced = installed
        if not installed:
            self._written.clear()
        self.installed = installed

    async def existing(self) -> dict[str, dict[str, Any]]:
        """draguard's reports as the API server holds them (namespace ``""``: the cluster report);
        remembered as written, so an unchanged desired report is not written again."""
        found: dict[str, dict[str, Any]] = {}
        selector = f"{MANAGED_BY}={LABELS[MANAGED_BY]}"
        for plural in ("policyreports", "clusterpolicyreports"):
            try:
                items = await self._api.call(f"list {plural}", lambda p=plural: self._api.api.list(  # type: ignore[misc]
                    p, "", label_selector=selector))
            except NotFound:
                self._set_installed(False)
                return {}
            for item in items:
                meta = item.get("metadata") or {}
                if meta.get("name") != REPORT_NAME:
                    continue
                ns = str(meta.get("namespace") or "") if plural == "policyreports" else ""
                found[ns] = item
                self._written[ns] = (_fingerprint(item), str(meta.get("resourceVersion") or ""))
        return found

    async def sync(self, desired: Mapping[str, dict[str, Any]]) -> None:
        """Create, replace or delete reports until the API server holds ``desired``."""
        if not self.installed:
            return
        for ns in sorted(desired.keys() | self._written.keys()):
            want = desired.get(ns)
            try:
                if want is None:
                    await self._delete(ns)
                elif self._written.get(ns, ("", ""))[0] != _fingerprint(want):
                    await self._put(ns, want)
            except NotFound:
                self._set_installed(False)  # the CRD went away under us
                return
            except ObjectApiError as exc:
                self.failures += 1
                log.warning(json.dumps({"msg": "audit: report not written; retried next pass",
                                        "namespace": ns, "error": str(exc)}))

    @staticmethod
    def _plural(ns: str) -> str:
        return "policyreports" if ns else "clusterpolicyreports"

    async def _delete(self, ns: str) -> None:
        plural = self._plural(ns)
        await self._api.call(f"delete {plural}", lambda: self._api.api.delete(plural, ns, REPORT_NAME))
        self._written.pop(ns, None)

    async def _put(self, ns: str, want: dict[str, Any]) -> None:
        plural = self._plural(ns)
        body = json.loads(json.dumps(want))
        rv = self._written.get(ns, ("", ""))[1]
        for _ in range(2):
            try:
                if rv:
                    body["metadata"]["resourceVersion"] = rv
                    stored = await self._api.call(f"update {plural}", lambda: self._api.api.replace(plural, ns, body))
                else:
                    body["metadata"].pop("resourceVersion", None)
                    stored = await self._api.call(f"create {plural}", lambda: self._api.api.create(plural, ns, body))
            except Conflict:
                current = await self._api.call(f"get {plural}", lambda: self._api.api.get(plural, ns, REPORT_NAME))
                rv = str((current or {}).get("metadata", {}).get("resourceVersion") or "")
                continue
            except NotFound:
                if rv:  # deleted by someone meanwhile: create it again
                    rv = ""
                    continue
                raise
            self._written[ns] = (_fingerprint(want), str(stored.get("metadata", {}).get("resourceVersion") or ""))
            return
        raise ObjectApiError(409, f"{plural} {ns or '(cluster)'}/{REPORT_NAME} kept changing under the writer")

    def forget(self) -> None:
        """Another replica writes now: what this one wrote may be replaced."""
        self._written.clear()


class EventRecorder:
    """One Warning Event per newly published finding, on its object; never the same twice while it
    stays published, at most ``per_pass`` per pass (the rest are counted as dropped)."""

    def __init__(self, api: ObjectClient, bucket: TokenBucket, *, instance: str, per_pass: int = 50,
                 clock: Callable[[], float] | None = None, **retry: Any) -> None:
        self._api = _Api(api, bucket, **retry)
        self.instance = instance
        self.per_pass = per_pass
        self._sent: set[tuple[str, ...]] = set()
        self._clock = clock or (lambda: dt.datetime.now(dt.UTC).timestamp())
        self.disabled = ""

    @property
    def counts(self) -> Counter[tuple[str, str]]:
        return self._api.counts

    def announced(self, identities: Iterable[tuple[str, ...]]) -> None:
        """Findings a previous writer published (and announced): no Event for them again."""
        self._sent.update(identities)

    async def record(self, published: list[AuditFinding]) -> None:
        current = {f.identity for f in published}
        self._sent &= current  # a finding that cleared may be announced again if it comes back
        new = [f for f in published if f.identity not in self._sent]
        for i, f in enumerate(new):
            if i >= self.per_pass or self.disabled:
                self._api.counts[("create events", "dropped")] += len(new) - i
                break
            ns = f.subject.namespace if f.subject.kind != "DeviceClass" else "default"
            try:
                await self._api.call("create events", lambda f=f, ns=ns: self._api.api.create(  # type: ignore[misc]
                    "events", ns, self._event(f, ns)))
            except ObjectApiError as exc:
                if exc.status == 403:
                    self.disabled = str(exc)  # RBAC says no: stop trying for this leadership
                continue
            self._sent.add(f.identity)

    def _event(self, f: AuditFinding, ns: str) -> dict[str, Any]:
        now = dt.datetime.fromtimestamp(self._clock(), dt.UTC)
        stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        digest = hashlib.blake2b(repr((f.identity, now.timestamp())).encode(), digest_size=6).hexdigest()
        s = f.subject
        involved: dict[str, Any] = {"apiVersion": s.api_version, "kind": s.kind, "name": s.name}
        if s.kind != "DeviceClass":
            involved["namespace"] = s.namespace
        if s.uid:
            involved["uid"] = s.uid
        return {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{s.name[:200]}.draguard-{digest}", "namespace": ns, "labels": dict(LABELS)},
            "involvedObject": involved,
            "reason": f.reason,
            "message": f.message[:1024],
            "type": "Warning",
            "action": "Audit",
            "source": {"component": "draguard-audit"},
            "reportingComponent": "draguard.dev/audit",
            "reportingInstance": self.instance[:128],
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }
