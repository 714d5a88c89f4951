"""State at cluster scale: 50,000 allocated ResourceClaims watched, with churn (issue #21 item 4).

Plain script (``python benchmarks/bench_state.py [--claims 50000] [--rate 50] [--repeat 3]``).
Two real ``draguard serve --kubeconfig`` processes, each list+watching its own fake API server
(tests/fakeapi) that holds the same 10k-device inventory (:mod:`workload`'s shape): one with no
ResourceClaims, one with ``--claims`` allocated claims in 1,000 namespaces — each claim one
result on a shareable GPU or NIC (``shareID`` and ``consumedCapacity``), a node selector and a
``reservedFor`` pod, as the scheduler writes them — while a thread re-allocates ``--rate``
claims per second through the watch (each update moves one claim's allocation to another device).

Reported: RSS of both once settled after ready (the one with claims once all of them are listed —
``/readyz`` counts them — and then summed by the build that follows, :func:`settled_rss`) and at
the end; the server's CPU per claim event (under churn, before any review,
less its CPU at rest: what each event takes from the event loop the reviews wait on); then the
1-client latency of the twelve-claim mix against both — p50/p99 and the ratio of p99 with the
claims to p99 without — in *paired* runs (since 2026-12-03: the client switches between the two
servers every 0.25 s, ABBA, as ``bench_webhook.py`` does; one after the other, the ratio moved
1.03–1.59x across four runs), and against the no-op floor server (:mod:`floor`) after them.  Goals: ≤ 150 MB added, p99 within 1.5× of the figure without them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from bench_webhook import (  # noqa: E402
    Connection,
    free_port,
    interleaved,
    review_body,
    rss_mb,
    start_floor,
    stop,
)
from draguard.certs import generate_bundle, write_bundle  # noqa: E402
from fakeapi import FakeCluster, serve_fake_api  # noqa: E402
from results import write_section  # noqa: E402
from workload import CLAIMS, make_inventory  # noqa: E402

RESOURCE = {"DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices", "Node": "nodes"}
SHARE = {"A100": ("memory", "5Gi"), "A40": ("memory", "4Gi"), "L4": ("memory", "6Gi")}


def shareable_devices(objects: list[dict[str, Any]]) -> list[tuple[str, str, str, str, str, str]]:
    """(driver, pool, device, node, capacity name, one share) of every device that takes shares."""
    out = []
    for obj in objects:
        if obj["kind"] != "ResourceSlice":
            continue
        spec = obj["spec"]
        for dev in spec.get("devices", ()):  # a slice of shared counters has none
            if not dev.get("allowMultipleAllocations"):
                continue
            if spec["driver"] == "nic.example.com":
                share = ("bandwidth", "1G")
            else:
                share = SHARE[dev["attributes"]["model"]["string"]]
            out.append((spec["driver"], spec["pool"]["name"], dev["name"], spec["nodeName"], *share))
    return out


def allocated_claim(i: int, device: tuple[str, str, str, str, str, str]) -> dict[str, Any]:
    driver, pool, name, node, capacity, amount = device
    cls = "nic.example.com" if driver == "nic.example.com" else "shared-gpu.example.com"
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": f"claim-{i:06d}", "namespace": f"team-{i % 1000:04d}", "uid": str(uuid.UUID(int=i + 1))},
        "spec": {"devices": {"requests": [{"name": "dev", "exactly": {
            "deviceClassName": cls, "capacity": {"requests": {capacity: amount}}}}]}},
        "status": {
            "allocation": {
                "devices": {"results": [{"request": "dev", "driver": driver, "pool": pool, "device": name,
                                         "shareID": str(uuid.UUID(int=(i + 1) << 64)),
                                         "consumedCapacity": {capacity: amount}}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node]}]}]},
            },
            "reservedFor": [{"resource": "pods", "name": f"pod-{i:06d}", "uid": str(uuid.UUID(int=i + 7))}],
        },
    }


def cpu_ns(pid: int) -> int:
    """Nanoseconds the threads of process ``pid`` have run so far (``/proc/PID/task/*/schedstat``):
    ``/proc/PID/stat`` counts in ticks of 10 ms, too coarse for the ~0.15 s a few seconds of
    claim events cost (one tick was ~40 us per event)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as fh:
                total += int(fh.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
    return total


def fill(cluster: FakeCluster, objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        cluster.put(RESOURCE[obj["kind"]], obj)


def churn(cluster: FakeCluster, claims: list[dict[str, Any]], devices: list[Any], rate: float,
          stop_flag: threading.Event, counter: list[int]) -> None:
    """Move one claim's allocation to another device, ``rate`` times a second (open loop)."""
    rng = random.Random(5)
    started = time.perf_counter()
    while not stop_flag.is_set():
        i = rng.randrange(len(claims))
        claims[i] = allocated_claim(i, devices[rng.randrange(len(devices))])
        cluster.put("resourceclaims", claims[i])
        counter[0] += 1
        pause = started + counter[0] / rate - time.perf_counter()
        if pause > 0:
            time.sleep(pause)


def serve(api_url: str, api_ca: str, tmp: Path, name: str) -> tuple[subprocess.Popen[bytes], int, str]:
    work = tmp / name
    work.mkdir()
    (work / "kubeconfig").write_text(yaml.safe_dump({
        "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": api_url, "certificate-authority": api_ca}}],
        "users": [{"name": "u", "user": {"token": "state-token"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
    }))
    tls = write_bundle(generate_bundle("draguard", "draguard", extra_sans=["127.0.0.1"]), work)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "draguard", "serve", "--host", "127.0.0.1", "--port", str(port), "--tls-cert",
         str(tls["cert"]), "--tls-key", str(tls["key"]), "--kubeconfig", str(work / "kubeconfig"),
         "--log-level", "info", "--shutdown-drain-seconds", "0"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, port, str(tls["ca"])


def wait_ready(proc: subprocess.Popen[bytes], port: int, ca: str, claims: int, timeout: float = 600) -> float:
    """Seconds until ``/readyz`` is 200 and the server has listed ``claims`` ResourceClaims."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if proc.poll() is not None:
            raise SystemExit("draguard serve exited during start-up")
        try:
            conn = Connection(port, ca)
            conn.conn.request("GET", "/readyz")
            resp = conn.conn.getresponse()
            detail = json.loads(resp.read() or b"{}")
            listed = detail.get("inventory", {}).get("objects", {}).get("resourceclaims", 0)
            if resp.status == 200 and listed >= claims:
                return time.perf_counter() - t0
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    raise SystemExit("draguard serve did not list every claim in time")


SETTLE_MB, SETTLE_SECONDS = 0.5, 3.0
"""When the RSS counts as settled: no move larger than this for this long (:func:`settled_rss`)."""


def settled_rss(pid: int, step: float = 0.25, timeout: float = 120.0) -> tuple[float, float]:
    """(RSS in MB, seconds waited) once the RSS of ``pid`` has stayed within :data:`SETTLE_MB` for
    :data:`SETTLE_SECONDS`; an RSS still moving after ``timeout`` ends the run (it is no figure).

    Why: ``/readyz`` turns 200 once the devices are built and every claim is *listed*; the claims
    are summed into the live snapshot by the next build, in a worker thread, a second or two
    later (a review never waits for it: allocations are "now" hints).  Read at ``/readyz``, the
    RSS of 50,000 claims missed that build's ~24 MB (measured 2026-12-03: 231 MB at ready, 255 MB
    two seconds later and flat after); what the claims add is what the process holds once it is
    done with them."""
    started = time.perf_counter()
    last, since = rss_mb(pid), time.perf_counter()
    while time.perf_counter() - started < timeout:
        time.sleep(step)
        now = rss_mb(pid)
        if abs(now - last) > SETTLE_MB:
            last, since = now, time.perf_counter()
        elif time.perf_counter() - since >= SETTLE_SECONDS:
            return now, time.perf_counter() - started
    raise SystemExit(f"the RSS of draguard serve did not settle within {timeout:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=10_000)
    parser.add_argument("--claims", type=int, default=50_000)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--event-seconds", type=float, default=5.0,
                        help="seconds of rest, then of churn without reviews, to measure the server's CPU per claim event")
    parser.add_argument("--write", action="store_true", help="replace this script's section of RESULTS.md")
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    objects = make_inventory(args.devices)
    devices = shareable_devices(objects)
    claims = [allocated_claim(i, devices[i % len(devices)]) for i in range(args.claims)]
    bodies = [review_body(c) for c in CLAIMS]
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        api_tls = write_bundle(generate_bundle("fakeapi", "fakeapi", extra_sans=["127.0.0.1"]), tmp / "api")
        bare, held = FakeCluster(token="state-token"), FakeCluster(token="state-token")
        fill(bare, objects)
        fill(held, objects)
        for claim in claims:
            held.put("resourceclaims", claim)
        with serve_fake_api(bare, cert=api_tls["cert"], key=api_tls["key"]) as api_bare, \
                serve_fake_api(held, cert=api_tls["cert"], key=api_tls["key"]) as api_held:
            p_bare, port_bare, ca_bare = serve(api_bare.url, str(api_tls["ca"]), tmp, "bare")
            ready_bare = wait_ready(p_bare, port_bare, ca_bare, 0)
            rss_bare_ready = rss_mb(p_bare.pid)
            rss_bare, settle_bare = settled_rss(p_bare.pid)
            p_held, port_held, ca_held = serve(api_held.url, str(api_tls["ca"]), tmp, "held")
            ready_held = wait_ready(p_held, port_held, ca_held, args.claims)
            rss_held_ready = rss_mb(p_held.pid)
            rss_held, settle_held = settled_rss(p_held.pid)
            floor_proc, floor_port, floor_ca = start_floor(tmp)
            stop_flag, updates = threading.Event(), [0]
            churner = threading.Thread(target=churn, args=(held, claims, devices, args.rate, stop_flag, updates),
                                       daemon=True)
            try:
                servers = {"without claims": (port_bare, ca_bare, p_bare.pid),
                           "with claims": (port_held, ca_held, p_held.pid),
                           "floor": (floor_port, floor_ca, floor_proc.pid)}
                for port, ca, _ in servers.values():
                    conn = Connection(port, ca)
                    for b in bodies:
                        conn.post("/validate", b)
                idle_cpu = cpu_ns(p_held.pid)
                time.sleep(args.event_seconds)
                idle_cpu = (cpu_ns(p_held.pid) - idle_cpu) / 1e9 / args.event_seconds
                churner.start()
                churn_started = time.perf_counter()
                # what one claim event costs the server (its event loop: the reviews wait behind
                # it), before any review: the CPU it uses under churn less its CPU at rest
                event_cpu, events = cpu_ns(p_held.pid), updates[0]
                time.sleep(args.event_seconds)
                event_us = ((cpu_ns(p_held.pid) - event_cpu) / 1e9 - idle_cpu * args.event_seconds) \
                    / max(updates[0] - events, 1) * 1e6
                runs: list[dict[str, dict[str, float]]] = []
                for r in range(args.repeat):
                    # the two servers of the ratio paired (bench_webhook.interleaved: the client switches
                    # between them every 0.25 s, ABBA), so that the machine's noise lands on both;
                    # the floor, a reference only, after them on its own
                    pair = ["without claims", "with claims"] if r % 2 == 0 else ["with claims", "without claims"]
                    # (the claims server's CPU per review spans both slices of the pair, so it
                    # includes the claim events of the other's slices too: the report says so)
                    row = {**interleaved(servers, bodies, args.seconds, 1, pair),
                           **interleaved(servers, bodies, args.seconds, 1, ["floor"])}
                    runs.append(row)
                churn_rate = updates[0] / (time.perf_counter() - churn_started)
                rss_end = rss_mb(p_held.pid)
            finally:
                stop_flag.set()
                for proc in (floor_proc, p_held, p_bare):
                    stop(proc)

    def med(name: str, key: str) -> float:
        return statistics.median(r[name][key] for r in runs)

    p99_ratio = statistics.median(r["with claims"]["p99_ms"] / r["without claims"]["p99_ms"] for r in runs)
    lines.append(f"{args.devices} GPUs (+NICs) watched from a fake API server; {args.claims:,} allocated claims in "
                 f"1,000 namespaces, re-allocated at {churn_rate:.0f}/s through the watch during the latency runs")
    lines.append(f"RSS settled (no change > {SETTLE_MB} MB for {SETTLE_SECONDS:.0f} s): without claims {rss_bare:.0f} MB (ready in "
                 f"{ready_bare:.1f} s, {rss_bare_ready:.0f} MB at /readyz, settled {settle_bare:.1f} s later); with them "
                 f"{rss_held:.0f} MB (all {args.claims:,} listed and /readyz 200 after {ready_held:.1f} s at "
                 f"{rss_held_ready:.0f} MB, the claims' build settled {settle_held:.1f} s later): "
                 f"+{rss_held - rss_bare:.0f} MB; after the runs under churn {rss_end:.0f} MB")
    lines.append(f"server CPU per claim event (watch read, decoded, applied), before the latency runs: {event_us:.0f} us "
                 f"({idle_cpu * 1e3:.1f} ms/s at rest)")
    for name in ("without claims", "with claims", "floor"):
        lines.append(f"latency, 1 client, {name:14s}: p50 {med(name, 'p50_ms'):.2f} ms, p99 {med(name, 'p99_ms'):.2f} ms, "
                     f"{med(name, 'reviews_per_s'):.0f} reviews/s, server CPU {med(name, 'server_cpu_us'):.0f} us/review"
                     + (" (over the paired run: with the claim events of both slices)" if name == "with claims" else ""))
    lines.append(f"p99 with the claims / p99 without: {p99_ratio:.2f}x (median of {args.repeat} paired runs: the one "
                 f"client switches between the two servers every 0.25 s, ABBA; the floor after them); "
                 f"load average {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    print("\n".join(lines))
    if args.write or os.environ.get("DRAGUARD_BENCH_WRITE"):
        cmd = f"python benchmarks/bench_state.py --claims {args.claims} --rate {args.rate:g} --repeat {args.repeat}"
        write_section("<!-- state:start -->", "<!-- state:end -->",
                      "<!-- state:start -->\n```\n$ " + cmd + "\n" + "\n".join(lines) + "\n```\n<!-- state:end -->")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
