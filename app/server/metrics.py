"""Prometheus metrics on the app's own registry.

Why an own :class:`CollectorRegistry` per app: several apps (tests, the benchmark) live in one
process, and the global registry would refuse duplicate metric names.  Latency is in seconds
(the Prometheus base unit) with buckets from 1 ms to 5 s: webhook SLOs are alerted on p99 and a
5 s smallest bucket makes that impossible.  Inventory and certificate figures
are read at scrape time from the live objects, so they are never out of date and need no
bookkeeping on the hot path.

Series, and why they are split the way they are:

* ``draguard_requests_total{route,decision,reason}``: admission reviews only (``validate``,
  ``mutate``); ``decision`` is what the API server was told (allowed|denied) or ``error`` for a
  request that was not an answerable review.
* ``draguard_lint_requests_total{outcome}``: ``/lint`` calls.  A lint report is not an admission
  decision, so it is not labelled allowed/denied: ``clean``, ``errors`` (the report has errors),
  or the HTTP error reason when no report was produced.
* ``draguard_fail_open_total{route,reason}``: reviews *allowed because draguard could not
  decide* — ``Timeout`` (the request deadline passed), ``InternalError`` (a bug in a check) and
  ``SearchDeadline`` (the satisfiability search exhausted its time budget).  These are the
  reviews a ``failurePolicy: Fail`` operator must watch: each is a claim let through unchecked.

* ``draguard_connections_refused_total{reason}``: connections the protocol guard
  (:mod:`app.server.limits`) refused before the app saw them — read from the guard at scrape time.

* Live inventory freshness (README "Live inventory: how fresh, and what happens when it is not"):
  ``draguard_inventory_stale`` (1 while no denial is made from the picture),
  ``draguard_watch_connected{resource}``, ``draguard_watch_last_contact_age_seconds{resource}``
  (since the last list, watch start, event or bookmark: a healthy quiet watch has a bookmark
  about every minute) and ``draguard_stale_decisions_total{decision,reason}`` (``/validate``
  answers made while stale; ``decision="denied",reason="Unsatisfiable"`` must stay 0).

* ``draguard_target_info{kubernetes_version,feature_gates,cluster_version,source}``: the
  target answers are given for (README "Kubernetes versions and feature gates"); ``source`` is
  ``cluster`` when ``serve`` read it from its API server.

``_created`` series are switched off (:func:`prometheus_client.disable_created_metrics`): they
double the series count and no dashboard reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

__all__ = ["FAIL_OPEN_REASONS", "LATENCY_BUCKETS", "Metrics"]

disable_created_metrics()  # type: ignore[no-untyped-call]  # process-wide; draguard never wants them

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
FAIL_OPEN_REASONS = ("Timeout", "InternalError", "SearchDeadline")

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
                                    "seconds since the least recently confirmed device resource was confirmed "
                                    "(list, watch start, event or bookmark)", value=float(age))
        yield CounterMetricFamily("draguard_watch_restarts", "list/watch restarts after errors",
                                  value=float(s.get("restarts", 0)))
        if "watches" in s:
            yield from _watch_metrics(s["watches"], bool(s.get("stale")))
        if "stale_decisions" in s:
            stale = CounterMetricFamily("draguard_stale_decisions", "/validate answers made while the live inventory "
                                        "was stale, by decision and reason (no denial of reason Unsatisfiable: "
                                        "none is made from a stale picture)", labels=["decision", "reason"])
            for (decision, reason), count in sorted(s["stale_decisions"].items()):
                stale.add_metric([decision, reason], float(count))
            yield stale
        refused = CounterMetricFamily("draguard_connections_refused",
                                      "connections refused by a protocol limit, by reason (RequestHeaderFields"
                                      "TooLarge, Timeout: headers too slow, TooManyRequests: connection limit)",
                                      labels=["reason"])
        for reason, count in sorted(s.get("connections_refused", {}).items()):
            refused.add_metric([reason], float(count))
        yield refused
        yield CounterMetricFamily("draguard_connections_idle_closed", "connections closed at the header timeout "
                                  "that never sent a byte (opened ahead of need; not refusals)",
                                  value=float(s.get("connections_idle_closed", 0)))
        if "answer_memo" in s:
            yield from _memo_metrics(s["answer_memo"])
        if "target" in s:
            yield _target_metric(s["target"])
        if "cert_not_after" in s:
            yield GaugeMetricFamily("draguard_certificate_expiry_timestamp_seconds",
                                    "notAfter of the serving certificate", value=float(s["cert_not_after"]))
            yield CounterMetricFamily("draguard_certificate_reloads", "serving certificate reloads",
                                      value=float(s.get("cert_reloads", 0)))
            failures = CounterMetricFamily("draguard_certificate_reload_failures",
                                           "certificate files not taken into service, by reason "
                                           "(unloadable, expired); the previous pair keeps serving",
                                           labels=["reason"])
            for reason in ("unloadable", "expired"):
                failures.add_metric([reason], float(s.get("cert_reload_failures", {}).get(reason, 0)))
            yield failures
            yield GaugeMetricFamily("draguard_certificate_expiry_warning",
                                    "1 when the serving certificate expires within 30 days",
                                    value=1.0 if s.get("cert_expiring") else 0.0)
        if "audit" in s:
            yield from _audit_metrics(s["audit"])
        if "selfcert_errors" in s:
            yield CounterMetricFamily("draguard_self_managed_cert_writes",
                                      "Secret updates made by this replica (self-managed certificates)",
                                      value=float(s["selfcert_rotations"]))
            yield CounterMetricFamily("draguard_self_managed_cert_errors",
                                      "failed self-managed certificate rounds (API errors, RBAC, missing Secret)",
                                      value=float(s["selfcert_errors"]))


def _target_metric(t: dict[str, Any]) -> Any:
    """``draguard_target_info``: the Kubernetes version and gates answers are given for, where they
    come from (configured, or read from the cluster), and the cluster's own version."""
    info = GaugeMetricFamily("draguard_target_info", "1, labelled with the Kubernetes version and feature gates "
                             "draguard answers for, where they come from and the cluster's reported version",
                             labels=["kubernetes_version", "feature_gates", "cluster_version", "source"])
    source = "cluster" if t.get("clusterVersion") else ("configured" if t.get("gatesFrom") == "configured" else "default")
    info.add_metric([str(t.get("kubernetesVersion", "")), str(t.get("featureGates", "")),
                     str(t.get("clusterVersion") or ""), source], 1.0)
    return info


def _watch_metrics(watches: dict[str, dict[str, Any]], stale: bool) -> Iterator[Any]:
    """Per watched resource: connected, and seconds since the API server last confirmed it."""
    yield GaugeMetricFamily("draguard_inventory_stale", "1 while the live inventory is stale: a device watch failed "
                            "(or went silent) for longer than the stale bound; no denial is made meanwhile",
                            value=1.0 if stale else 0.0)
    connected = GaugeMetricFamily("draguard_watch_connected", "1 while the watch of the resource is open",
                                  labels=["resource"])
    age = GaugeMetricFamily("draguard_watch_last_contact_age_seconds", "seconds since the API server last confirmed "
                            "the resource (list, watch start, event or bookmark; bookmarks come about every minute)",
                            labels=["resource"])
    absent = GaugeMetricFamily("draguard_watch_absent", "1 for an optional resource the cluster does not serve or "
                               "does not let draguard read (DeviceTaintRules: 404/403) — not a broken watch",
                               labels=["resource"])
    for name, w in sorted(watches.items()):
        if w.get("absent"):
            absent.add_metric([name], 1.0)
            continue  # no watch to be connected: alerting on it would fire on every cluster without the kind
        connected.add_metric([name], 1.0 if w.get("connected") else 0.0)
        if w.get("lastContactAgeSeconds") is not None:
            age.add_metric([name], float(w["lastContactAgeSeconds"]))
    yield connected
    yield age
    yield absent


def _memo_metrics(m: dict[str, Any]) -> Iterator[Any]:
    """The answer memo (``answers.py``): its size against its bound, and how often it answered."""
    yield GaugeMetricFamily("draguard_answer_memo_entries", "remembered review answers", value=float(m.get("entries", 0)))
    yield GaugeMetricFamily("draguard_answer_memo_weight", "weight of the remembered answers (1 per entry + 1 per KiB "
                            "of findings)", value=float(m.get("weight", 0)))
    yield GaugeMetricFamily("draguard_answer_memo_weight_limit", "the memo's bound in weight units",
                            value=float(m.get("limit", 0)))
    lookups = CounterMetricFamily("draguard_answer_memo_lookups", "answer memo lookups by result (hit|miss)",
                                  labels=["result"])
    lookups.add_metric(["hit"], float(m.get("hits", 0)))
    lookups.add_metric(["miss"], float(m.get("misses", 0)))
    yield lookups
    yield CounterMetricFamily("draguard_answer_memo_evictions", "answers dropped to keep the memo in its bound",
                              value=float(m.get("evictions", 0)))


def _audit_metrics(a: dict[str, Any]) -> Iterator[Any]:
    """``serve --audit``: what it publishes (by reason and result), what waits out the grace period,
    its passes, and its API writes (by what and outcome)."""
    yield GaugeMetricFamily("draguard_audit_leader", "1 while this replica is the audit's one writer (the Lease)",
                            value=1.0 if a.get("leader") else 0.0)
    yield GaugeMetricFamily("draguard_audit_policyreports_enabled",
                            "1 when the PolicyReport CRD is installed and reports are written",
                            value=1.0 if a.get("reports_enabled") else 0.0)
    results = GaugeMetricFamily("draguard_audit_results", "published audit findings by reason and result "
                                "(fail|warn|error)", labels=["reason", "result"])
    for (reason, result), count in sorted(a.get("results", {}).items()):
        results.add_metric([reason, result], float(count))
    yield results
    yield GaugeMetricFamily("draguard_audit_pending", "findings seen but not yet past the grace period",
                            value=float(a.get("pending", 0)))
    passes = CounterMetricFamily("draguard_audit_passes", "audit passes by outcome (done|skipped: inventory "
                                 "or objects not synced)", labels=["outcome"])
    for outcome in ("done", "skipped"):
        passes.add_metric([outcome], float(a.get("passes", {}).get(outcome, 0)))
    yield passes
    yield GaugeMetricFamily("draguard_audit_last_pass_seconds", "duration of the last audit pass (review and writes)",
                            value=float(a.get("last_pass_seconds", 0.0)))
    yield GaugeMetricFamily("draguard_audit_objects", "objects the last pass audited", value=float(a.get("audited", 0)))
    yield GaugeMetricFamily("draguard_audit_reviews", "distinct contents the last pass reviewed (the rest came "
                            "from memory)", value=float(a.get("reviewed", 0)))
    writes = CounterMetricFamily("draguard_audit_api_calls", "the audit's API calls by what (verb and resource) "
                                 "and outcome (ok|retried|conflict|forbidden|notfound|failed|dropped)",
                                 labels=["what", "outcome"])
    for (what, outcome), count in sorted(a.get("writes", {}).items()):
        writes.add_metric([what, outcome], float(count))
    yield writes


class Metrics:
    """Request counters and latency histograms, plus the live gauges."""

    def __init__(self, probe: StatsProbe) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "draguard_requests",
            "admission reviews by route (validate|mutate), decision (allowed|denied|error) and reason",
            ["route", "decision", "reason"],
            registry=self.registry,
        )
        self.lint_requests = Counter(
            "draguard_lint_requests",
            "/lint calls by outcome: clean, errors (the report has errors) or the HTTP error reason",
            ["outcome"],
            registry=self.registry,
        )
        self.fail_open = Counter(
            "draguard_fail_open",
            "reviews allowed because draguard could not decide, by route and reason "
            "(Timeout|InternalError|SearchDeadline|BudgetExceeded)",
            ["route", "reason"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "draguard_request_duration_seconds",
            "request latency in seconds by route (buckets from 0.001 s to 5 s)",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(_LiveCollector(probe))
        self._series: dict[tuple[str, str, str], tuple[Any, Any]] = {}

    def observe(self, route: str, decision: str, reason: str, seconds: float,
                fail_open: str | None = None) -> None:
        """One admission review; ``fail_open`` names why it was let through undecided.

        The labelled series are kept by their labels (``labels()`` takes a lock and builds a key on
        every call); no more of them than the registry holds anyway."""
        key = (route, decision, reason)
        series = self._series.get(key)
        if series is None:
            series = (self.requests.labels(route, decision, reason or "none"), self.latency.labels(route))
            self._series[key] = series
        series[0].inc()
        if fail_open is not None:
            self.fail_open.labels(route, fail_open).inc()
        series[1].observe(seconds)

    def observe_lint(self, outcome: str, seconds: float) -> None:
        self.lint_requests.labels(outcome).inc()
        self.latency.labels("lint").observe(seconds)

    def render(self) -> bytes:
        return bytes(generate_latest(self.registry))
