"""The inventory: an immutable, indexed snapshot of DeviceClasses, ResourceSlices and Nodes.

Every source of one lives here too, behind :class:`InventorySource`: files, folders and stdin
(:mod:`.files`, :class:`StaticInventory`) and the API server (:mod:`.kube` list+watch, with
:mod:`.kubeconfig` for credentials); both build the snapshot with :func:`build_inventory`.
:func:`open_inventory` picks one for a door's flags.  The satisfiability check reads the
snapshot; nothing writes to it.
"""

from .build import POTENTIAL_ANNOTATION, build_inventory, is_potential
from .cache import BoundedCache
from .claims import CLAIM_KINDS, ClaimReducer
from .cluster import EMPTY_CLUSTER, Allocations, ClusterState, HeldClaim, ObjectKey
from .files import InputError, load_paths, load_workload_kinds
from .held import carry_cluster, compute_allocations, held_view, only_groups, with_cluster
from .kubeconfig import (
    KubeConfig,
    KubeConfigError,
    load_in_cluster,
    load_kube_config,
    make_client,
)
from .node_match import match_node_selector
from .oneshot import ClusterRead, ReadError, read_cluster
from .potential import WithPotential, load_potential
from .records import AttrValue, DeviceRecord, NodeGroup, NodeInfo, PoolKey, PoolRecord
from .reflector import (
    ApiError,
    Backoff,
    GoneError,
    MalformedWatchError,
    list_pages,
    reflect,
    status_message,
    watch_events,
)
from .snapshot import Inventory
from .sources import InventorySource, NoInventory, StaticInventory, open_inventory

__all__ = [
    "CLAIM_KINDS",
    "EMPTY_CLUSTER",
    "POTENTIAL_ANNOTATION",
    "Allocations",
    "ApiError",
    "AttrValue",
    "Backoff",
    "BoundedCache",
    "ClaimReducer",
    "ClusterRead",
    "ClusterState",
    "DeviceRecord",
    "GoneError",
    "HeldClaim",
    "InputError",
    "Inventory",
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
    "status_message",
    "watch_events",
    "with_cluster",
]
