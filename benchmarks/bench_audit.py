"""Benchmark: the audit pass (``serve --audit``'s ``AuditEngine.evaluate``) over 10,000 DRA pods in
1,000 namespaces, against the seeded 10k-device inventory of ``workload.py``.

Plain script (``python benchmarks/bench_audit.py``); prints figures only (``make bench`` keeps
the output in RESULTS.md).  What the issue asks (#21 part 4): one full pass's time and memory,
and the incremental pass after one slice changes.  Goals: full pass ≤ 10 s, incremental ≤ 1 s.

The objects: per namespace two ResourceClaimTemplates (specs taken in turn from ``workload.CLAIMS``:
satisfiable, rounded, unsatisfiable by capacity, selector and constraint) and ten pending Pods, five
on each template — as a Deployment's replicas would be, equal but for their names.  A second mix
makes every pod's content distinct (each tolerates its own taint, which no node has: the nodes it may
use are the same) — the worst case, where no two pods share a review.  Passes, each timed (wall and CPU) with the RSS growth:

1. **full**: the first pass (every distinct content reviewed once);
2. **unchanged**: the same objects and snapshot again (answers remembered per content and snapshot);
3. **one object changed**: one template edited (a new ``resourceVersion``), same snapshot;
4. **one slice changed**: a new snapshot in which one node's slice lost a device.  Each distinct
   content's engine answers are asked again of the request or spec kept from its review (the
   engine's memory serves alike ones at once); equal answers keep the findings ("carried"), new
   ones remake them without the rest of the pipeline ("remade"), and only what cannot be carried
   is reviewed (``app/server/audit/evaluate.py``).  The new snapshot is built afresh for each run
   (cold caches, as the watcher's is; before 2026-12-02 one snapshot served every run, so the
   worst case met the caches the replica-like runs had filled); its build is the watcher's work
   and is reported beside the pass, not in it.

Each line also says how much of the pass the garbage collector took, and how many of its collections
were full (generation 2) ones: a full collection walks the whole process heap (about 0.5 s here,
inventory, audit state and the benchmark's own objects together), and whether one lands inside a
pass depends on what the process allocated before it (the snapshot's build among others) — so a
pass's wall time moves by that much from run to run, and the line says when it did.
"""

from __future__ import annotations

import copy
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path as FsPath
from typing import Any

sys.path.insert(0, str(FsPath(__file__).resolve().parent))
sys.path.insert(0, str(FsPath(__file__).resolve().parents[1]))

from draguard.inventory import build_inventory, with_cluster
from draguard.inventory.claims import reduce_template
from draguard.server.audit import AuditEngine
from workload import CLAIMS, make_inventory

NAMESPACES = 1000
PODS_PER_NAMESPACE = 10
REPEATS = int(__import__("os").environ.get("BENCH_REPEATS", "3"))


def _rss_kb() -> int:
    for line in FsPath("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _template(ns: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}", "resourceVersion": "1"},
            "spec": {"spec": copy.deepcopy(spec)}}


def _pod(ns: str, name: str, template: str, selector: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
    }
    if selector is not None:
        # a toleration of a taint no node has: the content differs, where the pod may go does not
        spec["tolerations"] = [{"key": f"bench.example.com/slot-{selector}", "operator": "Exists"}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}", "resourceVersion": "1"},
            "spec": spec, "status": {"phase": "Pending"}}


def objects(distinct: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in range(NAMESPACES):
        ns = f"team-{n:04d}"
        specs = (CLAIMS[n % len(CLAIMS)]["spec"], CLAIMS[(n + 5) % len(CLAIMS)]["spec"])
        out += [_template(ns, "t0", specs[0]), _template(ns, "t1", specs[1])]
        for p in range(PODS_PER_NAMESPACE):
            out.append(_pod(ns, f"p{p}", f"t{p // 5}", f"{n}-{p}" if distinct else None))
    return out


Run = tuple[float, float, int, int, int, int, int, float, int]


class _Collections:
    """The garbage collector's time and full collections, summed while installed (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.seconds, self.full, self._start = 0.0, 0, 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
            return
        self.seconds += time.perf_counter() - self._start
        self.full += info.get("generation") == 2


_GC = _Collections()


def _timed(engine: AuditEngine, objs: list[dict[str, Any]], inv: Any) -> Run:
    rss = _rss_kb()
    gc_seconds, gc_full = _GC.seconds, _GC.full
    w, c = time.perf_counter(), time.process_time()
    result = engine.evaluate(objs, inv)
    return (time.perf_counter() - w, time.process_time() - c, result.reviewed, len(result.findings), _rss_kb() - rss,
            result.carried, result.redecided, _GC.seconds - gc_seconds, _GC.full - gc_full)


def run(distinct: bool, inv: Any, changed: Callable[[], Any], repeats: int) -> dict[str, list[Run]]:
    """The four passes, ``repeats`` times; ``changed`` builds the changed snapshot afresh for each
    run (its caches cold, as the watcher's new snapshot is: a snapshot shared by the runs would
    carry the engine's answers of one run into the next)."""
    figures: dict[str, list[Run]] = {"full": [], "unchanged": [], "object": [], "slice": []}
    for _ in range(repeats):
        objs = objects(distinct)
        engine = AuditEngine()
        figures["full"].append(_timed(engine, objs, inv))
        figures["unchanged"].append(_timed(engine, objs, inv))
        edited = list(objs)
        edited[0] = copy.deepcopy(objs[0])
        edited[0]["metadata"]["resourceVersion"] = "2"
        edited[0]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "gpu.example.com"
        figures["object"].append(_timed(engine, edited, inv))
        changed_inv = changed()
        figures["slice"].append(_timed(engine, edited, changed_inv))
    return figures


def _line(name: str, runs: list[Run]) -> str:
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    reviewed, findings, grew = runs[-1][2], runs[-1][3], statistics.median(r[4] for r in runs) / 1024
    carried, remade = runs[-1][5], runs[-1][6]
    collected, full = statistics.median(r[7] for r in runs), sum(r[8] for r in runs)
    return (f"  {name:<22} wall {wall:7.3f} s, CPU {cpu:7.3f} s, reviewed {reviewed:>6} contents "
            f"(carried {carried:>6}, remade {remade:>6}), findings {findings:>6}, RSS +{grew:.1f} MB; "
            f"GC {collected:.3f} s ({full} full collection{'s' if full != 1 else ''} in {len(runs)} run{'s' if len(runs) != 1 else ''})")


def main() -> None:
    gc.callbacks.append(_GC)
    load = FsPath("/proc/loadavg").read_text().split()[0]
    inventory_objects = make_inventory(10_000)
    # the templates as the live inventory holds them (watched), so the pods' references resolve
    templates = dict(t for o in objects(False) if o["kind"] == "ResourceClaimTemplate" if (t := reduce_template(o)))
    inv = with_cluster(build_inventory(inventory_objects), {}, templates, known=True)
    changed = copy.deepcopy(inventory_objects)
    first_slice = next(o for o in changed if o.get("kind") == "ResourceSlice" and o["spec"].get("devices"))
    first_slice["spec"]["devices"].pop()
    t = time.perf_counter()
    with_cluster(build_inventory(changed), {}, templates, known=True)
    build = time.perf_counter() - t
    rss0 = _rss_kb() / 1024
    print(f"audit: {NAMESPACES} namespaces x ({PODS_PER_NAMESPACE} pending pods + 2 templates) against "
          f"{inv.device_count} devices; median of {REPEATS}; load average {load} at the start; RSS {rss0:.0f} MB "
          f"before the passes; the changed snapshot's build (the watcher's work, not the pass's): {build:.2f} s")
    for distinct in (False, True):
        # the worst case takes minutes a pass: measured once
        repeats = 1 if distinct else REPEATS
        label = "every pod distinct (worst case, one run)" if distinct else "replica-like pods (5 equal per template)"
        print(f"{label}:")
        figures = run(distinct, inv, lambda: with_cluster(build_inventory(changed), {}, templates, known=True), repeats)
        print(_line("1. full pass", figures["full"]))
        print(_line("2. unchanged", figures["unchanged"]))
        print(_line("3. one object changed", figures["object"]))
        print(_line("4. one slice changed", figures["slice"]))
    print(f"load average at the end: {FsPath('/proc/loadavg').read_text().split()[0]}; goals: full <= 10 s, "
          "incremental <= 1 s")


if __name__ == "__main__":
    main()
