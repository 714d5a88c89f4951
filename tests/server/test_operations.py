"""Health, readiness, metrics, /lint, deadlines, internal errors and client certificates."""

from __future__ import annotations

import json
import re
import ssl
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from draguard.certs import generate_bundle, generate_leaf
from draguard.inventory import Inventory, NoInventory, StaticInventory
from draguard.server.state import ServerState

from server.conftest import DATA, Served
from server.reviews import admission_review, claim, device_class


class SlowInventory:
    """An inventory source whose snapshot takes ``delay`` seconds (a stuck dependency)."""

    def __init__(self, inner: StaticInventory, delay: float) -> None:
        self.inner = inner
        self.delay = delay
        self.release = threading.Event()
        self.synced = True
        self.restarts = 0

    def snapshot(self) -> Inventory | None:
        self.release.wait(self.delay)
        return self.inner.snapshot()

    def problem(self) -> str | None:
        return None

    def objects(self) -> list[dict[str, Any]]:
        return self.inner.objects()

    def last_sync_age(self) -> float | None:
        return 0.0

    def status(self) -> dict[str, Any]:
        return {"source": "slow"}


class BrokenInventory(SlowInventory):
    def problem(self) -> str | None:
        raise RuntimeError("boom")


def test_health_ready_metrics(serve: Callable[..., Served], static_inventory: StaticInventory) -> None:
    s = serve(ServerState(inventory=static_inventory))
    assert s.client.get("/healthz").json() == {"status": "ok"}
    ready = s.client.get("/readyz")
    assert ready.status_code == 200
    body = ready.json()
    assert body["ready"] is True and body["inventory"]["source"] == "files"
    assert body["certificate"]["serial"] and body["certificate"]["reloads"] == 0
    s.client.post("/validate", json=admission_review(claim("big", memory="50Gi")))
    s.client.post("/validate", json=admission_review(claim("ok")))
    s.client.post("/validate", content=b"nope")
    text = s.client.get("/metrics").text
    assert 'draguard_requests_total{decision="denied",reason="Unsatisfiable",route="validate"} 1.0' in text
    assert 'draguard_requests_total{decision="allowed",reason="CapacityDefaulted",route="validate"} 1.0' in text
    assert 'draguard_requests_total{decision="error",reason="BadRequest",route="validate"} 1.0' in text
    assert 'draguard_request_duration_seconds_bucket{le="0.001",route="validate"}' in text
    assert 'draguard_request_duration_seconds_bucket{le="0.005",route="validate"}' in text
    assert "draguard_inventory_devices 1.0" in text
    assert "draguard_inventory_pools 1.0" in text
    assert "draguard_inventory_synced 1.0" in text
    assert re.search(r"^draguard_inventory_age_seconds \d", text, re.MULTILINE)
    assert "draguard_watch_restarts_total 0.0" in text
    assert "draguard_certificate_expiry_timestamp_seconds" in text


def test_each_app_has_its_own_registry(serve: Callable[..., Served]) -> None:
    a = serve(ServerState())
    b = serve(ServerState())
    a.client.post("/validate", content=b"x")
    assert 'reason="BadRequest"' in a.client.get("/metrics").text
    assert 'reason="BadRequest"' not in b.client.get("/metrics").text
    assert "draguard_inventory_synced 1.0" in b.client.get("/metrics").text  # no inventory: nothing to sync


def test_deadline_allows_with_a_warning_and_never_blocks_the_loop(
    serve: Callable[..., Served], static_inventory: StaticInventory
) -> None:
    slow = SlowInventory(static_inventory, delay=10)
    s = serve(ServerState(inventory=slow, deadline_seconds=0.3))
    results: list[httpx.Response] = []
    t = threading.Thread(target=lambda: results.append(
        s.client.post("/validate", json=admission_review(claim("big", memory="50Gi"), uid="slow-1"))))
    t.start()
    # while the review is stuck in its worker, the event loop keeps answering
    for _ in range(5):
        assert s.client.get("/healthz").status_code == 200
    t.join(5)
    # answered by the deadline while the review was still stuck in the slow inventory
    assert not t.is_alive() and results and not slow.release.is_set()
    slow.release.set()
    response = results[0].json()["response"]
    assert response["uid"] == "slow-1" and response["allowed"] is True
    assert response["warnings"] == ["Timeout: draguard's review did not finish within 0.3s; allowed without a full check"]
    assert 'draguard_requests_total{decision="allowed",reason="Timeout",route="validate"} 1.0' in \
        s.client.get("/metrics").text


def test_internal_error_fails_open(serve: Callable[..., Served], static_inventory: StaticInventory) -> None:
    s = serve(ServerState(inventory=BrokenInventory(static_inventory, 0)))
    resp = s.client.post("/validate", json=admission_review(claim("x"), uid="err-1"))
    assert resp.status_code == 200
    assert resp.json()["response"] == {
        "uid": "err-1", "allowed": True,
        "warnings": ["InternalError: draguard failed (RuntimeError); allowed without a full check"],
        "auditAnnotations": {"fail-open": "InternalError"},  # loud: shows in the API server's audit log
    }


def test_lint_json_contract(serve: Callable[..., Served], static_inventory: StaticInventory) -> None:
    s = serve(ServerState(inventory=static_inventory))
    body = yaml.safe_dump_all([claim("bad", request="GPU_x"), claim("big", memory="50Gi"), claim("ok")])
    resp = s.client.post("/lint", content=body, headers={"content-type": "application/yaml"})
    assert resp.status_code == 200 and resp.headers["content-type"] == "application/json"
    report = resp.json()
    assert set(report) == {"findings", "summary"}
    assert report["summary"] == {"objects": 3, "errors": 2, "warnings": 0, "notes": 1, "skipped": 0}
    by_name = {f["name"]: f for f in report["findings"]}
    assert by_name["bad"]["reason"] == "FieldValueInvalid" and by_name["bad"]["severity"] == "error"
    assert by_name["big"]["reason"] == "Unsatisfiable"
    assert list(by_name["bad"])[:7] == ["severity", "reason", "kind", "namespace", "name", "field", "message"]
    # JSON bodies work too, and a file name gives positions
    resp = s.client.post("/lint?file=claims.json", content=json.dumps(claim("bad", request="GPU_x")),
                         headers={"content-type": "application/json"})
    finding = resp.json()["findings"][0]
    assert finding["file"] == "claims.json" and finding["line"] >= 1


def test_lint_merges_inventory_objects_from_the_body(
    serve: Callable[..., Served], static_inventory: StaticInventory
) -> None:
    s = serve(ServerState(inventory=static_inventory))
    lonely = claim("other", device_class="other.example.com")
    alone = s.client.post("/lint", content=yaml.safe_dump(lonely)).json()
    assert [f["reason"] for f in alone["findings"]] == ["SatisfiabilityUnknown"]  # class unknown
    with_class = yaml.safe_dump_all([device_class("other.example.com", 'device.driver == "other"'), lonely])
    merged = s.client.post("/lint", content=with_class).json()
    # class known now, but no device of it yet: unknown (an empty class is not a proof), and says so
    assert [f["reason"] for f in merged["findings"]] == ["SatisfiabilityUnknown"]
    assert merged["findings"][0]["message"].startswith("no device of class other.example.com is in the inventory yet")


def test_lint_formats_and_errors(serve: Callable[..., Served], static_inventory: StaticInventory) -> None:
    s = serve(ServerState(inventory=static_inventory))
    body = yaml.safe_dump(claim("bad", request="GPU_x"))
    text = s.client.post("/lint?format=text", content=body)
    assert text.headers["content-type"].startswith("text/plain")
    assert "error: ResourceClaim default/bad: spec.devices.requests[0].name:" in text.text
    junit = s.client.post("/lint?format=junit", content=body)
    assert junit.headers["content-type"] == "application/xml" and "<testsuite" in junit.text
    sarif = s.client.post("/lint?format=sarif", content=body)
    assert sarif.json()["version"] == "2.1.0"
    bad = s.client.post("/lint?format=html", content=body)
    assert bad.status_code == 400 and "unknown format" in bad.json()["message"]
    garbage = s.client.post("/lint", content=b"a: [unclosed").json()
    assert garbage["findings"][0]["reason"] == "DecodeError"
    big = s.client.post("/lint", content=b"#" * (3 * 1024 * 1024 + 1))
    assert big.status_code == 413


def test_lint_token(serve: Callable[..., Served], tmp_path: Path) -> None:
    s = serve(ServerState(lint_token="s3cret"))
    body = yaml.safe_dump(claim("ok"))
    denied = s.client.post("/lint", content=body)
    assert denied.status_code == 401 and denied.headers["www-authenticate"] == "Bearer"
    assert denied.json()["reason"] == "Unauthorized"
    assert s.client.post("/lint", content=body, headers={"authorization": "Bearer nope"}).status_code == 401
    ok = s.client.post("/lint", content=body, headers={"authorization": "Bearer s3cret"})
    assert ok.status_code == 200 and ok.json()["summary"]["objects"] == 1
    # the webhook routes are not behind the lint token (the API server sends none)
    assert s.client.post("/validate", json=admission_review(claim("ok"))).status_code == 200


def test_client_certificates(serve: Callable[..., Served], tmp_path: Path) -> None:
    clients = generate_bundle("clients", "x")
    (tmp_path / "client-ca.crt").write_bytes(clients.ca_cert)
    cert, key = generate_leaf(clients.ca_cert, clients.ca_key, ["kube-apiserver"], 1, client=True)
    (tmp_path / "c.crt").write_bytes(cert)
    (tmp_path / "c.key").write_bytes(key)
    s = serve(ServerState(), client_ca=tmp_path / "client-ca.crt",
              client_cert=(tmp_path / "c.crt", tmp_path / "c.key"))
    assert s.client.post("/validate", json=admission_review(claim("ok"))).status_code == 200
    anonymous = httpx.Client(base_url=s.url, verify=ssl.create_default_context(cafile=str(s.ca)))
    with pytest.raises((httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError)):
        anonymous.get("/healthz")
    anonymous.close()


def test_no_inventory_means_no_satisfiability(serve: Callable[..., Served]) -> None:
    s = serve(ServerState(inventory=NoInventory()))
    resp = s.client.post("/validate", json=admission_review(claim("big", memory="50Gi"))).json()["response"]
    assert resp == {"uid": resp["uid"], "allowed": True}
    assert s.client.get("/readyz").status_code == 200


def test_static_inventory_loads_folders() -> None:
    inv = StaticInventory([str(DATA)])
    snap = inv.snapshot()
    assert snap is not None and snap.device_count == 1 and inv.synced and inv.problem() is None
