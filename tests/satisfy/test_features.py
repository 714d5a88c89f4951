"""One satisfiable and one unsatisfiable case per feature of the search (semantics, not sample answers)."""

from __future__ import annotations

from dra_builders import (
    DRIVER,
    cap,
    check,
    claim,
    dclass,
    device,
    first,
    inventory,
    message,
    node,
    req,
    rslice,
    verdict,
)
from draguard.inventory import build_inventory
from draguard.k8s import Budget

MEM = {"mem": cap("40Gi", "10Gi", min="10Gi", step="10Gi")}


def _shared(n: int = 1, node_name: str = "n1") -> list[dict[str, object]]:
    return [device(f"g{i}", multi=True, attrs={"idx": i}, capacity=dict(MEM)) for i in range(n)]


def test_count_needs_distinct_devices_even_when_shared() -> None:
    inv = inventory(rslice("n1", _shared(1)))
    assert verdict(check(claim(req("a"), req("b")), inv)) == "sat"  # two requests share one device
    notes = check(claim(req("gpu", count=2)), inv)  # one request, count 2: two different devices
    assert verdict(notes) == "unsat"
    assert 'request "gpu"' in message(notes) and "needs 2 different devices" in message(notes)


def test_count_over_two_devices() -> None:
    inv = inventory(rslice("n1", _shared(2)))
    assert verdict(check(claim(req("gpu", count=2)), inv)) == "sat"
    assert verdict(check(claim(req("gpu", count=3)), inv)) == "unsat"


def test_shared_capacity_is_cumulative_within_the_claim() -> None:
    inv = inventory(rslice("n1", _shared(1)))
    four = [req(f"r{i}") for i in range(4)]  # default 10Gi each: 40Gi
    assert verdict(check(claim(*four), inv)) == "sat"
    notes = check(claim(*four, req("r4")), inv)
    assert verdict(notes) == "unsat" and 'request "r4"' in message(notes)


def test_dedicated_device_used_once() -> None:
    inv = inventory(rslice("n1", [device("d0", capacity={"mem": cap("40Gi")})]))
    assert verdict(check(claim(req("a")), inv)) == "sat"
    assert verdict(check(claim(req("a"), req("b")), inv)) == "unsat"


def test_capacity_request_above_value_names_largest() -> None:
    inv = inventory(rslice("node-1", [device("gpu-0", multi=True, capacity={"memory": cap("40Gi", "5Gi", min="5Gi", step="5Gi")})]))
    assert verdict(check(claim(req("gpu", capacity={"memory": "40Gi"})), inv)) == "sat"
    notes = check(claim(req("gpu", capacity={"memory": "50Gi"})), inv)
    assert message(notes) == (
        'request "gpu": no device of class gpu.example.com offers memory 50Gi (largest: 40Gi on node-1/gpu-0, pool node-1)'
    )
    notes = check(claim(req("gpu", capacity={"memory": "41Gi"})), inv)
    assert "45Gi after rounding 41Gi up to the 5Gi step" in message(notes)


def test_all_mode() -> None:
    inv = inventory(rslice("n1", [device("d0"), device("d1")]))
    assert verdict(check(claim(req("gpu", mode="All")), inv)) == "sat"
    assert verdict(check(claim(req("gpu", mode="All"), req("x")), inv)) == "unsat"  # All took every device


def test_all_mode_with_incomplete_pool_is_unknown_not_unsatisfiable() -> None:
    # Kubernetes fails All mode on an incomplete pool *now*; the missing slice may complete it.
    inv = inventory(rslice("n1", [device("d0")], count=2))
    notes = check(claim(req("gpu", mode="All")), inv)
    assert verdict(notes) == "unknown"
    assert "pool n1 (driver gpu.example.com) is incomplete: 1 of 2 slices published" in message(notes, "SatisfiabilityUnknown")


def test_first_available_in_order() -> None:
    inv = inventory(rslice("n1", [device("d0", attrs={"model": "small"})]))
    big = req("big", selectors=(f'device.attributes["{DRIVER}"].model == "big"',))
    small = req("small", selectors=(f'device.attributes["{DRIVER}"].model == "small"',))
    assert verdict(check(claim(first("gpu", big, small)), inv)) == "sat"
    assert verdict(check(claim(first("gpu", big, big)), inv)) == "unsat"


def test_selectors() -> None:
    inv = inventory(rslice("n1", [device("d0", attrs={"model": "a100"})]))
    ok = req("gpu", selectors=(f'device.attributes["{DRIVER}"].model == "a100"',))
    no = req("gpu", selectors=(f'device.attributes["{DRIVER}"].model == "h100"',))
    assert verdict(check(claim(ok), inv)) == "sat"
    notes = check(claim(no), inv)
    assert verdict(notes) == "unsat" and "no device matches" in message(notes) and "1 devices of class" in message(notes)


def test_no_match_blames_the_request_selector_not_the_class() -> None:
    gpus = rslice("n1", [device("d0", attrs={"model": "a100"})])
    nics = rslice("n1", [device(f"nic{i}") for i in range(3)], driver="nic.example.com", pool="n1-nic", name="n1-nic")
    inv = inventory(gpus, nics)
    no = req("gpu", selectors=(f'device.attributes["{DRIVER}"].model == "h100"',))
    text = message(check(claim(no), inv))
    assert "selector #0 of the request" in text and "1 devices of class" in text


def test_no_device_of_the_class_blames_the_class_and_is_unknown() -> None:
    # A class without any device may be waiting for its driver or a node pool: not a proof.
    inv = inventory(rslice("n1", [device("nic0")], driver="nic.example.com"))
    text = message(check(claim(req("gpu")), inv), "SatisfiabilityUnknown")
    assert text.startswith("no device of class gpu.example.com is in the inventory yet")
    assert "selector #0 of the class" in text and "none of the 1 reachable devices belongs to class" in text


def test_match_attribute() -> None:
    devs = [device("d0", attrs={"numa": 0}), device("d1", attrs={"numa": 1}), device("d2", attrs={"numa": 1})]
    inv = inventory(rslice("n1", devs))
    c = [{"matchAttribute": f"{DRIVER}/numa"}]
    assert verdict(check(claim(req("a"), req("b"), constraints=c), inv)) == "sat"
    assert verdict(check(claim(req("a"), req("b"), req("c"), constraints=c), inv)) == "unsat"


def test_distinct_attribute_across_requests() -> None:
    inv = inventory(rslice("n1", [device("d0", attrs={"subnet": "a"}), device("d1", attrs={"subnet": "a"}), device("d2", attrs={"subnet": "b"})]))
    c = [{"distinctAttribute": f"{DRIVER}/subnet"}]
    assert verdict(check(claim(req("a"), req("b"), constraints=c), inv)) == "sat"
    notes = check(claim(req("a"), req("b"), req("c"), constraints=c), inv)
    assert verdict(notes) == "unsat" and "distinctAttribute" in message(notes) and "has 2" in message(notes)


def test_distinct_attribute_stops_one_shared_device_serving_two_requests() -> None:
    inv = inventory(rslice("n1", _shared(1)))
    c = [{"distinctAttribute": f"{DRIVER}/idx"}]
    assert verdict(check(claim(req("a"), req("b")), inv)) == "sat"
    assert verdict(check(claim(req("a"), req("b"), constraints=c), inv)) == "unsat"


def test_distinct_attribute_state_per_request_name_is_permissive() -> None:
    # 1.36 keeps one value per request name: with count 3 the third device is compared with the
    # second only, so values [x, y, x] are accepted although the documentation says "distinct".
    devs = [device("d0", attrs={"s": "x"}), device("d1", attrs={"s": "y"}), device("d2", attrs={"s": "x"})]
    inv = inventory(rslice("n1", devs))
    c = [{"distinctAttribute": f"{DRIVER}/s"}]
    assert verdict(check(claim(req("gpu", count=3), constraints=c), inv)) == "sat"
    same = inventory(rslice("n1", [device("d0", attrs={"s": "x"}), device("d1", attrs={"s": "x"})]))
    assert verdict(check(claim(req("gpu", count=2), constraints=c), same)) == "unsat"


def test_shared_counters() -> None:
    counters = rslice(None, [], pool="p", name="counters", sharedCounters=[{"name": "mem", "counters": {"gb": {"value": "40"}}}])
    parts = [device(f"part{i}", consumesCounters=[{"counterSet": "mem", "counters": {"gb": {"value": "20"}}}]) for i in range(3)]
    inv = inventory(counters, rslice("n1", parts, pool="p", count=2, name="parts"))
    assert verdict(check(claim(req("gpu", count=2)), inv)) == "sat"
    assert verdict(check(claim(req("gpu", count=3)), inv)) == "unsat"


def test_thirty_two_device_limit() -> None:
    inv = inventory(rslice("n1", [device(f"d{i}") for i in range(40)]))
    assert verdict(check(claim(req("gpu", count=32)), inv)) == "sat"
    assert verdict(check(claim(req("gpu", count=32), req("x")), inv)) == "unsat"


def test_taints_only_noschedule_and_noexecute_block() -> None:
    taint = {"key": "broken", "value": "yes", "effect": "NoSchedule"}
    inv = inventory(rslice("n1", [device("d0", taints=[taint])]))
    notes = check(claim(req("gpu")), inv)
    assert verdict(notes) == "unsat" and "tainted" in message(notes)
    tol = [{"key": "broken", "operator": "Exists"}]
    assert verdict(check(claim(req("gpu", tolerations=tol)), inv)) == "sat"
    soft = inventory(rslice("n1", [device("d0", taints=[{"key": "k", "effect": "None"}])]))
    assert verdict(check(claim(req("gpu")), soft)) == "sat"


def test_node_locality_devices_of_two_nodes_never_combine() -> None:
    inv = inventory(node("n1"), node("n2"), rslice("n1", [device("d0")]), rslice("n2", [device("d0")]))
    assert verdict(check(claim(req("gpu")), inv)) == "sat"
    assert verdict(check(claim(req("gpu", count=2)), inv)) == "unsat"


def test_node_selector_and_all_nodes_slices_join_node_devices() -> None:
    objs = [node("n1", zone="a"), node("n2", zone="b"), rslice("n1", [device("local")]),
            rslice(None, [device("net")], pool="net", nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]})]
    inv = inventory(*objs)
    assert verdict(check(claim(req("gpu", count=2)), inv)) == "sat"  # n1: local + net
    objs[3]["spec"]["nodeSelector"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] = ["b"]
    assert verdict(check(claim(req("gpu", count=2)), inventory(*objs))) == "unsat"


def test_admin_access_cannot_pick_a_device_twice_in_one_claim() -> None:
    inv = inventory(rslice("n1", [device("d0")]))
    assert verdict(check(claim(req("a", admin=True)), inv)) == "sat"
    assert verdict(check(claim(req("a", admin=True), req("b", admin=True)), inv)) == "unsat"


def test_missing_class_is_unknown_unless_strict() -> None:
    inv = inventory(rslice("n1", [device("d0")]))
    notes = check(claim(req("gpu", cls="nope")), inv)
    assert verdict(notes) == "unknown" and "classes may be applied later" in notes[0].message
    assert verdict(check(claim(req("gpu", cls="nope")), inv, strict=True)) == "unsat"


def test_selector_runtime_error_reached_is_an_error_but_not_when_skipped() -> None:
    expr = f'device.attributes["{DRIVER}"].model == "a100"'
    # d0 lacks "model": the selector errors on it.  Reached first → the scheduler aborts.
    inv = inventory(rslice("n1", [device("d0"), device("d1", attrs={"model": "a100"})]))
    notes = check(claim(req("gpu", selectors=(expr,))), inv)
    assert verdict(notes) == "error" and "d0" in message(notes, "SelectorRuntimeError")
    # d0 comes after a matching device: the search never evaluates it.
    inv = inventory(rslice("n1", [device("d0", attrs={"model": "a100"}), device("d1")]))
    assert verdict(check(claim(req("gpu", selectors=(expr,))), inv)) == "sat"


def test_rounded_and_defaulted_notes() -> None:
    inv = inventory(rslice("n1", _shared(1)))
    notes = check(claim(req("gpu", capacity={"mem": "7Gi"})), inv)
    assert [n.reason for n in notes] == ["CapacityRounded"] and "7Gi of mem will consume 10Gi" in notes[0].message
    notes = check(claim(req("gpu")), inv)
    assert [n.reason for n in notes] == ["CapacityDefaulted"] and "10Gi" in notes[0].message


def test_deadline_turns_an_undecided_search_into_unknown() -> None:
    devs = [device(f"d{i}", attrs={"s": "x"}) for i in range(30)]
    inv = inventory(rslice("n1", devs))
    c = [{"distinctAttribute": f"{DRIVER}/s"}]
    spec = claim(req("a", count=3), req("b", count=3), constraints=c)
    assert verdict(check(spec, inv, budget=Budget.within(0.0))) == "unknown"


def test_unknown_nodes_treat_selector_slices_as_reachable() -> None:
    objs = [dclass(), rslice(None, [device("net")], pool="net",
            nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]})]
    inv = build_inventory(objs)
    assert verdict(check(claim(req("gpu")), inv)) == "sat"


def test_counting_bound_over_unlike_shared_devices() -> None:
    """32 alike requests; one device has room for 8 shares of 5Gi, the other 10 of 4Gi: 18 in all."""
    devs = [
        device("a", multi=True, capacity={"mem": cap("40Gi", "5Gi", min="5Gi", step="5Gi")}),
        device("b", multi=True, capacity={"mem": cap("40Gi", "4Gi", min="4Gi", step="4Gi", max="16Gi")}),
    ]
    inv = inventory(rslice("n1", devs))
    ask = {"mem": "1Gi"}
    assert verdict(check(claim(*[req(f"r{i}", capacity=ask) for i in range(18)]), inv)) == "sat"
    notes = check(claim(*[req(f"r{i}", capacity=ask) for i in range(32)]), inv)
    assert verdict(notes) == "unsat"
    assert "32 device shares; the devices left have room for 18" in message(notes)


def test_capacity_sum_bound_explains_unlike_requests() -> None:
    """Twenty requests of 1..20Gi (210Gi) over four 40Gi shared devices (160Gi): decided by the sum."""
    inv = inventory(rslice("n1", [device(f"g{i}", multi=True, capacity={"mem": cap("40Gi")}) for i in range(4)]))
    fits = [req(f"r{i}", capacity={"mem": f"{i + 1}Gi"}) for i in range(17)]  # 153Gi: packs
    assert verdict(check(claim(*fits), inv)) == "sat"
    notes = check(claim(*[req(f"r{i}", capacity={"mem": f"{i + 1}Gi"}) for i in range(20)]), inv)
    assert verdict(notes) == "unsat"
    assert "need at least 210Gi of mem on shared devices, which have 160Gi left" in message(notes)
