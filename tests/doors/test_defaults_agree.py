"""One source for every default (issue #35 item 6): what ``serve`` denies by default is written
once, in the code (``DEFAULT_DENY``), and ``serve --help``, the README, the kustomize manifests and
the Helm chart either say the same set or leave the flag to the code.

Why it failed before: the code denied ``Unsatisfiable,SelectorRuntimeError`` while ``serve --help``
and one README section said ``Unsatisfiable``, and the shipped manifests and chart pinned
``--deny=Unsatisfiable`` — a cluster install behaved unlike ``make run``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.cli import build_parser
from draguard.review import DEFAULT_DENY
from draguard.server.cli_serve import deny_reasons

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "draguard"
# the docs: README.md and the site's pages (docs/), read as one text
README = "\n\n".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))])
WANT = set(DEFAULT_DENY)


def _reasons(text: str) -> set[str]:
    return {r.strip() for r in text.split(",") if r.strip()}


def _deny_args(args: list[str]) -> list[set[str]]:
    return [_reasons(a.split("=", 1)[1]) for a in args if isinstance(a, str) and a.startswith("--deny=")]


def test_serve_help_names_the_code_default() -> None:
    parser = build_parser("serve")
    sub = next(a for a in parser._actions if a.dest == "command")
    text = sub.choices["serve"].format_help()  # type: ignore[attr-defined]
    flat = " ".join(text.split())
    got = re.search(r"--deny REASON,\.\.\.\s+(.*?)(?:\s--[a-z]|$)", flat)
    assert got is not None, flat
    default = re.search(r"default:? ([A-Za-z,]+)", got.group(1))
    assert default is not None and _reasons(default.group(1)) == WANT, got.group(1)


def test_no_deny_flag_means_the_code_default() -> None:
    assert set(deny_reasons(None, None)) == WANT


def test_the_docs_state_the_code_default_wherever_they_state_one() -> None:
    stated = []
    for paragraph in re.split(r"\n\s*\n", README):
        if "--deny" not in paragraph and "| `deny` |" not in paragraph:
            continue
        for m in re.finditer(r"default:?\s+`([A-Za-z,]+)`", paragraph):
            stated.append(_reasons(m.group(1)))
    assert stated, "the docs should say what --deny defaults to"
    assert all(s == WANT for s in stated), stated


def _deployment(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(d for d in docs if d and d.get("kind") == "Deployment" and d["metadata"]["name"] == "draguard")


def _serve_args(deploy: dict[str, Any]) -> list[str]:
    return list(deploy["spec"]["template"]["spec"]["containers"][0]["args"])


def test_the_manifests_do_not_pin_another_default() -> None:
    docs = list(yaml.safe_load_all((ROOT / "manifests" / "deployment.yaml").read_text()))
    pinned = _deny_args(_serve_args(_deployment(docs)))
    assert all(p == WANT for p in pinned), pinned


def test_the_chart_values_do_not_pin_another_default() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert values.get("deny") is None or set(values["deny"]) == WANT, values.get("deny")


def _helm() -> str | None:
    for candidate in ("helm", str(ROOT / ".cache" / "helm")):
        if shutil.which(candidate):
            return shutil.which(candidate)
    return None


@pytest.mark.skipif(_helm() is None, reason="no helm (PATH or .cache/helm): run scripts/setup-helm.sh")
def test_the_rendered_chart_denies_what_the_code_denies() -> None:
    helm = _helm()
    assert helm is not None

    def render(*sets: str) -> str:
        argv = [helm, "install", "draguard", str(CHART), "-n", "draguard", "--dry-run=client"]
        for s in sets:
            argv += ["--set", s]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False,
                              env={"KUBECONFIG": "/dev/null", "HELM_CACHE_HOME": "/tmp/draguard-helm-cache",
                                   "PATH": "/usr/bin:/bin"})
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    out = render()
    manifest, notes = out.split("NOTES:", 1)
    pinned = _deny_args(_serve_args(_deployment(list(yaml.safe_load_all(manifest.split("MANIFEST:", 1)[1])))))
    assert all(p == WANT for p in pinned), pinned
    said = re.search(r"Denies: ([A-Za-z,]+)", notes)
    assert said is not None and _reasons(said.group(1)) == WANT, notes
    # an explicit choice still reaches the flag, and [] still means none
    chosen = render("deny={Unsatisfiable,LintMaxOffGrid}")
    assert "--deny=Unsatisfiable,LintMaxOffGrid" in chosen and "Denies: Unsatisfiable,LintMaxOffGrid" in chosen


def test_serve_help_runs_as_a_program() -> None:
    out = subprocess.run([sys.executable, "-m", "draguard", "serve", "--help"], capture_output=True, text=True,
                         timeout=60, check=False, cwd=ROOT)
    assert out.returncode == 0 and "--deny" in out.stdout, out.stderr
