""""Not now" against the real control plane (kube-apiserver, kube-scheduler, kube-controller-manager
1.36 from scripts/cluster-oracle.py, ``--same-cluster-sequence``): a Deployment fills the
GPUs, then a pod that cannot fit now.  The real scheduler allocates the Deployment's claims; the
webhook's live inventory (list+watch of that API server) sees them, admits a claim asking for one
more GPU with ``CapacityInUse`` naming the shortage, and ``draguard explain`` on the waiting pod
names the claim, the request and the resource and counts the holders — without naming them, since
they live in another namespace.

Skips, with the reason, where the binaries or etcd are missing (scripts/setup-apiserver.sh
unpacks them into .cache/).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.cli import main
from draguard.inventory import Inventory, load_kube_config
from draguard.inventory.kube import KubeInventory
from draguard.k8s import Reason
from draguard.review import ReviewOptions, review_admission

PROJECT = Path(__file__).resolve().parents[1]
ORACLE = PROJECT / "scripts" / "cluster-oracle.py"
BINARIES = {"KUBE_APISERVER": "kube-apiserver", "KUBE_SCHEDULER": "kube-scheduler",
            "KUBE_CONTROLLER_MANAGER": "kube-controller-manager"}
DRIVER = "gpu.example.com"


def _find(var: str, name: str) -> str | None:
    for candidate in (os.environ.get(var), name):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    cached = PROJECT / ".cache" / name
    return str(cached) if os.access(cached, os.X_OK) else None


def _missing() -> str | None:
    if not ORACLE.is_file():
        return f"no {ORACLE}"
    for var, name in BINARIES.items():
        if _find(var, name) is None:
            return f"no {name} (${var}, PATH or .cache/; run scripts/setup-apiserver.sh)"
    if shutil.which(os.environ.get("ETCD") or "etcd") is None:
        return "no etcd"
    if shutil.which("openssl") is None:
        return "no openssl"
    return None


def _template(ns: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu", "namespace": ns},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}}


def _pod_spec() -> dict[str, Any]:
    return {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}


def _write(tmp: Path) -> tuple[Path, Path, Path]:
    inventory = tmp / "inventory"
    inventory.mkdir()
    (inventory / "cluster.yaml").write_text(yaml.safe_dump_all([
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}},
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-node", "labels": {"kubernetes.io/hostname": "gpu-node"}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "gpu-node-gpus"},
         "spec": {"driver": DRIVER, "nodeName": "gpu-node", "pool": {"name": "gpu-node", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}},
    ]))
    fill = tmp / "fill.yaml"
    fill.write_text(yaml.safe_dump_all([_template("batch"), {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "trainer", "namespace": "batch"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "trainer"}},
                 "template": {"metadata": {"labels": {"app": "trainer"}}, "spec": _pod_spec()}}}]))
    want = tmp / "want.yaml"
    want.write_text(yaml.safe_dump_all([_template("team"), {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "want", "namespace": "team"}, "spec": _pod_spec()}]))
    return inventory, fill, want


@pytest.fixture(scope="module")
def held_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[dict[str, Any]]]]:
    reason = _missing()
    if reason is not None:
        pytest.skip(f"real control plane unavailable: {reason}")
    tmp = tmp_path_factory.mktemp("oracle-now")
    inventory, fill, want = _write(tmp)
    env = dict(os.environ)
    for var, name in BINARIES.items():
        env[var] = str(_find(var, name))
    out = tmp / "out.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(ORACLE), "--inventory", str(inventory), "--cases", str(fill), str(want),
         "--same-cluster-sequence", "--no-wait-namespace", "--json-out", str(out), "--hold"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True)
    lines: list[str] = []
    kubeconfig: list[Path] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "--hold: running until Ctrl-C; kubeconfig: " in line:
                kubeconfig.append(Path(line.split("kubeconfig: ", 1)[1].split()[0]))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + 300
    while not kubeconfig and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    try:
        if not kubeconfig:
            pytest.fail("cluster-oracle did not hold the cluster:\n" + "".join(lines[-40:]))
        records = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
        yield kubeconfig[0], records
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def test_the_scenario_is_what_the_real_scheduler_did(held_cluster: tuple[Path, list[dict[str, Any]]]) -> None:
    _, records = held_cluster
    fill, want = records
    assert fill["verdict"] == "scheduled", fill
    assert want["verdict"] == "unschedulable", want
    assert "cannot allocate all claims" in want["pods"][0]["message"]


def _synced(kubeconfig: Path) -> tuple[KubeInventory, Inventory]:
    """A live inventory of the held cluster, synced until it holds the Deployment's two allocations."""
    live = KubeInventory(load_kube_config(kubeconfig), debounce=0.05)

    async def until_synced() -> None:
        task = asyncio.create_task(live.run())
        for _ in range(600):
            snap = live.snapshot()
            if live.synced and snap is not None and snap.cluster.known and len(snap.cluster.allocations.dedicated) == 2:
                break
            await asyncio.sleep(0.1)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(until_synced())
    snapshot = live.snapshot()
    assert snapshot is not None and len(snapshot.cluster.allocations.dedicated) == 2
    return live, snapshot


def test_the_webhook_admits_one_more_gpu_with_capacity_in_use(held_cluster: tuple[Path, list[dict[str, Any]]]) -> None:
    """The live inventory of the real API server (list+watch) holds the scheduler's allocations."""
    live, snapshot = _synced(held_cluster[0])
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "one-more", "namespace": "seq-team"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}
    got = review_admission(kind="ResourceClaim", operation="CREATE", obj=claim, old_obj=None, namespace="seq-team",
                           inventory=snapshot, inventory_problem=live.problem(), options=ReviewOptions(admission=True))
    assert not got.denied
    [warning] = [f for f in got.findings if f.reason == Reason.CAPACITY_IN_USE]
    assert 'request "gpu" needs 1 device of class gpu.example.com on one node; the most free on one node is 0' in warning.message
    assert "2 claims in other namespaces" in warning.message and "trainer" not in warning.message


def test_explain_names_claim_request_resource_and_counts_holders(
    held_cluster: tuple[Path, list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig, _ = held_cluster
    assert main(["explain", "pod/want", "-n", "seq-team", "--kubeconfig", str(kubeconfig), "--format", "json"]) == 0
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert doc["state"].startswith("pending; the scheduler says:") and "cannot allocate all claims" in doc["state"]
    [claim] = doc["claims"]
    assert claim["origin"].startswith('pod claim "gpu" (claim want-gpu-') and claim["ever"] is True and claim["now"] is False
    [finding] = [f for f in claim["findings"] if f["reason"] == "CapacityInUse"]
    assert 'request "gpu"' in finding["message"] and "class gpu.example.com" in finding["message"]
    assert finding["details"]["holders"] == {"namespace": [], "otherNamespaces": 2}
    [row] = claim["classes"]
    assert row["nodes"] == ["gpu-node"] and row["ever"] is True and row["now"] is False
    assert row["held"] == "held by 2 claims in other namespaces"
    [pod_row] = doc["classes"]  # all of the pod's claims together: the engine's per-pod search
    assert pod_row["ever"] is True and pod_row["now"] is False and pod_row["held"] == "held by 2 claims in other namespaces"
    assert [f["reason"] for f in doc["findings"]] == ["CapacityInUse"]
    assert "trainer" not in out and "seq-batch" not in out


def test_the_webhook_admits_a_pod_that_cannot_fit_now_with_capacity_in_use(
    held_cluster: tuple[Path, list[dict[str, Any]]],
) -> None:
    """The per-pod question at admission: a new pod whose template asks for a GPU fits the empty
    cluster, not today's — admitted, with the shortage named and the holders counted, not named."""
    live, snapshot = _synced(held_cluster[0])
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "another", "namespace": "seq-team"}, "spec": _pod_spec()}
    got = review_admission(kind="Pod", operation="CREATE", obj=pod, old_obj=None, namespace="seq-team",
                           inventory=snapshot, inventory_problem=live.problem(), options=ReviewOptions(admission=True))
    assert not got.denied
    [warning] = [f for f in got.findings if f.reason == Reason.CAPACITY_IN_USE]
    assert warning.message.startswith("fits an empty cluster but not today's allocations: ")
    assert 'request "gpu" needs 1 device of class gpu.example.com on one node' in warning.message
    assert "2 claims in other namespaces" in warning.message and "trainer" not in warning.message
