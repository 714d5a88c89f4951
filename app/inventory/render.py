"""Helm charts and kustomize folders among the paths ``draguard lint`` walks: rendered, or skipped once.

Why: a real repository keeps its manifests as a chart (a folder with ``Chart.yaml``) or a
kustomization (``kustomization.yaml``); their files are not objects — a template holds ``{{ }}``,
a kustomize patch is half an object — and reading them one by one gave "unrendered template, exit
2", hiding every other finding.  As kube-linter does, the folder is rendered with the tool on
``PATH`` (``helm template``; ``kubectl kustomize`` or ``kustomize build``) and its output linted;
without the tool, or when rendering fails (a chart with unbuilt dependencies, a remote base with no
network), the folder is reported once as "not rendered, skipped" and the rest is linted as usual.

Rendering runs a program the repository does not control beyond its chart's templates (no hooks, no
``helm install``); it is bounded by :data:`RENDER_TIMEOUT` and can be turned off (``--no-render``).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from ..k8s import MAX_DOCUMENTS, DecodeResult, decode_text

__all__ = ["KUSTOMIZATION_FILES", "RENDER_TIMEOUT", "Unit", "render_unit", "unit_of_dir", "unit_of_file"]

RENDER_TIMEOUT = 60.0
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


@dataclass(frozen=True, slots=True)
class Unit:
    """A folder whose files make objects only together: ``helm`` (Chart.yaml) or ``kustomize``."""

    kind: str
    directory: str

    @property
    def label(self) -> str:
        return f"{self.directory}: {'Helm chart' if self.kind == 'helm' else 'kustomization'}"


def unit_of_dir(directory: str) -> Unit | None:
    """The unit ``directory`` is, if any (a chart wins over a kustomization in one folder)."""
    if os.path.isfile(os.path.join(directory, "Chart.yaml")):
        return Unit("helm", directory)
    if any(os.path.isfile(os.path.join(directory, name)) for name in KUSTOMIZATION_FILES):
        return Unit("kustomize", directory)
    return None


def unit_of_file(path: str, stop: str | None = None) -> Unit | None:
    """The Helm chart a file belongs to (any ancestor folder with Chart.yaml, up to ``stop`` or the
    file system's root); None for any other file.  A file of a kustomization named on its own is
    read as it is: it is a whole object more often than not (a chart's template never is), and the
    folder, given, is rendered."""
    here = os.path.dirname(os.path.abspath(path))
    limit = os.path.abspath(stop) if stop else None
    while True:
        if os.path.isfile(os.path.join(here, "Chart.yaml")):
            return Unit("helm", os.path.relpath(here))
        parent = os.path.dirname(here)
        if here == limit or parent == here:
            return None
        here = parent


def _command(unit: Unit) -> list[str] | None:
    if unit.kind == "helm":
        helm = shutil.which("helm")
        return [helm, "template", "draguard-lint", unit.directory] if helm else None
    kubectl = shutil.which("kubectl")
    if kubectl:
        return [kubectl, "kustomize", unit.directory]
    kustomize = shutil.which("kustomize")
    return [kustomize, "build", unit.directory] if kustomize else None


def render_unit(unit: Unit) -> tuple[DecodeResult | None, str]:
    """The unit's rendered documents, or None and why it was not rendered (said once by the caller)."""
    argv = _command(unit)
    if argv is None:
        tool = "helm" if unit.kind == "helm" else "kubectl or kustomize"
        return None, f"{unit.label} not rendered ({tool} is not on PATH), skipped"
    import subprocess  # only when a chart or kustomization is rendered: a lint of plain files never loads it

    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=RENDER_TIMEOUT, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{unit.label} not rendered ({os.path.basename(argv[0])}: {exc}), skipped"
    if proc.returncode != 0:
        last = next((line for line in reversed(proc.stderr.splitlines()) if line.strip()), f"exit {proc.returncode}")
        return None, f"{unit.label} not rendered ({os.path.basename(argv[0])}: {last.strip()}), skipped"
    tool = "helm template" if unit.kind == "helm" else "kustomize"
    return decode_text(proc.stdout, f"{unit.directory} (rendered by {tool})", max_documents=MAX_DOCUMENTS), ""
