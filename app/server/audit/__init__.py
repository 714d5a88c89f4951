"""``serve --audit``: re-evaluates existing claims, templates, pending Pods and DRA workloads (and
DeviceClasses) when the inventory or the objects change and on a period, and publishes the
findings as ``wgpolicyk8s.io/v1alpha2`` PolicyReports per namespace plus one ClusterPolicyReport,
Events on the objects and metrics by reason.

Parts: :mod:`.watch` (list+watch of the audited kinds), :mod:`.evaluate` (a pass through
:func:`app.review.review_documents`, remembered per content and snapshot — the function the
benchmark calls), :mod:`.grace` (no flapping), :mod:`.reports` (the PolicyReport shape),
:mod:`.writer` (reports and Events, rate-limited, CRD-optional), :mod:`.loop` (Lease, triggers).
"""

from .evaluate import AuditEngine, AuditFinding, AuditResult, Subject, audited
from .grace import GraceTracker
from .loop import Auditor, AuditSettings
from .ratelimit import TokenBucket
from .reports import build_reports, report_identities
from .watch import AUDIT_RESOURCES, AuditObjects

__all__ = [
    "AUDIT_RESOURCES",
    "AuditEngine",
    "AuditFinding",
    "AuditObjects",
    "AuditResult",
    "AuditSettings",
    "Auditor",
    "GraceTracker",
    "Subject",
    "TokenBucket",
    "audited",
    "build_reports",
    "report_identities",
]
