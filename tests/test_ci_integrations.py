"""Issue #20 item 3, the CI doors: the GitHub Action (``action.yml``) is a valid composite action
whose steps, run here as a runner would run them, lint and write SARIF; the pre-commit hook
(``.pre-commit-hooks.yaml``) runs draguard on a sample folder through ``pre-commit try-repo``;
``helm template … | draguard lint -`` lints a rendered chart; and the CI guide's (docs/guides/ci.md)
GitLab CI and plain-shell recipes are there and say what the action does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
ACTION = ROOT / "action.yml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"
EXAMPLES = ROOT / "examples"
BIN = Path(sys.executable).parent
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@pytest.fixture(scope="module")
def action() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(ACTION.read_text())
    return doc


def test_action_is_a_valid_composite_action(action: dict[str, Any]) -> None:
    assert {"name", "description", "inputs", "outputs", "runs"} <= action.keys()
    assert action["runs"]["using"] == "composite"
    inputs = action["inputs"]
    assert {"paths", "inventory", "kubernetes-version", "fail-on", "sarif-file", "upload-sarif"} <= inputs.keys()
    for name, spec in inputs.items():
        assert re.fullmatch(r"[a-z][a-z0-9-]*", name) and spec["description"], name
        assert isinstance(spec.get("default", ""), str), name  # inputs are strings
    steps = action["runs"]["steps"]
    ids = {s["id"] for s in steps if "id" in s}
    for step in steps:
        assert ("run" in step) != ("uses" in step), step
        if "run" in step:
            assert step["shell"] == "bash"  # composite run steps must name their shell
            # no expression inside a script (injection): inputs come in through env
            assert not EXPRESSION.search(step["run"]), step["name"]
        else:
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@v\d+", step["uses"]), step["uses"]  # pinned major
    # every expression names an input that exists, a step that exists, or the action's own path
    for expr in EXPRESSION.findall(ACTION.read_text()):
        for ref in re.findall(r"inputs\.([\w-]+)", expr):
            assert ref in inputs, expr
        for ref in re.findall(r"steps\.([\w-]+)\.", expr):
            assert ref in ids, expr
    uploads = [s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert len(uploads) == 1 and "steps.lint.outputs.sarif-file" in uploads[0]["with"]["sarif_file"]


def run_action_step(action: dict[str, Any], step_id: str, inputs: dict[str, str], cwd: Path) -> tuple[int, dict[str, str], str]:
    """Run one ``run:`` step as the runner does: its ``env`` with the expressions evaluated, bash -e,
    ``GITHUB_OUTPUT`` a file. Returns (exit status, outputs, console)."""
    (step,) = [s for s in action["runs"]["steps"] if s.get("id") == step_id]
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()} | inputs

    def evaluate(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            expr = m.group(1)
            if expr.startswith("inputs."):
                return values[expr.removeprefix("inputs.")]
            if expr == "github.action_path":
                return str(ROOT)
            raise AssertionError(f"cannot evaluate {expr} locally")
        return EXPRESSION.sub(one, text)

    output = cwd / "github_output"
    output.write_text("")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "GITHUB_OUTPUT": str(output)}
    env |= {k: evaluate(str(v)) for k, v in (step.get("env") or {}).items()}
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
    return proc.returncode, outputs, proc.stdout + proc.stderr


def test_action_lint_step_lints_and_writes_sarif(action: dict[str, Any], tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    status, outputs, console = run_action_step(action, "lint", {
        "paths": "examples/claims/bad\nexamples/claims/good", "inventory": "examples/inventory",
        "kubernetes-version": "1.36"}, tmp_path)
    assert status == 0, console  # the step records the exit status; the last step fails the job
    assert outputs["exit-code"] == "1" and outputs["sarif-file"] == "draguard.sarif"
    assert "objects checked: 10 errors" in console
    sarif = json.loads((tmp_path / "draguard.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    assert {r["ruleId"] for r in results} >= {"Unsatisfiable", "FieldValueInvalid"}
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"] for r in results for loc in r["locations"]}
    assert all(u.startswith("examples/claims/") for u in uris), uris  # repository-relative for code scanning
    # clean input: exit 0; an empty folder: exit 2 and no SARIF to upload
    status, outputs, _ = run_action_step(action, "lint", {"paths": "examples/claims/good", "inventory": "examples/inventory",
                                                          "sarif-file": "good.sarif"}, tmp_path)
    assert (status, outputs["exit-code"]) == (0, "0") and (tmp_path / "good.sarif").is_file()
    (tmp_path / "empty").mkdir()
    status, outputs, console = run_action_step(action, "lint", {"paths": "empty", "sarif-file": "none.sarif"}, tmp_path)
    assert outputs["exit-code"] == "2" and "no Kubernetes object in empty" in console
    assert not (tmp_path / "none.sarif").exists()


def test_action_fail_step_passes_the_status_on(action: dict[str, Any]) -> None:
    (step,) = [s for s in action["runs"]["steps"] if s.get("name") == "Fail on findings"]
    for code in ("1", "2"):
        proc = subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], env={**os.environ, "CODE": code},
                              capture_output=True, text=True, timeout=30, check=False)
        assert proc.returncode == int(code)


def test_pre_commit_hook_definition() -> None:
    (hook,) = yaml.safe_load(HOOKS.read_text())
    assert hook["id"] == "draguard" and hook["language"] == "python"
    assert hook["entry"].split()[:2] == ["draguard", "lint"] and "--allow-empty" in hook["entry"]
    assert set(hook["types_or"]) == {"yaml", "json"}


@pytest.mark.slow
@pytest.mark.timeout(1200)  # pre-commit builds a venv with draguard and its dependencies
def test_pre_commit_try_repo_runs_draguard_on_a_sample_folder(tmp_path: Path) -> None:
    pre_commit = BIN / "pre-commit"
    if not pre_commit.exists():
        pytest.skip("pre-commit is not installed (make venv installs the dev extras)")
    sample = tmp_path / "sample"
    shutil.copytree(EXAMPLES / "claims", sample / "claims")
    (sample / "notes.yaml").write_text("title: not a Kubernetes object\n")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    for argv in (["git", "init", "-q"], ["git", "add", "."]):
        subprocess.run(argv, cwd=sample, check=True, env=env, timeout=60)

    def try_repo(*files: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(pre_commit), "try-repo", str(ROOT), "draguard", "--verbose", "--files", *files],
                              cwd=sample, env=env, capture_output=True, text=True, timeout=900, check=False)

    bad = try_repo("claims/bad/10-unsatisfiable-50gi.yaml", "claims/bad/40-schema-errors.yaml", "notes.yaml")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "unknown field" in bad.stdout and "Failed" in bad.stdout
    good = try_repo("claims/good/70-default-memory.yaml", "notes.yaml")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Passed" in good.stdout


def find_helm() -> str | None:
    for candidate in (os.environ.get("HELM"), "helm", str(ROOT / ".cache" / "helm")):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


CLAIM_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: gpu-job\nversion: 0.1.0\n",
    "values.yaml": "memory: 10Gi\n",
    "templates/claim.yaml": """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: {{ .Release.Name }}-gpu
  namespace: {{ .Release.Namespace }}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: shared-gpu.example.com
          capacity:
            requests:
              memory: {{ .Values.memory }}
""",
}


@pytest.mark.skipif(find_helm() is None, reason="no helm ($HELM, PATH or .cache/helm): run scripts/setup-helm.sh")
def test_helm_template_piped_into_lint(tmp_path: Path) -> None:
    """The CI guide's `helm template ... | draguard lint -`, and what linting the unrendered folder says."""
    helm = find_helm()
    assert helm is not None
    chart = tmp_path / "gpu-job"
    for name, text in CLAIM_CHART.items():
        (chart / name).parent.mkdir(parents=True, exist_ok=True)
        (chart / name).write_text(text)
    draguard = str(BIN / "draguard")
    inventory = str(EXAMPLES / "inventory")

    def pipeline(memory: str) -> subprocess.CompletedProcess[str]:
        script = (f"{helm} template train {chart} --namespace ml --set memory={memory} "
                  f"| {draguard} lint - --inventory {inventory}")
        return subprocess.run(["bash", "-o", "pipefail", "-c", script], capture_output=True, text=True, timeout=120,
                              check=False, env={**os.environ, "KUBECONFIG": os.devnull})

    fits = pipeline("10Gi")
    assert fits.returncode == 0, fits.stdout + fits.stderr
    assert "1 objects checked: 0 errors" in fits.stdout
    never = pipeline("50Gi")
    assert never.returncode == 1 and "<stdin>" in never.stdout and "ResourceClaimTemplate ml/train-gpu" in never.stdout
    raw = subprocess.run([draguard, "lint", str(chart / "templates")], capture_output=True, text=True, timeout=60)
    assert raw.returncode == 2 and "render it first" in raw.stderr
    # the project's own chart renders to objects draguard skips, counted, never an error
    own = subprocess.run(["bash", "-o", "pipefail", "-c", f"{helm} template draguard {ROOT / 'charts' / 'draguard'} "
                          f"| {draguard} lint -"], capture_output=True, text=True, timeout=120, check=False,
                         env={**os.environ, "KUBECONFIG": os.devnull})
    assert own.returncode == 0 and "skipped (not DRA objects)" in own.stdout, own.stdout + own.stderr


def test_the_ci_guide_has_the_ci_recipes() -> None:
    section = (ROOT / "docs" / "guides" / "ci.md").read_text()  # README.md links to it
    assert section.startswith("# Using it in CI\n")
    assert "docs/guides/ci.md" in (ROOT / "README.md").read_text()
    for needle in ("uses: draguard/draguard@", "security-events: write", ".gitlab-ci.yml", "codequality",
                   "pre-commit", "helm template", "| draguard lint -", "docker run", "--format junit"):
        assert needle in section, needle
    # the GitLab job in the guide is valid YAML with a script that runs draguard lint
    block = re.search(r"```yaml\n(# \.gitlab-ci\.yml.*?)```", section, flags=re.S)
    assert block is not None
    job = yaml.safe_load(block.group(1))
    (name,) = [k for k in job if not k.startswith(".")]
    assert any("draguard lint" in line for line in job[name]["script"])
