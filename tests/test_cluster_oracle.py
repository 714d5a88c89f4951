"""draguard's pod and workload findings against the real kube-scheduler's verdicts.

``tests/data/workloads/oracle/`` holds scenarios written from the scheduler's semantics and what a
real 1.36.2 control plane did with them (cluster-oracle).  The score (the workload scorer of the
shared conformance sample, copied to ``tests/data/workloads/score/score.py``) must be clean: every workload none of whose pods ever runs is Unsatisfiable,
no workload the scheduler places is denied, replica counts equal the scheduler's, missing
references are warned.  The recorded truth is scored always; the oracle is re-run (a ``slow`` test:
``DRAGUARD_SLOW=1``, CI) where kube-apiserver, kube-scheduler, kube-controller-manager and etcd are
available (skipped, with the reason, where not).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import realapi

PROJECT = Path(__file__).resolve().parents[1]
ORACLE_DATA = PROJECT / "tests" / "data" / "workloads" / "oracle"
SCORE = PROJECT / "tests" / "data" / "workloads" / "score" / "score.py"
ORACLE = realapi.CLUSTER_ORACLE


def _score(truth: Path, version: str = "1.36") -> subprocess.CompletedProcess[str]:
    if not SCORE.is_file():
        pytest.skip(f"no score.py at {SCORE}")
    return subprocess.run(
        [sys.executable, str(SCORE), "-v", "--truth", str(truth), "--cases", str(ORACLE_DATA / "cases"),
         "--inventory", str(ORACLE_DATA / "inventory"), "--draguard", f"{sys.executable} -m draguard",
         f"--args=--kubernetes-version {version}"],
        cwd=PROJECT, capture_output=True, text=True, timeout=600, check=False)


def test_findings_score_clean_against_the_recorded_scheduler_verdicts() -> None:
    result = _score(ORACLE_DATA / "truth.jsonl")
    last = result.stdout.strip().splitlines()[-1]
    assert result.returncode == 0, result.stdout + result.stderr
    assert "unsatisfiable caught 4/4, false rejections 0, replica counts exact 5 bound 0 of 5" in last, last


def _binary(env: str, name: str) -> str | None:
    for candidate in (os.environ.get(env), name):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    cached = PROJECT / ".cache" / name
    return str(cached) if os.access(cached, os.X_OK) else None


@pytest.mark.slow  # a control plane and a case of seconds each: a minute or more (DRAGUARD_SLOW=1, CI)
@pytest.mark.parametrize("version", ["1.36", "1.37", "1.38"])
def test_findings_score_clean_against_a_fresh_run_of_the_real_scheduler(version: str, tmp_path: Path) -> None:
    """The same scenarios on the control plane of each version (1.36.2 from the team copies, 1.37
    and 1.38 built from Go modules), draguard at that target."""
    if version == realapi.BASE_VERSION:
        realapi.require()
        binaries = {env: _binary(env, name) for env, name in (
            ("KUBE_SCHEDULER", "kube-scheduler"), ("KUBE_CONTROLLER_MANAGER", "kube-controller-manager"))}
        binaries["KUBE_APISERVER"] = realapi.find_apiserver()
    else:
        realapi.require_version(version, ("kube-apiserver", "kube-scheduler", "kube-controller-manager"))
        binaries = {env: realapi.find_binary_of(name, version) for env, name in (
            ("KUBE_APISERVER", "kube-apiserver"), ("KUBE_SCHEDULER", "kube-scheduler"),
            ("KUBE_CONTROLLER_MANAGER", "kube-controller-manager"))}
    missing = [env for env, path in binaries.items() if path is None]
    if missing or not ORACLE.is_file() or shutil.which("openssl") is None:
        pytest.skip(f"real control plane unavailable: {', '.join(missing) or 'cluster-oracle.py or openssl'} missing "
                    "(scripts/setup-apiserver.sh unpacks the binaries)")
    env = {**os.environ, **{k: v for k, v in binaries.items() if v}}
    truth = tmp_path / "truth.jsonl"
    run = subprocess.run(
        [sys.executable, str(ORACLE), "--inventory", str(ORACLE_DATA / "inventory"), "--cases",
         *sorted(str(p) for p in (ORACLE_DATA / "cases").glob("*.yaml")), "--json-out", str(truth),
         "--no-wait-namespace"], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert run.returncode == 0 and truth.is_file(), run.stdout[-3000:] + run.stderr[-3000:]
    result = _score(truth, version)
    assert result.returncode == 0, result.stdout + result.stderr
