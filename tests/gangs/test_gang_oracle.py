"""Gangs and PodGroup claims against the real 1.37 control plane (``GenericWorkload`` and
``DRAWorkloadResourceClaims`` on).

``tests/data/workloads/oracle-1.37/`` holds scenarios written from the scheduler's gang semantics
(an 8-pod gang with 6 placeable; the same with ``minCount: 6``; a basic PodGroup; a PodGroup claim
of three GPUs shared by 8 pods; the same claim made per pod) and what a real 1.37.2 kube-apiserver,
kube-scheduler and kube-controller-manager did with them (``scripts/cluster-oracle.py``).  The
recorded truth is scored always (the workload scorer, ``tests/data/workloads/score/score.py``); the
oracle is re-run where the 1.37 binaries are (a ``slow`` test: ``DRAGUARD_SLOW=1``, CI), and must
still say what was recorded.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import realapi

PROJECT = Path(__file__).resolve().parents[2]
DATA = PROJECT / "tests" / "data" / "workloads" / "oracle-1.37"
SCORE = PROJECT / "tests" / "data" / "workloads" / "score" / "score.py"
GATES = "GenericWorkload=true,DRAWorkloadResourceClaims=true"
CONTROLLERS = ("resourceclaim-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,"
               "serviceaccount-token-controller,job-controller,podgroup-protection-controller")
"""The oracle's controllers for Jobs, plus the PodGroup finalizer's (without it a case's namespace
never goes away)."""


def _score(truth: Path, args: str = f"--kubernetes-version 1.37 --feature-gates {GATES}") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCORE), "-v", "--truth", str(truth), "--cases", str(DATA / "cases"),
         "--inventory", str(DATA / "inventory"), "--draguard", f"{sys.executable} -m draguard", f"--args={args}"],
        cwd=PROJECT, capture_output=True, text=True, timeout=600, check=False)


def _verdicts(truth: Path) -> dict[str, tuple[str, int]]:
    """Per case file: the oracle's verdict and how many pods were bound."""
    out: dict[str, tuple[str, int]] = {}
    for line in truth.read_text().splitlines():
        rec = json.loads(line)
        bound = sum(1 for p in rec.get("pods") or [] if p.get("state") == "scheduled")
        out[Path(rec["case"]).name] = (rec.get("verdict", ""), bound)
    return out


RECORDED = {
    "01-gang-needs-eight.yaml": ("unschedulable", 0),
    "02-gang-needs-six.yaml": ("partial", 6),
    "03-podgroup-claim.yaml": ("scheduled", 8),
    "04-basic-policy.yaml": ("partial", 6),
    "05-pod-claims-no-group-claim.yaml": ("unschedulable", 0),
}


def test_the_recorded_truth_is_what_the_scenarios_say() -> None:
    assert _verdicts(DATA / "truth.jsonl") == RECORDED
    # the PodGroup claim: one ResourceClaim for the 8 pods, reserved for the PodGroup (one entry)
    records = [json.loads(line) for line in (DATA / "truth.jsonl").read_text().splitlines()]
    (group_case,) = [r for r in records if r["case"].endswith("03-podgroup-claim.yaml")]
    assert [c["reservedFor"] for c in group_case["claims"]] == [["podgroups/train"]]
    gates = {json.loads(line)["cluster"]["featureGates"] for line in (DATA / "truth.jsonl").read_text().splitlines()}
    assert gates == {GATES}


def test_findings_score_clean_against_the_recorded_1_37_scheduler() -> None:
    result = _score(DATA / "truth.jsonl")
    last = result.stdout.strip().splitlines()[-1]
    assert result.returncode == 0, result.stdout + result.stderr
    assert ("unsatisfiable caught 2/2, false rejections 0, replica counts exact 2 bound 0 of 2, "
            "false capacity warnings 0") in last, last


def test_without_the_gates_the_gangs_are_missed_and_the_group_claim_is_counted_per_pod() -> None:
    """The control: at 1.37's defaults (the Workload API off) draguard answers as for pods without
    gangs — the very disagreement with the gated scheduler the gangs fix."""
    result = _score(DATA / "truth.jsonl", "--kubernetes-version 1.37")
    last = result.stdout.strip().splitlines()[-1]
    assert result.returncode != 0
    assert "unsatisfiable caught 0/2" in last and "false capacity warnings 1" in last, last


@pytest.mark.slow  # a control plane and five cases: about a minute (DRAGUARD_SLOW=1, CI)
def test_a_fresh_run_of_the_real_1_37_scheduler_agrees(tmp_path: Path) -> None:
    names = ("kube-apiserver", "kube-scheduler", "kube-controller-manager")
    realapi.require_version("1.37", names)
    binaries = {env: realapi.find_binary_of(name, "1.37") for env, name in zip(
        ("KUBE_APISERVER", "KUBE_SCHEDULER", "KUBE_CONTROLLER_MANAGER"), names, strict=True)}
    etcd = realapi.find_etcd()
    if not realapi.CLUSTER_ORACLE.is_file() or shutil.which("openssl") is None or etcd is None:
        pytest.skip("real control plane unavailable: cluster-oracle.py, openssl or etcd missing")
    env = {**os.environ, "ETCD": str(etcd), **{k: v for k, v in binaries.items() if v}}
    truth = tmp_path / "truth.jsonl"
    run = subprocess.run(
        [sys.executable, str(realapi.CLUSTER_ORACLE), "--inventory", str(DATA / "inventory"), "--cases",
         *sorted(str(p) for p in (DATA / "cases").glob("*.yaml")), "--json-out", str(truth), "--no-wait-namespace",
         "--feature-gates", GATES, "--controllers", CONTROLLERS],
        cwd=PROJECT, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert run.returncode == 0 and truth.is_file(), run.stdout[-3000:] + run.stderr[-3000:]
    assert _verdicts(truth) == RECORDED
    result = _score(truth)
    assert result.returncode == 0, result.stdout + result.stderr
