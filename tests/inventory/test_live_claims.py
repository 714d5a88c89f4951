"""Claims applied one event at a time (:mod:`draguard.inventory.live`) equal a sum from scratch.

The oracle is the full path — :func:`compute_allocations` over every claim and :func:`held_view`
of the snapshot — which shares no bookkeeping with the incremental one (running counts, id
tables, working copies).  Seeded random sequences of ADDED / MODIFIED / DELETED events (moved,
deallocated, re-reserved, shares of one device by one claim, admin access, devices the inventory
does not have) are applied, and after every step the published snapshot and its held view are
compared field by field with the oracle's; profile ids, being names, are compared as a
one-to-one renaming.  Snapshots published earlier are checked again at the end: a reader holding
one must never see a later change.
"""

from __future__ import annotations

import random
from collections.abc import Hashable
from typing import Any

import pytest
from dra_builders import DRIVER, cap, dclass, device, node, rslice
from draguard.inventory import (
    HeldClaim,
    Inventory,
    build_inventory,
    compute_allocations,
    held_view,
    with_cluster,
)
from draguard.inventory.claims import ClaimReducer
from draguard.inventory.cluster import ObjectKey
from draguard.inventory.live import LiveClaims

# ---------------------------------------------------------------- the inventory
WHOLE = [("node-1", f"gpu-{i}") for i in range(3)] + [("node-2", f"gpu-{i}") for i in range(2)]
SHARED = [("node-1", f"shared-{i}") for i in range(2)] + [("node-2", "shared-0")]
PARTS = [("node-3", f"part-{i}") for i in range(4)] + [("node-4", f"part-{i}") for i in range(3)]
UNKNOWN = [("node-1", "gone-7"), ("node-9", "gpu-0")]


def objects(*, potential: bool = False) -> list[dict[str, Any]]:
    """Whole GPUs, shareable GPUs with two capacities, and partitions drawing on two counters of
    their pools' shared counter sets (two pools alike, so their devices share profiles)."""
    shared = [device(f"shared-{i}", multi=True, capacity={"memory": cap("40Gi"), "cores": cap("64")}) for i in range(2)]
    def parts(n: int) -> list[dict[str, Any]]:
        return [device(f"part-{i}", consumesCounters=[{"counterSet": "gpu", "counters": {
            "memory": {"value": "10Gi"}, "sm": {"value": str(1 + i % 2)}}}]) for i in range(n)]
    counters = [{"name": "gpu", "counters": {"memory": {"value": "40Gi"}, "sm": {"value": "6"}}}]
    docs = [
        dclass(), node("node-1"), node("node-2"), node("node-3"), node("node-4"),
        rslice("node-1", [device(f"gpu-{i}") for i in range(3)] + shared),
        rslice("node-2", [device("gpu-0"), device("gpu-1"), device("shared-0", multi=True, capacity={"memory": cap("40Gi")})]),
        rslice("node-3", parts(4), sharedCounters=counters),
        rslice("node-4", parts(3), sharedCounters=counters),
    ]
    if potential:
        template = node("template-node")
        template["metadata"]["annotations"] = {"draguard.io/potential": "true"}
        docs += [template, rslice("template-node", [device("gpu-0")])]
    return docs


# ---------------------------------------------------------------- random claims
def random_result(rng: random.Random) -> dict[str, Any]:
    kind = rng.choices(["whole", "shared", "part", "unknown"], weights=[4, 5, 4, 1])[0]
    pool, name = rng.choice({"whole": WHOLE, "shared": SHARED, "part": PARTS, "unknown": UNKNOWN}[kind])
    out: dict[str, Any] = {"request": "gpu", "driver": DRIVER, "pool": pool, "device": name}
    if kind == "shared" and rng.random() < 0.85:
        out["shareID"] = f"s-{rng.randrange(10**6)}"
        amounts = {"memory": f"{rng.choice([1, 2, 5, 512])}{rng.choice(['Gi', 'Mi'])}", "cores": str(rng.randrange(0, 9))}
        picked = {k: v for k, v in amounts.items() if rng.random() < 0.7}
        if picked or rng.random() < 0.5:  # sometimes no consumedCapacity at all
            out["consumedCapacity"] = picked
    if rng.random() < 0.08:
        out["adminAccess"] = True
    return out


def random_claim(rng: random.Random, ns: str, name: str) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}},
    }
    if rng.random() < 0.85:
        results = [random_result(rng) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
        if rng.random() < 0.15:
            results.append(dict(results[0]))  # the same device twice in one claim
        obj["status"] = {"allocation": {"devices": {"results": results}}}
        if rng.random() < 0.7:
            obj["status"]["reservedFor"] = [{"resource": "pods", "name": f"pod-{rng.randrange(5)}", "uid": "u"}]
    return obj


def modified(rng: random.Random, raw: dict[str, Any]) -> dict[str, Any]:
    """MODIFIED: allocation moved, deallocated, allocated, or only reservedFor changed."""
    out = random_claim(rng, raw["metadata"]["namespace"], raw["metadata"]["name"])
    if "status" in raw and rng.random() < 0.3:  # same allocation, other consumers
        out["status"] = {"allocation": raw["status"]["allocation"],
                         "reservedFor": [{"resource": "pods", "name": f"pod-{rng.randrange(5)}", "uid": "u"}]}
    return out


# ---------------------------------------------------------------- comparing
_FIELDS = ("index", "driver", "pool", "slice_name", "name", "multi", "attributes", "broken_attribute", "capacity",
           "taints", "counters", "node_label", "own_raw_attributes", "cel_error", "published")


class Renaming:
    """Ids of one side to ids of the other, one to one (ids are names, not values)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.there: dict[Hashable, Hashable] = {}
        self.back: dict[Hashable, Hashable] = {}

    def check(self, mine: Hashable, theirs: Hashable) -> None:
        assert self.there.setdefault(mine, theirs) == theirs, f"{self.what}: {mine} names two profiles"
        assert self.back.setdefault(theirs, mine) == mine, f"{self.what}: two ids for one profile ({theirs})"


def assert_same_allocations(got: Any, want: Any) -> None:
    assert got.dedicated == want.dedicated
    assert got.consumed == want.consumed
    assert got.counters == want.counters
    assert got.holders == want.holders
    assert (got.unknown, got.claims, got.empty) == (want.unknown, want.claims, want.empty)


def assert_same_view(got: Inventory, want: Inventory) -> None:
    for name in ("classes", "nodes", "node_info"):
        assert getattr(got, name) is getattr(want, name) or getattr(got, name) == getattr(want, name)
    assert got.groups == want.groups
    assert got.reachable == want.reachable
    assert dict(got.pools) == dict(want.pools)
    assert len(got.devices) == len(want.devices)
    bodies, shapes, bases = Renaming("bare profile"), Renaming("profile"), Renaming("base profile")
    for mine, theirs in zip(got.devices, want.devices, strict=True):
        for field in _FIELDS:
            assert getattr(mine, field) == getattr(theirs, field), (mine.name, field)
        bodies.check(mine.bare_profile, theirs.bare_profile)
        shapes.check(mine.profile, theirs.profile)
    for mine_base, their_base in zip(got.profiles._base, want.profiles._base, strict=True):
        bases.check(mine_base, their_base)


def assert_equals_full(snapshot: Inventory, base: Inventory) -> None:
    """``snapshot`` (published by LiveClaims) is what the full path gives for its own claims."""
    state = snapshot.cluster
    full = with_cluster(base, dict(state.claims), dict(state.templates), known=state.known)
    assert_same_allocations(state.allocations, compute_allocations(state.claims.values(), base))
    assert_same_allocations(state.allocations, full.cluster.allocations)
    want = held_view(full)
    got = snapshot.held_view()
    if want is full:  # nothing held, nothing potential: the snapshot is its own view
        assert got is snapshot
        return
    assert got is not snapshot and got.cluster is snapshot.cluster
    assert_same_view(got, want)


# ---------------------------------------------------------------- the tests
def run_events(seed: int, steps: int, *, potential: bool = False, start: int = 0) -> None:
    rng = random.Random(seed)
    reducer = ClaimReducer()
    base = build_inventory(objects(potential=potential))
    raw: dict[ObjectKey, dict[str, Any]] = {}
    for i in range(start):
        key = (f"ns-{i % 3}", f"c-{i}")
        raw[key] = random_claim(rng, *key)
    def reduced(obj: dict[str, Any]) -> HeldClaim:
        got = reducer.claim(obj)
        assert got is not None
        return got
    live = LiveClaims(base, {k: reduced(v) for k, v in raw.items()}, {}, known=True)
    kept: list[Inventory] = [live.snapshot()]
    assert_equals_full(kept[0], base)
    names = iter(range(start, 10**6))
    for step in range(steps):
        op = rng.choices(["add", "modify", "delete", "noop"], weights=[3, 5, 2, 1])[0]
        if op == "add" or not raw:
            n = next(names)
            key = (f"ns-{n % 3}", f"c-{n}")
            raw[key] = random_claim(rng, *key)
            live.put(key, reduced(raw[key]))
        elif op == "modify":
            key = rng.choice(sorted(raw))
            raw[key] = modified(rng, raw[key])
            live.put(key, reduced(raw[key]))
        elif op == "delete":
            key = rng.choice(sorted(raw))
            del raw[key]
            live.delete(key)
        if rng.random() < 0.25 and len(raw) > 1:  # a burst: several events, one publish
            key = rng.choice(sorted(raw))
            raw[key] = modified(rng, raw[key])
            live.put(key, reduced(raw[key]))
        snapshot = live.snapshot()
        assert set(snapshot.cluster.claims) == set(raw)
        assert_equals_full(snapshot, base)
        if step % 10 == 0:
            kept.append(snapshot)
    for old in kept:  # readers' snapshots never changed under them
        assert_equals_full(old, base)


@pytest.mark.parametrize("seed", range(12))
def test_events_applied_one_by_one_equal_a_sum_from_scratch(seed: int) -> None:
    run_events(seed, 120, potential=seed % 3 == 0, start=(seed % 4) * 8)


def test_a_long_run_keeps_its_id_tables_bounded() -> None:
    rng = random.Random(99)
    reducer = ClaimReducer()
    base = build_inventory(objects())
    live = LiveClaims(base, {}, {}, known=True)
    keys = [("ns", f"c-{i}") for i in range(20)]
    for _ in range(2000):
        key = rng.choice(keys)
        claim = reducer.claim(random_claim(rng, *key))
        assert claim is not None
        live.put(key, claim)
        live.snapshot()
    assert live._view.table_sizes <= 3 * len(base.devices)
    assert_equals_full(live.snapshot(), base)


def test_nothing_held_is_the_snapshot_itself_and_freeing_everything_returns_there() -> None:
    reducer = ClaimReducer()
    base = build_inventory(objects())
    live = LiveClaims(base, {}, {}, known=True)
    empty = live.snapshot()
    assert empty.held_view() is empty and empty.devices is base.devices
    claim = reducer.claim(random_claim(random.Random(3), "ns", "a") | {"status": {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": DRIVER, "pool": "node-3", "device": "part-0"}]}}}})
    assert claim is not None
    live.put(("ns", "a"), claim)
    held = live.snapshot()
    assert held.held_view() is not held and held.cluster.allocations.counters
    live.delete(("ns", "a"))
    again = live.snapshot()
    assert again.held_view() is again and again.cluster.allocations.empty
    assert_equals_full(held, base)


def test_an_unchanged_state_publishes_the_same_snapshot() -> None:
    """Caches keyed on the snapshot or on its allocations stay valid while nothing changed; a
    change of consumers only (reservedFor) keeps the allocations object."""
    reducer = ClaimReducer()
    base = build_inventory(objects())
    raw = random_claim(random.Random(1), "ns", "a") | {"status": {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": DRIVER, "pool": "node-1", "device": "gpu-0"}]}}}}
    live = LiveClaims(base, {("ns", "a"): reducer.claim(raw)}, {}, known=True)  # type: ignore[dict-item]
    first = live.snapshot()
    assert live.snapshot() is first
    raw["status"]["reservedFor"] = [{"resource": "pods", "name": "p", "uid": "u"}]
    live.put(("ns", "a"), reducer.claim(raw))  # type: ignore[arg-type]
    second = live.snapshot()
    assert second is not first and second.cluster.allocations is first.cluster.allocations
    assert second.held_view() is not first.held_view()  # its own caches
    assert second.cluster.claims[("ns", "a")].reserved_for == ("p",)


