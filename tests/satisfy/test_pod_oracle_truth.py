"""check_pod and count_replicas against the real kube-scheduler's verdicts on the same scenarios.

The scenarios (``data/pod-oracle/cases``: taints, nodeSelector, affinity Gt/Lt/matchFields, two and
three claims, Deployments of five, DRA-backed extended resources) were run through
``cluster-oracle.py`` (kube-apiserver, kube-scheduler and kube-controller-manager 1.36.2) and its
verdicts recorded in ``truth.json``; this test needs no cluster.  The contract checked: never a
denial where the scheduler places a pod; every pod the scheduler leaves unschedulable with every
device free is ``Unsatisfiable``; replica counts equal the scheduler's.

The pod-to-PodRequest step here is a small stand-in for the workload layer's builder (template
claims, one container, extended requests from limits), enough for these files.
"""

from __future__ import annotations

import json
from pathlib import Path as FsPath
from typing import Any

import pytest
import yaml
from draguard.inventory import build_inventory
from draguard.k8s import NodeSelector, ResourceClaimSpec, Toleration, parse_quantity
from draguard.k8s.field import Path
from draguard.satisfy import ContainerResources, PodClaim, PodPlacement, PodRequest, check_pod, count_replicas

DATA = FsPath(__file__).parent / "data" / "pod-oracle"
TRUTH: dict[str, Any] = json.loads((DATA / "truth.json").read_text())
INVENTORY = build_inventory(list(yaml.safe_load_all((DATA / "inventory.yaml").read_text())))


def _request(docs: list[dict[str, Any]]) -> tuple[PodRequest, int]:
    templates = {d["metadata"]["name"]: d["spec"]["spec"] for d in docs if d["kind"] == "ResourceClaimTemplate"}
    work = next(d for d in docs if d["kind"] in ("Pod", "Deployment"))
    spec = work["spec"] if work["kind"] == "Pod" else work["spec"]["template"]["spec"]
    replicas = 1 if work["kind"] == "Pod" else int(work["spec"]["replicas"])
    base = Path.root("spec")
    claims = tuple(
        PodClaim(rc["name"], ResourceClaimSpec.model_validate(templates[rc["resourceClaimTemplateName"]]),
                 f'template "{rc["resourceClaimTemplateName"]}"', base.child("resourceClaims").index(i))
        for i, rc in enumerate(spec.get("resourceClaims", []))
    )
    containers = tuple(
        ContainerResources(c["name"], i, {k: parse_quantity(str(v)) for k, v in c.get("resources", {}).get("limits", {}).items()})
        for i, c in enumerate(spec["containers"])
    )
    required = spec.get("affinity", {}).get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    placement = PodPlacement(
        spec.get("nodeName", ""), spec.get("nodeSelector", {}),
        NodeSelector.model_validate(required) if required else None,
        tuple(Toleration.model_validate(t) for t in spec.get("tolerations", [])),
    )
    return PodRequest(claims, containers, placement), replicas


@pytest.mark.parametrize("case", sorted(TRUTH))
def test_agrees_with_the_real_scheduler(case: str) -> None:
    truth = TRUTH[case]
    request, replicas = _request(list(yaml.safe_load_all((DATA / "cases" / case).read_text())))
    verdict = check_pod(request, INVENTORY)
    if truth["scheduled"] > 0:
        assert verdict.satisfiable is True, verdict.notes  # never a denial where the scheduler places a pod
    else:
        assert verdict.satisfiable is False and verdict.notes[0].reason == "Unsatisfiable", verdict.notes
        assert "cannot allocate all" not in verdict.notes[0].message
    if replicas > 1:
        count = count_replicas(request, INVENTORY, replicas)
        assert count.fit == truth["scheduled"] and count.exact
