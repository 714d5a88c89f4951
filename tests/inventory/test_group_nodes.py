"""Node groups against a per-(node, device) oracle: the grouping shares work between nodes alike
(one match per node and distinct selector), so it is checked against the rules applied one
device at a time, on random inventories with nodes known and unknown, real and potential
nodes and slices, devices by node name, for all nodes, by (equal, separately decoded) selectors."""

from __future__ import annotations

import random
from typing import Any

import pytest
from dra_builders import dclass, device, node, rslice
from draguard.inventory import POTENTIAL_ANNOTATION, build_inventory

ZONES = ("a", "b", "c")


def _potential(obj: dict[str, Any]) -> dict[str, Any]:
    obj["metadata"]["annotations"] = {POTENTIAL_ANNOTATION: "true"}
    return obj


def _selector(kind: str, value: str) -> dict[str, Any]:
    if kind == "zone":
        return {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": [value]}]}]}
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [value]}]}]}


def _matches(kind: str, value: str, name: str, labels: dict[str, str]) -> bool:
    return labels.get("zone") == value if kind == "zone" else name == value


def _case(rng: random.Random, with_nodes: bool) -> tuple[list[dict[str, Any]], dict[str, tuple[Any, ...]], dict[str, dict[str, str]], set[str]]:
    objects: list[dict[str, Any]] = [dclass()]
    labels: dict[str, dict[str, str]] = {}
    potential_nodes: set[str] = set()
    if with_nodes:
        for n in range(rng.randint(1, 7)):
            name = f"n{n}"
            labels[name] = {"zone": rng.choice(ZONES)}
            obj = node(name, **labels[name])
            if rng.random() < 0.3:
                potential_nodes.add(name)
                obj = _potential(obj)
            objects.append(obj)
    reach: dict[str, tuple[Any, ...]] = {}  # pool -> (kind, arg, potential)
    for p in range(rng.randint(1, 9)):
        pool = f"p{p}"
        pot = rng.random() < 0.3
        kind = rng.choice(["node", "all", "zone", "name", "none"])
        spec: dict[str, Any] = {}
        nodename: str | None = None
        arg: str | None = None
        if kind == "node":
            nodename = arg = f"n{rng.randint(0, 8)}"  # sometimes a node no Node object names
        elif kind == "all":
            spec["allNodes"] = True
        elif kind in ("zone", "name"):
            arg = rng.choice(ZONES) if kind == "zone" else f"n{rng.randint(0, 4)}"
            spec["nodeSelector"] = _selector(kind, arg)
        sl = rslice(nodename, [device(f"d{i}") for i in range(rng.randint(1, 3))], pool=pool, name=pool, **spec)
        objects.append(_potential(sl) if pot else sl)
        reach[pool] = (kind, arg, pot)
    rng.shuffle(objects)
    return objects, reach, labels, potential_nodes


def _expected(inv: Any, reach: dict[str, tuple[Any, ...]], labels: dict[str, dict[str, str]],
              potential_nodes: set[str]) -> list[tuple[tuple[str, ...], tuple[int, ...], bool]]:
    names = set(labels) | {arg for kind, arg, _ in reach.values() if kind == "node"}
    potential_devices = {d.index for d in inv.devices if reach[d.pool][2]}
    per_node: dict[tuple[int, ...], list[str]] = {}
    for name in sorted(names):
        real = name not in potential_nodes
        chosen = []
        for dev in inv.devices:
            kind, arg, _ = reach[dev.pool]
            if kind == "node":
                ok = arg == name
            elif kind == "none" or (real and dev.index in potential_devices):
                ok = False
            elif kind == "all":
                ok = True
            elif name in labels:
                ok = _matches(kind, arg, name, labels[name])
            else:
                ok = not labels  # no Node objects at all: a selector cannot be evaluated
            if ok:
                chosen.append(dev.index)
        per_node.setdefault(tuple(chosen), []).append(name)
    out = []
    for devs, members in per_node.items():
        for potential in (False, True):
            group = tuple(n for n in members if (n in potential_nodes) is potential)
            if group:
                out.append((group, devs, potential or any(i in potential_devices for i in devs)))
    if not names:
        devs = tuple(d.index for d in inv.devices if reach[d.pool][0] in ("all", "zone", "name"))
        if devs:
            out.append(((), devs, any(i in potential_devices for i in devs)))
    out.sort(key=lambda g: (g[2], g[0]))
    return out


@pytest.mark.parametrize("seed", range(60))
def test_groups_agree_with_the_rules_applied_device_by_device(seed: int) -> None:
    rng = random.Random(seed)
    objects, reach, labels, potential_nodes = _case(rng, with_nodes=seed % 4 != 0)
    inv = build_inventory(objects)
    got = [(g.nodes, g.devices, g.potential) for g in inv.groups]
    assert got == _expected(inv, reach, labels, potential_nodes)


def test_equal_selectors_of_many_pools_make_one_group_per_outcome() -> None:
    objects: list[dict[str, Any]] = [dclass()] + [node(f"n{i}", zone=ZONES[i % 3]) for i in range(30)]
    for p in range(40):
        objects.append(rslice(None, [device("d0"), device("d1")], pool=f"p{p}", name=f"p{p}",
                              nodeSelector=_selector("zone", ZONES[p % 3])))
    inv = build_inventory(objects)
    assert len(inv.groups) == 3
    for group in inv.groups:
        zones = {ZONES[int(n[1:]) % 3] for n in group.nodes}
        assert len(zones) == 1 and len(group.nodes) == 10
        assert {int(inv.devices[i].pool[1:]) % 3 for i in group.devices} == {ZONES.index(zones.pop())}
