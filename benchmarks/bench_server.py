"""Latency of ``POST /validate`` over real HTTPS on loopback (``make bench`` / run directly).

Why measure over the wire: the number that matters for a webhook is what the API server
waits for — TLS, HTTP parsing, JSON, the worker-thread hop and the review together.  Reports
p50/p90/p99/max in milliseconds for keep-alive connections (how the API server calls) and for
a fresh TLS handshake per request (the worst case), plus throughput — each next to the same
run against the no-op floor server (:mod:`floor`: the same FastAPI/uvicorn/TLS stack answering
``allowed: true`` without a review), served the same way in the same process, with the ratio.

    python benchmarks/bench_server.py [--requests 500] [--concurrency 4] [--inventory PATH]
"""

from __future__ import annotations

import argparse
import json
import socket
import ssl
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from draguard.certs import generate_bundle, write_bundle  # noqa: E402
from draguard.inventory import NoInventory, StaticInventory  # noqa: E402
from draguard.server.app import create_app  # noqa: E402
from draguard.server.runner import BackgroundServer  # noqa: E402
from draguard.server.state import ServerState  # noqa: E402
from draguard.server.tls import CertReloader  # noqa: E402
from floor import create_floor_app  # noqa: E402

NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
DEFAULT_INVENTORY = ROOT / "tests" / "server" / "data" / "inventory.yaml"


def small_claim_review() -> dict[str, Any]:
    claim = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "bench", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu.example.com", "capacity": {"requests": {"memory": "8Gi"}}}}]}},
    }
    gvk = {"group": "resource.k8s.io", "version": "v1", "kind": "ResourceClaim"}
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": str(uuid.uuid4()), "kind": gvk, "requestKind": gvk,
        "resource": {"group": "resource.k8s.io", "version": "v1", "resource": "resourceclaims"},
        "name": "bench", "namespace": "default", "operation": "CREATE", "object": claim, "dryRun": False}}


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(p: float) -> float:
        return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]

    return {"p50": at(0.50), "p90": at(0.90), "p99": at(0.99), "max": ordered[-1],
            "mean": statistics.fmean(ordered)}


def run(url: str, ca: Path, requests: int, concurrency: int, fresh: bool) -> dict[str, Any]:
    body = json.dumps(small_claim_review()).encode()
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    per_thread = max(1, requests // concurrency)

    def worker() -> None:
        nonlocal errors
        ctx = ssl.create_default_context(cafile=str(ca))

        def new_client() -> httpx.Client:
            # TCP_NODELAY as Go's net/http (the API server) sets it; without it Nagle + delayed
            # ACK add ~40 ms to every request whose headers and body go out in two writes
            transport = httpx.HTTPTransport(verify=ctx, socket_options=NODELAY)
            return httpx.Client(base_url=url, transport=transport, timeout=10)

        client = new_client()
        try:
            for _ in range(per_thread):
                if fresh:
                    client.close()
                    client = new_client()
                t0 = time.perf_counter()
                r = client.post("/validate", content=body, headers={"content-type": "application/json"})
                ms = (time.perf_counter() - t0) * 1000
                with lock:
                    latencies.append(ms)
                    if r.status_code != 200:
                        errors += 1
        finally:
            client.close()

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return {"requests": len(latencies), "errors": errors, "rps": len(latencies) / wall,
            **{k: round(v, 2) for k, v in percentiles(latencies).items()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--inventory", default=str(DEFAULT_INVENTORY))
    parser.add_argument("--no-inventory", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_bundle(generate_bundle("draguard", "draguard", extra_sans=["127.0.0.1"]), Path(tmp))
        inventory = NoInventory() if args.no_inventory else StaticInventory([args.inventory])
        state = ServerState(inventory=inventory, tls=CertReloader(paths["cert"], paths["key"]))
        assert state.tls is not None
        with BackgroundServer(create_app(state), ssl_context=state.tls.context) as server, \
                BackgroundServer(create_floor_app(), ssl_context=state.tls.context, http="httptools") as floor:
            for url in (server.url, floor.url):
                run(url, paths["ca"], 20, 1, fresh=False)  # warm-up: CEL compile cache, imports
            for name, fresh in (("keep-alive", False), ("fresh TLS handshake", True)):
                ours = run(server.url, paths["ca"], args.requests, args.concurrency, fresh)
                base = run(floor.url, paths["ca"], args.requests, args.concurrency, fresh)
                print(f"/validate small claim, {name}, concurrency {args.concurrency}: draguard "
                      + json.dumps(ours) + " floor " + json.dumps(base)
                      + f" -> draguard/floor: throughput {ours['rps'] / base['rps']:.2f}x, "
                      f"p50 {ours['p50'] / base['p50']:.2f}x, p99 {ours['p99'] / base['p99']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
