"""draguard's gate table agrees with each supported version's own ``kube_features.go``.

The source is read from the Go module cache (``scripts/build-kubernetes.sh`` puts it there); a
version whose source is absent skips with the reason (no download from a test)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
VERSIONS = sorted({"v1.36.3", *(line.split()[0] for line in (ROOT / "scripts" / "kubernetes-versions").read_text()
                                 .splitlines() if line.strip() and not line.lstrip().startswith("#"))})


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("gate_table", ROOT / "scripts" / "gate-table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _source(version: str) -> Path | None:
    if shutil.which("go") is None:
        return None
    cache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=False,
                           env=dict(os.environ, GOTOOLCHAIN="local")).stdout.strip()
    path = Path(cache) / f"k8s.io/kubernetes@{version}" / "pkg" / "features" / "kube_features.go"
    return path if path.is_file() else None


@pytest.mark.parametrize("version", VERSIONS)
def test_the_table_is_the_versions_own(version: str, capsys: pytest.CaptureFixture[str]) -> None:
    if _source(version) is None:
        pytest.skip(f"k8s.io/kubernetes@{version} is not in the Go module cache (scripts/build-kubernetes.sh fetches it)")
    status = _script().main([version])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "agrees" in out


def test_the_reader_sees_a_difference() -> None:
    """The comparison can fail: a column read at the wrong version disagrees."""
    if _source("v1.37.2") is None:
        pytest.skip("k8s.io/kubernetes@v1.37.2 is not in the Go module cache")
    module = _script()
    source = _source("v1.37.2")
    assert source is not None
    at_137 = module.gates_at(source.read_text(), (1, 37))
    at_136 = module.gates_at(source.read_text(), (1, 36))
    assert at_137["DRADeviceTaintRules"] == ("GA", True, False)  # "LockToDefault: true in 1.38" is a comment
    assert at_136["DRADeviceTaintRules"] == ("beta", False, False)
    assert "DRAFractionalCapacityRange" not in at_136
