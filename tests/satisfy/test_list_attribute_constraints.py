"""List-typed attributes (DRAListTypeAttributes) in ``matchAttribute`` / ``distinctAttribute`` and
in selectors, as Kubernetes 1.37's allocator treats them.

Semantics (``structured/internal/experimental``, the allocator the gate selects): every value is
a set, a scalar a one-element set, sets of different element types never meet, versions compare
as strings.  ``matchAttribute``: the devices' sets have a common element (the running intersection,
restored on backtracking since #140325).  ``distinctAttribute``: pairwise disjoint.  Upstream's
allocator test table (``allocatortesting/allocator_testing.go``, the ``list-type-attributes`` cases)
is the source of the cases here.  Where the gate-less allocator would let a mixed scalar/list pick
through, draguard lets it through too (sound for both).

The state-machine tests run on :mod:`draguard.satisfy.constraints` directly; the search and lint
tests build an inventory, which needs ``DeviceAttribute.kind_and_value`` (``app/k8s/models.py``)
to hand list values on as ``("ints", (1, 2))`` — until it does they are expected to fail.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from dra_builders import DRIVER, check, claim, dclass, message, req, rslice, verdict
from draguard.cli import main
from draguard.inventory import Inventory, build_inventory
from draguard.k8s import Target
from draguard.k8s.models import DeviceAttribute, DeviceConstraint
from draguard.satisfy.constraints import DistinctState, MatchState, conflicts

ON = Target("1.37", {"DRAListTypeAttributes": True})
OFF = Target("1.37")
ATTR = f"{DRIVER}/links"
A = f'device.attributes["{DRIVER}"]'

_DECODES_LISTS = DeviceAttribute.model_validate({"ints": [1]}).kind_and_value() == ("ints", (1,))
needs_list_decoding = pytest.mark.xfail(
    not _DECODES_LISTS, strict=True,
    reason="app/k8s/models.py: DeviceAttribute.kind_and_value does not return list-typed values yet",
)


# ---------------------------------------------------------------------------- state machines
def _alt(request: str) -> Any:
    return SimpleNamespace(claim=0, request=request, sub=None)


def _dev(value: tuple[str, object] | None) -> Any:
    return SimpleNamespace(attributes={} if value is None else {ATTR: value})


def _match() -> MatchState:
    return MatchState(DeviceConstraint.model_validate({"matchAttribute": ATTR}), ATTR)


def _distinct() -> DistinctState:
    return DistinctState(DeviceConstraint.model_validate({"distinctAttribute": ATTR}), ATTR)


def _add_all(state: MatchState | DistinctState, *values: tuple[str, object]) -> list[bool]:
    return [state.add(_alt(f"r{i}"), _dev(v)) for i, v in enumerate(values)]


def test_match_lists_with_a_common_element() -> None:
    assert _add_all(_match(), ("ints", (1, 2)), ("ints", (2, 3))) == [True, True]


def test_match_lists_without_a_common_element() -> None:
    assert _add_all(_match(), ("ints", (1, 2)), ("ints", (3, 4))) == [True, False]


def test_match_narrows_to_the_running_intersection() -> None:
    """{1,2} ∩ {2,3} = {2}: a third device {1,3} shares an element with each, but not with both."""
    assert _add_all(_match(), ("ints", (1, 2)), ("ints", (2, 3)), ("ints", (1, 3))) == [True, True, False]
    assert _add_all(_match(), ("ints", (1, 2)), ("ints", (2, 3)), ("ints", (2, 9))) == [True, True, True]


def test_match_restores_the_intersection_when_the_search_backtracks() -> None:
    """#140325 (fixed in 1.37): removing a device undoes its narrowing."""
    state = _match()
    assert _add_all(state, ("ints", (1, 2)), ("ints", (2, 3))) == [True, True]
    state.remove(_alt("r1"), _dev(("ints", (2, 3))))
    assert state.add(_alt("r1"), _dev(("ints", (1, 5)))) is True
    state.remove(_alt("r1"), _dev(("ints", (1, 5))))
    state.remove(_alt("r0"), _dev(("ints", (1, 2))))
    assert state.state_key() == (0, None)
    assert _add_all(state, ("ints", (7,)), ("ints", (7, 8))) == [True, True]


def test_match_scalar_and_list_of_the_same_type() -> None:
    assert _add_all(_match(), ("int", 2), ("ints", (1, 2))) == [True, True]
    assert _add_all(_match(), ("ints", (1, 2)), ("int", 3)) == [True, False]


def test_match_never_across_element_types() -> None:
    """``1`` and ``true`` are equal in Python, never in the allocator."""
    assert _add_all(_match(), ("ints", (1,)), ("bools", (True,))) == [True, False]
    assert _add_all(_match(), ("strings", ("1.0.0",)), ("versions", ("1.0.0",))) == [True, False]


def test_match_versions_compare_without_build_metadata() -> None:
    """Semantic versions equal but for build metadata match (Kubernetes 1.38's allocator; earlier
    ones compared the text, which only refused more — so this is sound for every target)."""
    assert _add_all(_match(), ("versions", ("1.0.0", "2.0.0")), ("version", "2.0.0")) == [True, True]
    assert _add_all(_match(), ("versions", ("1.0.0+a",)), ("versions", ("1.0.0+b",))) == [True, True]
    assert _add_all(_match(), ("version", "1.0.0+a"), ("version", "1.0.0+b")) == [True, True]
    assert _add_all(_match(), ("versions", ("1.0.0+a",)), ("versions", ("1.0.1+a",))) == [True, False]
    assert _add_all(_match(), ("version", "1.0.0"), ("version", "1.0.1")) == [True, False]


def test_match_scalars_unchanged() -> None:
    assert _add_all(_match(), ("string", "a"), ("string", "a")) == [True, True]
    assert _add_all(_match(), ("string", "a"), ("string", "b")) == [True, False]
    assert _add_all(_match(), ("int", 1), ("bool", True)) == [True, False]


def test_distinct_lists_must_be_disjoint() -> None:
    assert _add_all(_distinct(), ("ints", (1, 2)), ("ints", (3, 4)), ("ints", (5,))) == [True, True, True]
    assert _add_all(_distinct(), ("ints", (1, 2)), ("ints", (2, 3))) == [True, False]


def test_distinct_lists_of_different_types_never_conflict() -> None:
    assert _add_all(_distinct(), ("ints", (1,)), ("bools", (True,))) == [True, True]


def test_distinct_a_list_overlapping_a_scalar() -> None:
    assert _add_all(_distinct(), ("int", 1), ("ints", (1, 2))) == [True, False]
    assert _add_all(_distinct(), ("int", 1), ("ints", (2, 3))) == [True, True]


def test_distinct_a_scalar_after_a_list_containing_it_is_let_through() -> None:
    """The gate-less allocator compares a scalar with scalars only, so the pick passes there; the
    gated one refuses it.  draguard must not refuse what either allocator could allocate."""
    assert conflicts(("int", 1), ("ints", (1, 2))) is False
    assert _add_all(_distinct(), ("ints", (1, 2)), ("int", 1)) == [True, True]


def test_distinct_an_empty_list_can_only_come_first() -> None:
    assert _add_all(_distinct(), ("ints", ()), ("int", 1)) == [True, True]
    assert _add_all(_distinct(), ("int", 1), ("ints", ())) == [True, False]


def test_distinct_scalars_unchanged() -> None:
    assert _add_all(_distinct(), ("string", "a"), ("string", "b")) == [True, True]
    assert _add_all(_distinct(), ("string", "a"), ("string", "a")) == [True, False]


def test_a_device_without_the_attribute_never_joins() -> None:
    assert _match().add(_alt("r0"), _dev(None)) is False
    assert _distinct().add(_alt("r0"), _dev(None)) is False


# ---------------------------------------------------------------------------- the search
def _device(name: str, **attrs: Any) -> dict[str, Any]:
    return {"name": name, "attributes": attrs}


def _links(*devices: tuple[str, list[int]]) -> Inventory:
    return build_inventory(
        [dclass(), rslice("n1", [_device(name, links={"ints": values}) for name, values in devices])], target=ON
    )


@needs_list_decoding
def test_search_match_satisfied_through_a_shared_link() -> None:
    inv = _links(("g0", [1, 2]), ("g1", [2, 3]), ("g2", [4]))
    spec = claim(req("a"), req("b"), constraints=[{"matchAttribute": ATTR}])
    assert verdict(check(spec, inv)) == "sat"


@needs_list_decoding
def test_search_match_unsatisfiable_without_a_common_element() -> None:
    inv = _links(("g0", [1, 2]), ("g1", [2, 3]), ("g2", [3, 1]))
    spec = claim(req("a", count=3), constraints=[{"matchAttribute": ATTR}])
    notes = check(spec, inv)
    assert verdict(notes) == "unsat"
    assert "needs 3 devices with a value in common; the best node (n1) has 2" in message(notes)


@needs_list_decoding
def test_search_backtracks_past_a_narrowing_device() -> None:
    """The allocator tries g0 then g1 ({2}); g2 {1} fails; backtracking to g0 + g2 works only if
    g1's narrowing is undone (#140325)."""
    inv = _links(("g0", [1, 2]), ("g1", [2, 3]), ("g2", [1, 5]))
    spec = claim(req("a"), req("b", selectors=(f"!{A}.links.includes(3)",)), constraints=[{"matchAttribute": ATTR}])
    assert verdict(check(spec, inv)) == "sat"


@needs_list_decoding
def test_search_distinct_satisfied_and_unsatisfiable() -> None:
    inv = _links(("g0", [1, 2]), ("g1", [2, 3]), ("g2", [4]))
    two = claim(req("a"), req("b"), constraints=[{"distinctAttribute": ATTR}])
    three = claim(req("a"), req("b"), req("c"), constraints=[{"distinctAttribute": ATTR}])
    assert verdict(check(two, inv)) == "sat"
    assert verdict(check(three, inv)) == "unsat"


@needs_list_decoding
def test_search_selector_on_a_list_attribute() -> None:
    inv = _links(("g0", [1, 2]), ("g1", [2, 3]))
    assert verdict(check(claim(req("gpu", selectors=(f"{A}.links.includes(3)",))), inv)) == "sat"
    assert verdict(check(claim(req("gpu", selectors=(f"{A}.links.exists(l, l > 2)",))), inv)) == "sat"
    notes = check(claim(req("gpu", selectors=(f"{A}.links.includes(7)",))), inv)
    assert verdict(notes) == "unsat"
    assert "no device matches selector #0" in message(notes)


@needs_list_decoding
def test_search_a_scalar_selector_on_a_list_attribute_is_a_runtime_error() -> None:
    """``links > 1`` on a list: no overload — the scheduler aborts on such a device, as upstream."""
    inv = _links(("g0", [1, 2]))
    notes = check(claim(req("gpu", selectors=(f"{A}.links > 1",))), inv)
    assert verdict(notes) == "error"
    assert "no such overload: _>_(list, int)" in message(notes, "SelectorRuntimeError")


def test_without_the_gate_list_values_never_reach_the_inventory() -> None:
    """Target 1.37 with the gate off: the API server drops ``ints``, so no device has the list."""
    objs = [dclass(), rslice("n1", [_device("g0", links={"ints": [1, 2]}, model={"string": "x"})])]
    off = build_inventory(objs, target=OFF)
    assert ATTR not in off.devices[0].attributes
    assert off.devices[0].attributes[f"{DRIVER}/model"] == ("string", "x")


@needs_list_decoding
def test_with_the_gate_list_values_reach_the_inventory() -> None:
    objs = [dclass(), rslice("n1", [_device("g0", links={"ints": [1, 2]}, model={"string": "x"})])]
    on = build_inventory(objs, target=ON)
    assert on.devices[0].attributes[ATTR] == ("ints", (1, 2))
    assert on.devices[0].cel_error is None


# ---------------------------------------------------------------------------- lint, end to end
SLICE = f"""\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: {DRIVER}
spec:
  selectors:
  - cel:
      expression: device.driver == "{DRIVER}"
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: n1-gpus
spec:
  driver: {DRIVER}
  nodeName: n1
  pool: {{name: n1, generation: 1, resourceSliceCount: 1}}
  devices:
  - name: gpu-0
    attributes:
      model: {{string: a100}}
      links: {{ints: [0, 1]}}
      zones: {{strings: [east, west]}}
  - name: gpu-1
    attributes:
      model: {{string: a100}}
      links: {{ints: [1, 2]}}
      zones: {{strings: [west]}}
"""

CLAIM = f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: linked
  namespace: default
spec:
  devices:
    requests:
    - name: a
      exactly:
        deviceClassName: {DRIVER}
        selectors:
        - cel:
            expression: '{A}.zones.includes("west") && {A}.links.exists(l, l >= 1)'
    - name: b
      exactly:
        deviceClassName: {DRIVER}
        selectors:
        - cel:
            expression: '{A}.model == "a100"'
    constraints:
    - matchAttribute: {ATTR}
"""


def _lint(tmp_path: Path, capsys: pytest.CaptureFixture[str], claim_text: str, *gates: str) -> tuple[int, list[Any]]:
    (tmp_path / "inventory.yaml").write_text(SLICE)
    (tmp_path / "claim.yaml").write_text(claim_text)
    argv = ["lint", str(tmp_path / "claim.yaml"), "--inventory", str(tmp_path / "inventory.yaml"), "--format", "json",
            "--kubernetes-version", "1.37"]
    if gates:
        argv += ["--feature-gates", ",".join(gates)]
    status = main(argv)
    findings: list[Any] = json.loads(capsys.readouterr().out)["findings"]
    return status, findings


@needs_list_decoding
def test_lint_a_claim_selecting_on_list_attributes_is_not_denied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, findings = _lint(tmp_path, capsys, CLAIM, "DRAListTypeAttributes=true")
    assert not [f for f in findings if f["severity"] == "error"], findings
    assert not [f for f in findings if f["reason"] in ("Unsatisfiable", "SelectorRuntimeError", "SatisfiabilityUnknown")]
    assert status == 0


@needs_list_decoding
def test_lint_a_claim_no_list_can_satisfy_is_denied(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    impossible = CLAIM.replace('includes("west")', 'includes("north")')
    status, findings = _lint(tmp_path, capsys, impossible, "DRAListTypeAttributes=true")
    assert [f["reason"] for f in findings if f["severity"] == "error"] == ["Unsatisfiable"], findings
    assert status == 1
