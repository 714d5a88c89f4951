"""Isolation (issue #10): /lint has its own bounded pool; admission never waits behind it; a
review out of budget is allowed loudly (warning log, metric, audit annotation)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest

from app.inventory import Inventory, StaticInventory
from app.server.state import ServerState
from server.conftest import Served
from server.reviews import admission_review, claim


class LintBlockingInventory:
    """Blocks only ``/lint`` work (the lint pool's threads) until released: a lint run that never ends."""

    def __init__(self, inner: StaticInventory) -> None:
        self.inner = inner
        self.release = threading.Event()
        self.entered = threading.Event()
        self.synced = True
        self.restarts = 0

    def snapshot(self) -> Inventory | None:
        if threading.current_thread().name.startswith("draguard-lint"):
            self.entered.set()
            self.release.wait(20)
        return self.inner.snapshot()

    def problem(self) -> str | None:
        return None

    def objects(self) -> list[dict[str, Any]]:
        return self.inner.objects()

    def last_sync_age(self) -> float | None:
        return 0.0

    def status(self) -> dict[str, Any]:
        return self.inner.status()


def _heavy_claim(name: str, n: int = 45) -> dict[str, Any]:
    """Legal for the API server (static cost under 1,000,000) but ~2 s per device in cel-python."""
    items = "[" + ",".join(str(i) for i in range(n)) + "]"
    obj = claim(name)
    obj["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": f"{items}.all(x, {items}.all(y, {items}.all(z, x + y + z >= 0)))"}}
    ]
    return obj


def test_admission_is_answered_while_lint_is_saturated_and_extra_lint_calls_get_429(
    serve: Callable[..., Served], static_inventory: StaticInventory
) -> None:
    source = LintBlockingInventory(static_inventory)
    s = serve(ServerState(inventory=source, lint_workers=1, lint_concurrency=1))  # type: ignore[arg-type]
    stuck: list[int] = []
    first = threading.Thread(target=lambda: stuck.append(s.client.post("/lint", content=b"{}").status_code))
    first.start()
    try:
        assert source.entered.wait(10), "the first /lint call never started"
        busy = s.client.post("/lint", content=b"{}")
        assert busy.status_code == 429 and busy.headers["retry-after"] == "1"
        assert busy.json()["reason"] == "TooManyRequests"
        # the webhook still decides, with its own pool: unsatisfiable denied, satisfiable allowed
        denied = s.client.post("/validate", json=admission_review(claim("big", memory="50Gi"))).json()["response"]
        assert denied["allowed"] is False and denied["status"]["details"]["causes"][0]["reason"] == "Unsatisfiable"
        allowed = s.client.post("/validate", json=admission_review(claim("ok"))).json()["response"]
        assert allowed["allowed"] is True
    finally:
        source.release.set()
        first.join(20)
    assert stuck == [200]
    assert s.client.post("/lint", content=b"{}").status_code == 200  # a free slot again


def test_review_out_of_budget_is_allowed_loudly(
    serve: Callable[..., Served], static_inventory: StaticInventory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="draguard.review")
    s = serve(ServerState(inventory=static_inventory, deadline_seconds=2.0))
    response = s.client.post("/validate", json=admission_review(_heavy_claim("heavy"), uid="heavy-1")).json()
    answer = response["response"]
    assert answer["allowed"] is True
    assert answer["auditAnnotations"] == {"fail-open": "BudgetExceeded"}
    assert any(w.startswith("SatisfiabilityUnknown: ") for w in answer["warnings"]), answer
    records = [r for r in caplog.records if getattr(r, "fields", {}).get("uid") == "heavy-1"
               and r.levelno == logging.WARNING]
    assert records and records[0].fields["failOpen"] == "BudgetExceeded"  # type: ignore[attr-defined]
    text = s.client.get("/metrics").text
    assert 'draguard_fail_open_total{reason="BudgetExceeded",route="validate"} 1.0' in text
    # a well-behaved claim right after is decided normally, and carries no fail-open annotation
    plain = s.client.post("/validate", json=admission_review(claim("big", memory="50Gi"))).json()["response"]
    assert plain["allowed"] is False and "auditAnnotations" not in plain
