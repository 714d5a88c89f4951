"""``draguard serve`` as the API server sees it: start-up, throughput, latency, memory (issue #11).

Plain script (``make bench`` runs it; ``python benchmarks/bench_webhook.py --devices 10000``).
The server runs as its own process (``draguard serve --inventory FILE``, exactly as deployed,
one process), on a generated inventory (:mod:`workload`); the load comes from separate client
processes over keep-alive HTTPS on loopback, so the figures include TLS, HTTP, JSON and the
review.  Four separate runs:

1. start-up: process start → ``/readyz`` 200, and the server's RSS at that moment;
2. throughput: ``--clients`` concurrent keep-alive clients (2 processes) sending the mix of
   twelve claims of :data:`workload.CLAIMS` for ``--seconds``;
3. latency: one client, the same mix, one request at a time (p50/p99 are not inflated by
   queueing behind other clients);
4. memory: 200 distinct claims (every one a new selector and capacity), RSS before and after.

Runs 2 and 3 are paired with the no-op floor (:mod:`floor`): the same client processes hold a
connection to each server and turn from one to the other every 0.25 s (ABBA), so the shared
machine's bursts of noise fall on both alike — back-to-back runs of 5 s each differed by up to
±15 % from noise alone.  Runs 2 and 3 are made for each ``--mix`` (:data:`MIXES`; by default the hit-heavy twelve and the
miss-heavy ``fresh-objects``, where every request is an object the answer memo has not seen), so the
figure is honest about both.  Each run is repeated ``--repeat`` times and the median printed.  The machine is a shared 2-core
VM: the client processes compete with the server for the same two cores.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from draguard.certs import generate_bundle, write_bundle  # noqa: E402
from results import write_section  # noqa: E402
from workload import CLAIMS, distinct_claims, make_inventory, write_inventory  # noqa: E402

MIXES = ("twelve", "fresh-names", "fresh-objects")
"""What the clients send: the twelve claims over and over (each with the same uid: the hit-heavy
case of a controller re-applying them); every request another claim of the twelve under a fresh
name, generateName and uid (a template's claims, a Deployment's replicas: hits only if the memo
keys without names); every request a distinct object — one of the twelve specs with a label of its
own (the memo never hits: the warm review's own cost)."""


MIX_WORDS = {"fresh-names": "every request a fresh name, generateName and uid",
             "fresh-objects": "every request a distinct object, memo never hits"}


def mix_bodies(mix: str, n: int, seed: int) -> list[bytes]:
    """``n`` request bodies of ``mix`` (:data:`MIXES`); ``seed`` keeps two runs' objects apart."""
    if mix == "twelve":
        return [review_body(c) for c in CLAIMS]
    out = []
    for i in range(n):
        obj = json.loads(json.dumps(CLAIMS[i % len(CLAIMS)]))
        meta = obj["metadata"]
        if mix == "fresh-names":
            meta["generateName"] = f"{meta['name']}-{seed}-{i}-"
            meta["name"] = f"{meta['name']}-{seed}-{i}-x{i % 977:03d}z"
        else:
            meta["labels"] = {**meta.get("labels", {}), "bench.example.com/seq": f"{seed}-{i}"}
        out.append(review_body(obj))
    return out


def review_body(obj: dict[str, Any]) -> bytes:
    gvk = {"group": "resource.k8s.io", "version": "v1", "kind": "ResourceClaim"}
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": str(uuid.uuid4()), "kind": gvk, "requestKind": gvk,
        "resource": {"group": "resource.k8s.io", "version": "v1", "resource": "resourceclaims"},
        "name": obj["metadata"]["name"], "namespace": "default", "operation": "CREATE", "object": obj,
        "dryRun": False}}).encode()


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Connection:
    """One keep-alive HTTPS connection (http.client: the cheapest client the stdlib has)."""

    def __init__(self, port: int, ca: str) -> None:
        ctx = ssl.create_default_context(cafile=ca)
        self.conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=30)
        self.conn.connect()
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        self.conn.request("POST", path, body=body, headers={"content-type": "application/json"})
        resp = self.conn.getresponse()
        return resp.status, resp.read()

    def get(self, path: str) -> int:
        self.conn.request("GET", path)
        resp = self.conn.getresponse()
        resp.read()
        return resp.status


SLICE_SECONDS = 0.25
"""How long each server has the clients in a paired run before they turn to the other (:func:`load`)."""
PATTERN = (0, 1, 1, 0)
"""The order of the slices in a paired run, ABBA: neither server is always first after the switch."""


def _client(args: tuple[list[tuple[int, str]], list[bytes], float, float, int]) -> list[tuple[int, int, list[float]]]:
    """A client process: ``threads`` keep-alive connections to every server, sending bodies
    round-robin until ``until``; in the slice of time ``k`` (of :data:`SLICE_SECONDS` from
    ``start``) every request goes to server ``PATTERN[k % 4]`` (with one server, always to it).
    Returns, per server, the requests sent, the non-200 answers and the latencies in ms."""
    import threading

    targets, bodies, start, until, threads = args
    count = len(targets)
    done = [0] * count
    errors = [0] * count
    lat: list[list[float]] = [[] for _ in targets]
    lock = threading.Lock()

    def run(offset: int) -> None:
        conns = [Connection(port, ca) for port, ca in targets]
        i = offset
        local: list[list[float]] = [[] for _ in targets]
        n = [0] * count
        err = [0] * count
        while True:
            now = time.time()
            if now >= until:
                break
            k = 0 if count == 1 else PATTERN[int((now - start) / SLICE_SECONDS) % len(PATTERN)]
            t0 = time.perf_counter()
            status, _ = conns[k].post("/validate", bodies[i % len(bodies)])
            local[k].append((time.perf_counter() - t0) * 1000)
            n[k] += 1
            err[k] += status != 200
            i += 1
        with lock:
            for k in range(count):
                done[k] += n[k]
                errors[k] += err[k]
                lat[k].extend(local[k])

    ts = [threading.Thread(target=run, args=(k * 3,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return [(done[k], errors[k], lat[k]) for k in range(count)]


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))] if ordered else float("nan")


def load(targets: list[tuple[int, str]], bodies: list[bytes], seconds: float, clients: int) -> list[dict[str, float]]:
    """``clients`` connections (over two processes) sending for ``seconds`` per server: with
    several servers, the time is cut into slices of :data:`SLICE_SECONDS` given to them in turn
    (:data:`PATTERN`), so each has the clients for ``seconds`` in all and every burst of the
    shared machine's noise lands on both alike; reviews per second are each server's requests
    over its own share of the time."""
    if len(targets) > len(set(PATTERN)):
        raise ValueError(f"a paired run takes at most {len(set(PATTERN))} servers (PATTERN), not {len(targets)}")
    procs = min(2, clients)
    per = [clients // procs + (1 if k < clients % procs else 0) for k in range(procs)]
    start = time.time() + 1.0  # let every client connect first
    until = start + seconds * len(targets)
    with multiprocessing.Pool(procs) as pool:
        results = pool.map(_client, [(targets, bodies, start, until, n) for n in per])
    out = []
    for k in range(len(targets)):
        total = sum(r[k][0] for r in results)
        lat = [x for r in results for x in r[k][2]]
        out.append({"reviews_per_s": round(total / seconds, 1), "errors": sum(r[k][1] for r in results),
                    "p50_ms": round(percentile(lat, 0.5), 2), "p99_ms": round(percentile(lat, 0.99), 2)})
    return out


def _wait_ready(proc: subprocess.Popen[bytes], port: int, ca: str, what: str) -> None:
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited during start-up")
        try:
            if Connection(port, ca).get("/readyz") == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)


def start_server(inventory: Path, tmp: Path, log_level: str = "error") -> tuple[subprocess.Popen[bytes], int, str, float, float]:
    paths = write_bundle(generate_bundle("draguard", "draguard", extra_sans=["127.0.0.1"]), tmp)
    port = free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "draguard", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--tls-cert", str(paths["cert"]), "--tls-key", str(paths["key"]), "--inventory", str(inventory),
         "--log-level", log_level],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
    )
    ca = str(paths["ca"])
    _wait_ready(proc, port, ca, "draguard serve")
    return proc, port, ca, time.perf_counter() - t0, rss_mb(proc.pid)


def start_floor(tmp: Path) -> tuple[subprocess.Popen[bytes], int, str]:
    """The no-op AdmissionReview server (:mod:`floor`) on the same stack, as its own process."""
    paths = write_bundle(generate_bundle("floor", "floor", extra_sans=["127.0.0.1"]), tmp / "floor")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks" / "floor.py"), "--port", str(port),
         "--tls-cert", str(paths["cert"]), "--tls-key", str(paths["key"])],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
    )
    ca = str(paths["ca"])
    _wait_ready(proc, port, ca, "the floor server")
    return proc, port, ca


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()  # readiness goes 503, in-flight reviews finish, then it exits
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (``/proc/PID/stat``)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def interleaved(servers: dict[str, tuple[int, str, int]], bodies: list[bytes], seconds: float, clients: int,
                order: list[str]) -> dict[str, dict[str, float]]:
    """One paired load run over the servers (:func:`load`: their slices of time interleaved,
    ``order[0]`` first); besides the client's view, each server's own CPU time per review —
    steadier than wall-clock figures on a shared machine, since other jobs' time is not counted
    in it (a server waiting for its slice uses next to none)."""
    before = {name: cpu_seconds(servers[name][2]) for name in order}
    rows = load([servers[name][:2] for name in order], bodies, seconds, clients)
    out = {}
    for name, row in zip(order, rows, strict=True):
        done = row["reviews_per_s"] * seconds
        row["server_cpu_us"] = round((cpu_seconds(servers[name][2]) - before[name]) / done * 1e6, 1) if done else float("nan")
        out[name] = row
    return out


def median_of(rows: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def summary(args: argparse.Namespace, bodies: list[bytes], starts: list[float], rss_ready: list[float],
            runs: dict[str, list[dict[str, dict[str, float]]]], mem: list[tuple[float, float]],
            load_avg: tuple[float, float]) -> list[str]:
    """The report lines: draguard as a ratio of the floor (median of per-repeat ratios), absolutes beside."""
    out = [f"inventory: {args.devices} GPUs (+NICs), {len(bodies)} claims in the mix; median of {args.repeat} "
           f"paired runs (floor and draguard given the same clients in turn, {SLICE_SECONDS:g} s slices ABBA, "
           f"{args.seconds:g} s each in all; which starts alternated); "
           f"load average {load_avg[0]:.1f} at the start, {load_avg[1]:.1f} at the end",
           f"start-up to ready: {statistics.median(starts):.2f} s; RSS at ready: {statistics.median(rss_ready):.0f} MB"]
    labels = []
    for mix in args.mixes:
        what = "" if mix == "twelve" else f" [{mix}: {MIX_WORDS[mix]}, {args.distinct} per run]"
        labels += [(f"throughput, {args.clients} clients{what}", f"thr-{mix}"), (f"latency, 1 client{what}", f"lat-{mix}")]
    for label, key in labels:
        rows = runs[key]
        dg = [r["draguard"] for r in rows]
        fl = [r["floor"] for r in rows]
        thr_ratio = statistics.median(ratio(r["draguard"]["reviews_per_s"], r["floor"]["reviews_per_s"]) for r in rows)
        p50_ratio = statistics.median(ratio(r["draguard"]["p50_ms"], r["floor"]["p50_ms"]) for r in rows)
        p99_ratio = statistics.median(ratio(r["draguard"]["p99_ms"], r["floor"]["p99_ms"]) for r in rows)
        out.append(
            f"{label}: draguard {median_of(dg, 'reviews_per_s'):.0f} reviews/s = {thr_ratio:.2f}x the floor's "
            f"{median_of(fl, 'reviews_per_s'):.0f}/s; p50 {median_of(dg, 'p50_ms'):.2f} ms ({p50_ratio:.2f}x floor "
            f"{median_of(fl, 'p50_ms'):.2f}), p99 {median_of(dg, 'p99_ms'):.2f} ms ({p99_ratio:.2f}x floor "
            f"{median_of(fl, 'p99_ms'):.2f}); errors {sum(r['errors'] for r in dg + fl)}")
        cpu_ratio = statistics.median(ratio(r["draguard"]["server_cpu_us"], r["floor"]["server_cpu_us"]) for r in rows)
        out.append(f"  server CPU per review: draguard {median_of(dg, 'server_cpu_us'):.0f} us, floor "
                   f"{median_of(fl, 'server_cpu_us'):.0f} us ({cpu_ratio:.2f}x; draguard's own work "
                   f"{median_of(dg, 'server_cpu_us') - median_of(fl, 'server_cpu_us'):.0f} us)")
        out.append("  per run (draguard/floor reviews/s): " + ", ".join(
            f"{r['draguard']['reviews_per_s']:.0f}/{r['floor']['reviews_per_s']:.0f}" for r in rows))
    if mem:
        growth = statistics.median(after - before for before, after in mem)
        out.append(f"memory: 200 distinct claims: RSS {statistics.median(b for b, _ in mem):.0f} MB -> "
                   f"{statistics.median(a for _, a in mem):.0f} MB (growth {growth:.1f} MB)")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--log-level", default="info", help="draguard serve's --log-level (default info, as deployed)")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--mix", default="twelve,fresh-objects", help=(
                        "comma-separated: twelve (hit-heavy), fresh-names (replicas), fresh-objects (every request "
                        "a miss); default twelve,fresh-objects"))
    parser.add_argument("--distinct", type=int, default=6000,
                        help="bodies per run for the fresh mixes (more than the memo holds: LRU then never hits)")
    parser.add_argument("--write", action="store_true", help="replace this script's section of RESULTS.md")
    args = parser.parse_args()
    args.mixes = [m for m in args.mix.split(",") if m]
    if not args.mixes or any(m not in MIXES for m in args.mixes):
        parser.error(f"--mix: a comma-separated list of {', '.join(MIXES)}")
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        inventory = tmp / "inventory"
        write_inventory(make_inventory(args.devices), inventory)
        bodies = [review_body(c) for c in CLAIMS]
        starts: list[float] = []
        rss_ready: list[float] = []
        runs: dict[str, list[dict[str, dict[str, float]]]] = {f"{k}-{m}": [] for m in args.mixes for k in ("thr", "lat")}
        mem: list[tuple[float, float]] = []
        for r in range(args.repeat):
            proc, port, ca, startup, rss = start_server(inventory, tmp, args.log_level)
            floor_proc, floor_port, floor_ca = start_floor(tmp)
            try:
                starts.append(startup)
                rss_ready.append(rss)
                servers = {"draguard": (port, ca, proc.pid), "floor": (floor_port, floor_ca, floor_proc.pid)}
                for p, c, _ in servers.values():
                    conn = Connection(p, c)
                    for b in bodies:  # warm: compile selectors, fill the caches
                        conn.post("/validate", b)
                    conn.conn.close()
                order = ["floor", "draguard"] if r % 2 == 0 else ["draguard", "floor"]
                for m, mix in enumerate(args.mixes):
                    thr_bodies = mix_bodies(mix, args.distinct, 100 * r + 2 * m)
                    lat_bodies = mix_bodies(mix, args.distinct, 100 * r + 2 * m + 1)
                    runs[f"thr-{mix}"].append(interleaved(servers, thr_bodies, args.seconds, args.clients, order))
                    runs[f"lat-{mix}"].append(interleaved(servers, lat_bodies, args.seconds, 1, order[::-1]))
                if not args.skip_memory:
                    conn = Connection(port, ca)
                    before = rss_mb(proc.pid)
                    for c in distinct_claims(200, seed=len(mem) + 11):
                        conn.post("/validate", review_body(c))
                    mem.append((before, rss_mb(proc.pid)))
                    conn.conn.close()
            finally:
                stop(floor_proc)
                stop(proc)
        lines = summary(args, bodies, starts, rss_ready, runs, mem, (load_start, os.getloadavg()[0]))
    print("\n".join(lines))
    if args.write or os.environ.get("DRAGUARD_BENCH_WRITE"):
        cmd = f"python benchmarks/bench_webhook.py --devices {args.devices} --repeat {args.repeat} --seconds {args.seconds:g}"
        section_name = f"webhook-{args.devices}"
        if args.mixes != ["twelve", "fresh-objects"]:
            cmd += f" --mix {args.mix}"
        write_section(f"<!-- {section_name}:start -->", f"<!-- {section_name}:end -->",
                      f"<!-- {section_name}:start -->\n```\n$ {cmd}\n" + "\n".join(lines) + f"\n```\n<!-- {section_name}:end -->")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
