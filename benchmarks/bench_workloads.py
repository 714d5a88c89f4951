"""Benchmark: ``draguard lint`` of 1,000 workloads with templates, as a whole process (issue #17: ≤ 2 s).

Plain script (``python benchmarks/bench_workloads.py [N]``).  Writes a chart-like folder of N
workloads (Deployments, Jobs, StatefulSets and CronJobs in turn, each with its own
ResourceClaimTemplate, some with two claims, a nodeSelector or several replicas) and an inventory of
16 GPU nodes and 4 NIC nodes, then times ``draguard lint FOLDER --inventory INV --format json`` end
to end — start-up, decoding, validation, references, per-pod search, replica counts, rendering.
Prints the median of 3 runs, the findings by reason, and whether the target held; the figures go
to RESULTS.md (section "workloads").
"""

from __future__ import annotations

import collections
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from results import write_section  # noqa: E402

TARGET_S = 2.0
RUNS = 3
KINDS = ("Deployment", "Job", "StatefulSet", "CronJob")


def inventory(folder: Path, gpu_nodes: int = 16, nic_nodes: int = 4) -> None:
    docs = [
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
        "spec: {selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}}]}\n",
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: nic.example.com}\n"
        "spec: {selectors: [{cel: {expression: 'device.driver == \"nic.example.com\"'}}]}\n",
    ]
    for i in range(gpu_nodes + nic_nodes):
        gpu = i < gpu_nodes
        node = f"node-{i}"
        zone = f"zone-{i % 2}"
        docs.append(f"apiVersion: v1\nkind: Node\nmetadata: {{name: {node}, labels: {{topology.kubernetes.io/zone: {zone}}}}}\n")
        # GPU nodes carry 8 GPUs and a NIC (so two-claim pods can run there), NIC nodes two NICs
        for driver, count in ((("gpu.example.com", 8), ("nic.example.com", 1)) if gpu else (("nic.example.com", 2),)):
            devices = "\n".join(
                f"  - {{name: dev-{j}, attributes: {{model: {{string: m{j % 2}}}}}, capacity: {{memory: {{value: 40Gi}}}}}}"
                for j in range(count))
            docs.append(f"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: {node}-{driver}}}\n"
                        f"spec:\n  driver: {driver}\n  nodeName: {node}\n"
                        f"  pool: {{name: {node}-{driver}, generation: 1, resourceSliceCount: 1}}\n  devices:\n{devices}\n")
    (folder / "inventory.yaml").write_text("---\n".join(docs))


def pod_spec(i: int, indent: str) -> str:
    two = i % 5 == 0
    claims = "[{name: gpu}, {name: nic}]" if two else "[{name: gpu}]"
    entries = f"\n{indent}- {{name: gpu, resourceClaimTemplateName: gpu-{i}}}"
    if two:
        entries += f"\n{indent}- {{name: nic, resourceClaimTemplateName: nic}}"
    selector = f"\n{indent}nodeSelector: {{topology.kubernetes.io/zone: zone-{i % 2}}}" if i % 7 == 0 else ""
    return (f"{indent}restartPolicy: {'Never' if i % 4 in (1, 3) else 'Always'}{selector}\n"
            f"{indent}containers:\n{indent}- name: c\n{indent}  image: registry.example.com/app:{i}\n"
            f"{indent}  ports: [{{containerPort: 8080}}]\n{indent}  env: [{{name: A, value: b}}]\n"
            f"{indent}  resources:\n{indent}    limits: {{cpu: '1', memory: 1Gi}}\n{indent}    claims: {claims}\n"
            f"{indent}resourceClaims:{entries}\n")


def workload(i: int) -> str:
    kind = KINDS[i % len(KINDS)]
    template = (f"apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {{name: gpu-{i}}}\n"
                f"spec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n        exactly:\n"
                f"          deviceClassName: gpu.example.com\n"
                f"          selectors: [{{cel: {{expression: 'device.attributes[\"gpu.example.com\"].model == \"m{i % 2}\"'}}}}]\n")
    replicas = 1 + i % 3
    if kind == "CronJob":
        body = (f"apiVersion: batch/v1\nkind: CronJob\nmetadata: {{name: w-{i}}}\nspec:\n  schedule: '@hourly'\n"
                f"  jobTemplate:\n    spec:\n      parallelism: {replicas}\n      template:\n        spec:\n{pod_spec(i, ' ' * 10)}")
    elif kind == "Job":
        body = (f"apiVersion: batch/v1\nkind: Job\nmetadata: {{name: w-{i}}}\nspec:\n  parallelism: {replicas}\n"
                f"  template:\n    spec:\n{pod_spec(i, ' ' * 6)}")
    else:
        group = "apps/v1"
        body = (f"apiVersion: {group}\nkind: {kind}\nmetadata: {{name: w-{i}}}\nspec:\n  replicas: {replicas}\n"
                f"  selector: {{matchLabels: {{app: w-{i}}}}}\n  template:\n    metadata: {{labels: {{app: w-{i}}}}}\n"
                f"    spec:\n{pod_spec(i, ' ' * 6)}")
    return template + "---\n" + body


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    draguard = str(Path(sys.executable).with_name("draguard"))
    with tempfile.TemporaryDirectory(prefix="bench-workloads-") as tmp:
        chart, inv = Path(tmp) / "chart", Path(tmp) / "inventory"
        chart.mkdir()
        inv.mkdir()
        inventory(inv)
        nic = ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: nic}\n"
               "spec: {spec: {devices: {requests: [{name: nic, exactly: {deviceClassName: nic.example.com}}]}}}\n")
        (chart / "nic.yaml").write_text(nic)
        for start in range(0, n, 100):  # files of 100 workloads, as a chart's rendered output would be
            (chart / f"w-{start:05d}.yaml").write_text("---\n".join(workload(i) for i in range(start, min(n, start + 100))))
        times = []
        cpu = []
        report: dict[str, object] = {}
        for _ in range(RUNS):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            proc = subprocess.run([draguard, "lint", str(chart), "--inventory", str(inv), "--format", "json",
                                   "--fail-on", "never"], capture_output=True, text=True, check=False)
            times.append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            report = json.loads(proc.stdout)
    reasons = collections.Counter(f["reason"] for f in report["findings"])  # type: ignore[index,union-attr]
    median = statistics.median(times)
    cpu_median = statistics.median(cpu)
    ok = median <= TARGET_S
    summary = report["summary"]
    print(f"draguard lint of {n} workloads with templates ({summary}), whole process")
    print(f"  median of {RUNS}: {median:.2f} s wall (min {min(times):.2f}, max {max(times):.2f}), "
          f"{cpu_median:.2f} s CPU; findings {dict(reasons)}")
    print(f"  target: <= {TARGET_S:.0f} s -> {'OK' if ok else 'MISSED'}")
    write_section("<!-- bench_workloads:start -->", "<!-- bench_workloads:end -->",
                  "<!-- bench_workloads:start -->\n## workloads (bench_workloads.py)\n\n"
                  f"`draguard lint` of {n} workloads with templates (Deployments, Jobs, StatefulSets, CronJobs; 1 in 5 "
                  "with a second claim, 1 in 7 with a nodeSelector, 1–3 replicas) against 20 nodes, whole process: "
                  f"median {median:.2f} s wall of {RUNS} (min {min(times):.2f}, max {max(times):.2f}), {cpu_median:.2f} s CPU "
                  f"(user + system: the figure that holds on a shared machine); target ≤ {TARGET_S:.0f} s "
                  f"{'held' if ok else 'missed'}. Findings: {dict(sorted(reasons.items()))}.\n"
                  "<!-- bench_workloads:end -->")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
