"""A claim spec flattened into what the search iterates over.

Why flatten: ``exactly`` and ``firstAvailable`` are two spellings of "one or more ways to
satisfy this request"; the search treats a plain request as a request with one alternative.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..k8s import DeviceSelector, DeviceToleration, ExactDeviceRequest, Path, Quantity, ResourceClaimSpec

__all__ = ["Alternative", "RequestPlan", "plan_claim"]


@dataclass(frozen=True, eq=False)
class Alternative:
    """One way to satisfy a request: the request itself or one of its subrequests."""

    request: str
    sub: str | None
    path: Path
    class_name: str
    selectors: tuple[str | None, ...]
    mode: str
    count: int
    admin: bool
    tolerations: tuple[DeviceToleration, ...]
    capacity: Mapping[str, Quantity] = field(default_factory=dict)
    key: int = 0
    """Position among all alternatives of the search (claims in order; a cache key)."""
    claim: int = 0
    """Which claim of the pod the alternative belongs to (0 for a lone claim)."""

    @property
    def display(self) -> str:
        return f"{self.request}/{self.sub}" if self.sub else self.request

    @property
    def all_mode(self) -> bool:
        return self.mode == "All"


@dataclass(frozen=True, eq=False)
class RequestPlan:
    """One request of a claim with its alternatives (a plain request has one; ``firstAvailable`` one per subrequest)."""

    name: str
    path: Path
    alternatives: tuple[Alternative, ...]
    claim: int = 0


def _selectors(items: list[DeviceSelector]) -> tuple[str | None, ...]:
    return tuple(s.cel.expression if s.cel is not None else None for s in items)


def _alternative(name: str, sub: str | None, path: Path, req: ExactDeviceRequest | object, key: int, claim: int) -> Alternative:
    class_name: str = getattr(req, "device_class_name", "")
    mode: str = getattr(req, "allocation_mode", "") or "ExactCount"
    count: int = getattr(req, "count", 0) or 1
    capacity = getattr(req, "capacity", None)
    return Alternative(
        request=name,
        sub=sub,
        path=path,
        class_name=class_name,
        selectors=_selectors(getattr(req, "selectors", [])),
        mode=mode,
        count=count,
        admin=bool(getattr(req, "admin_access", None)),
        tolerations=tuple(getattr(req, "tolerations", [])),
        capacity=dict(capacity.requests) if capacity is not None else {},
        key=key,
        claim=claim,
    )


def plan_claim(spec: ResourceClaimSpec, base: Path, *, claim: int = 0, key_start: int = 0) -> list[RequestPlan]:
    """The claim's requests in order; ``claim`` tags them (the pod's claim index) and keys start at
    ``key_start``, so the plans of several claims can be searched together."""
    plans: list[RequestPlan] = []
    key = key_start
    for i, req in enumerate(spec.devices.requests):
        rpath = base.child("devices").child("requests").index(i)
        alts: list[Alternative] = []
        if req.exactly is not None:
            alts.append(_alternative(req.name, None, rpath.child("exactly"), req.exactly, key, claim))
            key += 1
        for j, sub in enumerate(req.first_available):
            alts.append(_alternative(req.name, sub.name, rpath.child("firstAvailable").index(j), sub, key, claim))
            key += 1
        plans.append(RequestPlan(req.name, rpath, tuple(alts), claim))
    return plans
