"""The Go peer of issue #21's lint figure (``benchmarks/bench_go_peer.py``) measures what it says.

The benchmark divides draguard's CPU by a real kube-scheduler's CPU "from the pods' creation to
each pod's first decision".  That figure is only worth something if the harness does see the
scheduler decide — bind the pod whose claim fits, mark Unschedulable the pod whose claim never
fits — and stops there.  So this runs it on a tiny inventory (3 nodes: A100s, A40s capped at 16Gi
per share, H100s) with two claims, one satisfiable and one that no node can ever take (17Gi rounds
up to 20Gi, above the A40s' 16Gi maximum), and checks that every pod gets a first decision, that
it is the one ``draguard lint`` gives on the same files, and that the CPU marks are ordered.
Skipped, with the reason, where kube-apiserver, kube-scheduler or etcd is missing
(``scripts/setup-apiserver.sh`` provides them).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

PROJECT = Path(__file__).resolve().parents[1]


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, PROJECT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(300)  # a control plane (~5 s, more on a loaded machine) and one scheduler
def test_the_peer_sees_the_scheduler_bind_what_fits_and_refuse_what_never_fits(tmp_path: Path) -> None:
    peer = _module("bench_go_peer")
    reason = peer.missing()
    if reason is not None:
        pytest.skip(f"real control plane unavailable: {reason}")
    workload = _module("workload")
    claims = {c["metadata"]["name"]: c for c in workload.CLAIMS}
    inventory, claim_file = tmp_path / "inventory.yaml", tmp_path / "claims.yaml"
    inventory.write_text(yaml.safe_dump_all(workload.make_inventory(24, nics=False), sort_keys=False))  # 3 nodes
    claim_file.write_text(yaml.safe_dump_all([claims["a100-10gi"], claims["a40-17gi-too-big"]], sort_keys=False))

    summary = peer.measure(inventory, claim_file, repeat=1)
    ours = peer.draguard_verdicts(inventory, claim_file)

    assert ours == {"a100-10gi": "ok", "a40-17gi-too-big": "Unsatisfiable"}
    (run,) = summary.runs
    fits, never = run.decisions["a100-10gi"], run.decisions["a40-17gi-too-big"]
    assert fits.state == "scheduled" and fits.node == "node-000000", fits  # the only A100 node
    assert never.state == "unschedulable" and "cannot allocate all claims" in (never.message or ""), never
    assert set(run.decisions) == set(ours)
    # each pod's first decision, not a retry: one attempt per pod inside the figure
    assert run.attempts == {"scheduled": 1, "unschedulable": 1}, run.attempts
    assert 0 < run.startup_cpu <= run.before_pods_cpu <= run.whole_cpu
    assert run.scheduling_cpu == pytest.approx(run.whole_cpu - run.before_pods_cpu)
    assert summary.rejected == [] and summary.applied == 3 + 3 + 3  # classes, Nodes, slices
