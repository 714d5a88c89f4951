"""Soak: ``draguard serve`` under steady review load while the inventory churns, for minutes.

What it does: starts the fake API server (tests/fakeapi) holding the demo inventory, runs the real
``draguard serve --kubeconfig`` as a separate process watching it, updates one ResourceSlice
every second through the fake API server (a new pool generation with a changed capacity, so
every snapshot differs), and drives ``/validate`` and ``/mutate`` at a target rate from several
client processes (open loop: requests are scheduled by the clock, not by the previous answer).

What it reports: requests sent and the rate achieved, errors (anything but a 200 with an
AdmissionReview, or a transport error), latency p50/p99/max, the server's RSS at the start of
the measured period, at the end and its maximum (``/proc``), inventory rebuilds and watch
restarts.  Results go to benchmarks/RESULTS.md, in the section between the ``soak`` markers.

    python benchmarks/soak.py [--minutes 10] [--rate 500] [--clients 6] [--no-write]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing as mp
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from draguard.certs import generate_bundle, write_bundle  # noqa: E402
from fakeapi import FakeCluster, serve_fake_api  # noqa: E402
from results import write_section  # noqa: E402

START, END = "<!-- soak:start -->", "<!-- soak:end -->"
RESOURCE = {"DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices", "Node": "nodes"}
CLASSES = ["gpu.example.com", "shared-gpu.example.com"]


def review(i: int) -> tuple[str, dict[str, Any]]:
    """A mix: fitting and unsatisfiable claims on /validate, default-filling on /mutate."""
    memory = ["8Gi", "20Gi", "50Gi", None][i % 4]
    exactly: dict[str, Any] = {"deviceClassName": CLASSES[i % 2]}
    if memory:
        exactly["capacity"] = {"requests": {"memory": memory}}
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": f"soak-{i}", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}
    gvk = {"group": "resource.k8s.io", "version": "v1", "kind": "ResourceClaim"}
    body = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": str(uuid.uuid4()), "kind": gvk, "requestKind": gvk,
        "resource": {"group": "resource.k8s.io", "version": "v1", "resource": "resourceclaims"},
        "name": claim["metadata"]["name"], "namespace": "default", "operation": "CREATE", "object": claim,
        "dryRun": False}}
    return ("/mutate" if i % 5 == 0 else "/validate"), body


def client_worker(url: str, ca: str, rate: float, seconds: float, offset: int, out: Any) -> None:
    """Open-loop load from one process: send at ``rate``/s for ``seconds``; report what happened."""
    import ssl

    ctx = ssl.create_default_context(cafile=ca)
    latencies: list[float] = []
    errors: dict[str, int] = {}
    sent = 0
    start = time.perf_counter()
    with httpx.Client(base_url=url, verify=ctx, timeout=10.0) as client:
        while True:
            due = start + sent / rate
            now = time.perf_counter()
            if due - start >= seconds:
                break
            if due > now:
                time.sleep(due - now)
            route, body = review(offset + sent)
            sent += 1
            t0 = time.perf_counter()
            try:
                response = client.post(route, json=body)
                ok = response.status_code == 200 and response.json().get("kind") == "AdmissionReview"
                if not ok:
                    key = f"http {response.status_code}"
                    errors[key] = errors.get(key, 0) + 1
            except httpx.HTTPError as exc:
                errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                continue
            latencies.append((time.perf_counter() - t0) * 1000)
    out.put({"sent": sent, "latencies": latencies, "errors": errors, "seconds": time.perf_counter() - start})


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def churn(cluster: FakeCluster, slices: list[dict[str, Any]], stop: threading.Event, counter: list[int]) -> None:
    """Every second, a new generation of one slice with a different capacity (the watch sends it)."""
    i = 0
    while not stop.wait(1.0):
        obj = json.loads(json.dumps(slices[i % len(slices)]))
        spec = obj["spec"]
        spec["pool"]["generation"] = spec["pool"].get("generation", 1) + i + 1
        for device in spec.get("devices", []):
            capacity = device.get("capacity", {})
            if "memory" in capacity:
                capacity["memory"]["value"] = ["40Gi", "48Gi", "80Gi"][i % 3]
        slices[i % len(slices)] = obj
        cluster.put("resourceslices", obj)
        counter[0] += 1
        i += 1


def metric(text: str, name: str) -> float:
    match = re.search(rf"^{re.escape(name)} ([0-9.e+-]+)$", text, re.M)
    return float(match.group(1)) if match else 0.0


def percentile(ordered: list[float], p: float) -> float:
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))] if ordered else 0.0


def run(minutes: float, rate: float, clients: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="draguard-soak-"))
    api_tls = write_bundle(generate_bundle("kubernetes", "default", extra_sans=["127.0.0.1"]), work / "api")
    tls = write_bundle(generate_bundle("draguard", "draguard", extra_sans=["127.0.0.1"]), work / "tls")
    cluster = FakeCluster(token="soak-token")
    slices: list[dict[str, Any]] = []
    for path in sorted((ROOT / "examples" / "inventory").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") in RESOURCE:
                cluster.put(RESOURCE[doc["kind"]], doc)
                if doc["kind"] == "ResourceSlice":
                    slices.append(doc)
    with serve_fake_api(cluster, cert=api_tls["cert"], key=api_tls["key"]) as api:
        kubeconfig = work / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump({
            "current-context": "c",
            "clusters": [{"name": "k", "cluster": {"server": api.url, "certificate-authority": str(api_tls["ca"])}}],
            "users": [{"name": "u", "user": {"token": "soak-token"}}],
            "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        }))
        port = _free_port()
        log = (work / "serve.log").open("wb")
        server = subprocess.Popen(
            [sys.executable, "-m", "draguard", "serve", "--host", "127.0.0.1", "--port", str(port),
             "--tls-cert", str(tls["cert"]), "--tls-key", str(tls["key"]), "--kubeconfig", str(kubeconfig),
             "--log-level", "warning", "--shutdown-drain-seconds", "0"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log,
        )
        url = f"https://127.0.0.1:{port}"
        try:
            probe = httpx.Client(base_url=url, verify=str(tls["ca"]), timeout=5)
            _wait(lambda: _ready(probe), 60, "draguard to be ready")
            warm = min(30.0, minutes * 60 / 10)  # warm-up: caches, first snapshots; not measured
            _load(url, str(tls["ca"]), rate, warm, clients)
            stop = threading.Event()
            updates = [0]
            churner = threading.Thread(target=churn, args=(cluster, slices, stop, updates), daemon=True)
            churner.start()
            rss_start = rss_mb(server.pid)
            rss_max = [rss_start]
            sampler_stop = threading.Event()

            def sample() -> None:
                while not sampler_stop.wait(1.0):
                    rss_max[0] = max(rss_max[0], rss_mb(server.pid))

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            results = _load(url, str(tls["ca"]), rate, minutes * 60, clients)
            stop.set()
            sampler_stop.set()
            rss_end = rss_mb(server.pid)
            metrics = probe.get("/metrics").text
            alive = server.poll() is None
        finally:
            server.terminate()
            server.wait(30)
            log.close()
    latencies = sorted(x for r in results for x in r["latencies"])
    errors: dict[str, int] = {}
    for r in results:
        for k, v in r["errors"].items():
            errors[k] = errors.get(k, 0) + v
    sent = sum(r["sent"] for r in results)
    seconds = max(r["seconds"] for r in results)
    return {
        "when": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "minutes": minutes, "target_rate": rate, "clients": clients, "cpus": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "sent": sent, "achieved_rate": round(sent / seconds, 1), "errors": sum(errors.values()),
        "error_kinds": errors, "p50_ms": round(statistics.median(latencies), 2) if latencies else None,
        "p99_ms": round(percentile(latencies, 0.99), 2), "max_ms": round(latencies[-1], 2) if latencies else None,
        "rss_start_mb": round(rss_start, 1), "rss_end_mb": round(rss_end, 1), "rss_max_mb": round(rss_max[0], 1),
        "slice_updates": updates[0], "watch_restarts": metric(metrics, "draguard_watch_restarts_total"),
        "server_alive_at_end": alive,
    }


def _load(url: str, ca: str, rate: float, seconds: float, clients: int) -> list[dict[str, Any]]:
    out: Any = mp.Queue()
    procs = [mp.Process(target=client_worker, args=(url, ca, rate / clients, seconds, i * 10_000_000, out))
             for i in range(clients)]
    for p in procs:
        p.start()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return results


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ready(client: httpx.Client) -> bool:
    try:
        return client.get("/readyz").status_code == 200
    except httpx.HTTPError:
        return False


def _wait(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"soak: timed out waiting for {what}")
        time.sleep(0.2)


def write_results(r: dict[str, Any]) -> None:
    section = f"""{START}
## Soak (benchmarks/soak.py)

`python benchmarks/soak.py --minutes {r['minutes']:g} --rate {r['target_rate']:g} --clients {r['clients']}` — real
`draguard serve --kubeconfig` against the fake API server, one ResourceSlice updated every second,
`/validate` + `/mutate` (1 in 5) with a mix of fitting, rounding and unsatisfiable claims.
Run {r['when']} on {r['cpus']} CPUs (1-minute load average at the end: {r['load_average_1m']}; the machine is
shared with other jobs, so read the latency as an upper bound).

| figure | value |
|---|---|
| duration (measured, after warm-up) | {r['minutes']:g} min |
| target rate / achieved | {r['target_rate']:g} / {r['achieved_rate']:g} reviews/s |
| reviews sent | {r['sent']:,} |
| errors (non-200, not an AdmissionReview, transport) | {r['errors']} {r['error_kinds'] or ''} |
| latency p50 / p99 / max | {r['p50_ms']} / {r['p99_ms']} / {r['max_ms']} ms |
| server RSS start / end / max | {r['rss_start_mb']} / {r['rss_end_mb']} / {r['rss_max_mb']} MB |
| slice updates through the watch | {r['slice_updates']} (watch restarts: {r['watch_restarts']:g}) |
| server alive at the end | {r['server_alive_at_end']} |
{END}"""
    write_section(START, END, section)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="measured duration (default 10)")
    parser.add_argument("--rate", type=float, default=500.0, help="target reviews per second (default 500)")
    parser.add_argument("--clients", type=int, default=6, help="client processes (default 6)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    result = run(args.minutes, args.rate, args.clients)
    print(json.dumps(result, indent=2))
    if not args.no_write:
        write_results(result)
    if result["errors"] or not result["server_alive_at_end"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
