"""``/validate`` called in-process as an ASGI app, draguard's against the floor's: CPU per request.

Why: over HTTPS on a shared 2-core VM the server's figures move by ±30 % between runs; called
directly (no TLS, no sockets, a fake ``receive``/``send``), the app's own cost per request is
steady, and ``--profile`` shows where it goes (cProfile on thread CPU time).  Not part of
``make bench`` (it measures no goal); RESULTS.md part 1 quotes it for what remains.  A third
line, a bare-ASGI no-op, is a reference for what FastAPI's own per-request work costs (remembered
answers skip it; the floor does not).

    python benchmarks/profile_webhook.py [--requests 3000] [--devices 10000] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import sys
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_webhook import mix_bodies  # noqa: E402
from draguard.inventory import Inventory, build_inventory  # noqa: E402
from draguard.server.app import create_app  # noqa: E402
from draguard.server.logs import configure_logging  # noqa: E402
from draguard.server.state import ServerState  # noqa: E402
from floor import create_floor_app  # noqa: E402
from workload import make_inventory  # noqa: E402


class Snapshot:
    """An inventory source over one built snapshot (as ``--inventory`` files give)."""

    synced = True
    instant_snapshot = True
    restarts = 0

    def __init__(self, inventory: Inventory) -> None:
        self.inventory = inventory

    def snapshot(self) -> Inventory:
        return self.inventory

    def problem(self) -> None:
        return None

    def status(self) -> dict[str, Any]:
        return {"source": "profile"}

    def last_sync_age(self) -> float:
        return 0.0

    async def run(self) -> None:
        return None


def create_raw_floor() -> Any:
    """The floor's answer as a bare ASGI callable, without FastAPI — a reference line only, not a
    floor of any figure: draguard's remembered answers are given before FastAPI's routing
    (``app/server/door.py``), while the floor answers from a FastAPI route, so this shows what the
    same stack costs without FastAPI's per-request work."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        message = await receive()
        doc: Any = orjson.loads(message.get("body", b""))
        request_part = doc.get("request") if isinstance(doc, dict) else None
        uid = request_part.get("uid", "") if isinstance(request_part, dict) else ""
        body = orjson.dumps({"apiVersion": doc.get("apiVersion", "admission.k8s.io/v1"), "kind": "AdmissionReview",
                             "response": {"uid": uid, "allowed": True}})
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-length", str(len(body)).encode()), (b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})

    return app


async def call(app: Any, body: bytes) -> None:
    scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
             "method": "POST", "scheme": "https", "path": "/validate", "raw_path": b"/validate",
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8443),
             "headers": [(b"host", b"127.0.0.1:8443"), (b"content-length", str(len(body)).encode()),
                         (b"content-type", b"application/json")], "state": {}}
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        return None

    await app(scope, receive, send)


async def run(args: argparse.Namespace) -> None:
    inventory = build_inventory(make_inventory(args.devices))
    apps = {"draguard": create_app(ServerState(inventory=Snapshot(inventory))), "floor": create_floor_app(),
            "raw ASGI floor (reference)": create_raw_floor()}
    bodies = mix_bodies(args.mix, args.requests, 1)
    for app in apps.values():  # warm: compile selectors, fill the caches (and, for the twelve, the memo)
        for body in bodies[:24]:
            await call(app, body)
    for name, app in apps.items():
        started = time.thread_time()
        for i in range(args.requests):
            await call(app, bodies[i % len(bodies)])
        print(f"{name:26s} {(time.thread_time() - started) / args.requests * 1e6:7.1f} us CPU per request")
    if args.profile:
        profile = cProfile.Profile(time.thread_time)
        profile.enable()
        for i in range(args.requests):
            await call(apps["draguard"], bodies[i % len(bodies)])
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(40)
        print(out.getvalue())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--devices", type=int, default=10_000)
    parser.add_argument("--mix", default="twelve", help="as bench_webhook.py's --mix (one of them)")
    parser.add_argument("--log-level", default="info")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    sys.stderr = open(os.devnull, "w")  # noqa: SIM115  # the review log lines go there, written as deployed
    configure_logging(args.log_level)
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
