"""policy_defaults: which omitted capacity requests the policy default may fill, and where."""

from __future__ import annotations

from dra_builders import cap, claim, device, first, inventory, req, rslice
from draguard.k8s.quantity import Quantity
from draguard.satisfy import policy_defaults

SHARED = {"mem": cap("40Gi", "5Gi", min="5Gi", step="5Gi")}


def test_fills_a_subrequest_with_the_default_every_device_agrees_on() -> None:
    inv = inventory(rslice("n1", [device(f"g{i}", multi=True, capacity=SHARED) for i in range(2)]))
    fills = policy_defaults(claim(first("gpu", req("small"))), inv)
    assert [(str(f.path), f.request, dict(f.values)) for f in fills] == [
        ("spec.devices.requests[0].firstAvailable[0]", "gpu/small", {"mem": Quantity.parse("5Gi")})
    ]


def test_nothing_to_fill_when_asked_explicitly_or_a_device_is_dedicated() -> None:
    shared = device("g0", multi=True, capacity=SHARED)
    assert policy_defaults(claim(req("gpu", capacity={"mem": "10Gi"})), inventory(rslice("n1", [shared]))) == []
    dedicated = device("g1", capacity={"mem": cap("40Gi")})
    assert policy_defaults(claim(req("gpu")), inventory(rslice("n1", [shared, dedicated]))) == []
