"""Pods and workloads against a real kube-apiserver 1.36: draguard's parity errors are the API server's.

The manifests in tests/data/workloads/parity/ exercise every DRA rule of pod validation on a Pod
and on each workload kind; the API server's dry run is the truth.  Skips, with a reason, where the
binaries are absent (tests/realapi.py).
"""

from __future__ import annotations

from pathlib import Path

import realapi
import yaml
from draguard.inventory import load_paths
from draguard.review import review_documents

DATA = Path(__file__).resolve().parent / "data" / "workloads"
CASES = DATA / "parity" / "cases.yaml"
NOT_DRA = {"metadata.annotations[kubernetes.io/config.mirror]"}
"""API-server rules on pod fields draguard does not check (the mirror pod's nodeName rule)."""


def test_parity_errors_equal_the_api_servers_causes() -> None:
    run = realapi.run([CASES], inventory=DATA / "parity-inventory")
    review = review_documents(load_paths([str(CASES)]).documents, inventory=None)
    mine: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for f in review.findings:
        if f.severity.value == "error" and f.reason.startswith("FieldValue"):
            mine.setdefault((f.kind, f.name), set()).add((f.field, f.message))
    assert len(run.verdicts) >= 15, run.output
    for verdict in run.verdicts:
        theirs = {(str(c.get("field", "")), str(c.get("message", ""))) for c in verdict.causes}
        theirs = {c for c in theirs if c[0] not in NOT_DRA}
        got = mine.get((str(verdict.kind), str(verdict.name)), set())
        assert got == theirs, (verdict.name, verdict.code, sorted(theirs ^ got))
        assert verdict.admitted == (not theirs and verdict.code != 422), verdict


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "workloads"


def test_the_webhook_denies_pods_that_can_never_run_through_a_real_api_server(tmp_path: Path) -> None:
    """The example chart behind a real API server with the shipped pods-and-workloads entry.

    The Job whose pods need a GPU and a NIC on one node (node-a has only GPUs, node-b only NICs) and
    the Deployment whose nodeSelector excludes every GPU node are denied; the 8-replica Deployment
    on 4 GPUs is admitted with its "4 of 8 replicas" warning; a pod that can run is admitted clean.
    """
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    for path in [*sorted((EXAMPLE / "inventory").glob("*.yaml")), EXAMPLE / "chart" / "templates" / "deviceclass.yaml"]:
        (inventory / path.name).write_text(path.read_text())  # the class exists in the cluster before the chart
    (inventory / "serviceaccount.yaml").write_text((DATA / "parity-inventory" / "serviceaccount.yaml").read_text())
    templates = EXAMPLE / "chart" / "templates"
    # the templates the pods use are in the cluster already (static inventory: draguard reads them there)
    fine = [d for d in yaml.safe_load_all((templates / "claim-templates.yaml").read_text())
            if d and d["metadata"]["name"] in ("one-gpu", "one-nic")]
    (inventory / "claim-templates.yaml").write_text(yaml.safe_dump_all(fine))
    cases = [templates / "job-gpu-nic.yaml", templates / "deployment-zone.yaml", templates / "deployment-train.yaml",
             templates / "jobs-misc.yaml"]
    run = realapi.run(cases, inventory=inventory, webhook=True, workloads=True)
    gpu_nic = run.by_name("allreduce")
    assert not gpu_nic.admitted and gpu_nic.code == 422, run.output
    assert 'admission webhook "workloads.validate.draguard.dev" denied the request' in gpu_nic.message
    assert 'claim "nic"' in gpu_nic.message and "node-b" in gpu_nic.message, gpu_nic.message
    zone = run.by_name("inference")
    assert not zone.admitted and "nodeSelector" in zone.message, run.output
    train = run.by_name("train")
    assert train.admitted, run.output
    assert any(w.startswith("ReplicasExceedCapacity: 4 of 8 replicas") for w in train.warnings), train.warnings
    smoke = run.by_name("smoke")
    assert smoke.admitted and smoke.warnings == [], run.output
