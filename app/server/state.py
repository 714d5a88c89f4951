"""Everything a running server holds: options, inventory source, TLS, limits, background work.

Why one object: ``create_app(state)`` is then the whole wiring — the CLI builds a state from
flags, tests build one directly (e.g. with a fake-API-backed inventory), and nothing is global.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from ..inventory import InventorySource, NoInventory
from ..review import ReviewOptions
from .answers import AnswerMemo
from .limits import ConnectionGuard
from .tls import CertReloader

__all__ = ["MAX_BODY_BYTES", "ServerState"]

MAX_BODY_BYTES = 3 * 1024 * 1024  # the API server's own request limit (3 MiB)

Background = Callable[[], Coroutine[Any, Any, None]]


@dataclass
class ServerState:
    """Server configuration plus the live parts (inventory source, certificate reloader)."""

    inventory: InventorySource = field(default_factory=NoInventory)
    options: ReviewOptions = field(default_factory=ReviewOptions)
    deadline_seconds: float = 2.0  # per admission request; below the webhook's timeoutSeconds (5)
    lint_deadline_seconds: float = 20.0
    max_body_bytes: int = MAX_BODY_BYTES
    lint_token: str | None = None
    lint_disabled: str | None = None
    """Why ``/lint`` answers 403 (a configured token file that does not exist), or None."""
    tls: CertReloader | None = None  # None: TLS terminated elsewhere (or a plain-HTTP test)
    workers: int = 8
    """Threads for admission reviews.  Each review stops at its own budget (``app.k8s.budget``),
    so a thread is never held past the review's deadline; enough of them that one client's
    expensive reviews cannot queue everybody else's behind them."""
    lint_workers: int = 1
    """Threads for ``/lint`` — its own pool: admission never waits behind a lint run."""
    lint_concurrency: int = 2
    """``/lint`` calls running or waiting at once; more are refused with 429 (Retry-After)."""
    background: list[Background] = field(default_factory=list)
    draining: bool = False  # set on SIGTERM: /readyz fails while the routes keep serving
    self_managed: Any = None  # SelfManagedCerts when --cert-secret is on (its status joins /readyz)
    audit: Any = None  # the Auditor when --audit is on (its status joins /readyz, its figures /metrics)
    cluster_target: Any = None
    """The ClusterTarget (app.inventory.clusterversion) when the target was read from the cluster:
    its version, gates and notice join /readyz and /metrics; None when the operator chose it."""
    guard: ConnectionGuard = field(default_factory=ConnectionGuard)
    """The HTTPS listener's connection limits; its refusal counts are exported as metrics."""
    answers: AnswerMemo = field(default_factory=AnswerMemo)
    """Remembered review answers, one per distinct object (``answers.py``); bounded."""

    @property
    def admission_options(self) -> ReviewOptions:
        """Webhook options: admission semantics, and a search deadline half the request's."""
        return dataclasses.replace(
            self.options,
            admission=True,
            deadline_seconds=self.options.deadline_seconds or self.deadline_seconds / 2,
        )

    @property
    def lint_options(self) -> ReviewOptions:
        return dataclasses.replace(
            self.options,
            admission=False,
            mutate=False,
            deadline_seconds=self.options.deadline_seconds or self.deadline_seconds / 2,
        )

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        """Ready once certificates are loaded and the inventory has synced once.

        A *stale* inventory after the first sync keeps the pod ready (it is reported here and
        reviews warn): pulling every replica out of the Service on an API-server hiccup would
        turn a ``failurePolicy: Fail`` webhook into an outage.
        """
        inventory = dict(self.inventory.status())
        inventory["problem"] = self.inventory.problem()
        certs: dict[str, Any] = self.tls.status() if self.tls else {"source": "external"}
        if self.self_managed is not None:
            certs["selfManaged"] = self.self_managed.status()
        ready = self.inventory.synced and (self.tls is None or self.tls.loaded) and not self.draining
        detail = {"ready": ready, "inventory": inventory, "certificate": certs, "target": self.target_status()}
        if self.audit is not None:
            detail["audit"] = self.audit.status()  # informative: the audit never makes a replica unready
        if self.draining:
            detail["shuttingDown"] = True  # SIGTERM: leave the Service first, then stop (drain.py)
        return ready, detail

    def target_status(self) -> dict[str, Any]:
        """The version and gates answers are given for, and where they come from."""
        if self.cluster_target is not None:
            status: dict[str, Any] = self.cluster_target.status()
            return status
        target = self.options.target
        return {"kubernetesVersion": target.version, "featureGates": target.gates_text(), "gatesFrom": "configured"}

    def stats(self) -> dict[str, Any]:
        """Figures for the metrics collector, read at scrape time."""
        snap = self.inventory.snapshot()
        out: dict[str, Any] = {
            "synced": self.inventory.synced,
            "devices": getattr(snap, "device_count", 0) if snap is not None else 0,
            "pools": getattr(snap, "pool_count", 0) if snap is not None else 0,
            "age": self.inventory.last_sync_age(),
            "restarts": getattr(self.inventory, "restarts", 0),
            **_watch_stats(self.inventory),
            "connections_refused": dict(self.guard.refused),
            "connections_idle_closed": self.guard.idle_closed,
            "answer_memo": self.answers.stats(),
            "stale_decisions": dict(self.answers.stale_decisions),
            "target": self.target_status(),
        }
        if self.tls is not None:
            out["cert_not_after"] = self.tls.not_after_ts
            out["cert_reloads"] = self.tls.reloads
            out["cert_reload_failures"] = dict(self.tls.failures)
            out["cert_expiring"] = self.tls.expiry_warning() is not None
        if self.audit is not None:
            out["audit"] = self.audit.stats()
        if self.self_managed is not None:
            out["selfcert_rotations"] = self.self_managed.rotations
            out["selfcert_errors"] = self.self_managed.errors
        return out


def _watch_stats(source: object) -> dict[str, Any]:
    """A live source's per-resource watch health and staleness (``KubeInventory.watch_health``,
    looked up through wrappers by their ``inner``); nothing for sources that do not watch."""
    for _ in range(4):
        health = getattr(source, "watch_health", None)
        if callable(health):
            stale = getattr(source, "stale", None)
            return {"watches": health(), "stale": bool(callable(stale) and stale() is not None)}
        source = getattr(source, "inner", None)
        if source is None:
            break
    return {}
