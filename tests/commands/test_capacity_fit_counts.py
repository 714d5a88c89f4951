"""``draguard capacity --fit`` counts as ``lint`` does (issue #35 item 2).

Before: the count was capped at the number of devices + 1 and still called exact (4,001 where
``lint`` of the same template said 32,000: 500 nodes x 8 GPUs shared 8 ways), a Job's template
was counted as a bare pod without saying so ("0 fit ever" for a template whose Job ``lint``
passes, because the nodes are tainted and the Job tolerates the taint), and a workload could not
be given at all.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "satisfy"))

from dra_builders import DRIVER, cap, dclass, device, node, rslice

SHARED = "shared-gpu"


def _inventory(root: Path, nodes: int, *, taint: bool = False) -> Path:
    folder = root / "inventory"
    folder.mkdir()
    docs: list[dict[str, Any]] = [dclass(), dclass(SHARED, f'device.driver == "{DRIVER}" && device.allowMultipleAllocations')]
    for n in range(nodes):
        name = f"node-{n}"
        nd = node(name, pool="gpu")
        if taint:
            nd["spec"] = {"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]}
        docs.append(nd)
        docs.append(rslice(name, [device(f"gpu-{i}", multi=True, capacity={"memory": cap("40Gi", "5Gi", min="5Gi", step="5Gi")})
                                  for i in range(8)]))
    (folder / "inventory.yaml").write_text(yaml.safe_dump_all(docs))
    return folder


def _template(name: str = "share") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": SHARED, "capacity": {"requests": {"memory": "5Gi"}}}}]}}}}


def _pod_spec(tolerate: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "share"}]}
    if tolerate:
        spec["tolerations"] = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
        spec["restartPolicy"] = "Never"
    return spec


def _deployment(replicas: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": _pod_spec()}}}


def _job(parallelism: int) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "default"},
            "spec": {"parallelism": parallelism, "completions": parallelism,
                     "template": {"spec": _pod_spec(tolerate=True)}}}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def _lint_fit(capsys: pytest.CaptureFixture[str], path: Path, inventory: Path) -> int | None:
    """What lint says of the workload's replicas: the ``fit`` of its ReplicasExceedCapacity, None without one."""
    _, out = _run(capsys, "lint", str(path), "--inventory", str(inventory), "--format", "json", "--no-cache")
    found = [f for f in json.loads(out)["findings"] if f["reason"] == "ReplicasExceedCapacity"]
    return int(found[0]["details"]["fit"]) if found else None


def test_a_template_is_counted_uncapped_as_lint_counts_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    inventory = _inventory(tmp_path, 500)
    template = tmp_path / "template.yaml"
    template.write_text(yaml.safe_dump(_template()))
    workload = tmp_path / "deployment.yaml"
    workload.write_text(yaml.safe_dump_all([_template(), _deployment(40_000)]))
    assert _lint_fit(capsys, workload, inventory) == 32_000  # 500 nodes x 8 GPUs x 8 shares of 5Gi
    code, out = _run(capsys, "capacity", "--inventory", str(inventory), "--fit", str(template), "--format", "json")
    fit = json.loads(out)["fit"]
    assert code == 0 and fit["ever"]["fit"] == 32_000 and fit["ever"]["bound"] == "exact", fit
    assert "no tolerations" in fit["assumes"]
    code, text = _run(capsys, "capacity", "--inventory", str(inventory), "--fit", str(template))
    assert "32000 with every device free" in text and "4001" not in text, text


def test_a_workload_is_counted_with_its_pods_shape(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    inventory = _inventory(tmp_path, 2, taint=True)
    template = tmp_path / "template.yaml"
    template.write_text(yaml.safe_dump(_template()))
    job = tmp_path / "job.yaml"
    job.write_text(yaml.safe_dump_all([_template(), _job(200)]))
    lint = _lint_fit(capsys, job, inventory)
    assert lint == 128  # 2 tainted nodes the Job tolerates x 8 GPUs x 8 shares
    code, out = _run(capsys, "capacity", "--inventory", str(inventory), "--fit", str(job), "--format", "json")
    fit = json.loads(out)["fit"]
    assert code == 0 and fit["ever"]["fit"] == lint and fit["replicas"] == 200, fit
    assert fit["object"].startswith("Job default/train"), fit
    # the bare template is counted as a pod without tolerations, and says so
    code, out = _run(capsys, "capacity", "--inventory", str(inventory), "--fit", str(template), "--format", "json")
    bare = json.loads(out)["fit"]
    assert bare["ever"]["fit"] == 0 and "no tolerations" in bare["assumes"], bare
    code, text = _run(capsys, "capacity", "--inventory", str(inventory), "--fit", str(template))
    assert "assumes" in text and "no tolerations" in text, text


def test_a_bound_that_stops_the_count_says_at_least(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A deadline that stops the replay leaves a lower bound: said as "at least N", never as exact."""
    inventory = _inventory(tmp_path, 50)
    template = tmp_path / "template.yaml"
    template.write_text(yaml.safe_dump(_template()))
    code, out = _run(capsys, "capacity", "--inventory", str(inventory), "--fit", str(template), "--format", "json",
                     "--deadline-seconds", "0")
    fit = json.loads(out)["fit"]
    assert code == 0 and fit["ever"]["bound"] in ("at least", "unknown") and fit["ever"].get("exact") is not True, fit


def test_a_workload_whose_template_is_missing_says_so(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    inventory = _inventory(tmp_path, 1)
    job = tmp_path / "job.yaml"
    job.write_text(yaml.safe_dump(_job(4)))
    code, out = _run(capsys, "capacity", "--inventory", str(inventory), "--fit", str(job), "--format", "json")
    fit = json.loads(out)["fit"]
    assert code == 0 and fit["ever"]["fit"] is None
    assert any("share" in n for n in fit["notes"]), fit
