"""Isolation under load (issue #10): a well-behaved client's verdicts while others flood draguard.

Four clients flood ``POST /lint`` with a large multi-document body, four send CEL-heavy claims
(each a different, legal-but-slow selector, so no cache helps), and a fifth sends alternately a
claim that is proven unsatisfiable and one that is satisfiable.  What must hold: 100 % of the
fifth client's unsatisfiable claims denied and satisfiable ones allowed, each answered under
the webhook timeout (5 s; draguard's own deadline is 2 s).  Prints the fifth client's latency
percentiles and what the others got (429s, fail-opens); exits 1 if a verdict was wrong.

    python benchmarks/bench_isolation.py [--rounds 20] [--lint-kib 1400] [--inventory PATH]
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import socket
import ssl
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from draguard.certs import generate_bundle, write_bundle  # noqa: E402
from draguard.inventory import StaticInventory  # noqa: E402
from draguard.server.app import create_app  # noqa: E402
from draguard.server.runner import BackgroundServer  # noqa: E402
from draguard.server.state import ServerState  # noqa: E402
from draguard.server.tls import CertReloader  # noqa: E402

NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
DEFAULT_INVENTORY = ROOT / "tests" / "server" / "data" / "inventory.yaml"
WEBHOOK_TIMEOUT = 5.0
_serial = itertools.count()


def claim(name: str, *, memory: str | None = None, selector: str | None = None) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu.example.com"}
    if memory:
        exactly["capacity"] = {"requests": {"memory": memory}}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}


def review(obj: dict[str, Any]) -> bytes:
    gvk = {"group": "resource.k8s.io", "version": "v1", "kind": "ResourceClaim"}
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": str(uuid.uuid4()), "kind": gvk, "requestKind": gvk,
        "resource": {"group": "resource.k8s.io", "version": "v1", "resource": "resourceclaims"},
        "name": obj["metadata"]["name"], "namespace": "default", "operation": "CREATE", "object": obj,
        "dryRun": False}}).encode()


def heavy_selector(n: int = 40) -> str:
    """Passes the 1,000,000 cost estimate (which assumes cel-go); ~1-2 s per device in cel-python."""
    items = "[" + ",".join(str(i) for i in range(n)) + "]"
    k = next(_serial)  # a different text each time: the compile and result caches cannot help
    return f"{items}.all(x, {items}.all(y, {items}.all(z, x + y + z >= -{k})))"


def lint_body(kib: int) -> bytes:
    docs: list[dict[str, Any]] = []
    size = 0
    i = 0
    while size < kib * 1024:
        doc = claim(f"lint-{i}", memory=f"{(i % 60) + 1}Gi")
        docs.append(doc)
        size += len(yaml.safe_dump(doc))
        i += 1
    return yaml.safe_dump_all(docs).encode()


def client(url: str, ca: Path) -> httpx.Client:
    transport = httpx.HTTPTransport(verify=ssl.create_default_context(cafile=str(ca)), socket_options=NODELAY)
    return httpx.Client(base_url=url, transport=transport, timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="unsatisfiable + satisfiable pairs of the fifth client")
    parser.add_argument("--lint-kib", type=int, default=1400, help="size of each /lint body")
    parser.add_argument("--inventory", default=str(DEFAULT_INVENTORY))
    parser.add_argument("--deadline", type=float, default=2.0)
    args = parser.parse_args()
    logging.getLogger("draguard").setLevel(logging.ERROR)  # the fail-open warnings are counted below instead
    body = lint_body(args.lint_kib)
    stop = threading.Event()
    others: Counter[str] = Counter()
    lock = threading.Lock()
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_bundle(generate_bundle("draguard", "draguard", extra_sans=["127.0.0.1"]), Path(tmp))
        state = ServerState(inventory=StaticInventory([args.inventory]), deadline_seconds=args.deadline,
                            tls=CertReloader(paths["cert"], paths["key"]))
        assert state.tls is not None
        with BackgroundServer(create_app(state), ssl_context=state.tls.context) as server:
            def flood_lint() -> None:
                with client(server.url, paths["ca"]) as c:
                    while not stop.is_set():
                        try:
                            r = c.post("/lint", content=body, headers={"content-type": "application/yaml"})
                            key = f"lint {r.status_code}"
                        except httpx.HTTPError as exc:
                            key = f"lint {type(exc).__name__}"
                        with lock:
                            others[key] += 1
                        if key == "lint 429":
                            time.sleep(0.2)  # a client honouring Retry-After only loosely

            def flood_cel() -> None:
                with client(server.url, paths["ca"]) as c:
                    while not stop.is_set():
                        r = c.post("/validate", content=review(claim("heavy", selector=heavy_selector())),
                                   headers={"content-type": "application/json"})
                        answer = r.json()["response"]
                        fail_open = answer.get("auditAnnotations", {}).get("fail-open")
                        with lock:
                            others[f"cel-heavy allowed={answer['allowed']} failOpen={fail_open}"] += 1

            threads = [threading.Thread(target=flood_lint, daemon=True) for _ in range(4)]
            threads += [threading.Thread(target=flood_cel, daemon=True) for _ in range(4)]
            for t in threads:
                t.start()
            time.sleep(1.0)  # let the flood build up
            wrong: list[str] = []
            latencies: list[float] = []
            with client(server.url, paths["ca"]) as c:
                for i in range(args.rounds):
                    for name, memory, must_allow in ((f"unsat-{i}", "50Gi", False), (f"sat-{i}", "8Gi", True)):
                        t0 = time.perf_counter()
                        r = c.post("/validate", content=review(claim(name, memory=memory)),
                                   headers={"content-type": "application/json"})
                        elapsed = time.perf_counter() - t0
                        latencies.append(elapsed)
                        answer = r.json()["response"]
                        if answer["allowed"] is not must_allow or elapsed >= WEBHOOK_TIMEOUT:
                            wrong.append(f"{name}: allowed={answer['allowed']} in {elapsed:.2f}s "
                                         f"{answer.get('warnings', [])}")
            stop.set()
            for t in threads:
                t.join(60)
    ordered = sorted(latencies)

    def at(p: float) -> float:
        return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))] * 1000

    total = 2 * args.rounds
    print(f"fifth client: {total - len(wrong)}/{total} verdicts right "
          f"({args.rounds} unsatisfiable denied, {args.rounds} satisfiable allowed expected); "
          f"latency p50 {at(0.5):.0f} ms, p90 {at(0.9):.0f} ms, p99 {at(0.99):.0f} ms, max {ordered[-1] * 1000:.0f} ms "
          f"(webhook timeout {WEBHOOK_TIMEOUT:g} s)")
    print("the others got: " + json.dumps(dict(sorted(others.items()))))
    for w in wrong:
        print("WRONG " + w)
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
