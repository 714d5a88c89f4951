"""The grace period: a finding is published only after it has persisted for ``grace`` seconds.

Why: a driver's rolling update removes a node's ResourceSlices and publishes them again seconds
later; every template only that pool could serve is ``Unsatisfiable`` in between.  Publishing
that would flap reports, send Events and page someone for nothing.  A finding is *pending* from
the first pass that sees it; it is *published* once a pass still sees it ``grace`` seconds later;
it disappears at the first pass that no longer sees it (the object was fixed, deleted, or
became satisfiable — clearing early is never a false alarm).  Identities exclude the message:
"14 of 16 GPUs held" becoming "15 of 16" is the same finding, published with its newest text.

Findings already in the reports when a replica takes over the Lease are *seeded* as published:
a failover neither re-waits the grace period nor clears what the previous writer published.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .evaluate import AuditFinding

__all__ = ["GraceTracker"]


class GraceTracker:
    def __init__(self, grace_seconds: float) -> None:
        self.grace = grace_seconds
        self._first_seen: dict[tuple[str, ...], float] = {}

    def seed(self, found: Iterable[tuple[tuple[str, ...], float]], now: float) -> None:
        """Treat these (identity, first seen) as published already: found in the reports of a
        previous writer.  Their first-seen time is kept, so their results stay unchanged."""
        for ident, first_seen in found:
            self._first_seen.setdefault(ident, min(first_seen or now, now - self.grace))

    def update(self, findings: Iterable[AuditFinding], now: float) -> tuple[list[AuditFinding], int]:
        """(published findings, how many are still pending) after a pass that saw ``findings``."""
        current: dict[tuple[str, ...], AuditFinding] = {}
        for f in findings:
            current.setdefault(f.identity, f)
        self._first_seen = {i: self._first_seen.get(i, now) for i in current}
        published = [f for i, f in current.items() if now - self._first_seen[i] >= self.grace]
        return published, len(current) - len(published)

    def pending_since(self) -> dict[tuple[str, ...], float]:
        return dict(self._first_seen)

    def status(self) -> dict[str, Any]:
        return {"tracked": len(self._first_seen), "grace_seconds": self.grace}
