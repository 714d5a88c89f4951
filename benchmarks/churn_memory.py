"""Claim churn memory: does ``draguard serve --kubeconfig`` keep anything per claim it has seen?

Why: the 30-minute chaos soak (benchmarks/CHAOS.md, "Soak") saw the webhook's RSS creep by
~2 MiB over its last 15 minutes while ~36,000 claims, each with a new name, went through it.  This
script replays that churn fast and without a control plane, to tell a per-claim leak (grows with
every claim ever seen) from a working set that fills and stops.

What it does: starts the fake API server (tests/fakeapi) holding the example inventory, runs the
real ``draguard serve --kubeconfig`` as a subprocess watching it, and for every claim — each with a
new unique name and uid, in the chaos harness's cycle of claim shapes (half satisfiable, half
provably unsatisfiable) — sends the AdmissionReviews kube-apiserver sends (``/mutate``, then
``/validate``), creates the claim in the fake API server when it was allowed (a denied claim is
never stored, as in a real cluster; the live inventory's claims watch then sees ADDED) and deletes
it again once more than ``--alive`` claims are alive (the watch sees DELETED).  The fake API
server's event history is trimmed as it goes (it would otherwise grow with every event and make
each watch poll slower), like etcd compaction.

What it prints: the server's RSS (``/proc/PID/status`` VmRSS) every ``--every`` claims, and where
that memory is — glibc malloc's heap (in use / free but kept), and pymalloc's arenas and the
Python blocks in use — from a ``sitecustomize`` hook in a temporary directory put on the server's
``PYTHONPATH`` (no project file is touched; SIGUSR2 makes it write the figures).  With
``--trace``, the hook also runs ``tracemalloc`` from the start and dumps a snapshot on SIGUSR1 at
every sample; the script then prints the traced total and the allocation sites that grew most
since the first sample at or after ``--warmup`` claims (by line, and the top ones by traceback).
Tracing makes the server ~3x slower; its RSS then includes tracemalloc's own bookkeeping.

Reading it: a per-claim leak shows as traced memory (and Python blocks) rising in step with the
claims; a working set that fills shows as steps that stop (a pymalloc arena more, the intern
table resized once, malloc's free-but-kept bytes) while the traced total stays flat.

    nice -n 10 .venv/bin/python benchmarks/churn_memory.py [--claims 50000] [--every 5000]
        [--alive 100] [--trace] [--frames 8] [--top 15]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import tracemalloc
import uuid
from collections import deque
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench_webhook import free_port, rss_mb  # noqa: E402
from draguard.certs import generate_bundle, write_bundle  # noqa: E402
from fakeapi import FakeCluster, serve_fake_api  # noqa: E402
from kube.helpers import wait_for, write_kubeconfig  # noqa: E402

RESOURCE = {"DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices", "Node": "nodes"}
NS = "chaos"


def _sel(model: str) -> list[dict[str, Any]]:
    return [{"cel": {"expression": f'device.attributes["gpu.example.com"].model == "{model}"'}}]


# The chaos harness's claim shapes (tools/chaos/chaos.py TYPES/CYCLE), on the example inventory.
TYPES: dict[str, dict[str, Any]] = {
    "good10": {"deviceClassName": "shared-gpu.example.com", "capacity": {"requests": {"memory": "10Gi"}}},
    "good7": {"deviceClassName": "shared-gpu.example.com", "selectors": _sel("A100"),
              "capacity": {"requests": {"memory": "7Gi"}}},
    "bad50": {"deviceClassName": "shared-gpu.example.com", "capacity": {"requests": {"memory": "50Gi"}}},
    "b200": {"deviceClassName": "gpu.example.com", "selectors": _sel("B200")},
    "a40-17": {"deviceClassName": "shared-gpu.example.com", "selectors": _sel("A40"),
               "capacity": {"requests": {"memory": "17Gi"}}},
    "h100": {"deviceClassName": "gpu.example.com", "selectors": _sel("H100")},
    "big45": {"deviceClassName": "shared-gpu.example.com", "capacity": {"requests": {"memory": "45Gi"}}},
}
CYCLE = ["good10", "bad50", "h100", "good7", "b200", "big45", "good10", "h100", "a40-17", "bad50"]

SITECUSTOMIZE = '''
"""churn_memory.py's hook in the server.  SIGUSR2 writes allocator figures (JSON) to
$CHURN_STATS_DIR: glibc's mallinfo2 (bytes handed out, bytes free but kept in the heap, mmapped)
and pymalloc's arenas (from sys._debugmallocstats).  With $CHURN_TRACE_DIR: tracemalloc from the
start, and SIGUSR1 dumps a snapshot there."""
import ctypes, json, os, re, signal, sys, tempfile, tracemalloc

class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]

def _stats(signum, frame):
    out = {"allocated_blocks": sys.getallocatedblocks()}
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
        m = libc.mallinfo2()
        out["malloc"] = {n: getattr(m, n) for n, _ in _MallInfo2._fields_}
        # mallinfo2 sees the main arena only; malloc_info's totals cover the threads' arenas too
        libc.fopen.restype = ctypes.c_void_p
        libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
        libc.fclose.argtypes = [ctypes.c_void_p]
        xml_path = os.path.join(os.environ["CHURN_STATS_DIR"], "malloc.xml")
        fp = libc.fopen(xml_path.encode(), b"w")
        if fp:
            libc.malloc_info(0, fp)
            libc.fclose(fp)
            with open(xml_path) as fh:
                xml = fh.read()
            tail = xml[xml.rindex("</heap>"):] if "</heap>" in xml else xml
            for kind in ("fast", "rest", "mmap"):
                got = re.search(r'<total type="%s" count="(\\d+)" size="(\\d+)"/>' % kind, tail)
                if got:
                    out["all_" + kind] = int(got.group(2))
            got = re.search(r'<system type="current" size="(\\d+)"/>', tail)
            if got:
                out["all_system"] = int(got.group(1))
            out["arenas"] = xml.count("<heap ")
    except (OSError, AttributeError, ValueError):
        pass
    with tempfile.TemporaryFile("w+") as tmp:  # _debugmallocstats writes to the C stderr
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(tmp.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        for line in tmp.read().splitlines():
            got = re.match(r"# (arenas allocated current|bytes in allocated blocks|bytes in available blocks"
                           r"|bytes lost to pool headers|bytes lost to quantization|bytes lost to arena alignment)"
                           r"\\s*=\\s*([\\d,]+)", line)
            if got:
                out[got.group(1)] = int(got.group(2).replace(",", ""))
    path = os.path.join(os.environ["CHURN_STATS_DIR"], "stats.json")
    with open(path + ".tmp", "w") as fh:
        json.dump(out, fh)
    os.replace(path + ".tmp", path)

if os.environ.get("CHURN_STATS_DIR"):
    signal.signal(signal.SIGUSR2, _stats)

_dir = os.environ.get("CHURN_TRACE_DIR")
if _dir:
    tracemalloc.start(int(os.environ.get("CHURN_TRACE_FRAMES", "8")))
    _n = [0]
    def _dump(signum, frame):
        _n[0] += 1
        path = os.path.join(_dir, "snap-%04d" % _n[0])
        snap = tracemalloc.take_snapshot()
        snap.dump(path + ".tmp")
        os.replace(path + ".tmp", path)
    signal.signal(signal.SIGUSR1, _dump)
'''


def claim(name: str, typ: str) -> dict[str, Any]:
    """The claim as the API server stores it (uid, creationTimestamp, labels as the chaos client sets)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": NS, "uid": str(uuid.uuid4()),
                         "creationTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                         "labels": {"chaos/type": typ, "chaos/phase": "F7"}},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": json.loads(json.dumps(TYPES[typ]))}]}}}


def review(obj: dict[str, Any]) -> dict[str, Any]:
    gvk = {"group": "resource.k8s.io", "version": "v1", "kind": "ResourceClaim"}
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": str(uuid.uuid4()), "kind": gvk, "requestKind": gvk,
        "resource": {"group": "resource.k8s.io", "version": "v1", "resource": "resourceclaims"},
        "requestResource": {"group": "resource.k8s.io", "version": "v1", "resource": "resourceclaims"},
        "name": obj["metadata"]["name"], "namespace": NS, "operation": "CREATE",
        "userInfo": {"username": "system:admin", "groups": ["system:masters", "system:authenticated"]},
        "object": obj, "oldObject": None, "dryRun": False,
        "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldValidation": "Strict"}}}


def trim_history(cluster: FakeCluster, keep: int) -> None:
    """Forget all but the last ``keep`` events (every watch polls every 5 ms, so it has them)."""
    with cluster.lock:
        if len(cluster.history) > 2 * keep:
            del cluster.history[:-keep]
            cluster.compacted = cluster.history[0][0]
            cluster.stamps.clear()
            cluster.requests.clear()
            cluster.accepts.clear()


def allocator(pid: int, stats_dir: Path) -> str:
    """The server's allocator figures now, as one line: where its RSS is (see the hook)."""
    path = stats_dir / "stats.json"
    path.unlink(missing_ok=True)
    os.kill(pid, signal.SIGUSR2)
    wait_for(path.exists, 60, "allocator figures")
    got = json.loads(path.read_text())
    mib = 2**20
    parts = []
    malloc = got.get("malloc")
    if malloc:
        parts.append(f"malloc heap {malloc['arena'] / mib:.1f} MiB (in use {malloc['uordblks'] / mib:.1f}, "
                     f"free kept {malloc['fordblks'] / mib:.1f}), mmapped {malloc['hblkhd'] / mib:.1f} MiB")
    if "all_system" in got:
        parts.append(f"all {got.get('arenas', 0)} malloc arenas {got['all_system'] / mib:.1f} MiB (free kept "
                     f"{(got.get('all_fast', 0) + got.get('all_rest', 0)) / mib:.1f})")
    if "arenas allocated current" in got:
        parts.append(f"pymalloc {got['arenas allocated current']} arenas (blocks in use "
                     f"{got.get('bytes in allocated blocks', 0) / mib:.1f} MiB, free "
                     f"{got.get('bytes in available blocks', 0) / mib:.1f} MiB)")
    parts.append(f"{got['allocated_blocks']:,} Python blocks")
    return "; ".join(parts)


def take_snapshot(pid: int, trace_dir: Path, n: int) -> tracemalloc.Snapshot:
    path = trace_dir / f"snap-{n:04d}"
    os.kill(pid, signal.SIGUSR1)
    wait_for(path.exists, 300, f"snapshot {path.name}")
    snap = tracemalloc.Snapshot.load(str(path))
    path.unlink()
    return snap.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])


def report_growth(base: tracemalloc.Snapshot, snap: tracemalloc.Snapshot, claims: int, top: int) -> None:
    total = sum(s.size for s in snap.statistics("filename"))
    base_total = sum(s.size for s in base.statistics("filename"))
    print(f"    traced {total / 2**20:.2f} MiB ({(total - base_total) / 2**20:+.2f} MiB since the base sample, "
          f"{(total - base_total) / max(1, claims):+.1f} B per claim)")
    print("    top growing sites (by line):")
    for stat in _grown(snap.compare_to(base, "lineno"), top):
        frame = stat.traceback[0]
        print(f"      {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks  "
              f"{_short(frame.filename)}:{frame.lineno}")
    print("    top growing sites (by traceback, innermost first):")
    for stat in _grown(snap.compare_to(base, "traceback"), min(5, top)):
        print(f"      {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks")
        for frame in list(reversed(stat.traceback))[:8]:  # a Traceback runs oldest first
            print(f"          {_short(frame.filename)}:{frame.lineno}")


def _grown(stats: list[tracemalloc.StatisticDiff], top: int) -> list[tracemalloc.StatisticDiff]:
    """The ``top`` sites that grew most (compare_to sorts by absolute change, shrinking ones too)."""
    return sorted((s for s in stats if s.size_diff > 0), key=lambda s: -s.size_diff)[:top]


def _short(filename: str) -> str:
    for marker in ("/site-packages/", "/app/", "/lib/python3"):
        if marker in filename:
            return filename[filename.index(marker) + 1:]
    return filename


def run(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="draguard-churn-"))
    api_tls = write_bundle(generate_bundle("kubernetes", "default", extra_sans=["127.0.0.1"]), work / "api")
    tls = write_bundle(generate_bundle("draguard", "draguard", extra_sans=["127.0.0.1"]), work / "tls")
    cluster = FakeCluster(token="churn-token")
    for path in sorted((ROOT / "examples" / "inventory").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") in RESOURCE:
                cluster.put(RESOURCE[doc["kind"]], doc)
    env = dict(os.environ)
    trace_dir = work / "trace"
    stats_dir = work / "stats"
    stats_dir.mkdir()
    hook = work / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(hook), env.get("PYTHONPATH", "")]))
    env["CHURN_STATS_DIR"] = str(stats_dir)
    if args.trace:
        trace_dir.mkdir()
        env["CHURN_TRACE_DIR"] = str(trace_dir)
        env["CHURN_TRACE_FRAMES"] = str(args.frames)
    with serve_fake_api(cluster, cert=api_tls["cert"], key=api_tls["key"]) as api:
        kubeconfig = write_kubeconfig(work / "kubeconfig", api.url, Path(api_tls["ca"]).read_bytes(), token="churn-token")
        port = free_port()
        log = (work / "serve.log").open("wb")
        server = subprocess.Popen(
            [sys.executable, "-m", "draguard", "serve", "--host", "127.0.0.1", "--port", str(port),
             "--tls-cert", str(tls["cert"]), "--tls-key", str(tls["key"]), "--kubeconfig", str(kubeconfig),
             "--deadline-seconds=2", "--deny=Unsatisfiable", "--log-level", args.log_level,
             "--shutdown-drain-seconds", "0"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log, env=env,
        )
        ctx = ssl.create_default_context(cafile=str(tls["ca"]))
        client = httpx.Client(base_url=f"https://127.0.0.1:{port}", verify=ctx, timeout=30)

        def ready() -> bool:
            try:
                return client.get("/readyz").status_code == 200
            except httpx.HTTPError:
                return False

        try:
            wait_for(ready, 120, "draguard to be ready")
            print(f"server pid {server.pid}, log {work / 'serve.log'}; RSS at ready {rss_mb(server.pid):.1f} MiB",
                  flush=True)
            print(f"    {allocator(server.pid, stats_dir)}", flush=True)
            alive: deque[str] = deque()
            counts = {"allowed": 0, "denied": 0, "warned": 0, "errors": 0}
            base: tracemalloc.Snapshot | None = None
            base_at = 0
            snaps = 0
            t0 = time.monotonic()
            for i in range(1, args.claims + 1):
                typ = CYCLE[i % len(CYCLE)]
                obj = claim(f"{typ}-{i:07d}", typ)
                try:
                    client.post("/mutate", json=review(obj)).raise_for_status()
                    answer = client.post("/validate", json=review(obj))
                    answer.raise_for_status()
                    response = answer.json()["response"]
                except (httpx.HTTPError, KeyError, ValueError):
                    counts["errors"] += 1
                    continue
                if response.get("warnings"):
                    counts["warned"] += 1
                if response.get("allowed"):
                    counts["allowed"] += 1
                    cluster.put("resourceclaims", obj)
                    alive.append(obj["metadata"]["name"])
                    while len(alive) > args.alive:
                        cluster.delete("resourceclaims", alive.popleft(), NS)
                else:
                    counts["denied"] += 1
                if i % 500 == 0:
                    trim_history(cluster, 2000)
                if i % args.every == 0:
                    time.sleep(1.0)  # let the watch and the publish catch up
                    rate = i / (time.monotonic() - t0)
                    print(f"{i:>8} claims: RSS {rss_mb(server.pid):6.1f} MiB  ({rate:.0f} claims/s; {counts})",
                          flush=True)
                    print(f"    {allocator(server.pid, stats_dir)}", flush=True)
                    if args.trace:
                        snaps += 1
                        snap = take_snapshot(server.pid, trace_dir, snaps)
                        if base is None and i >= args.warmup:
                            base, base_at = snap, i
                            print(f"    base snapshot at {i} claims", flush=True)
                        elif base is not None:
                            report_growth(base, snap, i - base_at, args.top)
                        sys.stdout.flush()
            if server.poll() is not None:
                raise SystemExit("churn_memory: the server died")
            print(f"done: {counts}; final RSS {rss_mb(server.pid):.1f} MiB")
        finally:
            client.close()
            server.terminate()
            server.wait(30)
            log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=50_000, help="claims with unique names to send (default 50000)")
    parser.add_argument("--every", type=int, default=5_000, help="sample RSS every N claims (default 5000)")
    parser.add_argument("--alive", type=int, default=100, help="claims kept alive before the oldest is deleted")
    parser.add_argument("--trace", action="store_true", help="tracemalloc snapshots in the server at every sample")
    parser.add_argument("--frames", type=int, default=8, help="traceback depth traced (default 8)")
    parser.add_argument("--warmup", type=int, default=5_000, help="the base snapshot: first sample at or after N")
    parser.add_argument("--top", type=int, default=15, help="growing sites printed per sample")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    # a SIGTERM runs the ``finally`` that stops the server (the default action would orphan it)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    run(parser.parse_args())


if __name__ == "__main__":
    main()
