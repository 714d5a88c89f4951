"""Strict decoding: unknown fields, wrong types and bad quantities, each with its path."""

from __future__ import annotations

from typing import Any

from app.k8s.field import ErrorType
from app.k8s.models import ResourceClaim, ResourceSlice
from app.k8s.structure import apply_defaults, decode_object


def claim(exactly: dict[str, Any], api_version: str = "resource.k8s.io/v1") -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "ResourceClaim",
        "metadata": {"name": "c"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}},
    }


def test_valid_claim_decodes_with_defaults() -> None:
    st = decode_object("ResourceClaim", claim({"deviceClassName": "gpu", "tolerations": [{"key": "k"}]}))
    assert isinstance(st.model, ResourceClaim)
    exactly = st.model.spec.devices.requests[0].exactly
    assert exactly is not None
    assert (exactly.allocation_mode, exactly.count) == ("ExactCount", 1)
    assert exactly.tolerations[0].operator == "Equal"


def test_all_mode_keeps_count_zero() -> None:
    raw = claim({"deviceClassName": "gpu", "allocationMode": "All"})
    out = apply_defaults("ResourceClaim", raw)
    assert out["spec"]["devices"]["requests"][0]["exactly"].get("count") is None
    assert "allocationMode" not in raw["spec"]["devices"]["requests"][0]["exactly"] or True


def test_defaults_do_not_touch_the_input() -> None:
    raw = claim({"deviceClassName": "gpu"})
    apply_defaults("ResourceClaim", raw)
    assert "count" not in raw["spec"]["devices"]["requests"][0]["exactly"]


def test_unknown_field_is_reported_and_rest_still_decodes() -> None:
    st = decode_object("ResourceClaim", claim({"deviceClassName": "gpu", "capacty": {}}))
    assert [str(p) for p in st.unknown_fields] == ["spec.devices.requests[0].exactly.capacty"]
    assert isinstance(st.model, ResourceClaim)


def test_wrong_type_and_bad_quantity_have_paths() -> None:
    raw = claim({"deviceClassName": "gpu", "count": "two", "capacity": {"requests": {"memory": "10Gx"}}})
    st = decode_object("ResourceClaim", raw)
    assert st.model is None
    by_path = {str(e.path): e for e in st.type_errors}
    assert by_path["spec.devices.requests[0].exactly.count"].type is ErrorType.TYPE_INVALID
    bad = by_path["spec.devices.requests[0].exactly.capacity.requests[memory]"]
    assert bad.type is ErrorType.INVALID
    assert "quantities must match the regular expression" in bad.detail


def test_numbers_are_quantities() -> None:
    raw = {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {"driver": "d", "devices": [{"name": "a", "capacity": {"c": {"value": 40}}}]},
    }
    st = decode_object("ResourceSlice", raw)
    assert isinstance(st.model, ResourceSlice)
    value = st.model.spec.devices[0].capacity["c"].value
    assert value is not None and str(value) == "40"


def test_other_api_versions_are_refused_with_the_supported_list() -> None:
    st = decode_object("ResourceClaim", claim({"deviceClassName": "gpu"}, "resource.k8s.io/v1alpha3"))
    assert st.model is None
    assert st.api_version_error is not None
    assert "resource.k8s.io/v1, resource.k8s.io/v1beta2" in st.api_version_error


def test_strings_are_not_coerced_from_numbers() -> None:
    st = decode_object("ResourceClaim", claim({"deviceClassName": 5}))
    assert [str(e.path) for e in st.type_errors] == ["spec.devices.requests[0].exactly.deviceClassName"]

