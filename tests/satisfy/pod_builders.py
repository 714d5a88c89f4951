"""Builders for per-pod tests: PodRequest from claim specs, nodes with taints and plugins."""

from __future__ import annotations

from typing import Any

from draguard.k8s import NodeSelector, Quantity, ResourceClaimSpec, Toleration, parse_quantity
from draguard.k8s.field import Path
from draguard.satisfy import ContainerResources, PodClaim, PodPlacement, PodRequest


def pclaim(name: str, spec: ResourceClaimSpec, i: int = 0, **kw: Any) -> PodClaim:
    return PodClaim(name, spec, f'template "{name}"', Path.root("spec").child("resourceClaims").index(i), **kw)


def pod(*claims: PodClaim, node_selector: dict[str, str] | None = None, affinity: dict[str, Any] | None = None,
        tolerations: list[dict[str, Any]] | None = None, node_name: str = "",
        containers: tuple[ContainerResources, ...] = ()) -> PodRequest:
    placement = PodPlacement(
        node_name, node_selector or {}, NodeSelector.model_validate(affinity) if affinity is not None else None,
        tuple(Toleration.model_validate(t) for t in tolerations or []),
    )
    return PodRequest(tuple(claims), containers, placement)


def container(name: str, requests: dict[str, str], i: int = 0, *, init: bool = False, always: bool = False) -> ContainerResources:
    reqs: dict[str, Quantity] = {k: parse_quantity(v) for k, v in requests.items()}
    return ContainerResources(name, i, reqs, init, always)


def knode(name: str, *, taints: list[dict[str, str]] | None = None, unschedulable: bool = False,
          allocatable: dict[str, str] | None = None, **labels: str) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    if spec:
        out["spec"] = spec
    if allocatable:
        out["status"] = {"allocatable": allocatable}
    return out
