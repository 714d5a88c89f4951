"""Issue #20 item 6, a clone tests itself: the conformance sample and every file the tests read are
in the repository, the real-API-server harness is the project's own, ``make conformance`` scores
from the repository copy with the project's scorer, and a fresh clone with no ``../shared`` beside
it runs the suite's self-dependent parts and prints which groups were skipped and why.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import conformance  # noqa: E402  (scripts/conformance.py, the project's scorer)

SAMPLE = ROOT / "tests" / "data" / "conformance"
# the one place allowed to name ../shared: where setup-apiserver.sh looks first for the binaries
ALLOWED = {"scripts/setup-apiserver.sh", "tests/realapi.py", "tests/test_self_contained.py"}


def tracked_files() -> list[str]:
    proc = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False, timeout=60)
    if proc.returncode != 0:
        pytest.skip("not a git checkout")
    return proc.stdout.split()


def test_nothing_the_tests_or_tools_run_reads_outside_the_repository() -> None:
    # a path built to ../shared (a docstring naming where something came from is not a read)
    pattern = re.compile(r"\.\./shared/(tools|conformance)|/work/shared/(tools|conformance)|\"shared\"\s*/\s*\"")
    offenders = []
    for name in tracked_files():
        if name in ALLOWED or not name.endswith((".py", ".sh", "Makefile", ".yml", ".yaml", ".toml", ".cfg")):
            continue
        text = (ROOT / name).read_text(errors="replace")
        offenders += [f"{name}:{text[:m.start()].count(chr(10)) + 1}" for m in pattern.finditer(text)]
    assert offenders == []
    assert (ROOT / "scripts" / "e2e-kube.py").is_file() and (ROOT / "scripts" / "cluster-oracle.py").is_file()
    assert "conformance.py" in (ROOT / "Makefile").read_text()


def test_the_sample_is_whole() -> None:
    manifest = json.loads((SAMPLE / "manifest.json").read_text())
    for entry in manifest["files"]:
        assert (SAMPLE / entry["file"]).is_file() and (SAMPLE / entry["expected"]).is_file(), entry
        assert all((SAMPLE / inv).exists() for inv in entry["inventory"]), entry
    assert len(manifest["files"]) >= 10


def test_scorer_parses_kubernetes_errors() -> None:
    fields = conformance.kubernetes_fields([
        'spec.devices.requests[0].name: Required value', 'metadata.name: Invalid value: "X": a lowercase RFC 1123',
        "spec.devices: Too many: 33: must have at most 32 items", "something odd"])
    assert fields == {("spec.devices.requests[0].name", "FieldValueRequired"), ("metadata.name", "FieldValueInvalid"),
                      ("spec.devices", "FieldValueTooMany"), ("something odd", "Unknown")}
    got = conformance.draguard_fields([
        {"severity": "error", "reason": "FieldValueTypeInvalid", "field": "spec.x"},
        {"severity": "warning", "reason": "FieldValueInvalid", "field": "spec.y"},  # a warning is no verdict
        {"severity": "error", "reason": "Unsatisfiable", "field": "spec"}])
    assert got == {("spec.x", "FieldValueInvalid")}


@pytest.mark.parametrize(("case", "findings", "verdict"), [
    ("unsat", [{"severity": "error", "reason": "Unsatisfiable"}], (True, False)),
    ("unsat", [{"severity": "warning", "reason": "SatisfiabilityUnknown"}], (False, False)),
    ("sat", [], (True, False)),
    ("sat", [{"severity": "warning", "reason": "CapacityRounded"}], (True, False)),
    ("sat", [{"severity": "error", "reason": "Unsatisfiable"}], (False, True)),  # the worst failure
    ("sat", [{"severity": "error", "reason": "FieldValueInvalid"}], (False, True)),
    ("cel-error", [{"severity": "error", "reason": "SelectorRuntimeError"}], (True, False)),
    ("mixed", [{"severity": "error", "reason": "SelectorRuntimeError"}], (True, False)),
    ("mixed", [{"severity": "warning", "reason": "Unsatisfiable"}], (False, True)),
])
def test_scorer_satisfiability_rules(case: str, findings: list[dict[str, str]], verdict: tuple[bool, bool]) -> None:
    assert conformance.satisfiability_agrees(case, findings) == verdict


VERSIONS = ["1.36", *sorted(p.name.removeprefix("expected-") for p in SAMPLE.glob("expected-*") if p.is_dir())]


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("version", VERSIONS)
def test_make_conformance_agrees_everywhere(version: str) -> None:
    """Each version's own verdicts (1.36.2's in expected/, later versions' oracles in
    expected-<minor>/, scripts/oracle-expectations.py) with draguard at that target."""
    result = conformance.score(SAMPLE, command=[sys.executable, "-m", "draguard"], version=version)
    assert result.failures == [] and result.perfect, "\n".join(result.disagreements[:20])
    assert result.validation[1] >= 280 and result.satisfiability[1] >= 200, result.line()


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_fresh_clone_without_shared_tests_itself(tmp_path: Path) -> None:
    """git clone into a folder with no shared/ beside it; the tests that read data or harnesses
    run from the clone's own files, the real-API ones skip, and the summary says why."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True, timeout=300)
    assert not (tmp_path / "shared").exists()
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path), "KUBE_APISERVER": "",
           "ETCD": str(tmp_path / "no-etcd"), "HELM": "", "PYTHONPATH": str(clone / "tests")}
    setup = subprocess.run(["bash", "scripts/setup-apiserver.sh"], cwd=clone, capture_output=True, text=True,
                           timeout=600, env={**env, "PATH": "/usr/bin:/bin"}, check=False)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    tests = ["tests/test_realapi.py", "tests/validation/test_conformance_validation.py",
             "tests/satisfy/test_conformance_satisfiability.py", "tests/cel/test_conformance_messages.py",
             "tests/server/test_kustomize.py", "tests/test_self_contained.py::test_the_sample_is_whole",
             "tests/test_self_contained.py::test_nothing_the_tests_or_tools_run_reads_outside_the_repository"]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *tests], cwd=clone,
                          capture_output=True, text=True, timeout=1500, env=env, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "skipped groups (what this run did not test, and why)" in out
    assert "real API server unavailable" in out
    passed = int(re.search(r"(\d+) passed", out).group(1))  # type: ignore[union-attr]
    assert passed >= 100, out[-2000:]
    score = subprocess.run([sys.executable, "scripts/conformance.py", "--only", "validation", "--filter", "validation/"],
                           cwd=clone, capture_output=True, text=True, timeout=600, env=env, check=False)
    assert score.returncode == 0 and "agreement" in score.stdout, score.stdout + score.stderr
    shutil.rmtree(clone, ignore_errors=True)
