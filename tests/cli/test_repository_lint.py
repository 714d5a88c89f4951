"""``draguard lint`` on real repositories (issue #35 item 4): ``--exclude`` and ``.draguardignore``,
Helm charts and kustomizations rendered (or skipped once, without hiding the rest), and
``--context`` for pre-commit: references resolve across unchanged files, only the changed ones
are reported.

Before: one unrendered chart template exited 2 and hid every other finding; there was no way to
leave a folder out; and a Deployment whose template sits in an unchanged file got a false
``ReferenceNotFound`` from the hook (and no replica check).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.cli import main

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "examples" / "inventory"

BAD_CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: bad, namespace: default}
spec:
  devices:
    requests:
    - name: Not_A_DNS_Label
      exactly: {deviceClassName: gpu.example.com}
"""

TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: main
        image: busybox
        resources: {claims: [{name: gpu}]}
      resourceClaims:
      - {name: gpu, resourceClaimTemplateName: one-gpu}
"""

CHART_TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: {{ .Values.name }}
  namespace: default
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
"""


def _lint(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict[str, Any]], str]:
    code = main(["lint", *argv, "--format", "json", "--no-cache"])
    out = capsys.readouterr()
    return code, (json.loads(out.out)["findings"] if out.out else []), out.err


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "bad.yaml").write_text(BAD_CLAIM)
    (tmp_path / "deploy" / "templates.yaml").write_text(TEMPLATE)
    (tmp_path / "deploy" / "web.yaml").write_text(DEPLOYMENT)
    chart = tmp_path / "charts" / "demo"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: demo\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("name: from-chart\n")
    (chart / "templates" / "claim.yaml").write_text(CHART_TEMPLATE)
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "bad-too.yaml").write_text(BAD_CLAIM.replace("name: bad", "name: vendored"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _names(findings: list[dict[str, Any]]) -> set[str]:
    return {str(f["name"]) for f in findings}


def test_an_unrendered_chart_is_skipped_once_and_hides_nothing(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, findings, err = _lint(capsys, ".", "--no-render")
    assert code == 1 and {"bad", "vendored"} <= _names(findings), (findings, err)
    assert err.count("charts/demo: Helm chart not rendered") == 1, err


def test_a_chart_is_rendered_when_helm_is_on_path(repo: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    helm = shutil.which("helm") or (str(ROOT / ".cache" / "helm") if (ROOT / ".cache" / "helm").exists() else None)
    if helm is None:
        monkeypatch.setenv("PATH", "/nonexistent")
        code, findings, err = _lint(capsys, "charts")
        assert code == 2 and "not rendered (helm is not on PATH)" in err and "nothing could be read" in err
        return
    bin_dir = repo / ".bin"
    bin_dir.mkdir()
    os.symlink(helm, bin_dir / "helm")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    code, findings, err = _lint(capsys, "charts", "--inventory", str(INVENTORY))
    assert code == 0 and "not rendered" not in err, (findings, err)
    # a changed file inside the chart stands for the chart
    code, findings, err = _lint(capsys, "charts/demo/templates/claim.yaml", "--inventory", str(INVENTORY))
    assert code == 0 and "unrendered" not in err, (findings, err)


def test_nothing_readable_is_still_exit_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _lint(capsys, "charts", "--no-render")
    assert code == 2 and "nothing could be read" in err


def test_exclude_and_draguardignore(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, findings, _ = _lint(capsys, ".", "--no-render", "--exclude", "vendor")
    assert "vendored" not in _names(findings) and "bad" in _names(findings)
    code, findings, _ = _lint(capsys, ".", "--no-render", "--exclude", "*/bad.yaml", "--exclude", "vendor/")
    assert "bad" not in _names(findings) and "vendored" not in _names(findings) and code == 0
    (repo / ".draguardignore").write_text("# third-party manifests\nvendor/\n")
    code, findings, _ = _lint(capsys, ".", "--no-render")
    assert "vendored" not in _names(findings) and "bad" in _names(findings) and code == 1


def test_context_resolves_references_but_reports_only_the_changed_files(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # what pre-commit did: only the changed Deployment, its template unseen
    code, findings, _ = _lint(capsys, "deploy/web.yaml", "--inventory", str(INVENTORY))
    assert [f["reason"] for f in findings] == ["ReferenceNotFound"]
    code, findings, _ = _lint(capsys, "deploy/web.yaml", "--inventory", str(INVENTORY), "--context", ".", "--no-render")
    assert code == 0 and findings == [], findings  # the template resolves; bad.yaml is not reported
    # the replica check runs again with the context: 4000 replicas do not all fit
    (repo / "deploy" / "web.yaml").write_text(DEPLOYMENT.replace("replicas: 2", "replicas: 4000"))
    code, findings, _ = _lint(capsys, "deploy/web.yaml", "--inventory", str(INVENTORY), "--context", ".", "--no-render")
    assert [f["reason"] for f in findings] == ["ReplicasExceedCapacity"], findings
    assert {f["file"] for f in findings} == {"deploy/web.yaml"}


def test_the_hook_and_the_action_use_the_context() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert "--context ." in hooks[0]["entry"], hooks
    action = (ROOT / "action.yml").read_text()
    assert "--context" in action and "exclude" in yaml.safe_load(action)["inputs"]
