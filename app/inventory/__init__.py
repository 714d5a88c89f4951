"""The inventory: an immutable, indexed snapshot of DeviceClasses, ResourceSlices and Nodes.

Built from files today and from a live list+watch by the server (both call
:func:`build_inventory`).  The satisfiability check reads it; nothing writes to it.
"""

from app.inventory.build import build_inventory
from app.inventory.records import AttrValue, DeviceRecord, NodeGroup, PoolKey, PoolRecord
from app.inventory.snapshot import Inventory

__all__ = ["AttrValue", "DeviceRecord", "Inventory", "NodeGroup", "PoolKey", "PoolRecord", "build_inventory"]
