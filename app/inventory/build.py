"""Building an :class:`~app.inventory.snapshot.Inventory` from raw objects.

Why the pool rules matter: the allocator only uses the newest generation of a pool, treats a
pool as complete only when all ``resourceSliceCount`` slices of that generation are present,
and skips pools with duplicate device names or dangling counter references.  Node reachability
decides which devices a node can use; nodes that reach the same devices are grouped so the
satisfiability search runs once per group, not once per node.
"""

from __future__ import annotations

import dataclasses
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from pydantic import ValidationError

from ..k8s import (
    DEFAULT_TARGET,
    Device,
    DeviceCapacity,
    DeviceClass,
    DeviceTaint,
    DeviceTaintRule,
    Node,
    NodeSelector,
    Quantity,
    QuantityError,
    ResourceSlice,
    Target,
    parse_quantity,
    structural_pass,
)
from .celdevice import cel_device_error
from .node_match import match_node_selector
from .profiles import ProfileIndex
from .records import DeviceRecord, NodeGroup, NodeInfo, PoolKey, PoolRecord
from .snapshot import Inventory
from .taintrules import rule_taints, rules_apply

__all__ = ["POTENTIAL_ANNOTATION", "InventoryBuilder", "build_inventory", "is_potential"]

POTENTIAL_ANNOTATION = "draguard.io/potential"
"""``"true"`` on a Node or ResourceSlice: capacity an autoscaler can create (a node-group
template), not capacity that exists.  Such objects join the satisfiability proof as extra
candidate nodes but never make a claim allocatable "now"."""


def is_potential(raw: Mapping[str, Any]) -> bool:
    """Whether an inventory object is marked as potential (annotation value ``"true"``)."""
    meta = raw.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    return isinstance(annotations, Mapping) and str(annotations.get(POTENTIAL_ANNOTATION, "")).lower() == "true"

_Reach = tuple[str, Any]  # ("node", name) | ("all", None) | ("selector", NodeSelector) | ("none", None)


_Decoded = tuple[str, Any] | None
"""("Node", (name, NodeInfo)) | ("DeviceClass", model) | ("ResourceSlice", _Slice) |
("DeviceTaintRule", model) | None (skipped)."""


def _decode_one(raw: Mapping[str, Any], target: Target, parts: _SharedParts) -> _Decoded:
    kind = raw.get("kind")
    try:
        if kind == "Node":
            return _decode_node(raw, parts)
        if kind not in ("DeviceClass", "ResourceSlice", "DeviceTaintRule"):
            return None
        model = structural_pass(kind, dict(raw), target=target).model
    except (ValidationError, ValueError, TypeError, AttributeError):
        return None
    return _from_model(model, parts)


def _from_model(model: Any, parts: _SharedParts) -> _Decoded:
    """What the snapshot keeps of a decoded DeviceClass or ResourceSlice (``None``: skipped)."""
    if isinstance(model, DeviceClass) and model.metadata.name:
        return ("DeviceClass", model)
    if isinstance(model, ResourceSlice):
        return ("ResourceSlice", _summarize(model, parts))
    if isinstance(model, DeviceTaintRule):
        return ("DeviceTaintRule", model)
    return None


def _decode_node(raw: Mapping[str, Any], parts: _SharedParts) -> _Decoded:
    """(name, interned NodeInfo); a Node whose spec or status does not read keeps its labels
    (taints unknown are no taints: draguard never rejects for what it cannot read)."""
    try:
        node = Node.model_validate(dict(raw))
    except (ValidationError, ValueError, TypeError):
        bare = {k: raw[k] for k in ("kind", "apiVersion", "metadata") if k in raw}
        node = Node.model_validate(bare)
    name = node.metadata.name
    if not name:
        return None
    plugins: set[str] = set()
    for res, amount in node.status.allocatable.items():
        try:
            positive = parse_quantity(str(amount)).nanos > 0
        except (QuantityError, ValueError):
            positive = True  # unreadable: assume a device plugin serves it (DRA then does not apply)
        if positive:
            plugins.add(res)
    taints = tuple(t for t in node.spec.taints if t.effect in ("NoSchedule", "NoExecute"))
    info = NodeInfo(dict(node.metadata.labels), taints, bool(node.spec.unschedulable), frozenset(plugins))
    return ("Node", (sys.intern(name), parts.node_info(info)))


class _SliceDevice(NamedTuple):
    """What the snapshot needs of one device of a slice (reused while the ResourceSlice it comes
    from is unchanged): one tuple per device, everything alike devices have in common shared.

    Why so little: these live until the snapshot is built, beside the records made from them; at
    100,000 devices every byte per device here is 100 kB of start-up peak the allocator keeps."""

    name: str
    reach: _Reach
    consumes: tuple[tuple[str, tuple[str, ...]], ...]
    """(counter set, counter names) the device draws on: the pool checks they exist."""
    attributes: dict[str, tuple[str, object]]
    """By fully qualified name (see :func:`_qualified_attributes`)."""
    raw_attributes: dict[str, tuple[str, object]] | None
    """As the slice names them, or ``None`` when every name is unqualified (then they are
    ``attributes`` with the driver's domain taken off: :attr:`DeviceRecord.raw_attributes`)."""
    names: tuple[str, ...]
    """Every attribute name, sorted (broken ones too), one tuple per distinct set of names."""
    broken: str | None
    body: _Body
    cel_error: str | None


class _Slice(NamedTuple):
    """A decoded ResourceSlice reduced to what the snapshot needs.

    Why not the pydantic model: at 100,000 devices the models of every slice alive at once are
    ~0.5 GB; a slice is reduced as soon as it is decoded, so only one model lives at a time, and
    what is kept (for the incremental rebuild too) shares everything alike devices have in
    common (see :class:`_SharedParts`)."""

    name: str
    driver: str
    pool: str
    generation: int
    expected: int
    """``resourceSliceCount``."""
    shared_counters: tuple[tuple[str, dict[str, Quantity]], ...]
    devices: tuple[_SliceDevice, ...]


def _summarize(sl: ResourceSlice, parts: _SharedParts) -> _Slice:
    spec = sl.spec
    driver = sys.intern(spec.driver)
    shared_reach = None if spec.per_device_node_selection else _reach(sl, None)
    devices = tuple(
        _prepare(driver, dev, shared_reach if shared_reach is not None else _reach(sl, dev), parts)
        for dev in spec.devices
    )
    counters = tuple(
        (cs.name, {name: (c.value if c.value is not None else Quantity(0)) for name, c in cs.counters.items()})
        for cs in spec.shared_counters
    )
    return _Slice(
        sys.intern(sl.metadata.name or ""), driver, sys.intern(spec.pool.name), spec.pool.generation,
        spec.pool.resource_slice_count, counters, devices,
    )


def _fingerprint(raw: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(kind, uid, resourceVersion) of an object read from the API server: equal means unchanged."""
    meta = raw.get("metadata")
    if not isinstance(meta, Mapping):
        return None
    uid, rv, kind = meta.get("uid"), meta.get("resourceVersion"), raw.get("kind")
    if isinstance(uid, str) and uid and isinstance(rv, str) and rv and isinstance(kind, str):
        return (kind, uid, rv)
    return None


def _name_key(raw: Mapping[str, Any]) -> tuple[str, str]:
    meta = raw.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return (str(raw.get("kind")), name if isinstance(name, str) else "")


def _newest_generations(slices: list[_Slice]) -> dict[PoolKey, list[_Slice]]:
    by_pool: dict[PoolKey, list[_Slice]] = defaultdict(list)
    for sl in slices:
        by_pool[(sl.driver, sl.pool)].append(sl)
    out: dict[PoolKey, list[_Slice]] = {}
    for key, members in by_pool.items():
        newest = max(s.generation for s in members)
        chosen = [s for s in members if s.generation == newest]
        chosen.sort(key=lambda s: s.name)
        out[key] = chosen
    return out


def _pool_record(key: PoolKey, members: list[_Slice]) -> PoolRecord:
    generation = members[0].generation
    expected = max(s.expected for s in members)
    complete = len(members) >= expected
    invalid: str | None = None
    counter_sets: dict[str, dict[str, Quantity]] = {}
    for sl in members:
        for cs_name, counters in sl.shared_counters:
            if cs_name in counter_sets:
                invalid = f"counter set {cs_name} is defined twice"
            counter_sets[cs_name] = counters
    seen: set[str] = set()
    for sl in members:
        for dev in sl.devices:
            if dev.name in seen:
                invalid = f"device {dev.name} is listed twice"
            seen.add(dev.name)
            for counter_set, names in dev.consumes:
                if counter_set not in counter_sets:
                    invalid = f"device {dev.name} consumes from unknown counter set {counter_set}"
                    continue
                for cname in names:
                    if cname not in counter_sets[counter_set]:
                        invalid = f"device {dev.name} consumes unknown counter {counter_set}/{cname}"
    return PoolRecord(key[0], key[1], generation, complete, invalid, counter_sets, len(members), expected)


def _qualified_attributes(
    driver: str, dev: Device, parts: _SharedParts,
) -> tuple[dict[str, tuple[str, object]], dict[str, tuple[str, object]], str | None]:
    raw: dict[str, tuple[str, object]] = {}
    qualified: dict[str, tuple[str, object]] = {}
    broken: str | None = None
    entries, spellings = parts.entries, parts.spellings
    attributes = dev.attributes
    # Unqualified names first so an explicitly qualified spelling wins, as upstream does.
    order = sorted(attributes, key=lambda n: "/" in n) if any("/" in n for n in attributes) else attributes
    for name in order:
        kind, value = attributes[name].kind_and_value()
        if kind is None:
            broken = name
            continue
        # values repeat on every device alike: one (kind, value) tuple each, and one string for
        # each name and its qualified spelling (values are not interned: a unique uuid per
        # device would only grow the interpreter's table of interned strings)
        entry = (kind, value)
        entry = entries.setdefault(entry, entry)
        spelled = spellings.get((driver, name))
        if spelled is None:
            own = sys.intern(name)
            spelled = spellings[(driver, name)] = (own, own if "/" in name else sys.intern(f"{driver}/{name}"))
        raw[spelled[0]] = entry
        qualified[spelled[1]] = entry
    return raw, qualified, broken


def _reach(sl: ResourceSlice, dev: Device | None) -> _Reach:
    """Where a device is reached: the slice's ``nodeName``/``allNodes``/``nodeSelector``, or the
    device's own with ``perDeviceNodeSelection`` (``dev`` is ``None`` for the slice's)."""
    spec = sl.spec
    source: Any = dev if spec.per_device_node_selection and dev is not None else spec
    if source.node_name:
        return ("node", sys.intern(source.node_name))
    if source.all_nodes:
        return ("all", None)
    if source.node_selector is not None:
        return ("selector", source.node_selector)
    return ("none", None)


class _ShapeIds:
    """Interns device content: the *body* (everything but name, location and attributes) and the
    *shape* (body and attributes).  Equal shapes behave alike for every claim; equal bodies behave
    alike for every claim that reads none of the attributes that differ.

    A shape is the body, the sorted attribute names and the ``(kind, value)`` published under each
    (``None`` for a broken one): values are ``int``, ``bool`` or ``str`` by kind, so equal tuples
    are exactly equal published attributes."""

    def __init__(self) -> None:
        self._bodies: dict[str, int] = {}
        self._shapes: dict[tuple[object, ...], int] = {}

    def of(self, dev: _SliceDevice, driver: str) -> tuple[int, int]:
        body = self._bodies.setdefault(dev.body.text, len(self._bodies))
        names = dev.names
        if dev.raw_attributes is not None:
            raw = dev.raw_attributes
            key: tuple[object, ...] = (body, names, *(raw.get(n) for n in names))
        else:
            attrs, domain = dev.attributes, driver + "/"
            key = (body, names, *(attrs.get(domain + n) for n in names))
        shape = self._shapes.setdefault(key, len(self._shapes))
        return shape, body


class _Body(NamedTuple):
    """The parts of a device's body the snapshot reads, one object for every device alike."""

    text: str
    multi: bool
    capacity: dict[str, DeviceCapacity]
    taints: tuple[DeviceTaint, ...]
    counters: dict[tuple[str, str], Quantity]


class _SharedParts:
    """Equal bodies (capacities and their policies, taints, counters — see :class:`_ShapeIds`)
    decoded once per builder: thousands of devices of one model then hold one capacity map, not
    thousands of equal ones.  Bodies no longer used are forgotten at the end of each build."""

    def __init__(self) -> None:
        self.bodies: dict[str, _Body] = {}
        self.used: set[str] = set()
        self.nodes: dict[object, NodeInfo] = {}
        self.taints: dict[object, tuple[Any, ...]] = {}
        """One taints tuple per distinct set of taints, shared by every node that has it."""
        self.entries: dict[tuple[str, object], tuple[str, object]] = {}
        """One ``(kind, value)`` tuple per distinct attribute value (``("string", "H100")`` is
        one object for every H100); emptied after each build (:meth:`forget_values`)."""
        self.names: dict[tuple[str, ...], tuple[str, ...]] = {}
        """One tuple per distinct set of attribute names."""
        self.spellings: dict[tuple[str, str], tuple[str, str]] = {}
        """(driver, attribute name) → the name and its qualified spelling, interned."""

    def forget_values(self) -> None:
        """Drop the tables that share attribute values and names: what was shared stays shared,
        and their size is bounded by one build's devices, not by the history of watched ones."""
        self.entries = {}
        self.names = {}
        self.spellings = {}

    def body(self, body_text: str, dev: Device) -> _Body:
        got = self.bodies.get(body_text)
        if got is None:
            counters: dict[tuple[str, str], Quantity] = {}
            for use in dev.consumes_counters:
                for cname, c in use.counters.items():
                    amount = c.value if c.value is not None else Quantity(0)
                    prior = counters.get((use.counter_set, cname))
                    counters[(use.counter_set, cname)] = amount if prior is None else prior.add(amount)
            got = _Body(body_text, bool(dev.allow_multiple_allocations), dict(dev.capacity), tuple(dev.taints), counters)
            self.bodies[body_text] = got
        return got

    def keep_only(self, texts: set[str]) -> None:
        self.bodies = {t: b for t, b in self.bodies.items() if t in texts}

    def node_info(self, info: NodeInfo) -> NodeInfo:
        """One object per distinct node content (labels included, so per node where the
        hostname label differs; taints and plugins are shared tuples either way)."""
        key = (tuple(sorted(info.labels.items())), tuple((t.key, t.value, t.effect) for t in info.taints),
               info.unschedulable, info.device_plugin)
        got = self.nodes.get(key)
        if got is None:
            taints = self.taints.setdefault(key[1], info.taints)
            got = self.nodes[key] = dataclasses.replace(info, taints=taints) if taints is not info.taints else info
        return got


def _with_taints(body: _Body, extra: tuple[DeviceTaint, ...],
                 seen: dict[tuple[str, tuple[DeviceTaint, ...]], _Body]) -> _Body:
    """``body`` with the taints of DeviceTaintRules appended after the slice's own (the tracker's
    order), one object per (body, taints) in a build: its text differs from the untainted body's,
    so tainted devices get profiles of their own."""
    got = seen.get((body.text, extra))
    if got is None:
        text = body.text + "\x00rules:" + "\x00".join(t.model_dump_json(by_alias=True) for t in extra)
        got = seen[(body.text, extra)] = body._replace(text=text, taints=body.taints + extra)
    return got


def _prepare(driver: str, dev: Device, reach: _Reach, parts: _SharedParts) -> _SliceDevice:
    raw_attrs, attrs, broken = _qualified_attributes(driver, dev, parts)
    body_text = driver + "\x00" + dev.model_dump_json(
        by_alias=True, exclude={"name", "node_name", "node_selector", "all_nodes", "attributes"}
    )
    body = parts.body(body_text, dev)
    names = tuple(sorted(dev.attributes))
    names = parts.names.setdefault(names, names)
    unqualified = all("/" not in n for n in raw_attrs)
    return _SliceDevice(
        sys.intern(dev.name), reach,
        tuple((use.counter_set, tuple(use.counters)) for use in dev.consumes_counters),
        attrs, None if unqualified else raw_attrs, names, broken, body, cel_device_error(raw_attrs),
    )


def build_inventory(objects: Iterable[Mapping[str, Any]], *, target: Target = DEFAULT_TARGET) -> Inventory:
    """An immutable, indexed snapshot from raw DeviceClass/ResourceSlice/Node dicts.

    Other kinds are ignored and objects that do not decode are skipped: one broken slice must
    not take the whole inventory down.  Objects of any served version are read, and fields the
    ``target`` API server would drop are dropped: a slice written with ``allowMultipleAllocations``
    is stored without it on a 1.35 cluster, so its device cannot be shared there.
    """
    return InventoryBuilder(target=target).build(objects)


class InventoryBuilder:
    """Builds snapshots one after another, re-decoding only objects that changed.

    Why: the live inventory rebuilds its snapshot after every burst of watch events; decoding
    and preparing 10,000 devices again because one slice changed costs about a second and a
    core.  Objects from the API server carry ``uid`` and ``resourceVersion``; an object whose pair
    is unchanged is the same object, so its reduced slice (:class:`_Slice`: its devices' prepared
    data, never the raw object or the pydantic model) is reused.  Only what
    depends on the whole inventory — pools, node groups, the profile index — is assembled again,
    from prepared parts.  What is remembered is exactly what the latest snapshot used, so memory
    follows the inventory, not its history.
    """

    def __init__(self, *, target: Target = DEFAULT_TARGET) -> None:
        self.target = target
        self._decoded: dict[tuple[str, str, str], _Decoded] = {}
        self._adopted: dict[tuple[str, str], tuple[Mapping[str, Any], Any]] = {}
        """(kind, name) → the latest adopted object of that name and its model (:meth:`adopt`)."""
        self._parts = _SharedParts()
        self._rules: list[DeviceTaintRule] = []
        """The DeviceTaintRules of the last build's objects (applied when the target's gate is on)."""
        self.decoded_objects = 0
        """How many objects the last :meth:`build` decoded (the rest were reused)."""

    def adopt(self, raw: Mapping[str, Any], model: Any) -> None:
        """Take ``raw``'s decoded model — a DeviceClass or ResourceSlice the caller has already put
        through :func:`~app.k8s.structure.structural_pass` at this builder's target, as a create —
        so that the next :meth:`build` given this very object does not decode it again.

        Why: ``draguard lint`` validates the slices and classes of the linted files, then builds
        the inventory they join; decoding each again was a third of that build.  One model per
        kind and name is held (a later object of the same name replaces it, as it replaces it
        in the inventory), and only until the next build: an adopted object not given to it is
        forgotten there.  It is reduced by that build, not here — files that repeat a slice
        would otherwise reduce every copy.  Matched by identity, so an equal object, or another
        at a reused address, is decoded as usual."""
        self._adopted[_name_key(raw)] = (raw, model)

    def build(self, objects: Iterable[Mapping[str, Any]]) -> Inventory:
        potential_nodes: set[str] = set()
        potential_slices: set[int] = set()
        potential_devices: set[int] = set()
        classes, slices, nodes, infos = self._decode_all(objects, potential_nodes, potential_slices)
        rules = self._rules if rules_apply(self.target) else []
        tainted: dict[tuple[str, tuple[DeviceTaint, ...]], _Body] = {}
        self._parts.keep_only({d.body.text for sl in slices for d in sl.devices})
        self._parts.forget_values()
        pools_slices = _newest_generations(slices)
        pools = {key: _pool_record(key, members) for key, members in pools_slices.items()}

        shapes = _ShapeIds()
        devices: list[DeviceRecord] = []
        reach: list[_Reach] = []
        for key in sorted(pools_slices):
            driver, pool_name = key
            for sl in pools_slices[key]:
                for dev in sl.devices:
                    if rules and (extra := rule_taints(rules, driver, pool_name, dev.name, self.target)):
                        dev = dev._replace(body=_with_taints(dev.body, extra, tainted))
                    kind_reach = dev.reach
                    shape, body_id = shapes.of(dev, driver)
                    node_label = kind_reach[1] if kind_reach[0] == "node" else pool_name
                    body = dev.body
                    devices.append(
                        DeviceRecord(
                            index=len(devices), driver=driver, pool=pool_name, slice_name=sl.name,
                            name=dev.name, multi=body.multi, attributes=dev.attributes,
                            broken_attribute=dev.broken, capacity=body.capacity, taints=body.taints,
                            counters=body.counters, node_label=str(node_label), profile=shape, bare_profile=body_id,
                            own_raw_attributes=dev.raw_attributes, cel_error=dev.cel_error,
                        )
                    )
                    reach.append(kind_reach)
                    if id(sl) in potential_slices:
                        potential_devices.add(len(devices) - 1)
        groups = _group_nodes(devices, reach, nodes, potential_nodes, potential_devices)
        reachable = tuple(sorted({i for g in groups for i in g.devices}))
        return Inventory(
            classes=classes, pools=pools, devices=tuple(devices), nodes=nodes, node_info=infos, groups=groups,
            reachable=reachable, profiles=ProfileIndex(devices, _base_ids(devices, pools)),
        )

    def _decode_all(
        self, objects: Iterable[Mapping[str, Any]], potential_nodes: set[str], potential_slices: set[int]
    ) -> tuple[dict[str, DeviceClass], list[_Slice], dict[str, Mapping[str, str]], dict[str, NodeInfo]]:
        """Classes, slices and Node labels; names of potential Nodes go to ``potential_nodes``,
        ids of potential slices to ``potential_slices``.  Each raw object is let go as soon as it
        is decoded (a file source hands them over one file at a time)."""
        classes: dict[str, DeviceClass] = {}
        slices: list[_Slice] = []
        nodes: dict[str, Mapping[str, str]] = {}
        infos: dict[str, NodeInfo] = {}
        decoded_next: dict[tuple[str, str, str], _Decoded] = {}
        rules: dict[str, DeviceTaintRule] = {}
        self.decoded_objects = 0
        for raw in objects:
            if not isinstance(raw, Mapping):
                continue
            fp = _fingerprint(raw)
            adopted = self._adopted.get(_name_key(raw)) if self._adopted else None
            if adopted is not None and adopted[0] is raw:
                decoded = _from_model(adopted[1], self._parts)
            elif fp is not None and fp in self._decoded:
                decoded = self._decoded[fp]
            else:
                decoded = _decode_one(raw, self.target, self._parts)
                self.decoded_objects += 1
            if fp is not None:
                decoded_next[fp] = decoded
            if decoded is None:
                continue
            kind, value = decoded
            if kind == "Node":
                nodes[value[0]] = value[1].labels
                infos[value[0]] = value[1]
                if is_potential(raw):
                    potential_nodes.add(value[0])
            elif kind == "DeviceClass":
                classes[value.metadata.name] = value
            elif kind == "DeviceTaintRule":
                rules[value.metadata.name or f"<unnamed {len(rules)}>"] = value  # a later one of a name replaces it
            else:
                slices.append(value)
                if is_potential(raw):
                    potential_slices.add(id(value))
        self._decoded = decoded_next
        self._adopted = {}
        self._rules = [rules[name] for name in sorted(rules)]
        if len(self._parts.nodes) > 2 * len(infos) + 64:  # forget infos of nodes gone
            live = {id(i) for i in infos.values()}
            self._parts.nodes = {k: v for k, v in self._parts.nodes.items() if id(v) in live}
        return classes, slices, nodes, infos


def _base_ids(devices: list[DeviceRecord], pools: Mapping[PoolKey, PoolRecord]) -> list[int]:
    """Per device, the id of what a claim sees apart from attribute values: the body, whether
    its attributes can be evaluated at all, its pool's usability and — for devices that draw on
    shared counters — the pool's counter limits."""
    interned: dict[object, int] = {}
    out: list[int] = []
    for dev in devices:
        key = (dev.bare_profile, dev.broken_attribute, dev.cel_error, pools[dev.pool_key].usable,
               pools[dev.pool_key].counter_signature if dev.counters else None)
        out.append(interned.setdefault(key, len(interned)))
    return out


def _group_nodes(
    devices: list[DeviceRecord], reach: list[_Reach], nodes: Mapping[str, Mapping[str, str]],
    potential_nodes: set[str] | frozenset[str] = frozenset(), potential_devices: set[int] | frozenset[int] = frozenset(),
) -> tuple[NodeGroup, ...]:
    """Nodes grouped by the devices they reach.  Devices of potential slices published for all
    nodes or by node selector are reached by potential nodes only: a template describes the
    nodes an autoscaler creates, not the existing ones."""
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
    # Devices published by selector are taken per selector *content* (every slice of a fabric
    # carries its own equal selector) and nodes whose outcome is the same — no devices of their
    # own, the same selectors matching, real or potential — share one device tuple: the work is
    # one match per node and distinct selector, not one per node and device.
    by_content: dict[str, int] = {}
    seen_ids: dict[int, int] = {}
    sel_objects: list[NodeSelector] = []
    sel_devices: list[list[int]] = []
    for idx, selector in selected:
        gi = seen_ids.get(id(selector))
        if gi is None:
            text = selector.model_dump_json()
            gi = by_content.get(text)
            if gi is None:
                gi = by_content[text] = len(sel_objects)
                sel_objects.append(selector)
                sel_devices.append([])
            seen_ids[id(selector)] = gi
        sel_devices[gi].append(idx)
    sel_real = [[i for i in devs if i not in potential_devices] for devs in sel_devices]
    everywhere_real = [i for i in everywhere if i not in potential_devices]
    per_node: dict[tuple[int, ...], list[str]] = {}
    alike: dict[tuple[bool, tuple[int, ...]], list[str]] = {}
    every_selector = tuple(range(len(sel_objects)))
    for node in sorted(node_names):
        labels = nodes.get(node)
        real = node not in potential_nodes
        if labels is None:
            # a node only known from a slice has no labels to match; with no Node objects at
            # all a selector cannot be evaluated, and its devices are kept
            matched: tuple[int, ...] = () if nodes else every_selector
        else:
            matched = tuple(gi for gi, sel in enumerate(sel_objects) if match_node_selector(sel, node, labels) is not False)
        own = named.get(node)
        key = (real, matched)
        bucket = None if own else alike.get(key)
        if bucket is None:
            chosen = list(own or ()) + (everywhere_real if real else everywhere)
            for gi in matched:
                chosen.extend(sel_real[gi] if real else sel_devices[gi])
            devs = tuple(sorted(chosen))
            bucket = per_node.get(devs)
            if bucket is None:
                bucket = per_node[devs] = []
            if not own:
                alike[key] = bucket
        bucket.append(node)
    groups: list[NodeGroup] = []
    for devs, names in per_node.items():
        # a group of both kinds is split: the real nodes reach these devices now
        for potential in (False, True):
            members = tuple(n for n in names if (n in potential_nodes) is potential)
            if members:
                groups.append(NodeGroup(members, devs, potential or any(i in potential_devices for i in devs)))
    if not node_names and (everywhere or selected):
        devs = tuple(sorted(everywhere + [i for i, _ in selected]))
        groups.append(NodeGroup((), devs, any(i in potential_devices for i in devs)))
    groups.sort(key=lambda g: (g.potential, g.nodes))  # existing nodes first: "now" is found first
    return tuple(groups)

