"""Published findings → ``wgpolicyk8s.io/v1alpha2`` PolicyReports (one per namespace) and one
ClusterPolicyReport (cluster-scoped objects, e.g. DeviceClasses), the shape Kyverno, Kubewarden
and Policy Reporter use.

The mapping, and why:

* one report named ``draguard`` per namespace, labelled ``app.kubernetes.io/managed-by: draguard``
  (the writer finds its own reports by that label and never touches another tool's);
* a result per finding: ``policy: draguard``, ``rule``: the finding's reason (``Unsatisfiable``,
  ``CapacityInUse``…, the same names as every other door), ``message``: its explanation,
  ``result``: ``fail`` for an error, ``warn`` for a warning, ``error`` when the check could not
  finish (its time budget ran out); ``severity`` high/medium/low alike; ``source: draguard``;
  ``resources``: the one object, with its uid; ``properties.field``: the field path;
  ``timestamp``: when the finding was first seen, so an unchanged finding leaves the report
  byte-for-byte unchanged and the writer has nothing to write;
* no ``pass`` results: one per audited object would make reports of busy namespaces huge (an
  object in etcd is limited to about 1.5 MiB) for no information; ``summary.pass`` stays 0.
  At most :data:`MAX_RESULTS` results (and about 1 MiB) per report; the rest are counted in an
  annotation.

A report holds results about its own namespace's objects only: messages come from the pipeline,
which names objects of the object's own namespace and counts those of others.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...k8s import Severity
from .evaluate import AuditFinding

__all__ = ["LABELS", "MAX_RESULTS", "REPORT_NAME", "build_reports", "report_identities", "result_kind"]

REPORT_NAME = "draguard"
MANAGED_BY = "app.kubernetes.io/managed-by"
LABELS = {MANAGED_BY: "draguard"}
OMITTED_ANNOTATION = "draguard.dev/results-omitted"
MAX_RESULTS = 1000
MAX_MESSAGE = 2048
MAX_REPORT_BYTES = 1 << 20
"""An object in etcd is limited to about 1.5 MiB: a report stays well below."""
API_VERSION = "wgpolicyk8s.io/v1alpha2"


def result_kind(f: AuditFinding) -> tuple[str, str]:
    """(result, severity) of one finding."""
    if f.fail_open:
        return "error", "low"
    if f.severity is Severity.ERROR:
        return "fail", "high"
    return "warn", "medium"


def _result(f: AuditFinding, first_seen: float) -> dict[str, Any]:
    result, severity = result_kind(f)
    s = f.subject
    resource: dict[str, Any] = {"apiVersion": s.api_version, "kind": s.kind, "name": s.name}
    if s.namespace and s.kind != "DeviceClass":
        resource["namespace"] = s.namespace
    if s.uid:
        resource["uid"] = s.uid
    message = f.message if len(f.message) <= MAX_MESSAGE else f.message[: MAX_MESSAGE - 3] + "..."
    out: dict[str, Any] = {
        "policy": "draguard",
        "rule": f.reason,
        "result": result,
        "severity": severity,
        "scored": True,
        "source": "draguard",
        "category": "DRA",
        "message": message,
        "timestamp": {"seconds": int(first_seen), "nanos": 0},
        "resources": [resource],
    }
    if f.field:
        out["properties"] = {"field": f.field}
    return out


def build_reports(
    published: Iterable[AuditFinding], first_seen: Mapping[tuple[str, ...], float]
) -> dict[str, dict[str, Any]]:
    """namespace (``""``: the ClusterPolicyReport) → the report to have; namespaces without a
    published finding are absent (their report is deleted)."""
    by_ns: dict[str, list[AuditFinding]] = {}
    for f in published:
        ns = "" if f.subject.kind == "DeviceClass" else f.subject.namespace
        by_ns.setdefault(ns, []).append(f)
    reports: dict[str, dict[str, Any]] = {}
    for ns, findings in by_ns.items():
        findings.sort(key=lambda f: (f.subject.kind, f.subject.name, f.reason, f.field, f.message))
        results: list[dict[str, Any]] = []
        size = 0
        for f in findings[:MAX_RESULTS]:
            r = _result(f, first_seen.get(f.identity, 0.0))
            size += len(r["message"]) + 400  # the result's other fields, about 400 bytes as JSON
            if size > MAX_REPORT_BYTES:
                break
            results.append(r)
        omitted = len(findings) - len(results)
        summary = {"pass": 0, "fail": 0, "warn": 0, "error": 0, "skip": 0}
        for r in results:
            summary[r["result"]] += 1
        metadata: dict[str, Any] = {"name": REPORT_NAME, "labels": dict(LABELS)}
        if ns:
            metadata["namespace"] = ns
        if omitted > 0:
            metadata["annotations"] = {OMITTED_ANNOTATION: str(omitted)}
        reports[ns] = {
            "apiVersion": API_VERSION,
            "kind": "PolicyReport" if ns else "ClusterPolicyReport",
            "metadata": metadata,
            "summary": summary,
            "results": results,
        }
    return reports


def report_identities(report: Mapping[str, Any]) -> list[tuple[tuple[str, ...], float]]:
    """The finding identities (and first-seen times) of a report draguard wrote earlier — to seed
    the grace period after a failover.  Results it cannot read are skipped."""
    out: list[tuple[tuple[str, ...], float]] = []
    results = report.get("results")
    for r in results if isinstance(results, list) else ():
        if not isinstance(r, dict) or r.get("source") != "draguard":
            continue
        resources = r.get("resources")
        res = resources[0] if isinstance(resources, list) and resources and isinstance(resources[0], dict) else None
        if res is None:
            continue
        kind = str(res.get("kind", ""))
        ns = "" if kind == "DeviceClass" else str(res.get("namespace", ""))
        props = r.get("properties")
        props = props if isinstance(props, dict) else {}
        stamp = r.get("timestamp")
        seconds = stamp.get("seconds") if isinstance(stamp, dict) else 0
        seconds = seconds if isinstance(seconds, int) else 0
        ident = (kind, ns, str(res.get("name", "")), str(res.get("uid", "")), str(r.get("rule", "")),
                 str(props.get("field", "")))
        out.append((ident, float(seconds)))
    return out
