"""``draguard capacity`` and ``draguard explain`` from files (an inventory plus a dump of claims),
and the ``kubectl draguard`` plugin entry."""

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


def held(name: str, ns: str, dev: str, pool: str = "node-1", **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "gpu", "driver": DRIVER, "pool": pool, "device": dev, **extra}]}},
                "reservedFor": [{"resource": "pods", "name": f"{name}-pod", "uid": "u"}]}}


def pending(name: str, ns: str = "team-a", count: int = 1) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER, "count": count}}]}}}


@pytest.fixture
def ticket(tmp_path: Path) -> Path:
    """What a support ticket carries: the inventory and `kubectl get resourceclaims -A -o yaml`."""
    shared = [device("big-0", multi=True, capacity={"memory": cap("40Gi")})]
    (tmp_path / "inventory.yaml").write_text(yaml.safe_dump_all([
        dclass(), node("node-1"), node("node-2"),
        rslice("node-1", [device("gpu-0"), device("gpu-1")]),
        rslice("node-2", [device("gpu-0"), device("gpu-1"), *shared]),
    ]))
    claims = [held("train-1", "team-a", "gpu-0"), held("train-2", "team-a", "gpu-1"),
              held("secret", "team-b", "gpu-0", pool="node-2"), held("other", "team-c", "gpu-1", pool="node-2"),
              held("slice", "team-b", "big-0", pool="node-2", shareID="s", consumedCapacity={"memory": "30Gi"}),
              pending("want", count=2)]
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": claims}))
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_capacity_shows_free_shared_dedicated_per_class_and_node(ticket: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "capacity", "--inventory", str(ticket), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    [gpu] = doc["classes"]
    assert (gpu["class"], gpu["devices"], gpu["free"], gpu["shared"], gpu["dedicated"]) == (DRIVER, 5, 0, 1, 4)
    assert gpu["capacity"]["memory"] == {"used": "30Gi", "total": "40Gi", "fraction": 0.75}
    rows = {(r["pool"], r["node"]): r for r in gpu["pools"]}
    assert rows[("node-1", "node-1")]["dedicated"] == 2 and rows[("node-2", "node-2")]["shared"] == 1
    assert doc["summary"]["allocated_claims"] == 5
    code, text, _ = run(capsys, "capacity", "--inventory", str(ticket))
    assert code == 0
    assert f"class {DRIVER}: 5 devices: 0 free, 1 shared, 4 dedicated" in text
    assert "memory  [███████████████░░░░░] 30Gi of 40Gi used (75%)" in text
    code, svg, _ = run(capsys, "capacity", "--inventory", str(ticket), "--format", "svg")
    assert code == 0 and svg.startswith("<svg") and svg.rstrip().endswith("</svg>") and DRIVER in svg


def test_explain_a_claim_from_files(ticket: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "explain", "claim/want", "-n", "team-a", "--inventory", str(ticket), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    [claim] = doc["claims"]
    assert claim["ever"] is True and claim["now"] is False
    reasons = [f["reason"] for f in claim["findings"]]
    assert reasons == ["CapacityInUse"]
    by_node = {tuple(c["nodes"]): c for c in claim["classes"]}
    assert by_node[("node-1",)]["ever"] is True and by_node[("node-1",)]["now"] is False
    assert "train-1, train-2 in this namespace" in by_node[("node-1",)]["held"]
    assert "2 claims in other namespaces" in by_node[("node-2",)]["held"]
    assert "secret" not in out and "other" not in by_node[("node-2",)]["held"].replace("other namespaces", "")
    code, text, _ = run(capsys, "explain", "claim/want", "-n", "team-a", "--inventory", str(ticket))
    assert code == 0 and "fits now (today's allocations):     no" in text and "NODES" in text


def test_explain_an_allocated_claim_says_where(ticket: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "explain", "claim/train-1", "-n", "team-a", "--inventory", str(ticket))
    assert code == 0 and "allocated: node-1/gpu-0; reserved for train-1-pod" in out


def test_explain_what_does_not_exist(ticket: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "explain", "claim/nope", "--inventory", str(ticket))[0] == 3
    assert run(capsys, "explain", "frob/x", "--inventory", str(ticket))[0] == 2
    assert run(capsys, "explain", "deployment/x", "--inventory", str(ticket))[0] == 3  # a workload: not found
    code, _, err = run(capsys, "explain", "claim/x", "--inventory", str(ticket / "missing.yaml"))
    assert code == 2 and "missing.yaml" in err


def test_the_kubectl_plugin_is_installed_as_kubectl_draguard() -> None:
    """kubectl runs `kubectl-draguard` from PATH for `kubectl draguard ...`."""
    from importlib.metadata import entry_points

    [ep] = [e for e in entry_points(group="console_scripts") if e.name == "kubectl-draguard"]
    assert ep.value == "draguard.cli:kubectl_entry"


def test_capacity_fit_counts_now_and_ever(ticket: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """One more plain GPU: none is free now; with every device free, one per GPU (4 plain + the shared one)."""
    fit = tmp_path / "fit.yaml"
    fit.write_text(yaml.safe_dump(pending("one-more")))
    code, out, _ = run(capsys, "capacity", "--inventory", str(ticket), "--fit", str(fit), "--format", "json")
    assert code == 0
    doc = json.loads(out)["fit"]
    assert doc["ever"]["fit"] >= 5
    assert doc["now"]["fit"] < doc["ever"]["fit"]
    code, text, _ = run(capsys, "capacity", "--inventory", str(ticket), "--fit", str(fit))
    assert code == 0 and "more fit now;" in text and "with every device free" in text
    assert run(capsys, "capacity", "--inventory", str(ticket), "--fit", str(ticket / "inventory.yaml"))[0] == 2


def test_explain_a_pod_from_files_per_node_class(ticket: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pod dump beside the claims: all of its claims together, per class of nodes, ever and now."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": "team-a"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpus"}]}}],
                    "resourceClaims": [{"name": "gpus", "resourceClaimName": "want"}],
                    "nodeSelector": {"zone": "a"}},
           "status": {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                      "message": "0/2 nodes are available: 2 cannot allocate all claims."}]}}
    labelled = [node("node-1", zone="a"), node("node-2", zone="b")]
    (ticket / "nodes.yaml").write_text(yaml.safe_dump_all(labelled))  # replaces the unlabelled Nodes
    (ticket / "pod.yaml").write_text(yaml.safe_dump(pod))
    code, out, _ = run(capsys, "explain", "pod/trainer", "-n", "team-a", "--inventory", str(ticket), "--format", "json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["state"] == "pending; the scheduler says: 0/2 nodes are available: 2 cannot allocate all claims."
    assert doc["ever"] is True and doc["now"] is False
    rows = {tuple(r["nodes"]): r for r in doc["classes"]}
    assert rows[("node-1",)]["ever"] is True and rows[("node-1",)]["now"] is False
    assert "train-1, train-2 in this namespace" in rows[("node-1",)]["held"]
    assert rows[("node-2",)]["ever"] is False and "nodeSelector" in rows[("node-2",)]["reason"]
    assert [f["reason"] for f in doc["findings"]] == ["CapacityInUse"]
    assert "secret" not in out
    code, text, _ = run(capsys, "explain", "pod/trainer", "-n", "team-a", "--inventory", str(ticket))
    assert code == 0 and "all claims of the pod together, per class of nodes:" in text
