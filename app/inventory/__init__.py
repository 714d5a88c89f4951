"""The inventory: an immutable, indexed snapshot of DeviceClasses, ResourceSlices and Nodes.

Every source of one lives here too, behind :class:`InventorySource`: files, folders and stdin
(:mod:`.files`, :class:`StaticInventory`) and the API server (:mod:`.kube` list+watch, with
:mod:`.kubeconfig` for credentials); both build the snapshot with :func:`build_inventory`.
:func:`open_inventory` picks one for a door's flags.  The satisfiability check reads the
snapshot; nothing writes to it.
"""

from app.inventory.build import POTENTIAL_ANNOTATION, build_inventory, is_potential
from app.inventory.files import InputError, load_paths
from app.inventory.kube import status_message
from app.inventory.kubeconfig import (
    KubeConfig,
    KubeConfigError,
    load_in_cluster,
    load_kube_config,
    make_client,
)
from app.inventory.potential import WithPotential, load_potential
from app.inventory.records import AttrValue, DeviceRecord, NodeGroup, PoolKey, PoolRecord
from app.inventory.snapshot import Inventory
from app.inventory.sources import InventorySource, NoInventory, StaticInventory, open_inventory

__all__ = [
    "POTENTIAL_ANNOTATION",
    "AttrValue",
    "DeviceRecord",
    "InputError",
    "Inventory",
    "InventorySource",
    "KubeConfig",
    "KubeConfigError",
    "NoInventory",
    "NodeGroup",
    "PoolKey",
    "PoolRecord",
    "StaticInventory",
    "WithPotential",
    "build_inventory",
    "is_potential",
    "load_in_cluster",
    "load_kube_config",
    "load_paths",
    "load_potential",
    "make_client",
    "open_inventory",
    "status_message",
]
