"""The /metrics exposition: honest HELP texts, no ``_created`` series, lint results that are not
admission decisions, and fail-open reviews counted by reason."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from draguard.certs import generate_bundle, write_bundle
from draguard.inventory import StaticInventory
from draguard.review.pipeline import ReviewOptions
from draguard.server.state import ServerState
from draguard.server.tls import CertReloader
from draguard.server.webhook import parse_admission_review, review_call

from server.conftest import Served
from server.reviews import admission_review, claim
from server.test_operations import BrokenInventory


def metric_lines(text: str, name: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(name)]


def test_latency_help_says_seconds_like_its_buckets(serve: Callable[..., Served]) -> None:
    s = serve(ServerState())
    s.client.post("/validate", json=admission_review(claim("ok")))
    text = s.client.get("/metrics").text
    help_line = next(line for line in text.splitlines()
                     if line.startswith("# HELP draguard_request_duration_seconds "))
    assert "seconds" in help_line and "millisecond" not in help_line
    buckets = [float(m) for m in re.findall(r'draguard_request_duration_seconds_bucket\{le="([0-9.e+-]+)"', text)]
    assert min(buckets) == 0.001 and max(buckets) == 5.0  # the range the HELP text states
    assert "0.001 s to 5 s" in help_line


def test_no_created_series(serve: Callable[..., Served]) -> None:
    s = serve(ServerState())
    s.client.post("/validate", json=admission_review(claim("ok")))
    s.client.post("/lint", content=yaml.safe_dump(claim("ok")))
    text = s.client.get("/metrics").text
    assert "draguard_requests_total" in text  # the counters are there...
    assert "_created" not in text  # ...without their creation-time twins


def test_lint_results_are_outcomes_not_admission_decisions(
    serve: Callable[..., Served], static_inventory: StaticInventory
) -> None:
    s = serve(ServerState(inventory=static_inventory))
    s.client.post("/lint", content=yaml.safe_dump(claim("bad", request="GPU_x")))
    s.client.post("/lint", content=yaml.safe_dump(claim("ok")))
    s.client.post("/lint", content=yaml.safe_dump(claim("ok2")))
    s.client.post("/lint?format=nope", content=b"")
    text = s.client.get("/metrics").text
    assert 'draguard_lint_requests_total{outcome="errors"} 1.0' in text
    assert 'draguard_lint_requests_total{outcome="clean"} 2.0' in text
    assert 'draguard_lint_requests_total{outcome="BadRequest"} 1.0' in text
    assert 'route="lint"' not in "\n".join(metric_lines(text, "draguard_requests_total"))
    assert 'reason="none"' not in "\n".join(line for line in text.splitlines() if "lint" in line)
    assert 'draguard_request_duration_seconds_count{route="lint"} 4.0' in text


def test_fail_open_counted_by_reason(serve: Callable[..., Served], static_inventory: StaticInventory) -> None:
    s = serve(ServerState(inventory=BrokenInventory(static_inventory, 0)))
    s.client.post("/validate", json=admission_review(claim("x")))
    text = s.client.get("/metrics").text
    assert 'draguard_fail_open_total{reason="InternalError",route="validate"} 1.0' in text


def test_decided_reviews_are_not_fail_open(serve: Callable[..., Served], static_inventory: StaticInventory) -> None:
    s = serve(ServerState(inventory=static_inventory))
    s.client.post("/validate", json=admission_review(claim("ok")))
    s.client.post("/validate", json=admission_review(claim("big", memory="50Gi")))  # denied: proven
    text = s.client.get("/metrics").text
    assert metric_lines(text, "draguard_fail_open_total{") == []


def test_search_out_of_budget_is_fail_open(static_inventory: StaticInventory) -> None:
    # a snapshot of its own: answers are remembered per snapshot, and another test may already
    # have decided this claim on the shared one (a remembered proof needs no search budget)
    static_inventory = StaticInventory([str(Path(__file__).parent / "data" / "inventory.yaml")])
    call = parse_admission_review(json.dumps(admission_review(claim("big", memory="50Gi"))).encode())
    exhausted = review_call(call, "validate", static_inventory,
                            ReviewOptions(admission=True, deadline_seconds=1e-9))
    assert exhausted.decision == "allowed" and exhausted.fail_open == "SearchDeadline"
    decided = review_call(call, "validate", static_inventory, ReviewOptions(admission=True, deadline_seconds=5))
    assert decided.decision == "denied" and decided.fail_open is None


def test_expiry_warning_from_30_days_before(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    def reloader_for(days: int) -> CertReloader:
        paths = write_bundle(generate_bundle("draguard", "draguard", days=days), tmp_path / str(days))
        return CertReloader(paths["cert"], paths["key"])

    soon, later = reloader_for(29), reloader_for(31)
    assert later.expiry_warning() is None and later.status()["expiryWarning"] is None
    warning = soon.expiry_warning()
    assert warning is not None and "expires in 29.0 days" in warning
    assert soon.status()["expiryWarning"] == warning
    with caplog.at_level(logging.WARNING, logger="draguard.tls"):
        assert soon.warn_if_expiring() == warning
        soon.warn_if_expiring()  # once an hour, not on every poll
    assert [r.getMessage() for r in caplog.records].count(caplog.records[0].getMessage()) == 1
    assert ServerState(tls=soon).stats()["cert_expiring"] is True
    assert ServerState(tls=later).stats()["cert_expiring"] is False


def test_expiry_warning_gauge(serve: Callable[..., Served]) -> None:
    text = serve(ServerState()).client.get("/metrics").text  # the test certificate lasts 2 days
    assert "draguard_certificate_expiry_warning 1.0" in text
