"""Prometheus metrics on the app's own registry.

Why an own :class:`CollectorRegistry` per app: several apps (tests, the benchmark) live in one
process, and the global registry would refuse duplicate metric names.  Latency buckets start at
1 ms: webhook SLOs are alerted on p99 and a 5 s smallest bucket makes that impossible
(anchors §5 #12).  Inventory and certificate figures are read at scrape time from the live
objects, so they are never out of date and need no bookkeeping on the hot path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

__all__ = ["LATENCY_BUCKETS", "Metrics"]

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

StatsProbe = Callable[[], dict[str, Any]]


class _LiveCollector(Collector):
    """Gauges read from the inventory source and the certificate reloader on each scrape."""

    def __init__(self, probe: StatsProbe) -> None:
        self._probe = probe

    def describe(self) -> Iterator[Any]:
        """Nothing to pre-register; without this the registry would call ``collect`` (and the
        probe) while the app is being built."""
        return iter(())

    def collect(self) -> Iterator[Any]:
        s = self._probe()
        yield GaugeMetricFamily("draguard_inventory_synced", "1 once the inventory has been synced",
                                value=1.0 if s.get("synced") else 0.0)
        yield GaugeMetricFamily("draguard_inventory_devices", "devices in the current inventory snapshot",
                                value=float(s.get("devices", 0)))
        yield GaugeMetricFamily("draguard_inventory_pools", "pools in the current inventory snapshot",
                                value=float(s.get("pools", 0)))
        age = s.get("age")
        if age is not None:
            yield GaugeMetricFamily("draguard_inventory_age_seconds",
                                    "seconds since the inventory was last confirmed current", value=float(age))
        yield CounterMetricFamily("draguard_watch_restarts", "list/watch restarts after errors",
                                  value=float(s.get("restarts", 0)))
        if "cert_not_after" in s:
            yield GaugeMetricFamily("draguard_certificate_expiry_timestamp_seconds",
                                    "notAfter of the serving certificate", value=float(s["cert_not_after"]))
            yield CounterMetricFamily("draguard_certificate_reloads", "serving certificate reloads",
                                      value=float(s.get("cert_reloads", 0)))


class Metrics:
    """Request counters and latency histograms, plus the live gauges."""

    def __init__(self, probe: StatsProbe) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "draguard_requests",
            "requests by route, decision (allowed|denied|error) and reason",
            ["route", "decision", "reason"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "draguard_request_duration_seconds",
            "request latency by route (millisecond buckets)",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(_LiveCollector(probe))

    def observe(self, route: str, decision: str, reason: str, seconds: float) -> None:
        self.requests.labels(route, decision, reason or "none").inc()
        self.latency.labels(route).observe(seconds)

    def render(self) -> bytes:
        return bytes(generate_latest(self.registry))
