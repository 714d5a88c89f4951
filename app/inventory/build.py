"""Building an :class:`~app.inventory.snapshot.Inventory` from raw objects.

Why the pool rules matter: the allocator only uses the newest generation of a pool, treats a
pool as complete only when all ``resourceSliceCount`` slices of that generation are present,
and skips pools with duplicate device names or dangling counter references.  Node reachability
decides which devices a node can use; nodes that reach the same devices are grouped so the
satisfiability search runs once per group, not once per node.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from app.inventory.celdevice import build_cel_device
from app.inventory.nodeselect import match_node_selector
from app.inventory.records import DeviceRecord, NodeGroup, PoolKey, PoolRecord
from app.inventory.snapshot import Inventory
from app.k8s import (
    DEFAULT_TARGET,
    Device,
    DeviceClass,
    Node,
    NodeSelector,
    Quantity,
    ResourceSlice,
    Target,
    decode_object,
)

__all__ = ["build_inventory"]

_Reach = tuple[str, Any]  # ("node", name) | ("all", None) | ("selector", NodeSelector) | ("none", None)


def _decode(
    objects: Iterable[Mapping[str, Any]], target: Target
) -> tuple[dict[str, DeviceClass], list[ResourceSlice], dict[str, dict[str, str]]]:
    classes: dict[str, DeviceClass] = {}
    slices: list[ResourceSlice] = []
    nodes: dict[str, dict[str, str]] = {}
    for raw in objects:
        if not isinstance(raw, Mapping):
            continue
        kind = raw.get("kind")
        try:
            if kind == "Node":
                node = Node.model_validate(dict(raw))
                if node.metadata.name:
                    nodes[node.metadata.name] = dict(node.metadata.labels)
                continue
            if kind not in ("DeviceClass", "ResourceSlice"):
                continue
            model = decode_object(kind, dict(raw), target=target).model
        except (ValidationError, ValueError, TypeError, AttributeError):
            continue
        if isinstance(model, DeviceClass) and model.metadata.name:
            classes[model.metadata.name] = model
        elif isinstance(model, ResourceSlice):
            slices.append(model)
    return classes, slices, nodes


def _newest_generations(slices: list[ResourceSlice]) -> dict[PoolKey, list[ResourceSlice]]:
    by_pool: dict[PoolKey, list[ResourceSlice]] = defaultdict(list)
    for sl in slices:
        by_pool[(sl.spec.driver, sl.spec.pool.name)].append(sl)
    out: dict[PoolKey, list[ResourceSlice]] = {}
    for key, members in by_pool.items():
        newest = max(s.spec.pool.generation for s in members)
        chosen = [s for s in members if s.spec.pool.generation == newest]
        chosen.sort(key=lambda s: s.metadata.name or "")
        out[key] = chosen
    return out


def _pool_record(key: PoolKey, members: list[ResourceSlice]) -> PoolRecord:
    generation = members[0].spec.pool.generation
    expected = max(s.spec.pool.resource_slice_count for s in members)
    complete = len(members) >= expected
    invalid: str | None = None
    counter_sets: dict[str, dict[str, Quantity]] = {}
    for sl in members:
        for cs in sl.spec.shared_counters:
            if cs.name in counter_sets:
                invalid = f"counter set {cs.name} is defined twice"
            counter_sets[cs.name] = {
                name: (c.value if c.value is not None else Quantity(0)) for name, c in cs.counters.items()
            }
    seen: set[str] = set()
    for sl in members:
        for dev in sl.spec.devices:
            if dev.name in seen:
                invalid = f"device {dev.name} is listed twice"
            seen.add(dev.name)
            for use in dev.consumes_counters:
                if use.counter_set not in counter_sets:
                    invalid = f"device {dev.name} consumes from unknown counter set {use.counter_set}"
                    continue
                for cname in use.counters:
                    if cname not in counter_sets[use.counter_set]:
                        invalid = f"device {dev.name} consumes unknown counter {use.counter_set}/{cname}"
    return PoolRecord(key[0], key[1], generation, complete, invalid, counter_sets)


def _qualified_attributes(driver: str, dev: Device) -> tuple[dict[str, tuple[str, object]], dict[str, tuple[str, object]], str | None]:
    raw: dict[str, tuple[str, object]] = {}
    qualified: dict[str, tuple[str, object]] = {}
    broken: str | None = None
    # Unqualified names first so an explicitly qualified spelling wins, as upstream does.
    for name in sorted(dev.attributes, key=lambda n: "/" in n):
        kind, value = dev.attributes[name].kind_and_value()
        if kind is None:
            broken = name
            continue
        raw[name] = (kind, value)
        qualified[name if "/" in name else f"{driver}/{name}"] = (kind, value)
    return raw, qualified, broken


def _reach(sl: ResourceSlice, dev: Device) -> _Reach:
    spec = sl.spec
    source: Any = dev if spec.per_device_node_selection else spec
    if source.node_name:
        return ("node", source.node_name)
    if source.all_nodes:
        return ("all", None)
    if source.node_selector is not None:
        return ("selector", source.node_selector)
    return ("none", None)


class _ShapeIds:
    def __init__(self) -> None:
        self._ids: dict[str, int] = {}

    def of(self, driver: str, dev: Device) -> tuple[int, bool]:
        text = driver + "\x00" + dev.model_dump_json(
            by_alias=True, exclude={"name", "node_name", "node_selector", "all_nodes"}
        )
        known = text in self._ids
        if not known:
            self._ids[text] = len(self._ids)
        return self._ids[text], not known


def build_inventory(objects: Iterable[Mapping[str, Any]], *, target: Target = DEFAULT_TARGET) -> Inventory:
    """An immutable, indexed snapshot from raw DeviceClass/ResourceSlice/Node dicts.

    Other kinds are ignored and objects that do not decode are skipped: one broken slice must
    not take the whole inventory down.  Objects of any served version are read, and fields the
    ``target`` API server would drop are dropped: a slice written with ``allowMultipleAllocations``
    is stored without it on a 1.35 cluster, so its device cannot be shared there.
    """
    classes, slices, nodes = _decode(objects, target)
    pools_slices = _newest_generations(slices)
    pools = {key: _pool_record(key, members) for key, members in pools_slices.items()}

    shapes = _ShapeIds()
    cel_by_shape: dict[int, Any] = {}
    devices: list[DeviceRecord] = []
    reach: list[_Reach] = []
    for key in sorted(pools_slices):
        driver, pool_name = key
        for sl in pools_slices[key]:
            for dev in sl.spec.devices:
                kind_reach = _reach(sl, dev)
                raw_attrs, attrs, broken = _qualified_attributes(driver, dev)
                shape, new = shapes.of(driver, dev)
                multi = bool(dev.allow_multiple_allocations)
                if new:
                    caps = {n: (c.value if c.value is not None else Quantity(0)) for n, c in dev.capacity.items()}
                    cel_by_shape[shape] = build_cel_device(driver, multi, raw_attrs, caps)
                counters: dict[tuple[str, str], Quantity] = {}
                for use in dev.consumes_counters:
                    for cname, c in use.counters.items():
                        amount = c.value if c.value is not None else Quantity(0)
                        prior = counters.get((use.counter_set, cname))
                        counters[(use.counter_set, cname)] = amount if prior is None else prior.add(amount)
                node_label = kind_reach[1] if kind_reach[0] == "node" else pool_name
                devices.append(
                    DeviceRecord(
                        index=len(devices), driver=driver, pool=pool_name, slice_name=sl.metadata.name or "",
                        name=dev.name, device=dev, multi=multi, attributes=attrs, broken_attribute=broken,
                        capacity=dict(dev.capacity), taints=tuple(dev.taints), counters=counters,
                        node_label=str(node_label), shape=shape, cel=cel_by_shape[shape],
                    )
                )
                reach.append(kind_reach)
    groups = _group_nodes(devices, reach, pools, nodes)
    reachable = tuple(sorted({i for g in groups for i in g.devices}))
    return Inventory(
        classes=classes, pools=pools, devices=tuple(devices), nodes=nodes, groups=groups,
        reachable=reachable,
    )


def _group_nodes(
    devices: list[DeviceRecord], reach: list[_Reach], pools: Mapping[PoolKey, PoolRecord], nodes: Mapping[str, Mapping[str, str]]
) -> tuple[NodeGroup, ...]:
    named: dict[str, list[int]] = defaultdict(list)
    everywhere: list[int] = []
    selected: list[tuple[int, NodeSelector]] = []
    for rec, (kind, arg) in zip(devices, reach, strict=True):
        if kind == "node":
            named[arg].append(rec.index)
        elif kind == "all":
            everywhere.append(rec.index)
        elif kind == "selector":
            selected.append((rec.index, arg))
    node_names = set(nodes) | set(named)
    per_node: dict[tuple[int, ...], list[str]] = defaultdict(list)
    cache: dict[tuple[int, str], bool] = {}
    for node in sorted(node_names):
        labels = nodes.get(node)
        chosen = list(named.get(node, ())) + everywhere
        for idx, selector in selected:
            if labels is None and nodes:
                ok: bool | None = False  # a node only known from a slice has no labels to match
            elif labels is None:
                ok = None  # no Node objects at all: a selector cannot be evaluated
            else:
                ck = (id(selector), node)
                if ck not in cache:
                    got = match_node_selector(selector, node, labels)
                    cache[ck] = got is not False
                ok = cache[ck]
            if ok is not False:
                chosen.append(idx)
        per_node[tuple(sorted(chosen))].append(node)
    groups = [_make_group(tuple(names), devs, devices, pools, assumed=not nodes) for devs, names in per_node.items()]
    if not node_names and (everywhere or selected):
        devs = tuple(sorted(everywhere + [i for i, _ in selected]))
        groups.append(_make_group((), devs, devices, pools, assumed=True))
    groups.sort(key=lambda g: g.nodes)
    return tuple(groups)


def _make_group(
    names: tuple[str, ...], devs: tuple[int, ...], devices: list[DeviceRecord], pools: Mapping[PoolKey, PoolRecord], *, assumed: bool
) -> NodeGroup:
    pool_keys: list[PoolKey] = []
    local: dict[PoolKey, int] = {}
    layout: list[tuple[int, int]] = []
    for i in devs:
        key = devices[i].pool_key
        if key not in local:
            local[key] = len(pool_keys)
            pool_keys.append(key)
        layout.append((local[key], devices[i].shape))
    pool_sig = tuple(
        (
            pools[k].complete,
            pools[k].invalid is None,
            tuple(sorted((s, tuple(sorted((c, q.nanos) for c, q in cs.items()))) for s, cs in pools[k].counter_sets.items())),
        )
        for k in pool_keys
    )
    return NodeGroup(names, devs, tuple(pool_keys), (tuple(layout), pool_sig), assumed)
