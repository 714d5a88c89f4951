"""Monotonicity properties: more devices or more nodes never make a claim unsatisfiable."""

from __future__ import annotations

from typing import Any

from dra_builders import cap, check, claim, device, inventory, node, req, rslice, verdict
from hypothesis import given, settings
from hypothesis import strategies as st

SIZES = ["1Gi", "5Gi", "10Gi", "20Gi", "40Gi"]


@st.composite
def devices(draw: st.DrawFn, prefix: str) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(0, 3))):
        multi = draw(st.booleans())
        value = draw(st.sampled_from(SIZES))
        capacity = {"mem": cap(value, "1Gi", min="1Gi", step="1Gi")} if multi else {"mem": cap(value)}
        out.append(device(f"{prefix}{i}", multi=multi, attrs={"kind": draw(st.sampled_from(["a", "b"]))}, capacity=capacity))
    return out


@st.composite
def claims(draw: st.DrawFn) -> Any:
    reqs = []
    for i in range(draw(st.integers(1, 3))):
        capacity = {"mem": draw(st.sampled_from(SIZES))} if draw(st.booleans()) else None
        reqs.append(req(f"r{i}", count=draw(st.integers(1, 2)), capacity=capacity))
    return claim(*reqs)


@settings(max_examples=60, deadline=None)
@given(base=devices("d"), extra=devices("x"), spec=claims())
def test_adding_devices_never_makes_a_claim_unsatisfiable(base: list[dict[str, Any]], extra: list[dict[str, Any]], spec: Any) -> None:
    before = verdict(check(spec, inventory(rslice("n1", base))))
    after = verdict(check(spec, inventory(rslice("n1", base + extra))))
    if before == "sat":
        assert after == "sat"


@settings(max_examples=40, deadline=None)
@given(base=devices("d"), other=devices("o"), spec=claims())
def test_adding_nodes_keeps_a_satisfiable_claim_satisfiable(base: list[dict[str, Any]], other: list[dict[str, Any]], spec: Any) -> None:
    one = inventory(node("n1"), rslice("n1", base))
    two = inventory(node("n1"), node("n2"), rslice("n1", base), rslice("n2", other))
    if verdict(check(spec, one)) == "sat":
        assert verdict(check(spec, two)) == "sat"
