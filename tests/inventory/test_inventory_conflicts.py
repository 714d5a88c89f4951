"""Two different objects with one identity among the ``--inventory`` inputs (issue #35 item 5).

Before: the last one read won silently (for Nodes and classes) or both counted (ResourceSlices), so
``--inventory prod/ --inventory staging/`` answered "4 of 12" and the swapped order "8 of 12".
Now: identical duplicates are used once and not reported; different ones are one error per
identity naming every source (file:line), the variant used does not depend on the order, and the
inventory reports a problem so nothing is proven unsatisfiable against it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from draguard.cli import main
from draguard.inventory import StaticInventory

NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: gpu-node
  resourceVersion: "{rv}"
  labels: {{kubernetes.io/hostname: gpu-node, pool: {pool}}}
"""

SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: gpu-node-gpus}}
spec:
  driver: gpu.acme.io
  nodeName: gpu-node
  pool: {{name: gpu-node, generation: 1, resourceSliceCount: 1}}
  devices:
{devices}
"""

CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.acme.io}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.acme.io"'}}]
"""

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: eight, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.acme.io, count: 8}
"""


def _devices(n: int) -> str:
    return "\n".join(f"  - name: gpu-{i}" for i in range(n))


def _env(root: Path, name: str, *, pool: str, gpus: int, rv: str = "1") -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "nodes.yaml").write_text("# " + name + "\n" + NODE.format(pool=pool, rv=rv))
    (folder / "slices.yaml").write_text(SLICE.format(devices=_devices(gpus)))
    (folder / "classes.yaml").write_text(CLASS)
    return folder


def _lint(capsys: pytest.CaptureFixture[str], claim: Path, *inventories: Path) -> tuple[int, list[dict[str, object]]]:
    argv = ["lint", str(claim), "--format", "json", "--no-cache"]
    for inv in inventories:
        argv += ["--inventory", str(inv)]
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)["findings"]


def test_identical_duplicates_are_used_once_and_not_reported(tmp_path: Path) -> None:
    one = _env(tmp_path, "one", pool="a", gpus=4)
    again = _env(tmp_path, "again", pool="a", gpus=4, rv="99")  # the same objects, dumped later
    single = StaticInventory([str(one)]).snapshot()
    both = StaticInventory([str(one), str(again)])
    assert both.findings() == [] and both.problem() is None
    snap = both.snapshot()
    assert single is not None and snap is not None
    assert len(snap.devices) == len(single.devices) == 4  # the slice is not counted twice


def test_different_nodes_with_one_name_are_a_finding_naming_both_sources(tmp_path: Path) -> None:
    prod = _env(tmp_path, "prod", pool="a", gpus=4)
    staging = _env(tmp_path, "staging", pool="b", gpus=4)
    source = StaticInventory([str(prod), str(staging)])
    found = [f for f in source.findings() if f.kind == "Node"]
    assert len(found) == 1, source.findings()
    message = found[0].message
    assert f"{prod / 'nodes.yaml'}:2" in message and f"{staging / 'nodes.yaml'}:2" in message, message
    assert found[0].severity.value == "error" and found[0].file == str(staging / "nodes.yaml")
    assert source.problem() is not None and "gpu-node" in (source.problem() or "")


def test_the_variant_used_does_not_depend_on_the_order_of_the_inputs(tmp_path: Path) -> None:
    prod = _env(tmp_path, "prod", pool="a", gpus=4)
    staging = _env(tmp_path, "staging", pool="b", gpus=8)
    forward = StaticInventory([str(prod), str(staging)]).snapshot()
    backward = StaticInventory([str(staging), str(prod)]).snapshot()
    assert forward is not None and backward is not None
    assert dict(forward.nodes) == dict(backward.nodes)
    assert len(forward.devices) == len(backward.devices) in (4, 8)  # one slice, never both


def test_a_conflicting_inventory_proves_nothing_unsatisfiable(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    claim = tmp_path / "claim.yaml"
    claim.write_text(CLAIM)
    small = _env(tmp_path, "small", pool="a", gpus=4)
    code, findings = _lint(capsys, claim, small)
    assert code == 1 and [f["reason"] for f in findings] == ["Unsatisfiable"]  # 8 of 4 GPUs: proven
    big = _env(tmp_path, "big", pool="a", gpus=8)
    for order in ((small, big), (big, small)):
        code, findings = _lint(capsys, claim, *order)
        reasons = sorted(str(f["reason"]) for f in findings)
        assert "Unsatisfiable" not in reasons, findings
        assert "DecodeError" in reasons and code == 1  # the conflict itself fails the run, naming both
        conflict = next(f for f in findings if f["reason"] == "DecodeError")
        assert str(small / "slices.yaml") in str(conflict["message"]) and str(big / "slices.yaml") in str(conflict["message"])


def test_claims_of_one_name_that_differ_are_reported_too(tmp_path: Path) -> None:
    inv = _env(tmp_path, "inv", pool="a", gpus=4)
    (inv / "claims-1.yaml").write_text(CLAIM)
    (inv / "claims-2.yaml").write_text(CLAIM.replace("count: 8", "count: 2"))
    (inv / "claims-3.yaml").write_text(CLAIM)  # identical to the first: fine
    found = StaticInventory([str(inv)]).findings()
    assert [(f.kind, f.namespace, f.name) for f in found] == [("ResourceClaim", "default", "eight")], found
