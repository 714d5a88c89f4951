"""The admission door's front (app/server/door.py): a remembered answer given before FastAPI's
routing is the route's answer byte for byte; everything else reaches the route as it was sent."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
from collections.abc import Callable
from typing import Any

import pytest
from draguard.inventory import StaticInventory
from draguard.server.app import create_app
from draguard.server.door import HANDOFF, Handoff, first_message
from draguard.server.state import ServerState

from server.conftest import Served, client_context
from server.reviews import admission_review, claim

Message = dict[str, Any]


def raw_post(s: Served, path: str, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
    """Status, headers (but the date) and body bytes, exactly as they came over HTTPS."""
    conn = http.client.HTTPSConnection("127.0.0.1", s.server.port, context=client_context(s.ca), timeout=10)
    try:
        conn.request("POST", path, body=body, headers={"content-type": "application/json"})
        resp = conn.getresponse()
        return resp.status, [(k.lower(), v) for k, v in resp.getheaders() if k.lower() != "date"], resp.read()
    finally:
        conn.close()


def memo_hits(s: Served) -> float:
    for line in s.client.get("/metrics").text.splitlines():
        if line.startswith('draguard_answer_memo_lookups_total{result="hit"}'):
            return float(line.split()[-1])
    return 0.0


@pytest.mark.parametrize("route", ["/validate", "/mutate"])
@pytest.mark.parametrize("obj", [claim("ok"), claim("big", memory="50Gi"), claim("defaulted", memory="5Gi")],
                         ids=["allowed", "denied", "warned"])
def test_a_remembered_answer_is_the_routes_answer_byte_for_byte(
    serve: Callable[..., Served], static_inventory: StaticInventory, route: str, obj: dict[str, Any]
) -> None:
    s = serve(ServerState(inventory=static_inventory))
    body = json.dumps(admission_review(obj, uid="same-uid")).encode()
    reviewed = raw_post(s, route, body)
    assert memo_hits(s) == 0
    remembered = raw_post(s, route, body)
    assert memo_hits(s) == 1
    assert remembered == reviewed
    assert reviewed[0] == 200 and json.loads(reviewed[2])["response"]["uid"] == "same-uid"


# ------------------------------------------------------------------ in-process: who answered
def scope_of(body: bytes, path: str = "/validate", method: str = "POST", declared: bool = True) -> dict[str, Any]:
    headers = [(b"host", b"draguard"), (b"content-type", b"application/json")]
    if declared:
        headers.append((b"content-length", str(len(body)).encode()))
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "https",
            "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "", "headers": headers,
            "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8443), "state": {}}


class Exchange:
    """One ASGI request: the messages it receives, what was sent back, and what ``inner`` saw."""

    def __init__(self, messages: list[Message]) -> None:
        self.messages = messages
        self.sent: list[Message] = []
        self.handed: list[tuple[dict[str, Any], list[Message]]] = []

    async def receive(self) -> Message:
        if self.messages:
            return self.messages.pop(0)
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        self.sent.append(message)

    async def inner(self, scope: Any, receive: Any, send: Any) -> None:
        got = [await receive() for _ in range(len(self.messages) + 1)] if scope[HANDOFF].body is None else []
        self.handed.append((scope, got))

    @property
    def status(self) -> int:
        return int(self.sent[0]["status"])

    @property
    def body(self) -> Any:
        return json.loads(b"".join(m.get("body", b"") for m in self.sent[1:]))


def door_of(state: ServerState) -> Any:
    return create_app(state).door  # type: ignore[attr-defined]


def test_the_front_answers_a_hit_and_hands_a_miss_to_the_route_with_what_it_read(
    static_inventory: StaticInventory,
) -> None:
    app = create_app(ServerState(inventory=static_inventory))
    body = json.dumps(admission_review(claim("big", memory="50Gi"))).encode()

    async def run() -> tuple[Exchange, Exchange, Exchange]:
        miss = Exchange([{"type": "http.request", "body": body, "more_body": False}])
        await app.door.front(scope_of(body), miss.receive, miss.send, "validate", miss.inner)  # type: ignore[attr-defined]
        reviewed = Exchange([{"type": "http.request", "body": body, "more_body": False}])
        await app(scope_of(body), reviewed.receive, reviewed.send)  # the route: reviews and remembers
        hit = Exchange([{"type": "http.request", "body": body, "more_body": False}])
        await app.door.front(scope_of(body), hit.receive, hit.send, "validate", hit.inner)  # type: ignore[attr-defined]
        return miss, reviewed, hit

    miss, reviewed, hit = asyncio.run(run())
    assert not miss.sent and len(miss.handed) == 1
    handoff = miss.handed[0][0][HANDOFF]
    assert isinstance(handoff, Handoff) and handoff.body == body and handoff.call is not None
    assert handoff.call.name == "big"
    assert reviewed.status == 200 and reviewed.body["response"]["allowed"] is False
    assert not hit.handed and hit.status == 200 and hit.body == reviewed.body


@pytest.mark.parametrize("case", ["pieces", "too-large", "not-json", "skipped-kind", "disconnect"])
def test_what_the_front_does_not_answer_reaches_the_route_as_it_came(
    static_inventory: StaticInventory, case: str
) -> None:
    state = ServerState(inventory=static_inventory, max_body_bytes=4096)
    door = door_of(state)
    body = json.dumps(admission_review(claim("ok"))).encode()
    first: Message = {"type": "http.request", "body": body, "more_body": False}
    rest: list[Message] = []
    if case == "pieces":
        first, rest = {"type": "http.request", "body": body[:10], "more_body": True}, [
            {"type": "http.request", "body": body[10:], "more_body": False}]
    elif case == "too-large":
        first = {"type": "http.request", "body": body + b" " * 5000, "more_body": False}
    elif case == "not-json":
        first = {"type": "http.request", "body": b"{not json", "more_body": False}
    elif case == "skipped-kind":
        first = {"type": "http.request", "body": json.dumps(admission_review(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, group="", kind="ConfigMap")).encode(),
            "more_body": False}
    else:
        first = {"type": "http.disconnect"}
    ex = Exchange([first, *rest])
    asyncio.run(door.front(scope_of(first.get("body", b""), declared=False), ex.receive, ex.send, "validate", ex.inner))
    assert not ex.sent and len(ex.handed) == 1
    scope, replayed = ex.handed[0]
    handoff = scope[HANDOFF]
    if case in ("not-json", "skipped-kind"):  # whole: the route gets the bytes, parsed when they parse
        assert handoff.body == first["body"] and (handoff.call is None) == (case == "not-json")
    else:  # the route reads it again: the first message replayed, then the rest
        assert handoff.body is None and handoff.call is None
        assert replayed[:1 + len(rest)] == [first, *rest]


def test_a_body_that_never_comes_gets_one_408_from_the_route(static_inventory: StaticInventory) -> None:
    app = create_app(ServerState(inventory=static_inventory, deadline_seconds=0.05))
    ex = Exchange([])
    asyncio.run(app(scope_of(b"x" * 100), ex.receive, ex.send))
    assert ex.status == 408
    assert ex.body["reason"] == "Timeout" and ex.body["message"] == "request body not received within 0.05s"


class Broken:
    """An instant source whose snapshot fails: a bug in the lookup."""

    synced = True
    instant_snapshot = True
    restarts = 0

    def snapshot(self) -> Any:
        raise RuntimeError("boom")

    def problem(self) -> None:
        return None

    def status(self) -> dict[str, Any]:
        return {"source": "broken"}

    def last_sync_age(self) -> float:
        return 0.0

    async def run(self) -> None:
        return None


def test_a_lookup_that_fails_in_the_front_is_answered_by_the_route_fail_open_never_500() -> None:
    app = create_app(ServerState(inventory=Broken()))  # type: ignore[arg-type]
    body = json.dumps(admission_review(claim("ok"))).encode()
    ex = Exchange([{"type": "http.request", "body": body, "more_body": False}])
    asyncio.run(app(scope_of(body), ex.receive, ex.send))
    assert ex.status == 200
    response = ex.body["response"]
    assert response["allowed"] is True and response["auditAnnotations"] == {"fail-open": "InternalError"}
    assert response["warnings"][0].startswith("InternalError: draguard failed (RuntimeError)")


def test_a_slow_body_over_https_is_read_by_the_route(serve: Callable[..., Served],
                                                     static_inventory: StaticInventory) -> None:
    """Headers first, the body a moment later in two writes: answered as one request."""
    s = serve(ServerState(inventory=static_inventory))
    body = json.dumps(admission_review(claim("ok"), uid="slow-uid")).encode()
    ctx = client_context(s.ca)
    with socket.create_connection(("127.0.0.1", s.server.port)) as raw, \
            ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        tls.sendall(b"POST /validate HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                    b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n")
        tls.sendall(body[:50])
        tls.sendall(body[50:])
        got = b""
        while chunk := tls.recv(65536):
            got += chunk
    head, _, payload = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    assert json.loads(payload)["response"]["uid"] == "slow-uid"


def test_other_methods_and_paths_are_fastapis(served_plain: Any) -> None:
    assert served_plain.get("/validate").status_code == 405
    assert served_plain.post("/validate/", content=b"{}").status_code == 307  # the redirect FastAPI makes


@pytest.fixture
def served_plain(serve: Callable[..., Served], static_inventory: StaticInventory) -> Any:
    return serve(ServerState(inventory=static_inventory)).client



# ------------------------------------------------------------------ the first message's deadline
def test_the_first_message_is_awaited_until_its_deadline_and_no_longer() -> None:
    async def run() -> tuple[Any, Any, int]:
        ready = Exchange([{"type": "http.request", "body": b"x", "more_body": False}])
        got = await first_message(ready.receive, 5.0)
        late = await first_message(Exchange([]).receive, 0.01)
        task = asyncio.current_task()
        assert task is not None
        return got, late, task.cancelling()

    got, late, cancelling = asyncio.run(run())
    assert got == {"type": "http.request", "body": b"x", "more_body": False}
    assert late is None and cancelling == 0  # its own cancellation taken back


def test_a_cancellation_from_outside_is_not_taken_for_the_deadline() -> None:
    async def run() -> None:
        waiting = asyncio.create_task(first_message(Exchange([]).receive, 5.0))
        await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting

    asyncio.run(run())
