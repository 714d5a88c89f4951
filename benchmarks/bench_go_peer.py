"""Kubernetes' own Go DRA allocator, measured in this run: the real kube-scheduler's CPU (issue #21).

Issue #21 compares ``draguard lint`` of 10 claims against 1,000 nodes x 8 GPUs with "Kubernetes'
own Go allocator (the same code the scheduler runs, over the same files)".  No Go toolchain or
module proxy is here, so the allocator cannot be built as a library; but the project has the real
1.36.2 binaries (``scripts/setup-apiserver.sh`` puts them into ``.cache/``), and kube-scheduler *is*
that code at work: its DynamicResources plugin runs the structured allocator over the
ResourceSlices, per pod and per candidate node.  This script times it there.

How (one control plane, ``--repeat`` fresh schedulers):

1. etcd and kube-apiserver start on loopback, as ``scripts/cluster-oracle.py`` starts them (its
   classes are imported, not copied), and the inventory is applied with the oracle's Node
   defaults (Ready; cpu/memory/pods allocatable so large that NodeResourcesFit never decides).
2. Per repeat, in a fresh namespace: the claims are created (not allocated), then a kube-scheduler
   is started (the oracle's KubeSchedulerConfiguration: default profile, no leader election) and
   waited for until ``/readyz`` (its informers have listed the Nodes, the ResourceSlices, the
   DeviceClasses, the claims; its CPU was seen to stay flat from there on, so no sync work is
   left to fall into the scheduling figure).
3. One Pod per claim (``resourceClaimName``) is created: one pod per claim is the question
   "is this claim ever satisfiable" as the scheduler can answer it.  A watch on the pods stops the
   clock at each pod's *first* decision — bound to a node, or its first ``PodScheduled=False,
   reason=Unschedulable`` — because an unschedulable pod is retried with backoff for ever and
   those retries are not part of the answer.
4. The scheduler's CPU (utime + stime of the whole process, all threads, from ``/proc/PID/stat``;
   10 ms ticks) is read at ``/readyz``, just before the first pod is created and at the last first
   decision.  Then the scheduler is stopped, the pods and claims are deleted (their finalizers
   dropped: no controller-manager runs here) and the next repeat starts clean.

Figures, each the median of the repeats:

* **scheduling CPU** — from the pods' creation to all first decisions: the allocator's work, with
  the informers already synced;
* **whole-process CPU** — from the scheduler's exec to the same moment: start-up, the informers'
  list of every Node and ResourceSlice, and the scheduling — the analog of ``draguard lint``
  starting, reading the files and answering.

What the figure includes and what it does not (so a ratio against it is read right):

* It is the *whole scheduler*, not the allocator alone: the default profile's other plugins run
  too (NodeResourcesFit, affinity, taints, ... — cheap here: no pod requests or affinities), and
  for each unschedulable pod the PostFilter (preemption, which finds no victims: no other pods).
  The scheduler also stops filtering once it has found enough feasible nodes
  (``percentageOfNodesToScore``'s adaptive default: 42 % of 1,000 nodes), as it does in a cluster;
  a claim no node can take is tried on every node.  draguard answers over every node.
* The API server's and etcd's cost — decoding, storing, serving the watch — is in other processes
  and is not counted (decoding the objects, storing them, serving the lists and watches), whereas
  draguard's figure includes parsing the YAML.  The scheduler's own decoding of the list and watch
  responses (protobuf, its client's default) is in its figure.
* ``--v`` is 0 (the binary's default): the scheduler logs nothing per pod.
* The binaries are the team's copies that ``scripts/setup-apiserver.sh`` unpacks (else the official
  release it downloads): the team's are built from the v1.36.2 tree with Go 1.27
  (``-ldflags="-s -w"``, no ``-gcflags``: the Go compiler's optimizations and inlining are on, as in
  a release; dynamically linked, cgo on, where releases are static) — see ``--buildinfo``.
* No controller-manager runs: the pods name their claims directly, so no resourceclaim controller
  is needed, and the ServiceAccount the admission plugin wants is created by this script.

Plain script: ``python benchmarks/bench_go_peer.py [--inventory FILE --claims FILE] [--repeat N]``.
Without files it writes the issue's: ``make_inventory(8000, nics=False)`` (1,000 nodes x 8 GPUs)
and ``CLAIMS[:10]`` from ``workload.py``, exactly as ``bench_lint_compare.py`` part 3 does — which
imports :func:`measure` from here to print draguard's ratio against the figure of the same run.
Where the binaries or etcd are missing it says why and exits 0 (``make bench`` must not fail).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.util
import io
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
ORACLE_SCRIPT = ROOT / "scripts" / "cluster-oracle.py"
CLAIMS_API = "/apis/resource.k8s.io/v1"
CLK_TCK = os.sysconf("SC_CLK_TCK")

__all__ = ["Decision", "GoPeer", "PeerRun", "PeerSummary", "binaries", "measure", "missing"]


# ------------------------------------------------------------------------------------------ binaries
def _which(env_var: str, name: str, *cached: Path) -> str | None:
    """``$ENV_VAR``, then ``name`` on PATH, then the project's ``.cache/`` (as setup-apiserver.sh leaves it)."""
    for candidate in (os.environ.get(env_var), name):
        if candidate:
            found = shutil.which(candidate)
            if found:
                return found
    for path in cached or (ROOT / ".cache" / name,):
        if os.access(path, os.X_OK):
            return str(path)
    return None


def binaries() -> dict[str, str | None]:
    """Absolute paths of the binaries the peer needs, ``None`` where one is missing."""
    return {
        "KUBE_APISERVER": _which("KUBE_APISERVER", "kube-apiserver"),
        "KUBE_SCHEDULER": _which("KUBE_SCHEDULER", "kube-scheduler"),
        "ETCD": _which("ETCD", "etcd", ROOT / ".cache" / "etcd-server" / "usr" / "bin" / "etcd"),
    }


def missing() -> str | None:
    """Why the Go peer cannot be measured here, or ``None`` when it can."""
    if not sys.platform.startswith("linux"):
        return "the scheduler's CPU is read from /proc (Linux only)"
    if not ORACLE_SCRIPT.is_file():
        return f"no {ORACLE_SCRIPT}"
    absent = [env for env, path in binaries().items() if path is None]
    if absent:
        return (f"no {', '.join(absent)} (environment, PATH or .cache/; scripts/setup-apiserver.sh unpacks "
                "kube-apiserver and kube-scheduler and installs etcd)")
    if shutil.which("openssl") is None:
        return "no openssl on PATH (the control plane's certificates)"
    return None


def buildinfo(binary: str) -> list[str]:
    """The Go build settings embedded in ``binary`` (``go version -m`` without a Go toolchain)."""
    with open(binary, "rb") as fh:
        data = fh.read()
    out: list[str] = []
    for line in data.split(b"\n"):
        if line.startswith((b"build\t", b"path\t")) or (line.startswith(b"go1.") and len(line) < 16):
            text = line.decode("ascii", "replace").strip()
            if text not in out:
                out.append(text)
    return out


# ------------------------------------------------------------------------------------------ the harness
def _oracle_module() -> ModuleType:
    """``scripts/cluster-oracle.py`` as a module (it imports ``e2e-kube.py`` beside it)."""
    spec = importlib.util.spec_from_file_location("cluster_oracle", ORACLE_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def proc_cpu(pid: int) -> float:
    """utime + stime of process ``pid`` (every thread), in seconds; 10 ms ticks."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # fields 14 and 15 of proc(5)


@dataclass(frozen=True)
class Decision:
    """A pod's first decision: ``scheduled`` (with the node) or ``unschedulable`` (with the message)."""

    state: str
    node: str | None
    message: str | None
    seconds: float  # after the first pod's creation


@dataclass
class PeerRun:
    """One fresh scheduler: its CPU at the marks, and each claim's first decision."""

    decisions: dict[str, Decision]
    startup_cpu: float  # exec to /readyz
    before_pods_cpu: float  # exec to just before the first pod's creation
    whole_cpu: float  # exec to the last first decision
    scheduling_wall: float  # first pod's creation to the last first decision
    attempts: dict[str, int] = field(default_factory=dict)  # scheduler_schedule_attempts_total by result
    algorithm_seconds: float = 0.0  # scheduler_scheduling_algorithm_duration_seconds_sum (wall, in-process)

    @property
    def scheduling_cpu(self) -> float:
        return self.whole_cpu - self.before_pods_cpu


@dataclass
class PeerSummary:
    """Medians over the repeats, and every run."""

    runs: list[PeerRun] = field(default_factory=list)
    setup: dict[str, float] = field(default_factory=dict)
    applied: int = 0  # inventory objects the API server stored
    rejected: list[str] = field(default_factory=list)  # and those it refused, with its message

    def median(self, attr: str) -> float:
        return statistics.median(float(getattr(r, attr)) for r in self.runs)

    def verdicts(self) -> dict[str, str]:
        """claim -> ``scheduled`` / ``unschedulable``, or ``varies`` where the repeats disagreed."""
        out: dict[str, str] = {}
        for run in self.runs:
            for claim, d in run.decisions.items():
                out[claim] = d.state if out.get(claim, d.state) == d.state else "varies"
        return out


def _load(path: Path) -> list[dict[str, Any]]:
    """The documents of a YAML file (libyaml's parser where PyYAML has it: 3 MB in ~2 s, not ~40 s)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with path.open() as fh:
        return [d for d in yaml.load_all(fh, Loader=loader) if isinstance(d, dict)]


class GoPeer:
    """etcd + kube-apiserver with the inventory applied, up for the ``with`` block; :meth:`run` starts
    a fresh kube-scheduler per call and times one pod per claim (see the module docstring)."""

    def __init__(self, inventory: Path, *, verbose: bool = False, settle_timeout: float = 120.0) -> None:
        reason = missing()
        if reason is not None:
            raise RuntimeError(f"the Go peer cannot run here: {reason}")
        paths = binaries()
        self._bins = {k: str(v) for k, v in paths.items()}
        self._inventory = inventory
        self._verbose = verbose
        self._settle = settle_timeout
        self._mod = _oracle_module()
        self._ek: Any = self._mod.ek
        self.abort: type[Exception] = self._mod.Abort
        # The oracle's own defaults (feature gates, Node defaults, scheduler configuration); --v=0.
        self._h: Any = self._mod.Oracle(self._mod.parse_args(["--component-v", "0", "--stop-grace", "2"]))
        self._runs = 0
        self.setup: dict[str, float] = {}
        self.applied = 0
        self.rejected: list[str] = []

    @contextlib.contextmanager
    def _quiet(self) -> Iterator[None]:
        """The harness logs each step to stdout; kept out of a benchmark's output unless ``verbose``."""
        if self._verbose:
            yield
            return
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf):
                yield
        except BaseException:
            sys.stdout.write(buf.getvalue()[-4000:])
            raise

    def __enter__(self) -> GoPeer:
        h = self._h
        h.tmp = tempfile.mkdtemp(prefix="bench-go-peer-")
        try:
            with self._quiet():
                t = time.monotonic()
                h.start_etcd(self._bins["ETCD"])
                h.start_apiserver(self._bins["KUBE_APISERVER"])
                self.setup["control plane start (s)"] = time.monotonic() - t
                t = time.monotonic()
                self._apply_inventory()
                self.setup["inventory apply (s)"] = time.monotonic() - t
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _apply_inventory(self) -> None:
        """Nodes and DeviceClasses through the oracle's own apply (its Node defaults, taints checked),
        then every other object POSTed here, a rejected one skipped and counted (``self.rejected``):
        the benchmark inventory has slices Kubernetes 1.36 refuses (every tenth node's partitionable
        GPUs put ``sharedCounters`` and ``devices`` in one slice), which draguard also finds invalid
        (linting the file reports the API server's error; as ``--inventory`` their pools are skipped);
        the scheduler can only ever see what the API server stored."""
        h = self._h
        docs = _load(self._inventory)
        first = [d for d in docs if d.get("kind") in ("Namespace", "Node", "DeviceClass")]
        rest = [d for d in docs if d.get("kind") not in ("Namespace", "Node", "DeviceClass")]
        base = Path(h.tmp) / "inventory-nodes-classes.json"
        base.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": first}))
        h.apply_oracle_inventory(str(base))
        self.applied = len(first)

        def post(doc: dict[str, Any]) -> tuple[int, Any]:
            coll, _ = h.resource_for(doc)
            status, _, body = h.create(coll, doc, {"fieldValidation": "Strict"})
            return int(status), body

        for doc in rest:  # resource_for fills its discovery cache before the threads share it
            h.resource_for(doc)
        with ThreadPoolExecutor(4) as pool:  # ~1,000 POSTs, one TLS connection each: in parallel
            for doc, (status, body) in zip(rest, pool.map(post, rest), strict=True):
                if status in (200, 201):
                    self.applied += 1
                    continue
                message = body.get("message") if isinstance(body, dict) else str(body)
                if status != 422:
                    raise RuntimeError(f"inventory {doc.get('kind')} {doc['metadata'].get('name')}: {status} {message}")
                self.rejected.append(f"{doc.get('kind')} {doc['metadata'].get('name')}: {message}")

    def close(self) -> None:
        with self._quiet():
            self._h.cleanup()

    # -- one measurement
    def run(self, claims: list[dict[str, Any]]) -> PeerRun:
        """Claims created, a fresh scheduler started, one pod per claim, each pod's first decision."""
        h = self._h
        self._runs += 1
        ns = f"peer-{self._runs}"
        names = [str(c["metadata"]["name"]) for c in claims]
        with self._quiet():
            h.api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            self._created(h.api("POST", f"/api/v1/namespaces/{ns}/serviceaccounts",
                                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}))
            for claim in claims:
                body = copy.deepcopy(claim)
                body["metadata"] = {"name": claim["metadata"]["name"], "namespace": ns}
                self._created(h.api("POST", f"{CLAIMS_API}/namespaces/{ns}/resourceclaims", body,
                                    query={"fieldValidation": "Strict"}))
            proc, port = h.start_component("kube-scheduler", self._bins["KUBE_SCHEDULER"])
            try:
                h.wait_component(proc, port, "/readyz")
                startup = proc_cpu(proc.pid)
                return self._schedule(proc, ns, names, startup)
            finally:
                proc.stop(grace=2)
                h.procs.remove(proc)
                self._clean(ns)

    @staticmethod
    def _created(answer: tuple[int, Any, Any]) -> None:
        status, _, body = answer
        if status not in (200, 201):
            message = body.get("message") if isinstance(body, dict) else body
            raise RuntimeError(f"the API server rejected an object: {status} {message}")

    def _schedule(self, proc: Any, ns: str, names: list[str], startup: float) -> PeerRun:
        h = self._h
        status, _, listing = h.api("GET", f"/api/v1/namespaces/{ns}/pods")
        if status != 200:
            raise RuntimeError(f"cannot list pods: {status}")
        decisions: dict[str, Decision] = {}
        marks: dict[str, float] = {}
        done = threading.Event()
        stop = threading.Event()
        lock = threading.Lock()
        t0 = [0.0]

        def on_pod(pod: dict[str, Any]) -> None:
            claim = str(pod["metadata"].get("annotations", {}).get("bench.draguard.io/claim", ""))
            state, _, message = self._mod.pod_state(pod)
            if claim not in names or state not in ("scheduled", "unschedulable"):
                return
            with lock:
                if claim in decisions:
                    return
                now = time.monotonic()
                cpu = proc_cpu(proc.pid)
                decisions[claim] = Decision(state, pod["spec"].get("nodeName"), message, now - t0[0])
                if len(decisions) == len(names):
                    marks["cpu"], marks["wall"] = cpu, now - t0[0]
                    done.set()

        rv = str(listing["metadata"]["resourceVersion"])
        failed: list[str] = []

        def watch() -> None:
            try:
                self._watch(ns, rv, on_pod, stop)
            except Exception as e:  # said in the time-out's message below
                failed.append(f"{type(e).__name__}: {e}")

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        time.sleep(0.2)  # the watch request is in before the first pod exists
        before = proc_cpu(proc.pid)
        t0[0] = time.monotonic()
        for name in names:
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": f"pod-{name}", "namespace": ns,
                                "annotations": {"bench.draguard.io/claim": name}},
                   "spec": {"terminationGracePeriodSeconds": 0,
                            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                            "resources": {"claims": [{"name": "devices"}]}}],
                            "resourceClaims": [{"name": "devices", "resourceClaimName": name}]}}
            self._created(h.api("POST", f"/api/v1/namespaces/{ns}/pods", pod))
        deadline = time.monotonic() + self._settle
        while not done.wait(0.5):
            if not proc.alive():
                raise proc.died()
            if time.monotonic() > deadline:
                stop.set()
                undecided = sorted(set(names) - set(decisions))
                raise RuntimeError(f"no decision within {self._settle:.0f}s for the pods of {', '.join(undecided)}"
                                   + (f" (the pod watch failed: {failed[0]})" if failed else ""))
        stop.set()
        run = PeerRun(decisions=dict(decisions), startup_cpu=startup, before_pods_cpu=before,
                      whole_cpu=marks["cpu"], scheduling_wall=marks["wall"])
        # After the CPU mark, so the scrape is not in the figure: how many attempts the figure holds
        # (one per pod when no retry fell inside it) and the scheduler's own algorithm time.
        status, _, text = proc.http.request("GET", "/metrics", timeout=30)
        if status == 200 and isinstance(text, str):
            for m in re.finditer(r'^scheduler_schedule_attempts_total\{[^}]*result="(\w+)"[^}]*\} (\S+)$', text, re.M):
                run.attempts[m.group(1)] = run.attempts.get(m.group(1), 0) + int(float(m.group(2)))
            run.algorithm_seconds = sum(float(v) for v in re.findall(
                r"^scheduler_scheduling_algorithm_duration_seconds_sum(?:\{[^}]*\})? (\S+)$", text, re.M))
        return run

    def _watch(self, ns: str, rv: str, on_pod: Any, stop: threading.Event) -> None:
        """Streams pod events of ``ns`` (the harness's HTTP client reads whole answers only)."""
        kube = self._h.kube
        query = urllib.parse.urlencode({"watch": "1", "resourceVersion": rv, "allowWatchBookmarks": "false",
                                        "timeoutSeconds": str(int(self._settle) + 30)})
        req = urllib.request.Request(f"{kube.base}/api/v1/namespaces/{ns}/pods?{query}")
        req.add_header("Authorization", "Bearer " + kube.token)
        with kube.opener.open(req, timeout=self._settle + 60) as stream:
            for line in stream:
                if stop.is_set():
                    return
                event = json.loads(line)
                if event.get("type") in ("ADDED", "MODIFIED"):
                    on_pod(event["object"])

    def _clean(self, ns: str) -> None:
        """Pods (grace 0) and claims gone, finalizers dropped (no controller would drop them here), so
        the next repeat starts with every device free."""
        h = self._h
        h.api("DELETE", f"/api/v1/namespaces/{ns}/pods", query={"gracePeriodSeconds": "0"})
        for claim in h.items(f"{CLAIMS_API}/namespaces/{ns}/resourceclaims"):
            name = claim["metadata"]["name"]
            h.api("PATCH", f"{CLAIMS_API}/namespaces/{ns}/resourceclaims/{name}", {"metadata": {"finalizers": None}},
                  ctype="application/merge-patch+json")
        h.api("DELETE", f"{CLAIMS_API}/namespaces/{ns}/resourceclaims")
        deadline = time.monotonic() + 30
        while h.items(f"{CLAIMS_API}/namespaces/{ns}/resourceclaims") or h.items(f"/api/v1/namespaces/{ns}/pods"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"namespace {ns}: pods or claims not gone after 30 s")
            time.sleep(0.2)


def measure(inventory: Path, claims: Path, repeat: int = 3, *, verbose: bool = False) -> PeerSummary:
    """``repeat`` fresh schedulers over one control plane with ``inventory`` applied; every
    ResourceClaim in ``claims`` gets one pod.  Raises ``RuntimeError`` when the peer cannot run."""
    docs = [d for d in _load(claims) if d.get("kind") == "ResourceClaim"]
    if not docs:
        raise RuntimeError(f"{claims}: no ResourceClaim")
    summary = PeerSummary()
    peer = GoPeer(inventory, verbose=verbose)
    try:
        with peer:
            summary.setup, summary.applied, summary.rejected = dict(peer.setup), peer.applied, list(peer.rejected)
            for _ in range(repeat):
                summary.runs.append(peer.run(docs))
    except peer.abort as e:  # the harness's own "cannot go on" (a component died, a time-out)
        raise RuntimeError(str(e)) from e
    return summary


def draguard_verdicts(inventory: Path, claims: Path) -> dict[str, str]:
    """claim -> ``Unsatisfiable``, ``SatisfiabilityUnknown`` or ``ok``: what ``draguard lint --format json``
    says of each ResourceClaim in ``claims`` against ``inventory`` (not timed: the benchmark's cross-check
    and the test's)."""
    run = subprocess.run([sys.executable, "-m", "draguard", "lint", str(claims), "--inventory", str(inventory),
                          "--format", "json"], capture_output=True, text=True, cwd=ROOT, check=False)
    try:
        report = json.loads(run.stdout)
    except ValueError as e:
        raise RuntimeError(f"draguard lint gave no JSON (exit {run.returncode}): {run.stderr[-2000:]}") from e
    out = {str(d["metadata"]["name"]): "ok" for d in _load(claims) if d.get("kind") == "ResourceClaim"}
    for finding in report.get("findings", []):
        name, reason = str(finding.get("name") or ""), finding.get("reason")
        if finding.get("kind") != "ResourceClaim" or name not in out:
            continue
        if reason == "Unsatisfiable" or (reason == "SatisfiabilityUnknown" and out[name] == "ok"):
            out[name] = str(reason)
    return out


# ------------------------------------------------------------------------------------------ the script
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--repeat", type=int, default=3, help="fresh schedulers, one measurement each (median)")
    parser.add_argument("--inventory", type=Path, help="Nodes, DeviceClasses, ResourceSlices (default: the issue's)")
    parser.add_argument("--claims", type=Path, help="ResourceClaims, one pod each (default: CLAIMS[:10])")
    parser.add_argument("--verbose", action="store_true", help="the control plane's start-up log")
    parser.add_argument("--buildinfo", action="store_true", help="print the scheduler binary's Go build settings")
    args = parser.parse_args(argv)
    reason = missing()
    if reason is not None:
        print(f"Go peer not measured: {reason}")
        return 0

    def on_term(signum: int, frame: object) -> None:  # `timeout` or a stopped make: clean up on the way out
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    sched = str(binaries()["KUBE_SCHEDULER"])
    if args.buildinfo:
        print("\n".join(buildinfo(sched)))
    shown = os.path.relpath(sched, ROOT) if sched.startswith(str(ROOT) + os.sep) else sched  # no machine paths in RESULTS.md
    print(f"load average {os.getloadavg()[0]:.2f} at the start; kube-scheduler {shown}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        inventory, claims = args.inventory, args.claims
        if inventory is None or claims is None:
            sys.path.insert(0, str(ROOT / "benchmarks"))
            from workload import CLAIMS, make_inventory

            if inventory is None:
                inventory = tmp / "inventory-1000.yaml"
                inventory.write_text(yaml.safe_dump_all(make_inventory(8000, nics=False), sort_keys=False))
            if claims is None:
                claims = tmp / "claims.yaml"
                claims.write_text(yaml.safe_dump_all(CLAIMS[:10], sort_keys=False))
        try:
            summary = measure(inventory, claims, args.repeat, verbose=args.verbose)
        except RuntimeError as e:
            print(f"Go peer not measured: {e}")
            return 0
        report(summary)
        print_agreement(summary, inventory, claims)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


def print_agreement(summary: PeerSummary, inventory: Path, claims: Path, indent: str = "") -> None:
    """Per claim, the scheduler's first decision beside draguard lint's verdict on the same files (one
    more lint, not timed): a figure compared with another is only fair if both answered the same."""
    verdicts, ours = summary.verdicts(), draguard_verdicts(inventory, claims)
    print(f"{indent}  per claim, kube-scheduler's first decision / draguard lint's verdict on the same files: "
          + "; ".join(f"{claim} {state} / {ours.get(claim, '?')}" for claim, state in verdicts.items()))


def report(summary: PeerSummary, indent: str = "") -> None:
    """The peer's figures, as this script and bench_lint_compare.py print them."""
    verdicts = summary.verdicts()
    placed = sum(v == "scheduled" for v in verdicts.values())
    print(f"{indent}kube-scheduler 1.36.2 (Go), {len(verdicts)} pods, one per claim: {placed} bound, "
          f"{sum(v == 'unschedulable' for v in verdicts.values())} unschedulable"
          + (f", {sum(v == 'varies' for v in verdicts.values())} varied between repeats" if "varies" in
             verdicts.values() else "") + f"; median of {len(summary.runs)} fresh schedulers:")
    print(f"{indent}  scheduling (pods created -> every first decision): {summary.median('scheduling_cpu'):.2f} s CPU, "
          f"{summary.median('scheduling_wall'):.2f} s wall")
    print(f"{indent}  whole process (exec -> every first decision): {summary.median('whole_cpu'):.2f} s CPU "
          f"(to /readyz: {summary.median('startup_cpu'):.2f} s)")
    attempts = [sum(r.attempts.values()) for r in summary.runs]
    print(f"{indent}  scheduling attempts per run (scheduler_schedule_attempts_total): {', '.join(map(str, attempts))}; "
          f"its algorithm time (PreFilter+Filter+Score, wall): {summary.median('algorithm_seconds'):.2f} s")
    print(f"{indent}  runs (scheduling / whole CPU s): "
          + ", ".join(f"{r.scheduling_cpu:.2f}/{r.whole_cpu:.2f}" for r in summary.runs)
          + "; " + ", ".join(f"{k} {v:.1f}" for k, v in summary.setup.items()))
    if summary.rejected:
        print(f"{indent}  inventory: {summary.applied} objects stored, {len(summary.rejected)} rejected by the API "
              f"server (never seen by the scheduler; draguard skips their pools as invalid), e.g. "
              f"{summary.rejected[0]}")


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:  # the control plane is stopped by then (GoPeer's with block)
        print("Go peer: interrupted")
        raise SystemExit(130) from None
