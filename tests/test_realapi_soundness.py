"""Issue #10 through a real kube-apiserver 1.36 (skips cleanly without the binaries, see realapi.py).

draguard runs as the cluster's validating webhook (static inventory): a claim for a class without
devices and one on an incomplete pool are admitted with a warning naming why; a claim no node
(existing or potential) can ever satisfy is still denied; one only a node-group template can
satisfy is admitted with a note.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import realapi
import yaml

GPU = "gpu.example.com"
TPU = "tpu.example.com"


def _class(name: str, driver: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}}


def _slice(name: str, driver: str, node: str, memory: str, *, count: int = 1, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name, **meta},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": count},
                     "devices": [{"name": "dev-0", "capacity": {"memory": {"value": memory}}}]}}


def _node(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def _claim(name: str, device_class: str, memory: str | None = None) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": device_class}
    if memory:
        exactly["capacity"] = {"requests": {"memory": memory}}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "dev", "exactly": exactly}]}}}


def _write(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump_all(docs))
    return path


def test_sound_verdicts_and_potential_node_groups_through_a_real_api_server(tmp_path: Path) -> None:
    realapi.require()
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    _write(inventory / "cluster.yaml", [
        _class(GPU, GPU), _class(TPU, TPU), _class("fpga.example.com", "fpga.example.com"),
        _node("gpu-1"), _node("tpu-1"),
        _slice("gpu-1-gpus", GPU, "gpu-1", "40Gi"),
        _slice("tpu-1-tpus-a", TPU, "tpu-1", "16Gi", count=2),  # 1 of 2 slices: a driver mid-update
    ])
    potential = tmp_path / "potential"
    potential.mkdir()
    _write(potential / "node-group-h100.yaml", [  # a scaled-to-zero node group's template
        _node("h100-template", **{"node.kubernetes.io/instance-type": "h100"}),
        _slice("h100-template-gpus", GPU, "h100-template", "80Gi"),
    ])
    cases = _write(tmp_path / "claims.yaml", [
        _claim("empty-class", "fpga.example.com"),
        _claim("incomplete-pool", TPU),
        _claim("never-160gi", GPU, "160Gi"),
        _claim("scale-up-60gi", GPU, "60Gi"),
        _claim("now-20gi", GPU, "20Gi"),
    ])
    run = realapi.run([cases], inventory=inventory, webhook=True,
                      webhook_args=f"--potential-inventory {potential}")
    empty = run.by_name("empty-class")
    assert empty.admitted, run.output
    assert any(w.startswith("SatisfiabilityUnknown: ") and "no device of class fpga.example.com" in w
               for w in empty.warnings), empty.warnings
    incomplete = run.by_name("incomplete-pool")
    assert incomplete.admitted, run.output
    assert any("pool tpu-1" in w and "incomplete" in w for w in incomplete.warnings), incomplete.warnings
    never = run.by_name("never-160gi")
    assert not never.admitted and never.code == 422, run.output
    assert "160Gi" in never.message and "80Gi" in never.message, never.message  # the template was considered
    scale_up = run.by_name("scale-up-60gi")
    assert scale_up.admitted, run.output
    assert any(w.startswith("SatisfiableOnScaleUp: ") for w in scale_up.warnings), scale_up.warnings
    now = run.by_name("now-20gi")
    assert now.admitted and not any("SatisfiableOnScaleUp" in w for w in now.warnings), now.warnings
