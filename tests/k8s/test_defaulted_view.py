"""structural_pass defaults a claim without deep-copying it, and still never changes the caller's
object: not by defaulting, not by dropping gated or unknown fields, not by clearing status."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from draguard.k8s import parse_target, structural_pass


def _claim() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ns", "labels": {"a": "b"}},
        "spec": {"devices": {
            "requests": [
                {"name": "a", "exactly": {"deviceClassName": "gpu", "tolerations": [{"key": "k", "effect": "NoSchedule"}],
                                          "adminAccess": True, "capacity": {"requests": {"memory": "1Gi"}}}},
                {"name": "b", "firstAvailable": [{"name": "x", "deviceClassName": "gpu",
                                                  "tolerations": [{"key": "k"}]}]},
            ],
            "constraints": [{"requests": ["a"], "distinctAttribute": "gpu/uuid"}],
            "config": [{"opaque": {"driver": "gpu", "parameters": {"deep": {"deeper": [1, 2, {"x": None}]}}}}],
        }},
        "status": {"allocation": {"devices": {"results": []}}},
    }


@pytest.mark.parametrize("version", ["1.36", "1.34"])  # 1.34: taints, consumable capacity… off: fields dropped
@pytest.mark.parametrize("unknown", [False, True])
def test_the_callers_claim_is_never_changed(version: str, unknown: bool) -> None:
    raw = _claim()
    if unknown:
        raw["spec"]["devices"]["requests"][0]["exactly"]["bogus"] = 1
        raw["metadata"]["bogus"] = {"x": 1}
    before = copy.deepcopy(raw)
    st = structural_pass("ResourceClaim", raw, target=parse_target(version, None))
    assert raw == before
    assert version == "1.36" or st.dropped
    assert st.model is not None
    request = st.model.spec.devices.requests[0]
    assert request.exactly is not None and request.exactly.allocation_mode == "ExactCount"


def test_template_defaults_without_touching_the_template() -> None:
    claim = _claim()
    raw = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": claim["metadata"],
           "spec": {"spec": claim["spec"]}}
    before = copy.deepcopy(raw)
    st = structural_pass("ResourceClaimTemplate", raw)
    assert raw == before and st.model is not None
