"""The audit loop: one writer among replicas, a pass when the inventory or the audited objects
change (debounced) and on a period, findings published after the grace period.

Leadership is a ``coordination.k8s.io/v1`` Lease held for as long as the replica runs (renewed
every third of its duration); only the holder reviews and writes, so replicas neither duplicate
work nor fight over reports.  A replica that takes over reads the reports already there and
seeds the grace period with them (:mod:`.grace`): a rollout of the audit changes nothing.

Nothing new is published from an inventory that is not synced (or is stale): its answers would
be ``SatisfiabilityUnknown`` everywhere, and a partially listed inventory makes claims look
unsatisfiable.  Such a pass is skipped and counted; what was published stays.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...inventory import InventorySource, KubeConfig, make_client
from ...review import ReviewOptions
from ..kube_objects import ObjectApiError, ObjectClient
from ..lease import LeaseLock
from .evaluate import AuditEngine, AuditFinding
from .grace import GraceTracker
from .ratelimit import TokenBucket
from .reports import build_reports, report_identities, result_kind
from .watch import AuditObjects
from .writer import EventRecorder, ReportWriter

__all__ = ["AuditSettings", "Auditor"]

log = logging.getLogger("draguard.audit")


@dataclass(frozen=True)
class AuditSettings:
    """``serve --audit-*`` flags; tests use small values (seconds everywhere)."""

    period_seconds: float = 300.0
    grace_seconds: float = 120.0
    debounce_seconds: float = 5.0
    lease_namespace: str = "default"
    lease_name: str = "draguard-audit"
    lease_seconds: int = 30
    writes_per_second: float = 5.0
    write_burst: int = 20
    events: bool = True
    events_per_pass: int = 50
    poll_seconds: float = 0.2
    """How often the loop looks for a new inventory snapshot (a reference comparison)."""
    identity: str = ""


def default_identity() -> str:
    return os.environ.get("POD_NAME") or f"{socket.gethostname()}-{os.getpid()}"


class Auditor:
    """Runs for the life of the server (``run``); ``stats`` feeds /metrics."""

    def __init__(
        self,
        source: InventorySource,
        objects: AuditObjects,
        config: KubeConfig,
        settings: AuditSettings = AuditSettings(),
        *,
        options: ReviewOptions | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.source = source
        self.objects = objects
        self.config = config
        self.settings = settings
        self.identity = settings.identity or default_identity()
        self.engine = AuditEngine(options)
        self.tracker = GraceTracker(settings.grace_seconds)
        self._clock = clock
        self.leader = False
        self.passes: Counter[str] = Counter()
        self.published: list[AuditFinding] = []
        self.pending = 0
        self.last_pass_seconds = 0.0
        self.last_reviewed = 0
        self.last_audited = 0
        self.writer: ReportWriter | None = None
        self.events: EventRecorder | None = None
        self._last_snapshot: object = None
        self._last_version = -1
        self._last_pass = 0.0
        self._earliest_due: float | None = None
        self.wake = asyncio.Event()  # tests (and a future trigger) may ask for a pass now

    # ---------------------------------------------------------------- read side
    def stats(self) -> dict[str, Any]:
        by_reason: Counter[tuple[str, str]] = Counter()
        for f in self.published:
            by_reason[(f.reason, result_kind(f)[0])] += 1
        writes: Counter[tuple[str, str]] = Counter()
        for part in (self.writer, self.events):
            if part is not None:
                writes.update(part.counts)
        return {
            "leader": self.leader,
            "reports_enabled": bool(self.writer and self.writer.installed),
            "passes": dict(self.passes),
            "results": dict(by_reason),
            "pending": self.pending,
            "last_pass_seconds": self.last_pass_seconds,
            "reviewed": self.last_reviewed,
            "audited": self.last_audited,
            "writes": dict(writes),
        }

    def status(self) -> dict[str, Any]:
        return {"leader": self.leader, "objects": self.objects.status(), "published": len(self.published),
                "pending": self.pending, "reports": None if self.writer is None else self.writer.installed}

    # ---------------------------------------------------------------- run
    async def run(self) -> None:
        self.wake = asyncio.Event()
        watch = asyncio.create_task(self.objects.run(), name="audit-objects")
        s = self.settings
        bucket = TokenBucket(s.writes_per_second, s.write_burst)
        try:
            async with make_client(self.config) as client:
                api = ObjectClient(client)
                self.writer = ReportWriter(api, bucket)
                self.events = EventRecorder(api, bucket, instance=self.identity, per_pass=s.events_per_pass)
                lease = LeaseLock(api, s.lease_namespace, s.lease_name, self.identity,
                                  duration_seconds=s.lease_seconds)
                await self._lead_and_audit(lease)
        finally:
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)

    async def _lead_and_audit(self, lease: LeaseLock) -> None:
        renew_every = max(self.settings.lease_seconds / 3, 0.05)
        next_renew = 0.0
        try:
            while True:
                if time.monotonic() >= next_renew:
                    await self._renew(lease)
                    next_renew = time.monotonic() + renew_every
                if not self.leader:
                    await asyncio.sleep(renew_every)
                    continue
                if self._due():
                    await asyncio.sleep(self.settings.debounce_seconds)  # let a burst of changes settle
                    await self.run_pass()
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), timeout=min(self.settings.poll_seconds, renew_every))
        finally:
            if self.leader:
                with contextlib.suppress(Exception):
                    await asyncio.shield(lease.release())

    async def _renew(self, lease: LeaseLock) -> None:
        try:
            held = await lease.acquire()
        except (ObjectApiError, OSError, Exception) as exc:  # API down: keep the role until it is plainly lost
            log.warning(json.dumps({"msg": "audit: Lease not renewed", "error": f"{type(exc).__name__}: {exc}"}))
            return
        if held and not self.leader:
            log.info(json.dumps({"msg": "audit: this replica writes the reports", "identity": self.identity}))
            await self._take_over()
        elif not held and self.leader:
            log.info(json.dumps({"msg": "audit: another replica writes the reports now"}))
            self.tracker = GraceTracker(self.settings.grace_seconds)
            self.published = []
            if self.writer is not None:
                self.writer.forget()
        self.leader = held

    async def _take_over(self) -> None:
        """Read what a previous writer published: those findings are published already."""
        self._last_snapshot = None  # a pass now
        if self.writer is not None and await self.writer.discover():
            await self._read_existing()

    async def _read_existing(self) -> None:
        assert self.writer is not None
        try:
            existing = await self.writer.existing()
        except ObjectApiError as exc:
            log.warning(json.dumps({"msg": "audit: existing reports not read", "error": str(exc)}))
            return
        for report in existing.values():
            found = report_identities(report)
            self.tracker.seed(found, self._clock())
            if self.events is not None:
                self.events.announced(ident for ident, _ in found)

    def _due(self) -> bool:
        self.wake.clear()
        now = time.monotonic()
        return (
            self.source.snapshot() is not self._last_snapshot
            or self.objects.version != self._last_version
            or now - self._last_pass >= self.settings.period_seconds
            or (self._earliest_due is not None and self._clock() >= self._earliest_due)
        )

    async def run_pass(self) -> bool:
        """One pass; False when skipped (inventory or objects not synced)."""
        snapshot = self.source.snapshot()
        self._last_pass = time.monotonic()
        problem = self.source.problem()
        if not self.source.synced or problem or not self.objects.synced or snapshot is None:
            self.passes["skipped"] += 1
            self._last_snapshot = snapshot
            self._last_version = self.objects.version
            return False
        self._last_snapshot = snapshot
        self._last_version = self.objects.version
        self.objects.take_changes()
        started = time.perf_counter()
        result = await asyncio.to_thread(self.engine.evaluate, self.objects.objects(), snapshot)
        now = self._clock()
        published, self.pending = self.tracker.update(result.findings, now)
        first_seen = self.tracker.pending_since()
        pending_due = [t + self.settings.grace_seconds for i, t in first_seen.items()
                       if t + self.settings.grace_seconds > now]
        self._earliest_due = min(pending_due) if pending_due else None
        self.published = published
        self.last_reviewed, self.last_audited = result.reviewed, result.audited
        # Events first: a writer that stops between the two leaves a duplicate Event behind, never a
        # finding published without one (the next writer takes the reports as announced)
        if self.events is not None and self.settings.events:
            await self.events.record(published)
        if self.writer is not None:
            was = self.writer.installed
            if await self.writer.discover() and not was:
                await self._read_existing()  # the CRD appeared: adopt (or clear) what is there
            await self.writer.sync(build_reports(published, first_seen))
        self.last_pass_seconds = time.perf_counter() - started
        self.passes["done"] += 1
        return True
