"""``serve --audit`` flags: it needs a cluster, its settings come from the flags, and its figures
reach /metrics (by reason) and /readyz."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from draguard.k8s import Severity
from draguard.server.audit import AuditFinding, Auditor, Subject
from draguard.server.cli_serve import UsageError, add_serve_arguments, build_state
from draguard.server.metrics import Metrics


def serve_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    return parser.parse_args(list(argv))


def test_audit_needs_a_cluster() -> None:
    with pytest.raises(UsageError, match="--audit needs --kube or --kubeconfig"):
        build_state(serve_args("--audit"))


def test_audit_flags_build_the_auditor(kubeconfig: Path) -> None:
    state = build_state(serve_args("--kubeconfig", str(kubeconfig), "--audit", "--audit-grace-seconds", "7",
                                   "--audit-period-seconds", "30", "--audit-lease", "mine", "--namespace", "ops",
                                   "--audit-writes-per-second", "2", "--audit-no-events"))
    auditor = state.audit
    assert isinstance(auditor, Auditor) and auditor.run in state.background
    s = auditor.settings
    assert (s.grace_seconds, s.period_seconds, s.lease_name, s.lease_namespace, s.write_burst, s.events) == (
        7.0, 30.0, "mine", "ops", 8, False)
    with pytest.raises(UsageError, match="must be positive"):
        build_state(serve_args("--kubeconfig", str(kubeconfig), "--audit", "--audit-writes-per-second", "0"))


def test_audit_metrics_by_reason_and_readiness(kubeconfig: Path) -> None:
    state = build_state(serve_args("--kubeconfig", str(kubeconfig), "--audit"))
    auditor = state.audit
    auditor.published = [
        AuditFinding(Subject("ResourceClaimTemplate", "a", "t"), "Unsatisfiable", Severity.ERROR, "m"),
        AuditFinding(Subject("Pod", "a", "p"), "CapacityInUse", Severity.WARNING, "m"),
        AuditFinding(Subject("Pod", "a", "q"), "CapacityInUse", Severity.WARNING, "m"),
    ]
    auditor.passes["skipped"] += 1
    text = Metrics(state.stats).render().decode()
    assert 'draguard_audit_results{reason="CapacityInUse",result="warn"} 2.0' in text
    assert 'draguard_audit_results{reason="Unsatisfiable",result="fail"} 1.0' in text
    assert 'draguard_audit_passes_total{outcome="skipped"} 1.0' in text
    assert "draguard_audit_leader 0.0" in text
    _, detail = state.readiness()
    assert detail["audit"]["published"] == 3 and detail["audit"]["leader"] is False
