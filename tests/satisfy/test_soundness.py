"""Sound verdicts under change (issue #10): ``Unsatisfiable`` only over complete knowledge.

Each case pairs the doubtful inventory (→ ``SatisfiabilityUnknown``, naming what is missing)
with the nearest inventory where the proof holds (→ ``Unsatisfiable``).
"""

from __future__ import annotations

from dra_builders import (
    DRIVER,
    cap,
    check,
    claim,
    dclass,
    device,
    inventory,
    message,
    node,
    req,
    rslice,
    verdict,
)
from draguard.inventory import build_inventory

BIG = {"memory": "50Gi"}


def _gpu(name: str, mem: str = "40Gi") -> dict[str, object]:
    return device(name, attrs={"model": "A100"}, capacity={"memory": cap(mem)})


def test_incomplete_pool_alone_is_unknown_and_names_the_pool() -> None:
    inv = inventory(rslice("n1", [_gpu("g0")], count=2))
    notes = check(claim(req("gpu")), inv)
    assert verdict(notes) == "unknown"
    text = message(notes, "SatisfiabilityUnknown")
    assert text.startswith("pool n1 (driver gpu.example.com) is incomplete: 1 of 2 slices published")
    complete = inventory(rslice("n1", [_gpu("g0")], count=1))
    assert verdict(check(claim(req("gpu")), complete)) == "sat"


def test_unsatisfiable_on_complete_pools_is_unknown_while_another_pool_of_the_driver_is_incomplete() -> None:
    # 50Gi fails on the complete n1 pool, but n2's missing slice could publish a 80Gi GPU.
    inv = inventory(rslice("n1", [_gpu("g0")]), rslice("n2", [_gpu("g1")], count=2))
    notes = check(claim(req("gpu", capacity=BIG)), inv)
    assert verdict(notes) == "unknown"
    assert "pool n2" in message(notes, "SatisfiabilityUnknown")
    assert "offers memory 50Gi" in message(notes, "SatisfiabilityUnknown")  # what is known is still said
    proven = inventory(rslice("n1", [_gpu("g0")]), rslice("n2", [_gpu("g1")], count=1))
    assert verdict(check(claim(req("gpu", capacity=BIG)), proven)) == "unsat"


def test_incomplete_pool_of_a_driver_the_class_excludes_does_not_block_the_proof() -> None:
    other = rslice("n1", [device("nic0")], driver="nic.example.com", pool="nics", count=3)
    inv = inventory(rslice("n1", [_gpu("g0")]), other)
    assert verdict(check(claim(req("gpu", capacity=BIG)), inv)) == "unsat"


def test_incomplete_pool_of_any_driver_matters_when_the_class_pins_none() -> None:
    anything = dclass("any", "true")
    other = rslice("n1", [device("nic0")], driver="nic.example.com", pool="nics", count=3)
    inv = build_inventory([anything, rslice("n1", [_gpu("g0")]), other])
    notes = check(claim(req("gpu", cls="any", capacity=BIG)), inv)
    assert verdict(notes) == "unknown" and "pool nics (driver nic.example.com)" in message(notes, "SatisfiabilityUnknown")


def test_invalid_pool_is_unknown() -> None:
    inv = inventory(rslice("n1", [_gpu("g0"), _gpu("g0")]))  # duplicate device name: invalid pool
    notes = check(claim(req("gpu")), inv)
    assert verdict(notes) == "unknown"
    assert "is invalid (device g0 is listed twice)" in message(notes, "SatisfiabilityUnknown")


def test_class_without_devices_is_unknown() -> None:
    nic_class = dclass("nic", 'device.driver == "nic.example.com"')
    inv = build_inventory([dclass(), nic_class, rslice("n1", [_gpu("g0")])])
    notes = check(claim(req("nic", cls="nic")), inv)
    assert verdict(notes) == "unknown"
    assert message(notes, "SatisfiabilityUnknown").startswith("no device of class nic is in the inventory yet")
    # The class has devices, the request's own selector matches none of them: a proof.
    notes = check(claim(req("gpu", selectors=('device.attributes["gpu.example.com"].model == "B200"',))), inv)
    assert verdict(notes) == "unsat"


def test_empty_inventory_is_unknown() -> None:
    notes = check(claim(req("gpu")), inventory())
    assert verdict(notes) == "unknown"
    assert "no device of class gpu.example.com is in the inventory yet" in message(notes, "SatisfiabilityUnknown")


def test_class_devices_no_node_reaches_are_unknown() -> None:
    selected = rslice(None, [_gpu("g0")], pool="gpus", nodeSelector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["yes"]}]}]})
    inv = inventory(selected, node("cpu-1", gpu="no"))
    notes = check(claim(req("gpu")), inv)
    assert verdict(notes) == "unknown"
    assert "reachable from no known node" in message(notes, "SatisfiabilityUnknown")
    reached = inventory(selected, node("gpu-1", gpu="yes"))
    assert verdict(check(claim(req("gpu")), reached)) == "sat"
    assert verdict(check(claim(req("gpu", capacity=BIG)), reached)) == "unsat"


def test_first_available_with_an_empty_class_is_unknown() -> None:
    from dra_builders import first

    nic_class = dclass("nic", 'device.driver == "nic.example.com"')
    inv = build_inventory([dclass(), nic_class, rslice("n1", [_gpu("g0")])])
    spec = claim(first("x", req("big", capacity=BIG), req("nic", cls="nic")))
    assert verdict(check(spec, inv)) == "unknown"
    assert DRIVER in message(check(claim(req("gpu", capacity=BIG)), inv))
