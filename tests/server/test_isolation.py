"""Isolation (issue #10): /lint has its own bounded pool; admission never waits behind it; a
review out of budget is allowed loudly (warning log, metric, audit annotation)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.inventory import Inventory, StaticInventory
from draguard.server.state import ServerState

from server.conftest import Served
from server.reviews import admission_review, claim

ROOT = Path(__file__).resolve().parents[2]


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


def _heavy_claim(name: str, n: int = 45, k: int = 0) -> dict[str, Any]:
    """Legal for the API server (static cost under 1,000,000) but ~1-2 s per device in cel-python;
    ``k`` varies the text so that no cache helps."""
    items = "[" + ",".join(str(i) for i in range(n)) + "]"
    obj = claim(name)
    obj["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": f"{items}.all(x, {items}.all(y, {items}.all(z, x + y + z >= -{k})))"}}
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


def test_missing_lint_token_file_disables_lint_but_not_admission(
    serve: Callable[..., Served], static_inventory: StaticInventory, tmp_path: Path
) -> None:
    from draguard.server.cli_serve import _token

    assert _token(None) == (None, None)
    token_file = tmp_path / "token"
    token, why = _token(str(token_file))
    assert token is None and why is not None and "draguard-lint-token" in why
    token_file.write_text("s3cret\n")
    assert _token(str(token_file)) == ("s3cret", None)
    s = serve(ServerState(inventory=static_inventory, lint_disabled=why))
    refused = s.client.post("/lint", content=b"{}", headers={"authorization": "Bearer s3cret"})
    assert refused.status_code == 403 and refused.json()["reason"] == "Forbidden"
    assert s.client.post("/validate", json=admission_review(claim("ok"))).json()["response"]["allowed"] is True


def test_shipped_deployment_protects_lint_with_an_optional_token_secret() -> None:
    deployment = yaml.safe_load((ROOT / "manifests" / "deployment.yaml").read_text())
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert "--lint-token-file=/etc/draguard/lint/token" in container["args"]
    assert not any(a.startswith("--deny") for a in container["args"])  # the code's default applies (one source)
    mount = next(m for m in container["volumeMounts"] if m["name"] == "lint-token")
    assert mount["mountPath"] == "/etc/draguard/lint" and mount["readOnly"] is True
    volume = next(v for v in pod["volumes"] if v["name"] == "lint-token")
    assert volume["secret"] == {"secretName": "draguard-lint-token", "optional": True}


def test_flooded_lint_and_cel_heavy_clients_do_not_change_a_well_behaved_clients_verdicts(
    serve: Callable[..., Served], static_inventory: StaticInventory
) -> None:
    """The smaller sibling of benchmarks/bench_isolation.py: two clients flood /lint, two send
    CEL-heavy claims; every unsatisfiable claim of a fifth is still denied (a review that missed
    its deadline would have been allowed), every satisfiable one allowed."""
    s = serve(ServerState(inventory=static_inventory))
    body = yaml.safe_dump_all([claim(f"l{i}", memory=f"{i % 40 + 1}Gi") for i in range(300)]).encode()
    stop = threading.Event()
    seen: list[str] = []

    def flood_lint() -> None:
        while not stop.is_set():
            seen.append(f"lint {s.client.post('/lint', content=body).status_code}")

    def flood_cel(offset: int) -> None:
        k = offset
        while not stop.is_set():
            k += 2
            answer = s.client.post("/validate", json=admission_review(_heavy_claim("heavy", 40, k))).json()
            seen.append(f"heavy allowed={answer['response']['allowed']}")

    threads = [threading.Thread(target=flood_lint) for _ in range(2)]
    threads += [threading.Thread(target=flood_cel, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    try:
        verdicts = []
        for i in range(3):
            for name, memory in ((f"unsat-{i}", "50Gi"), (f"sat-{i}", "8Gi")):
                answer = s.client.post("/validate", json=admission_review(claim(name, memory=memory))).json()
                verdicts.append((name, answer["response"]["allowed"]))
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert verdicts == [(f"{kind}-{i}", kind == "sat") for i in range(3) for kind in ("unsat", "sat")]
    assert any(x.startswith("heavy allowed=True") for x in seen)  # the heavy ones were answered (fail-open)
