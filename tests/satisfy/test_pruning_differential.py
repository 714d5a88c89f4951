"""The pruned search decides exactly like the faithful replay (differential property test).

The faithful mode replays the allocator's exhaustive search device by device; the pruned mode
adds symmetric-device skipping, counting and capacity-sum bounds, and a memo of failed states.
Pruning may only make the search faster: on random valid inventories and claims (no CEL
errors, no order-dependent ``distinctAttribute``) both must say "allocatable" or "not" alike.
"""

from __future__ import annotations

from typing import Any

from dra_builders import DRIVER, cap, claim, device, inventory, req, rslice
from draguard.k8s.field import Path
from draguard.satisfy.check import Problem
from draguard.satisfy.constraints import build_constraints
from draguard.satisfy.plan import plan_claim
from draguard.satisfy.search import search_group
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@st.composite
def capacities(draw: st.DrawFn, multi: bool) -> dict[str, Any]:
    value = draw(st.sampled_from([8, 12, 16]))
    if not multi:
        return cap(str(value))
    kind = draw(st.sampled_from(["none", "default", "range", "values"]))
    if kind == "none":
        return cap(str(value))
    if kind == "default":
        return cap(str(value), str(draw(st.integers(1, value))))
    if kind == "values":
        values = sorted(draw(st.sets(st.sampled_from([v for v in (1, 2, 4, 8) if v <= value]), min_size=1)))
        return cap(str(value), str(values[0]), values=[str(v) for v in values])
    minimum = draw(st.sampled_from([1, 2, 4]))
    step = draw(st.sampled_from([None, 1, 2, 4]))
    if step is not None and minimum + step > value:
        step = None
    top = None
    if draw(st.booleans()):
        grid = [minimum + k * (step or 1) for k in range(0, value)]
        top = draw(st.sampled_from([g for g in grid if g <= value] or [minimum]))
    return cap(str(value), str(minimum), min=str(minimum), step=None if step is None else str(step),
               max=None if top is None else str(top))


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    devices = []
    for i in range(draw(st.integers(1, 4))):
        multi = draw(st.booleans())
        devices.append(device(f"d{i}", multi=multi, attrs={"numa": draw(st.integers(0, 1))},
                              capacity={"mem": draw(capacities(multi))}))
    requests = []
    for r in range(draw(st.integers(1, 5))):
        asked = draw(st.sampled_from([None, "1", "2", "3", "5", "8", "13"]))
        requests.append(req(f"r{r}", count=draw(st.sampled_from([1, 1, 2])),
                            capacity=None if asked is None else {"mem": asked}))
    constraints = [{"matchAttribute": f"{DRIVER}/numa"}] if draw(st.booleans()) else []
    return devices, requests, constraints


def _verdict(devices: list[dict[str, Any]], requests: list[dict[str, Any]], constraints: list[dict[str, Any]],
             prune: bool) -> str:
    inv = inventory(rslice("n1", devices))
    spec = claim(*requests, constraints=constraints or None)
    c = Problem(spec, plan_claim(spec, Path.root("spec")), inv)
    devs = list(inv.devices)
    keys = {d.index: c.profile_key(d) for d in devs} if prune else None
    out = search_group(inv, c.plans, c.cands, devs, build_constraints(spec.devices.constraints),
                       budget=None, prune=prune, keys=keys)
    return out.kind


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_pruned_and_faithful_searches_agree(scenario: tuple[Any, Any, Any]) -> None:
    devices, requests, constraints = scenario
    faithful = _verdict(devices, requests, constraints, prune=False)
    pruned = _verdict(devices, requests, constraints, prune=True)
    assert faithful in ("ok", "unsat", "fatal")
    assert pruned == faithful
