"""Potential inventory: node-group templates an autoscaler can turn into real nodes.

Why a wrapper around any source: in a cluster the templates cannot live in the API server as
Nodes (they would be real Nodes), so they come from files — typically a ConfigMap mounted into
the pod (``--potential-inventory /etc/draguard/potential``).  Every Node and ResourceSlice read
from there counts as potential, with or without the ``draguard.io/potential`` annotation; the
live (or static) inventory stays what it is, and the snapshot the checks see is the union,
rebuilt whenever the underlying snapshot changes.  The files are read once at start-up (a
changed ConfigMap takes effect on the next restart: templates change with node-group config).
"""

from __future__ import annotations

import copy
import itertools
import threading
from collections.abc import Sequence
from typing import Any

from ..k8s import DEFAULT_TARGET, INVENTORY_KINDS, Finding, Target
from .build import POTENTIAL_ANNOTATION, build_inventory
from .files import load_paths
from .held import carry_cluster
from .packed import ChainedObjects
from .snapshot import Inventory
from .sources import InventorySource

__all__ = ["WithPotential", "load_potential"]


def _marked(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    meta = out.setdefault("metadata", {})
    if not isinstance(meta, dict):
        meta = out["metadata"] = {}
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        annotations = meta["annotations"] = {}
    annotations[POTENTIAL_ANNOTATION] = "true"
    return out


def load_potential(paths: Sequence[str]) -> tuple[list[dict[str, Any]], list[Finding]]:
    """Nodes and ResourceSlices (marked potential) and DeviceClasses from ``paths``."""
    result = load_paths(paths)
    objects = [_marked(d.obj) if d.kind in ("Node", "ResourceSlice") else d.obj
               for d in result.documents if d.kind in INVENTORY_KINDS]
    return objects, list(result.findings)


class WithPotential:
    """``inner`` plus potential objects; everything else is delegated."""

    def __init__(self, inner: InventorySource, paths: Sequence[str], *, target: Target = DEFAULT_TARGET) -> None:
        self.inner = inner
        self.target = target
        self.paths = list(paths)
        self.potential, self._findings = load_potential(paths)
        self._lock = threading.Lock()
        self._built: tuple[Inventory, Inventory] | None = None

    @property
    def synced(self) -> bool:
        return self.inner.synced

    @property
    def restarts(self) -> int:
        return int(getattr(self.inner, "restarts", 0))

    def snapshot(self) -> Inventory | None:
        base = self.inner.snapshot()
        if base is None:
            return None
        built = self._built
        if built is not None and built[0] is base:
            return built[1]
        with self._lock:
            built = self._built
            if built is None or built[0] is not base:
                rebuilt = build_inventory(itertools.chain(self.inner.objects(), self.potential), target=self.target)
                built = (base, carry_cluster(rebuilt, base))
                self._built = built
        return built[1]

    def problem(self) -> str | None:
        return self.inner.problem()

    def findings(self) -> list[Finding]:
        return [*self.inner.findings(), *self._findings]

    def objects(self) -> Sequence[dict[str, Any]]:
        return ChainedObjects(self.inner.objects(), self.potential)

    def last_sync_age(self) -> float | None:
        return self.inner.last_sync_age()

    def status(self) -> dict[str, Any]:
        return {**self.inner.status(), "potential": {"paths": self.paths, "objects": len(self.potential)}}

    async def run(self) -> None:
        await self.inner.run()
