"""A ``coordination.k8s.io/v1`` Lease as a mutex: one replica at a time rotates the certificate.

Why a Lease: every replica checks the certificate, and two replicas renewing at once would each
write a different key pair and CA into the Secret and the webhooks' ``caBundle`` — the last
writer wins and the other replica serves a certificate nobody trusts.  The Lease is taken only
for the few seconds of a write (not a long-running leader election), with the same rules as
client-go's leader election: free when it has no holder or its ``renewTime`` +
``leaseDurationSeconds`` has passed; taken and released with ``resourceVersion``-checked
updates, so two replicas racing for it cannot both win.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable
from typing import Any

from .kube_objects import Conflict, ObjectClient

__all__ = ["LeaseLock", "micro_time", "parse_micro_time"]

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def micro_time(when: dt.datetime) -> str:
    """Kubernetes ``MicroTime``: RFC 3339 with microseconds, UTC."""
    return when.astimezone(dt.UTC).strftime(_FORMAT)


def parse_micro_time(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    for fmt in (_FORMAT, "%Y-%m-%dT%H:%M:%SZ"):
        try:
            return dt.datetime.strptime(value, fmt).replace(tzinfo=dt.UTC)
        except ValueError:
            continue
    return None


class LeaseLock:
    """Try-acquire / release of one named Lease; never blocks waiting for it."""

    def __init__(
        self,
        api: ObjectClient,
        namespace: str,
        name: str,
        identity: str,
        *,
        duration_seconds: int = 60,
        now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        self.api = api
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.duration_seconds = duration_seconds
        self._now = now

    def _held_by_other(self, spec: dict[str, Any]) -> bool:
        holder = spec.get("holderIdentity")
        if not holder or holder == self.identity:
            return False
        renewed = parse_micro_time(spec.get("renewTime")) or parse_micro_time(spec.get("acquireTime"))
        duration = spec.get("leaseDurationSeconds")
        if renewed is None or not isinstance(duration, int):
            return False  # a lease nobody can interpret is treated as expired
        return self._now() < renewed + dt.timedelta(seconds=duration)

    async def acquire(self) -> bool:
        """True when this replica now holds the Lease (created if missing)."""
        stamp = micro_time(self._now())
        spec = {"holderIdentity": self.identity, "leaseDurationSeconds": self.duration_seconds,
                "acquireTime": stamp, "renewTime": stamp}
        current = await self.api.get("leases", self.namespace, self.name)
        try:
            if current is None:
                await self.api.create("leases", self.namespace, {
                    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace}, "spec": spec,
                })
                return True
            found = current.get("spec")
            old: dict[str, Any] = found if isinstance(found, dict) else {}
            if self._held_by_other(old):
                return False
            transitions = old.get("leaseTransitions", 0) if isinstance(old.get("leaseTransitions"), int) else 0
            if old.get("holderIdentity") != self.identity:
                spec["leaseTransitions"] = transitions + 1
            current["spec"] = spec
            await self.api.replace("leases", self.namespace, current)
            return True
        except Conflict:
            return False  # another replica won the race

    async def release(self) -> None:
        """Give the Lease up (only if still ours), so another replica need not wait it out."""
        current = await self.api.get("leases", self.namespace, self.name)
        spec = current.get("spec") if current else None
        if current is None or not isinstance(spec, dict) or spec.get("holderIdentity") != self.identity:
            return
        spec["holderIdentity"] = None
        spec["leaseDurationSeconds"] = 1
        spec["renewTime"] = micro_time(self._now())
        with contextlib.suppress(Conflict):  # taken over meanwhile: nothing of ours to release
            await self.api.replace("leases", self.namespace, current)
