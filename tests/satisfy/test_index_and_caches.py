"""The profile index and the bounded caches (issue #11 items 1 and 2).

Profiles must never change an answer: every check is compared with the same check on an index
that keeps every distinct device apart (the behaviour before profiles).  Caches must stay within
their budget whatever stream of claims arrives, and must not remember answers cut short.
"""

from __future__ import annotations

import sys
from pathlib import Path as FsPath
from typing import Any

import pytest
from dra_builders import cap, check, claim, device, inventory, req, rslice
from draguard.inventory import build_inventory
from draguard.inventory.cache import BoundedCache
from draguard.inventory.profiles import ProfileIndex, Projection
from draguard.k8s import Budget
from draguard.k8s.field import Path
from draguard.k8s.models import ResourceClaimSpec
from draguard.satisfy import check as check_module
from draguard.satisfy import check_claim_spec

sys.path.insert(0, str(FsPath(__file__).resolve().parents[2] / "benchmarks"))
from workload import CLAIMS, distinct_claims, make_inventory

MODEL = 'device.attributes["gpu.example.com"].model == "{}"'


def _gpus(node: str, n: int, model: str = "A100") -> dict[str, Any]:
    return rslice(node, [device(f"gpu-{i}", multi=True, attrs={"model": model, "uuid": f"{node}-{i}"},
                                capacity={"memory": cap("40Gi", "5Gi", min="5Gi", step="5Gi")}) for i in range(n)])


# ---------------------------------------------------------------------------- the index
def test_devices_that_differ_only_in_what_no_selector_reads_share_a_profile() -> None:
    inv = inventory(*[_gpus(f"n{i}", 4) for i in range(10)])
    by_model = inv.profiles.project((("gpu.example.com", "model"),))
    assert len(by_model.representatives) == 1
    by_uuid = inv.profiles.project((("gpu.example.com", "uuid"),))
    assert len(by_uuid.representatives) == 40  # identity matters: every device is its own profile
    classes, first = by_model.group_classes(inv.devices, inv.groups)
    assert len(first) == 1 and len(classes) == 10  # ten nodes of the same hardware: one class


def test_a_distinct_attribute_on_a_unique_attribute_keeps_devices_apart() -> None:
    inv = inventory(*[_gpus(f"n{i}", 2) for i in range(3)])
    spec = claim(req("a"), req("b"), req("c"), constraints=[{"requests": ["a", "b", "c"], "distinctAttribute": "gpu.example.com/uuid"}])
    notes = check(spec, inv)
    assert "Unsatisfiable" in {n.reason for n in notes}
    spec2 = claim(req("a"), req("b"), constraints=[{"requests": ["a", "b"], "distinctAttribute": "gpu.example.com/uuid"}])
    assert not [n for n in check(spec2, inv) if n.severity.value == "error"]


def _every_device_apart(self: ProfileIndex, reads: Any, qualified: Any = ()) -> Projection:
    return ProfileIndex._compute(self, None, tuple(qualified))


def _specs() -> list[tuple[ResourceClaimSpec, Path]]:
    out = [(ResourceClaimSpec.model_validate(c["spec"]), Path.root("spec")) for c in CLAIMS]
    extra = [
        claim(req("a", cls="nic.example.com"), req("b", cls="nic.example.com"),
              constraints=[{"requests": ["a", "b"], "matchAttribute": "nic.example.com/subnet"}]),
        claim(req("g", cls="gpu.example.com", count=3, selectors=(MODEL.format("H100"),))),
        claim(req("g", cls="shared-gpu.example.com", capacity={"memory": "45Gi"})),
        claim(req("g", cls="gpu.example.com", mode="All", selectors=(MODEL.format("L4"),))),
        claim(req("g", cls="gpu.example.com", selectors=('device.attributes["gpu.example.com"].exists(k, k == "uuid")',))),
    ]
    out += [(c, Path.root("spec")) for c in extra]
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_profiles_never_change_a_verdict_or_a_message(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    objects = make_inventory(96, seed=seed)
    fast = build_inventory(objects)
    with monkeypatch.context() as m:
        m.setattr(ProfileIndex, "project", _every_device_apart)
        apart = build_inventory(objects)
        reference = [check_claim_spec(s, apart, base=b) for s, b in _specs()]
    got = [check_claim_spec(s, fast, base=b) for s, b in _specs()]
    assert got == reference
    assert any(n.reason == "Unsatisfiable" for notes in got for n in notes)
    assert any(n.reason == "CapacityRounded" for notes in got for n in notes)


# ---------------------------------------------------------------------------- bounded caches
def test_bounded_cache_evicts_least_recently_used_by_weight() -> None:
    cache = BoundedCache(budget=10)
    cache.put("a", 1, weight=4)
    cache.put("b", 2, weight=4)
    assert cache.get("a") == 1  # "a" is now the most recent
    cache.put("c", 3, weight=4)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3
    assert cache.weight <= 10
    cache.put("huge", 4, weight=11)  # heavier than the whole budget: never kept
    assert cache.get("huge") is None and cache.get("a") == 1


def test_a_stream_of_distinct_claims_stays_within_the_budget() -> None:
    inv = build_inventory(make_inventory(160, seed=5))
    inv.cache.budget = 300
    high = 0
    for raw in distinct_claims(120):
        check_claim_spec(ResourceClaimSpec.model_validate(raw["spec"]), inv, base=Path.root("spec"))
        high = max(high, inv.cache.weight)
    assert high <= 300
    assert inv.cache.evictions > 0


def test_answers_are_remembered_per_spec_and_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    inv = inventory(_gpus("n1", 2))
    spec = claim(req("g", capacity={"memory": "7Gi"}))
    first = check(spec, inv)
    calls: list[int] = []
    real = check_module._check

    def counting(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(check_module, "_check", counting)
    assert check(spec, inv) == first and calls == []
    assert check(claim(req("g", capacity={"memory": "8Gi"})), inv) and calls == [1]
    other = inventory(_gpus("n1", 2))  # another snapshot: its own cache
    assert check(spec, other) == first and calls == [1, 1]


def test_an_answer_cut_short_by_the_deadline_is_not_remembered() -> None:
    inv = inventory(*[_gpus(f"n{i}", 8) for i in range(4)])
    spec = claim(*[req(f"r{i}", capacity={"memory": "5Gi"}) for i in range(32)])
    cut = check(spec, inv, budget=Budget.within(0.0))
    assert any(n.reason == "SatisfiabilityUnknown" for n in cut)
    full = check(spec, inv)
    assert not any(n.message.startswith(check_module.SEARCH_UNDECIDED) for n in full)


def _cached_candidates(inv: Any) -> list[Any]:
    from draguard.satisfy.candidates import Candidates

    return [value for value, _ in inv.cache._items.values() if isinstance(value, Candidates)]


def test_a_cached_candidate_set_holds_no_snapshots_claims() -> None:
    """Snapshots republished as claims change share one cache (``with_cluster``): a candidate set
    made against one of them and kept in that cache must not keep its claims alive, and it
    answers the later snapshots exactly as a set made for them."""
    from draguard.inventory import EMPTY_CLUSTER, with_cluster
    from draguard.satisfy.candidates import Candidates

    base = inventory(_gpus("n1", 2), _gpus("n2", 2, model="H100"))
    older = with_cluster(base, {}, {}, known=True)  # a claims-carrying snapshot, sharing base's cache
    assert older.cache is base.cache and older.cluster is not EMPTY_CLUSTER
    spec = claim(req("g", selectors=('device.attributes["gpu.example.com"].model == "H100"',)))
    first = check(spec, older)
    cached = _cached_candidates(older)
    assert cached and all(c.inventory.cluster is EMPTY_CLUSTER for c in cached)
    assert all(c.inventory.devices is base.devices and c.inventory.cache is base.cache for c in cached)
    newer = with_cluster(base, {}, {}, known=True)
    assert check(spec, newer) == first and _cached_candidates(newer) == cached  # the same sets, reused
    for c in cached:
        fresh = Candidates(c.alt, newer)
        assert [c.entry(d) for d in newer.devices] == [fresh.entry(d) for d in newer.devices]


def test_a_snapshot_without_claims_is_held_as_it_is() -> None:
    base = inventory(_gpus("n1", 2))
    check(claim(req("g")), base)
    cached = _cached_candidates(base)
    assert cached and all(c.inventory is base for c in cached)
