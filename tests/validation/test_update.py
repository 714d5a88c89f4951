"""Update rules: spec immutability of claims and templates, slice identity fields, metadata."""

from __future__ import annotations

from .builders import claim, device, exact, rslice, template
from .support import check_update, lines, pairs


def test_claim_spec_is_immutable() -> None:
    old = claim()
    new = claim([exact(count=2)])
    assert pairs(check_update(new, old)) == {("spec", "FieldValueInvalid")}
    assert lines(check_update(new, old))[0].endswith(": field is immutable")


def test_claim_unchanged_spec_with_new_labels_is_fine() -> None:
    old = claim()
    new = claim()
    new["metadata"]["labels"] = {"a": "b"}
    assert check_update(new, old).errors == []


def test_claim_update_does_not_revalidate_spec() -> None:
    """Upstream only checks immutability on update: an old invalid spec is not reported again."""
    old = claim([exact(count=-1)])
    assert check_update(old, old).errors == []


def test_claim_name_is_immutable() -> None:
    assert pairs(check_update(claim(name="c2"), claim(name="c1"))) == {("metadata.name", "FieldValueInvalid")}


def test_claim_allocation_is_immutable() -> None:
    result = {"request": "gpu", "driver": "d.com", "pool": "p", "device": "gpu-0"}
    old = {**claim(), "status": {"allocation": {"devices": {"results": [result]}}}}
    new = {**claim(), "status": {"allocation": {"devices": {"results": [{**result, "device": "gpu-1"}]}}}}
    assert pairs(check_update(new, old)) == {("status.allocation", "FieldValueInvalid")}
    assert check_update(old, old).errors == []


def test_template_spec_is_immutable_and_revalidated() -> None:
    old = template()
    new = template([exact(count=-1)])
    assert pairs(check_update(new, old)) == {
        ("spec", "FieldValueInvalid"),
        ("spec.spec.devices.requests[0].exactly.count", "FieldValueInvalid"),
    }
    assert check_update(template(), old).errors == []


def test_slice_identity_fields_are_immutable() -> None:
    old = rslice([device()])
    new = rslice(
        [device()],
        driver="other.example.com",
        nodeName="node-2",
        pool={"name": "p2", "resourceSliceCount": 1},
    )
    assert lines(check_update(new, old)) == [
        'spec.pool.name: Invalid value: "p2": field is immutable',
        'spec.driver: Invalid value: "other.example.com": field is immutable',
        'spec.nodeName: Invalid value: "node-2": field is immutable',
    ]
    grown = rslice(
        [device(), device("dev-1")], pool={"name": "node-1", "generation": 2, "resourceSliceCount": 1}
    )
    assert check_update(grown, old).errors == []


def test_slice_update_revalidates_changed_devices() -> None:
    old = rslice([device()])
    new = rslice([device("Bad")])
    assert pairs(check_update(new, old)) == {("spec.devices[0].name", "FieldValueInvalid")}


def test_update_with_other_kind_as_old_is_a_create() -> None:
    assert pairs(check_update(claim(name="X"), rslice([device()]))) == {
        ("metadata.name", "FieldValueInvalid")
    }
