"""Where the server's inventory comes from: nothing, files read once, or the live cluster.

Why a small protocol: reviews only need "the current snapshot and what is wrong with it";
whether it came from files or from list+watch (:class:`app.inventory.kube.KubeInventory`,
which satisfies the protocol as is) is decided once, at start-up.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

from app.inventory import Inventory, build_inventory
from app.k8s.decode import INVENTORY_KINDS, load_paths

__all__ = ["InventoryLoadError", "InventorySource", "NoInventory", "StaticInventory"]


class InventorySource(Protocol):
    @property
    def synced(self) -> bool: ...

    def snapshot(self) -> Inventory | None: ...

    def problem(self) -> str | None: ...

    def objects(self) -> list[dict[str, Any]]: ...

    def last_sync_age(self) -> float | None: ...

    def status(self) -> dict[str, Any]: ...


class InventoryLoadError(Exception):
    """The static inventory files cannot be used (unreadable, not YAML)."""


class NoInventory:
    """No inventory configured: satisfiability is simply not checked (as in ``draguard lint``)."""

    restarts = 0
    synced = True

    def snapshot(self) -> Inventory | None:
        return None

    def problem(self) -> str | None:
        return None

    def objects(self) -> list[dict[str, Any]]:
        return []

    def last_sync_age(self) -> float | None:
        return None

    def status(self) -> dict[str, Any]:
        return {"source": "none", "synced": True}


class StaticInventory:
    """DeviceClasses, ResourceSlices and Nodes from files, read once at start-up."""

    restarts = 0
    synced = True

    def __init__(self, paths: Sequence[str]) -> None:
        result = load_paths(paths)  # raises InputError for unreadable paths
        if result.findings:
            first = result.findings[0]
            raise InventoryLoadError(f"{first.file}:{first.line}: {first.message}")
        self._objects = [d.obj for d in result.documents if d.kind in INVENTORY_KINDS]
        self._snapshot = build_inventory(self._objects)
        self._loaded_at = time.monotonic()
        self.paths = list(paths)

    def snapshot(self) -> Inventory | None:
        return self._snapshot

    def problem(self) -> str | None:
        return None

    def objects(self) -> list[dict[str, Any]]:
        return list(self._objects)

    def last_sync_age(self) -> float | None:
        return time.monotonic() - self._loaded_at

    def status(self) -> dict[str, Any]:
        return {"source": "files", "synced": True, "paths": self.paths, "objects": len(self._objects)}
