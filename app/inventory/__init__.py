"""The inventory: an immutable, indexed snapshot of DeviceClasses, ResourceSlices and Nodes.

Every source of one lives here too, behind :class:`InventorySource`: files, folders and stdin
(:mod:`.files`, :class:`StaticInventory`) and the API server (:mod:`.kube` list+watch, with
:mod:`.kubeconfig` for credentials); both build the snapshot with :func:`build_inventory`.
:func:`open_inventory` picks one for a door's flags.  The satisfiability check reads the
snapshot; nothing writes to it.

Why the API-server names load lazily (:func:`__getattr__`): :mod:`.kube`, :mod:`.kubeconfig` and
:mod:`.oneshot` and :mod:`.reflector` pull in httpx and asyncio (with rich, click, ssl, email through httpx) — ~0.15 s
of CPU that ``draguard lint`` and the file-only commands never use.  They are imported the first
time one of their names is asked for (``from ..inventory import read_cluster``); the type checker
reads them from the ``TYPE_CHECKING`` block as ordinary imports.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .build import POTENTIAL_ANNOTATION, InventoryBuilder, build_inventory, is_potential
from .cache import BoundedCache
from .claims import CLAIM_KINDS, ClaimReducer
from .cluster import EMPTY_CLUSTER, Allocations, ClusterState, HeldClaim, ObjectKey
from .files import InputError, load_paths, load_workload_kinds
from .held import carry_cluster, compute_allocations, held_view, only_groups, with_cluster
from .node_match import match_node_selector
from .potential import WithPotential, load_potential
from .records import AttrValue, DeviceRecord, NodeGroup, NodeInfo, PoolKey, PoolRecord
from .snapshot import Inventory
from .sources import InventorySource, NoInventory, StaticInventory, open_inventory

if TYPE_CHECKING:
    from .clusterversion import RECHECK_SECONDS, ClusterTarget, detect
    from .kube import RECONNECT_BACKOFF_INITIAL, RECONNECT_BACKOFF_MAX, STALE_AFTER_SECONDS
    from .kubeconfig import KubeConfig, KubeConfigError, load_in_cluster, load_kube_config, make_client
    from .oneshot import ClusterRead, ReadError, read_cluster
    from .reflector import (
        ApiError,
        Backoff,
        GoneError,
        MalformedWatchError,
        list_pages,
        reflect,
        run_together,
        status_message,
        watch_events,
    )

_LAZY = {
    "RECHECK_SECONDS": ".clusterversion",
    "ClusterTarget": ".clusterversion",
    "detect": ".clusterversion",
    "RECONNECT_BACKOFF_INITIAL": ".kube",
    "RECONNECT_BACKOFF_MAX": ".kube",
    "STALE_AFTER_SECONDS": ".kube",
    "ApiError": ".reflector",
    "Backoff": ".reflector",
    "GoneError": ".reflector",
    "MalformedWatchError": ".reflector",
    "list_pages": ".reflector",
    "reflect": ".reflector",
    "run_together": ".reflector",
    "status_message": ".reflector",
    "watch_events": ".reflector",
    "KubeConfig": ".kubeconfig",
    "KubeConfigError": ".kubeconfig",
    "load_in_cluster": ".kubeconfig",
    "load_kube_config": ".kubeconfig",
    "make_client": ".kubeconfig",
    "ClusterRead": ".oneshot",
    "ReadError": ".oneshot",
    "read_cluster": ".oneshot",
}


def __getattr__(name: str) -> object:
    """A name of the API-server modules, imported on first use (see the module docstring)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value

__all__ = [
    "CLAIM_KINDS",
    "EMPTY_CLUSTER",
    "POTENTIAL_ANNOTATION",
    "RECHECK_SECONDS",
    "RECONNECT_BACKOFF_INITIAL",
    "RECONNECT_BACKOFF_MAX",
    "STALE_AFTER_SECONDS",
    "Allocations",
    "ApiError",
    "AttrValue",
    "Backoff",
    "BoundedCache",
    "ClaimReducer",
    "ClusterRead",
    "ClusterState",
    "ClusterTarget",
    "DeviceRecord",
    "GoneError",
    "HeldClaim",
    "InputError",
    "Inventory",
    "InventoryBuilder",
    "InventorySource",
    "KubeConfig",
    "KubeConfigError",
    "MalformedWatchError",
    "NoInventory",
    "NodeGroup",
    "NodeInfo",
    "ObjectKey",
    "PoolKey",
    "PoolRecord",
    "ReadError",
    "StaticInventory",
    "WithPotential",
    "build_inventory",
    "carry_cluster",
    "compute_allocations",
    "detect",
    "held_view",
    "is_potential",
    "list_pages",
    "load_in_cluster",
    "load_kube_config",
    "load_paths",
    "load_potential",
    "load_workload_kinds",
    "make_client",
    "match_node_selector",
    "only_groups",
    "open_inventory",
    "read_cluster",
    "reflect",
    "run_together",
    "status_message",
    "watch_events",
    "with_cluster",
]
