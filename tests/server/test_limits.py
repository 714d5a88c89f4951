"""Connection and request limits, each proven over a real TLS socket.

Header size (431), header-read time (408, slowloris), connection count (429), lone surrogates
in what is echoed (never a 500), a client vanishing mid-body (one log line, no traceback),
and bounded log records.  Every refusal leaves the server answering other clients.
"""

from __future__ import annotations

import json
import logging
import socket
import ssl
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from draguard.inventory import StaticInventory
from draguard.k8s import loads_json
from draguard.server.limits import ConnectionGuard, ConnectionLimits
from draguard.server.logs import MAX_FIELD_CHARS, MAX_RECORD_CHARS, JsonFormatter
from draguard.server.state import ServerState

from server.conftest import Served, client_context
from server.reviews import admission_review, claim

SMALL_TIMEOUT = 0.5  # header-read timeout for these tests (the default is 10 s)
WAIT = 10.0  # how long a test waits for an answer that must come (a failure, not a speed check)


@pytest.fixture
def guarded(serve: Callable[..., Served], static_inventory: StaticInventory) -> Callable[..., Served]:
    def start(**limits: Any) -> Served:
        guard = ConnectionGuard(ConnectionLimits(**limits))
        return serve(ServerState(inventory=static_inventory, guard=guard), guard=guard)
    return start


@contextmanager
def tls_socket(served: Served) -> Iterator[ssl.SSLSocket]:
    raw = socket.create_connection(("127.0.0.1", served.server.port), timeout=WAIT)
    sock = client_context(served.ca).wrap_socket(raw, server_hostname="127.0.0.1")
    try:
        yield sock
    finally:
        sock.close()


def read_response(sock: ssl.SSLSocket) -> bytes:
    """Everything until the server closes the connection (or WAIT passes: then the test fails)."""
    chunks = []
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except (TimeoutError, ConnectionResetError, ssl.SSLError):
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def status_of(raw: bytes) -> tuple[int, dict[str, Any]]:
    head, _, body = raw.partition(b"\r\n\r\n")
    code = int(head.split(b" ", 2)[1]) if head else 0
    return code, json.loads(body) if body.startswith(b"{") else {}


def still_serving(served: Served) -> bool:
    return served.client.get("/healthz").status_code == 200


# ---------------------------------------------------------------------------- header size
def test_headers_over_1mib_get_431(guarded: Callable[..., Served]) -> None:
    served = guarded()
    with tls_socket(served) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        filler = b"X-Filler: " + b"a" * 65536 + b"\r\n"
        try:
            for _ in range(20):  # 1.25 MiB of headers, never finished
                sock.sendall(filler)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            pass  # the server may close while we are still sending
        code, body = status_of(read_response(sock))
    assert code == 431 and body["reason"] == "RequestHeaderFieldsTooLarge"
    assert served.server.guard.refused == {"RequestHeaderFieldsTooLarge": 1}
    assert still_serving(served)
    metrics = served.client.get("/metrics").text
    assert 'draguard_connections_refused_total{reason="RequestHeaderFieldsTooLarge"} 1.0' in metrics


def test_one_complete_header_over_the_limit_gets_431(guarded: Callable[..., Served]) -> None:
    served = guarded(max_header_bytes=4096)
    with tls_socket(served) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 5000 + b"\r\n\r\n")
        code, _ = status_of(read_response(sock))
    assert code == 431


def test_headers_under_the_limit_are_served(guarded: Callable[..., Served]) -> None:
    served = guarded()
    response = served.client.get("/healthz", headers={"X-Filler": "a" * 900_000})
    assert response.status_code == 200
    assert served.server.guard.refused == {}
    assert "draguard_connections_refused_total{" not in served.client.get("/metrics").text


# ---------------------------------------------------------------------------- slowloris
def test_headers_that_never_finish_get_408_and_the_connection_closes(guarded: Callable[..., Served]) -> None:
    served = guarded(header_timeout_seconds=SMALL_TIMEOUT)
    with tls_socket(served) as slow, tls_socket(served) as silent:
        slow.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\n")  # ... and nothing more
        assert still_serving(served)  # other clients are answered meanwhile
        slow_code, body = status_of(read_response(slow))
        silent_raw = read_response(silent)  # connected, never sent a byte
    assert slow_code == 408 and body["reason"] == "Timeout"
    assert silent_raw == b""  # a connection that never sent a byte is closed quietly, as Go's server does
    assert served.server.guard.refused == {"Timeout": 1} and served.server.guard.idle_closed == 1
    assert still_serving(served)


def test_a_later_requests_headers_on_a_kept_alive_connection_have_their_own_deadline(
    guarded: Callable[..., Served],
) -> None:
    """The connection's one timer: requests answered past the first one's due time leave the
    connection open, and a later request whose headers never finish still gets its 408."""
    served = guarded(header_timeout_seconds=SMALL_TIMEOUT)
    with tls_socket(served) as sock:
        for _ in range(3):  # past the first request's due time, on the same connection
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            head = b""
            while b'"ok"}' not in head:
                head += sock.recv(65536)
            assert head.startswith(b"HTTP/1.1 200")
            time.sleep(SMALL_TIMEOUT * 0.6)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # ... and nothing more
        code, body = status_of(read_response(sock))
    assert code == 408 and body["reason"] == "Timeout"
    assert served.server.guard.refused == {"Timeout": 1}


def test_a_slow_review_is_not_cut_by_the_header_timeout(guarded: Callable[..., Served]) -> None:
    """The timer covers headers only: a keep-alive client doing several reviews is unaffected."""
    served = guarded(header_timeout_seconds=SMALL_TIMEOUT)
    review = admission_review(claim("ok", memory="8Gi"))
    for _ in range(3):
        assert served.client.post("/validate", json=review).status_code == 200
        time.sleep(SMALL_TIMEOUT / 2)
    assert served.server.guard.refused == {}


# ---------------------------------------------------------------------------- connections
def test_connections_over_the_limit_get_429(guarded: Callable[..., Served]) -> None:
    served = guarded(max_connections=3)
    with tls_socket(served) as a, tls_socket(served) as b, tls_socket(served) as c:
        for sock in (a, b, c):
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        with tls_socket(served) as extra:
            raw = read_response(extra)
        code, body = status_of(raw)
        assert code == 429 and b"retry-after: 1" in raw.lower() and body["reason"] == "TooManyRequests"
    assert served.server.guard.refused == {"TooManyRequests": 1}
    deadline = time.monotonic() + WAIT
    answered = b""
    while time.monotonic() < deadline and not answered.startswith(b"HTTP/1.1 200"):
        with tls_socket(served) as again:  # accepted again once the server has seen the closes
            again.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answered = read_response(again)
    assert answered.startswith(b"HTTP/1.1 200")


# ---------------------------------------------------------------------------- rendering
@pytest.mark.parametrize("where", ["uid", "name"])
@pytest.mark.parametrize("route", ["/validate", "/mutate"])
def test_lone_surrogates_never_break_the_response(guarded: Callable[..., Served], where: str, route: str) -> None:
    served = guarded()
    review = admission_review(claim("x", memory="500Gi"))
    if where == "uid":
        review["request"]["uid"] = "\ud800-uid"
    else:
        review["request"]["object"]["metadata"]["name"] = "bad\udfff"
        review["request"]["name"] = "bad\udfff"
    body = json.dumps(review).encode()  # ASCII escapes: "\\ud800", as an attacker would send
    response = served.client.post(route, content=body, headers={"Content-Type": "application/json"})
    if response.status_code == 400:  # refused while decoding: the API server can never send one
        assert response.json()["reason"] == "BadRequest" and "surrogate" in response.json()["message"]
        return
    assert response.status_code == 200
    answer = json.loads(response.content)["response"]
    assert answer["uid"] == review["request"]["uid"]  # echoed exactly (escaped in the JSON)
    if route == "/validate" and where == "uid":
        assert answer["allowed"] is False  # the claim is unsatisfiable
    elif route == "/validate":  # an invalid name is a parity finding: a warning at the webhook (issue #10)
        assert answer["allowed"] is True and answer["warnings"][0].startswith("FieldValueInvalid: version skew?")


def test_lone_surrogates_in_lint_output(guarded: Callable[..., Served]) -> None:
    served = guarded()
    doc = claim("bad\ud800", memory="500Gi")
    for fmt in ("json", "text", "junit", "sarif"):
        response = served.client.post(f"/lint?format={fmt}", content=json.dumps(doc).encode())
        assert response.status_code == 200, (fmt, response.text[:200])
        response.content.decode("utf-8")  # valid UTF-8 whatever the format


# ---------------------------------------------------------------------------- disconnects
def test_client_gone_mid_body_logs_one_line_without_a_traceback(
    guarded: Callable[..., Served], caplog: pytest.LogCaptureFixture
) -> None:
    served = guarded()
    caplog.set_level(logging.DEBUG)
    with tls_socket(served) as sock:
        sock.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100000\r\n\r\n{\"apiVersion\": ")
        time.sleep(0.2)
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and not any(
        getattr(r, "fields", {}).get("reason") == "ClientDisconnected" for r in caplog.records
    ):
        time.sleep(0.05)
    assert still_serving(served)
    gone = [r for r in caplog.records if getattr(r, "fields", {}).get("reason") == "ClientDisconnected"]
    assert len(gone) == 1
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records if r.exc_info]


# ---------------------------------------------------------------------------- log records
def _record(**fields: Any) -> logging.LogRecord:
    record = logging.LogRecord("draguard.review", logging.INFO, __file__, 1, "review", None, None)
    record.fields = fields
    return record


def test_a_700kb_field_is_never_logged_whole() -> None:
    line = JsonFormatter().format(_record(uid="u" * 700_000, decision="error"))
    out = json.loads(line)
    assert len(line) < 2 * MAX_FIELD_CHARS and out["decision"] == "error"
    assert "chars cut" in out["uid"] and out["uid"].startswith("uuu")


def test_many_long_fields_keep_the_record_bounded() -> None:
    line = JsonFormatter().format(_record(**{f"f{i}": "x" * MAX_FIELD_CHARS for i in range(50)}))
    out = json.loads(line)
    assert len(line) <= MAX_RECORD_CHARS and out["msg"] == "review" and out["truncated"] > MAX_RECORD_CHARS


def test_short_records_are_unchanged() -> None:
    out = json.loads(JsonFormatter().format(_record(uid="abc", reasons=["A", "B"])))
    assert out["uid"] == "abc" and out["reasons"] == ["A", "B"] and "truncated" not in out


def test_bodies_with_lone_surrogates_still_encode() -> None:
    from draguard.server.safe_render import SafeJSONResponse, encode_body

    assert json.loads(encode_body('{"name": "a\ud800"}', "application/json")) == {"name": "a\ud800"}
    assert encode_body("name a\udfff\n", "text/plain").decode() == "name a\ufffd\n"
    assert encode_body("plain é", "application/xml") == "plain é".encode()
    rendered = SafeJSONResponse({"uid": "\ud800", "ok": "é"}).body
    assert json.loads(rendered) == {"uid": "\ud800", "ok": "é"}
    assert SafeJSONResponse({"ok": "é"}).body == '{"ok":"é"}'.encode()


def test_envelope_errors_describe_values_briefly(guarded: Callable[..., Served]) -> None:
    served = guarded()
    body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "x" * 100_000}).encode()
    response = served.client.post("/validate", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400 and len(response.text) < 1000
    deep_kind = b'{"apiVersion": "admission.k8s.io/v1", "kind": ' + b"[" * 900 + b"]" * 900 + b"}"
    response = served.client.post("/validate", content=deep_kind, headers={"Content-Type": "application/json"})
    assert response.status_code == 400 and "kind <array>" in response.json()["message"]


def test_admission_review_nested_5000_deep_gets_a_decision(guarded: Callable[..., Served]) -> None:
    """Found by make fuzz: the webhook's json.loads recursed past ~1,000 levels (a 500)."""
    served = guarded()
    review = json.dumps(admission_review(claim("deep", memory="500Gi")))
    nested = '{"p": ' + "[" * 5000 + "]" * 5000 + "}"
    config = ', "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com", "parameters": ' + nested + "}}]"
    body = review.replace('}}]}}', '}}]' + config + '}}', 1)  # config next to requests
    assert loads_json(body)["request"]["object"]["spec"]["devices"]["config"]
    response = served.client.post("/validate", content=body.encode(), headers={"Content-Type": "application/json"})
    assert response.status_code == 200
    answer = response.json()["response"]
    assert answer["allowed"] is False and answer["status"]["details"]["causes"][0]["reason"] == "Unsatisfiable"
