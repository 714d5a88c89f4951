"""``draguard serve`` at 100k devices on several inventory shapes: RSS at ready, peak, start-up (issue #21).

Plain script (``python benchmarks/bench_memory.py [--devices 100000] [--repeat 1] [--write]``).
Memory follows more than the device count — unique labels, unique attributes per device, how
devices are spread over nodes and pools — so the goal (≤ 300 MB at ready, ready within 15 s) is
checked on several shapes, each written as ``kubectl get ... -o yaml`` writes it (one
``kind: List`` per resource: ``nodes.yaml``, ``resourceslices.yaml``, ``deviceclasses.yaml``):

* ``workload``: :mod:`workload`'s generator (four GPU models, partitionable GPUs every tenth
  node, two NICs per node), one List of every object;
* ``small-nodes``: many small nodes with unique labels — 12,500 Nodes each with a hostname and a
  model label, one slice of 8 GPUs per node, each GPU with a unique ``uuid``, an ``index`` and a
  ``numa`` attribute;
* ``large-nodes``: 125 nodes with 800 GPUs each (one slice of 100 devices × 8 per node);
* ``network``: network-attached pools — 1,250 pools of 80 devices not bound to a node (half
  ``allNodes``, half a ``nodeSelector`` on a zone label), with 1,000 Nodes;
* ``empty``: one DeviceClass and no device — the server's own floor (interpreter, FastAPI,
  pydantic, the CEL evaluator, TLS), what every other shape's RSS includes.

For each shape one ``draguard serve --inventory FOLDER`` process: time from start to ``/readyz``
200, ``VmRSS`` at that moment and ``VmHWM`` (the peak RSS of start-up), read from
``/proc/PID/status``, and the CPU seconds the server had used by then (``/proc/PID/stat``: on a
shared machine the wall-clock time to ready grows with the load, its CPU much less); then one
review of a claim to show it answers.  Medians of ``--repeat``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_webhook import Connection, review_body, start_server, stop  # noqa: E402
from results import write_section  # noqa: E402
from workload import claim, make_inventory  # noqa: E402

API = "resource.k8s.io/v1"
CLASS = {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}


def _gpu(rng: random.Random, name: str, index: int, numa: int) -> dict[str, Any]:
    return {"name": name, "attributes": {
        "uuid": {"string": f"GPU-{rng.getrandbits(128):032x}"}, "index": {"int": index},
        "numa": {"int": numa}, "model": {"string": "H100"}},
        "capacity": {"memory": {"value": "80Gi"}}}


def _slice(name: str, devices: list[dict[str, Any]], *, node: str | None = None, pool: str,
           all_nodes: bool = False, selector: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"driver": "gpu.example.com", "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
                            "devices": devices}
    if node is not None:
        spec["nodeName"] = node
    elif all_nodes:
        spec["allNodes"] = True
    else:
        spec["nodeSelector"] = selector
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def _node(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def small_nodes(devices: int, rng: random.Random) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [CLASS]
    for n in range(devices // 8):
        node = f"gpu-node-{n:06d}"
        out.append(_node(node, {"kubernetes.io/hostname": node, "nvidia.com/gpu.product": f"H100-{n % 3}"}))
        out.append(_slice(f"{node}-gpus", [_gpu(rng, f"gpu-{g}", g, g // 4) for g in range(8)], node=node, pool=node))
    return out


def large_nodes(devices: int, rng: random.Random) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [CLASS]
    per_node = 800
    for n in range(devices // per_node):
        node = f"big-node-{n:04d}"
        out.append(_node(node, {"kubernetes.io/hostname": node}))
        for s in range(per_node // 100):
            devs = [_gpu(rng, f"gpu-{s * 100 + g}", s * 100 + g, s % 8) for g in range(100)]
            spec = _slice(f"{node}-{s}", devs, node=node, pool=node)
            spec["spec"]["pool"]["resourceSliceCount"] = per_node // 100
            out.append(spec)
    return out


def network(devices: int, rng: random.Random) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [CLASS]
    for n in range(1000):
        out.append(_node(f"node-{n:04d}", {"kubernetes.io/hostname": f"node-{n:04d}", "zone": f"zone-{n % 10}"}))
    per_pool = 80
    for p in range(devices // per_pool):
        devs = [_gpu(rng, f"dev-{d}", d, d % 4) for d in range(per_pool)]
        selector = {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "zone", "operator": "In", "values": [f"zone-{p % 10}"]}]}]}
        out.append(_slice(f"fabric-{p:05d}", devs, pool=f"fabric-{p:05d}", all_nodes=p % 2 == 0,
                          selector=None if p % 2 == 0 else selector))
    return out


SHAPES = {
    "empty": lambda devices, rng: [CLASS],
    "workload": lambda devices, rng: make_inventory(devices),
    "small-nodes": small_nodes,
    "large-nodes": large_nodes,
    "network": network,
}


def write_lists(objects: list[dict[str, Any]], folder: Path) -> float:
    """One ``kind: List`` file per resource, laid out as kubectl writes it; MB written."""
    folder.mkdir(parents=True, exist_ok=True)
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], []).append(obj)
    total = 0
    for kind, items in by_kind.items():
        path = folder / f"{kind.lower()}s.yaml"
        with path.open("w") as fh:
            yaml.dump({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}},
                      fh, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)
        total += path.stat().st_size
    return total / 2**20


def status_mb(pid: int, field: str) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--write", action="store_true", help="replace this script's section of RESULTS.md")
    args = parser.parse_args()
    lines = []
    load_start = os.getloadavg()[0]
    probe = review_body(claim("probe", [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]))
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for shape in args.shapes.split(","):
            objects = SHAPES[shape](args.devices, random.Random(21))
            folder = tmp / shape
            mb = write_lists(objects, folder)
            count = sum(len(o["spec"].get("devices", [])) for o in objects if o["kind"] == "ResourceSlice")
            del objects
            ready, rss, peak, cpu = [], [], [], []
            answered = ""
            for _ in range(args.repeat):
                proc, port, ca, startup, _rss = start_server(folder, tmp, "error")
                try:
                    ready.append(startup)
                    cpu.append(cpu_seconds(proc.pid))
                    rss.append(status_mb(proc.pid, "VmRSS"))
                    peak.append(status_mb(proc.pid, "VmHWM"))
                    status, body = Connection(port, ca).post("/validate", probe)
                    allowed = b'"allowed":true' in body
                    answered = f"{status} allowed={allowed}"
                finally:
                    stop(proc)
            line = (f"{shape:12s} {count:>7,} devices ({mb:.0f} MB of YAML in kind: List files): ready in "
                    f"{statistics.median(ready):.1f} s ({statistics.median(cpu):.1f} s CPU), "
                    f"RSS at ready {statistics.median(rss):.0f} MB, "
                    f"peak during start-up {statistics.median(peak):.0f} MB; a review: {answered}")
            print(line, flush=True)
            lines.append(line)
    lines.append(f"(load average {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
                 f"median of {args.repeat} run(s) per shape)")
    print(lines[-1])
    if args.write or os.environ.get("DRAGUARD_BENCH_WRITE"):
        cmd = f"python benchmarks/bench_memory.py --devices {args.devices} --repeat {args.repeat}"
        write_section("<!-- memory:start -->", "<!-- memory:end -->",
                      "<!-- memory:start -->\n```\n$ " + cmd + "\n" + "\n".join(lines) + "\n```\n<!-- memory:end -->")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
