"""Default filling: only when every candidate agrees, add-only, RFC 6901 escaping."""

from __future__ import annotations

from typing import Any

from dra_builders import DRIVER, cap, device, inventory, rslice
from draguard.k8s.models import ResourceClaim
from draguard.review.mutate import default_fill_patch, escape_pointer


def _claim(exactly: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER, **exactly}}]}}}


def _patch(raw: dict[str, Any], *devices: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    model = ResourceClaim.model_validate(raw)
    return default_fill_patch(model.spec, raw, inventory(rslice("n1", list(devices))))


def test_fills_agreed_default_creating_capacity_object() -> None:
    d = [device(f"g{i}", multi=True, capacity={"mem": cap("40Gi", "5Gi", min="5Gi", step="5Gi")}) for i in range(2)]
    ops, desc = _patch(_claim({}), *d)
    assert ops == [{"op": "add", "path": "/spec/devices/requests/0/exactly/capacity", "value": {"requests": {"mem": "5Gi"}}}]
    assert "5Gi" in desc[0]


def test_qualified_names_are_escaped_and_existing_requests_kept() -> None:
    caps = {"mem": cap("40Gi", "5Gi", min="5Gi", step="5Gi"), f"{DRIVER}/cores": cap("96", "8", min="8", step="8")}
    ops, _ = _patch(_claim({"capacity": {"requests": {"mem": "10Gi"}}}), device("g0", multi=True, capacity=caps))
    assert ops == [{"op": "add", "path": "/spec/devices/requests/0/exactly/capacity/requests/gpu.example.com~1cores", "value": "8"}]
    assert escape_pointer("a~b/c") == "a~0b~1c"


def test_no_fill_when_defaults_disagree_or_a_device_is_dedicated() -> None:
    a = device("g0", multi=True, capacity={"mem": cap("40Gi", "5Gi", min="5Gi", step="5Gi")})
    b = device("g1", multi=True, capacity={"mem": cap("40Gi", "4Gi", min="4Gi", step="4Gi")})
    assert _patch(_claim({}), a, b) == ([], [])
    assert _patch(_claim({}), a, device("d", capacity={"mem": cap("40Gi")})) == ([], [])


def test_no_fill_when_it_would_let_another_device_match() -> None:
    # g1's default (64) exceeds its value (19): it cannot serve the request as written, but an
    # explicit 5 would fit it; filling would change which devices match.
    a = device("g0", multi=True, capacity={"mem": cap("40", "5")})
    b = device("g1", multi=True, capacity={"mem": cap("19", "64")})
    assert _patch(_claim({}), a, b) == ([], [])
    assert _patch(_claim({}), a)[0]
