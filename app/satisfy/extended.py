"""The implicit claim the scheduler builds for extended resources backed by DRA.

Why per node: a container asking for ``example.com/gpu: 2`` gets it from a device plugin on a
node whose allocatable has it, and from DRA (through a DeviceClass with that
``extendedResourceName``, or the implicit ``deviceclass.resource.kubernetes.io/<class>`` name) on
a node that has none — never mixed for one resource on one node.  So the claim differs per node
(:attr:`NodeInfo.device_plugin`) and the engine searches one variant per set of device-plugin
resources.  Gate ``DRAExtendedResource`` (beta, on in 1.36; alpha, off before).

The claim follows the scheduler's construction: resources in sorted order; containers numbered
over init containers then containers; long-lived containers (regular, and init containers with
``restartPolicy: Always``) get ``container-<i>-request-<r>`` for their whole count (``r`` the
resource's position among the container's sorted request names); a short-lived init container
first reuses later long-lived requests and asks only for the rest, and of all short-lived
requests of one resource only the largest is kept.  No selectors, constraints or config.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..inventory import Inventory
from ..k8s import DeviceClaim, DeviceRequest, ExactDeviceRequest, ResourceClaimSpec, Target
from .pod import ContainerResources

__all__ = ["IMPLICIT_PREFIX", "implicit_claim", "resource_classes"]

IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
_NANO = 1_000_000_000


def resource_classes(inventory: Inventory, target: Target) -> dict[str, str]:
    """Extended resource name → DeviceClass name, as the scheduler's cache maps them: every class
    its implicit name; an explicit ``extendedResourceName`` to the newest class (ties: the lower
    name).  Empty when the gate is off for the target."""
    if not target.enabled("DRAExtendedResource"):
        return {}
    out: dict[str, str] = {}
    explicit: dict[str, tuple[str, str]] = {}
    for name, cls in inventory.classes.items():
        if len(name) <= 63:
            out[IMPLICIT_PREFIX + name] = name
        ext = cls.spec.extended_resource_name
        if ext:
            stamp = cls.metadata.creation_timestamp or ""
            prior = explicit.get(ext)
            if prior is None or stamp > prior[0] or (stamp == prior[0] and name < prior[1]):
                explicit[ext] = (stamp, name)
    out.update({ext: name for ext, (_, name) in explicit.items()})
    return out


def _count(containers: Sequence[ContainerResources], resource: str) -> list[tuple[int, ContainerResources, int, int]]:
    """(number, container, position of the resource among its sorted requests, whole count > 0)."""
    order = sorted(containers, key=lambda c: (not c.init, c.index))
    out = []
    for i, c in enumerate(order):
        q = c.requests.get(resource)
        if q is None or q.nanos <= 0 or q.nanos % _NANO:
            continue  # zero or fractional: no device request (the scheduler ignores it)
        out.append((i, c, sorted(c.requests).index(resource), q.nanos // _NANO))
    return out


def _requests_for(resource: str, cls: str, containers: Sequence[ContainerResources]) -> list[tuple[str, int]]:
    asks = _count(containers, resource)
    long_lived = [(i, f"container-{i}-request-{r}", n) for i, c, r, n in asks if not c.init or c.restart_always]
    out = [(name, n) for _, name, n in long_lived]
    best: tuple[str, int] | None = None
    for i, c, r, n in asks:
        if not c.init or c.restart_always:
            continue
        reused = 0
        for j, _, m in long_lived:
            if reused >= n:
                break
            if j > i:
                reused += m
        extra = n - reused
        if extra > 0 and (best is None or extra > best[1]):
            best = (f"container-{i}-request-{r}", extra)
    if best is not None:
        out.append(best)
    return out


def implicit_claim(
    containers: Sequence[ContainerResources], mapping: Mapping[str, str], device_plugin: frozenset[str]
) -> tuple[ResourceClaimSpec | None, tuple[str, ...]]:
    """The node's implicit claim (None when no DRA-backed resource is asked for there) and the
    resources it covers."""
    if not mapping:
        return None, ()
    names = sorted({r for c in containers for r in c.requests if r in mapping and r not in device_plugin})
    reqs: list[tuple[str, str, int]] = []
    for res in names:
        reqs.extend((name, mapping[res], n) for name, n in _requests_for(res, mapping[res], containers))
    if not reqs:
        return None, ()
    reqs.sort(key=lambda t: t[0])
    spec = ResourceClaimSpec(devices=DeviceClaim(requests=[
        DeviceRequest(name=name, exactly=ExactDeviceRequest(device_class_name=cls, allocation_mode="ExactCount", count=n))
        for name, cls, n in reqs
    ]))
    return spec, tuple(names)
