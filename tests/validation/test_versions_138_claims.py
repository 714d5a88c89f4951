"""Kubernetes 1.38's remaining claim rules: capacity amounts (declarative) and capacity names in the allocator.

* ``k8s.io/api`` v0.38.0-beta.0 tags ``capacity.requests`` and an allocation result's
  ``consumedCapacity`` with ``+k8s:maxProperties=32`` and ``+k8s:eachVal=+k8s:minimum=0``; the
  generated validation of ``k8s.io/kubernetes`` v1.38.0-beta.0 enforces them with ratcheting, and
  the API server reports them after the handwritten errors (app/validation/capacity_requests.py).
  1.37.2's types have neither tag: the same objects are accepted there.
* The 1.38 allocator's ``resolveCapacityRequests`` fails on a request that names one capacity as
  ``<name>`` and ``<driver>/<name>`` (app/capacity/names.py); the API server accepts such a claim.

Messages are apimachinery's: ``field.TooMany`` (``MaxProperties``) and ``field.Invalid`` with
``content.MinError`` (``MinimumQuantity``), on the entry's path ``requests[<key>]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.k8s import Target
from draguard.validation import ValidationContext

from .builders import claim, exact, template, with_
from .support import check, check_update, lines

V137 = ValidationContext(target=Target("1.37"))
V138 = ValidationContext(target=Target("1.38"))

REQ = "spec.devices.requests[0].exactly.capacity.requests"
TREQ = f"spec.{REQ}"
MIN = "must be greater than or equal to 0"


def asks(requests: dict[str, str], name: str = "c1") -> dict[str, Any]:
    return claim([exact(capacity={"requests": requests})], name=name)


def many(n: int, amount: str = "1") -> dict[str, str]:
    return {f"c{i}": amount for i in range(n)}


def allocated(consumed: dict[str, str], name: str = "c1") -> dict[str, Any]:
    c = claim(name=name)
    c["status"] = {"allocation": {"devices": {"results": [{
        "request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "dev-0",
        "consumedCapacity": consumed,
    }]}}}
    return c


# --------------------------------------------------------------------------- amounts: create
def test_a_negative_request_is_rejected_from_138() -> None:
    c = asks({"memory": "-1Gi"})
    assert lines(check(c, V138)) == [f'{REQ}[memory]: Invalid value: "-1Gi": {MIN}']
    assert lines(check(c, V137)) == []


def test_the_bad_value_is_the_canonical_quantity() -> None:
    """``value.String()``: -1024Mi is printed as -1Gi and -0.5 as -500m."""
    c = asks({"a": "-1024Mi", "b": "-0.5"})
    assert lines(check(c, V138)) == [
        f'{REQ}[a]: Invalid value: "-1Gi": {MIN}',
        f'{REQ}[b]: Invalid value: "-500m": {MIN}',
    ]


def test_zero_and_positive_requests_are_accepted() -> None:
    assert lines(check(asks({"memory": "0", "cores": "2", "bw": "1m"}), V138)) == []


def test_a_negative_subrequest_is_rejected_from_138() -> None:
    c = claim([{"name": "gpu", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu.example.com", "capacity": {"requests": {"memory": "2Gi"}}},
        {"name": "small", "deviceClassName": "gpu.example.com", "capacity": {"requests": {"memory": "-1"}}},
    ]}])
    assert lines(check(c, V138)) == [
        f'spec.devices.requests[0].firstAvailable[1].capacity.requests[memory]: Invalid value: "-1": {MIN}'
    ]
    assert lines(check(c, V137)) == []


def test_more_than_32_requests_entries_are_too_many_from_138() -> None:
    c = asks(many(33))
    assert lines(check(c, V138)) == [f"{REQ}: Too many: 33: must have at most 32 items"]
    assert lines(check(c, V137)) == []
    assert lines(check(asks(many(32)), V138)) == []


def test_too_many_entries_short_circuit_the_amount_checks() -> None:
    assert lines(check(asks(many(33, "-1")), V138)) == [f"{REQ}: Too many: 33: must have at most 32 items"]


def test_declarative_errors_come_after_the_handwritten_ones() -> None:
    """The key check is handwritten (validation.go), the amount check declarative: the API server
    appends the declarative errors to the whole handwritten list, so the order is fixed."""
    c = claim([exact(capacity={"requests": {"memory": "-1"}}), {"name": "bad_name", "exactly": {
        "deviceClassName": "gpu.example.com"}}])
    got = lines(check(c, V138))
    assert got[-1] == f'{REQ}[memory]: Invalid value: "-1": {MIN}'
    assert got[0].startswith('spec.devices.requests[1].name: Invalid value: "bad_name"')


def test_an_over_long_request_list_is_not_walked() -> None:
    """``requests`` over its maxItems (32) short-circuits the generated walk: only the handwritten
    ``Too many`` is left."""
    c = claim([exact(name=f"r{i}", capacity={"requests": {"memory": "-1"}}) for i in range(33)])
    assert lines(check(c, V138)) == ["spec.devices.requests: Too many: 33: must have at most 32 items"]


def test_template_requests_are_checked_from_138() -> None:
    t = template([exact(capacity={"requests": {"memory": "-1"}})])
    assert lines(check(t, V138)) == [f'spec.spec.devices.requests[0].exactly.capacity.requests[memory]: '
                                     f'Invalid value: "-1": {MIN}']
    assert lines(check(t, V137)) == []


# --------------------------------------------------------------------------- amounts: consumedCapacity
def test_negative_consumed_capacity_is_rejected_from_138() -> None:
    c = allocated({"memory": "-1Gi", "cores": "1"})
    assert lines(check(c, V138)) == [
        f'status.allocation.devices.results[0].consumedCapacity[memory]: Invalid value: "-1Gi": {MIN}'
    ]
    assert lines(check(c, V137)) == []


def test_more_than_32_consumed_capacities_are_too_many_from_138() -> None:
    c = allocated(many(33))
    assert lines(check(c, V138)) == [
        "status.allocation.devices.results[0].consumedCapacity: Too many: 33: must have at most 32 items"
    ]
    assert lines(check(c, V137)) == []
    assert lines(check(allocated(many(32)), V138)) == []


def test_a_newly_set_allocation_is_checked_on_a_status_update() -> None:
    stored = claim()
    assert lines(check_update(allocated({"memory": "-1"}), stored, V138)) == [
        f'status.allocation.devices.results[0].consumedCapacity[memory]: Invalid value: "-1": {MIN}'
    ]


def test_a_stored_allocation_is_ratcheted() -> None:
    """Allocated by a 1.37 server: later status updates (here: reservedFor) must still go through."""
    stored = allocated({"memory": "-1"})
    reserved = with_(stored, "status.reservedFor", [{"resource": "pods", "name": "p", "uid": "u1"}])
    assert lines(check_update(reserved, stored, V138)) == []


# --------------------------------------------------------------------------- amounts: ratcheting
def test_a_stored_claim_with_a_negative_request_can_still_be_relabelled() -> None:
    stored = asks({"memory": "-1"})
    assert lines(check_update(with_(stored, "metadata.labels", {"a": "b"}), stored, V138)) == []


def test_a_changed_claim_spec_is_only_immutable() -> None:
    """``Immutable`` short-circuits the declarative walk of a changed claim spec."""
    stored = asks({"memory": "1"})
    changed = asks({"memory": "-1"})
    errs = check_update(changed, stored, V138).errors
    assert [(e.field, e.detail) for e in errs] == [("spec", "field is immutable")]


def test_unchanged_template_requests_are_ratcheted() -> None:
    stored = template([exact(capacity={"requests": {"memory": "-1"}})])
    assert lines(check_update(with_(stored, "metadata.labels", {"a": "b"}), stored, V138)) == []
    # another request added: the stored one (matched by name) is still not re-checked
    grown = template([exact(capacity={"requests": {"memory": "-1"}}), exact(name="nic")])
    assert [e for e in check_update(grown, stored, V138).errors if "capacity" in e.field] == []


def test_a_changed_template_map_ratchets_its_unchanged_entries() -> None:
    """Within a changed map an entry keeps its stored value unchecked; new or changed ones are checked."""
    stored = template([exact(capacity={"requests": {"memory": "-1"}})])
    changed = template([exact(capacity={"requests": {"memory": "-1", "cores": "-2", "bw": "1"}})])
    errs = [str(e) for e in check_update(changed, stored, V138).errors if "capacity" in e.field]
    assert errs == [f'{TREQ}[cores]: Invalid value: "-2": {MIN}']
    rewritten = template([exact(capacity={"requests": {"memory": "-1000m"}})])  # equal: still ratcheted
    assert [e for e in check_update(rewritten, stored, V138).errors if "capacity" in e.field] == []
    worse = template([exact(capacity={"requests": {"memory": "-2"}})])
    assert [str(e) for e in check_update(worse, stored, V138).errors if "capacity" in e.field] == [
        f'{TREQ}[memory]: Invalid value: "-2": {MIN}'
    ]


def test_a_template_map_grown_past_32_is_too_many_even_with_stored_entries() -> None:
    stored = template([exact(capacity={"requests": many(32)})])
    grown = template([exact(capacity={"requests": many(33)})])
    assert [str(e) for e in check_update(grown, stored, V138).errors if "capacity" in e.field] == [
        f"{TREQ}: Too many: 33: must have at most 32 items"
    ]


# --------------------------------------------------------------------------- names in the allocator
def test_one_capacity_named_both_ways_conflicts_only_at_138() -> None:
    """``resolveCapacityRequests``: ``bandwidth`` and ``nic.example.com/bandwidth`` are one capacity of
    a nic.example.com device at 1.38 — the allocator fails there; 1.37 sees two capacities."""
    from draguard.capacity.names import capacity_names_for, capacity_request_conflict

    both = {"bandwidth": "1", "nic.example.com/bandwidth": "2"}
    with capacity_names_for(Target("1.38")):
        assert capacity_request_conflict(both, "nic.example.com") == ("bandwidth", "nic.example.com/bandwidth")
        assert capacity_request_conflict(both, "other.example.com") is None  # `bandwidth` is other's own
        assert capacity_request_conflict({"bandwidth", "nic.example.com/cores"}, "nic.example.com") is None
    with capacity_names_for(Target("1.37")):
        assert capacity_request_conflict(both, "nic.example.com") is None
    assert capacity_request_conflict(both, "nic.example.com") is None  # outside a scope: exact names


def test_the_api_server_accepts_a_capacity_named_both_ways() -> None:
    """Only the keys' syntax is validated; the conflict is the allocator's, not a validation error."""
    assert lines(check(asks({"bandwidth": "1", "nic.example.com/bandwidth": "2"}), V138)) == []


# --------------------------------------------------------------------------- the real API servers
REAL_CASES: dict[str, dict[str, Any]] = {
    "neg": asks({"memory": "-1Gi"}, name="neg"),
    "neg-canonical": asks({"a": "-1024Mi"}, name="neg-canonical"),
    "zero": asks({"memory": "0"}, name="zero"),
    "too-many": asks(many(33), name="too-many"),
    "thirty-two": asks(many(32), name="thirty-two"),
    "names-then-amounts": asks({"1bad": "-1"}, name="names-then-amounts"),
    "both-ways": asks({"bandwidth": "1", "nic.example.com/bandwidth": "2"}, name="both-ways"),
    "sub": claim([{"name": "gpu", "firstAvailable": [
        {"name": "small", "deviceClassName": "gpu.example.com", "capacity": {"requests": {"memory": "-1"}}},
    ]}], name="sub"),
    "tmpl": {**template([exact(capacity={"requests": {"memory": "-1"}})], name="tmpl")},
}


def _causes(found: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(str(c.get("field", "")), str(c.get("reason", "")), str(c.get("message", ""))) for c in found]


@pytest.mark.parametrize("version", ["1.37", "1.38"])
def test_draguard_agrees_with_the_real_api_server(version: str, tmp_path: Path) -> None:
    from realapi import require_version, run

    require_version(version)
    cases = tmp_path / "cases.yaml"
    cases.write_text(yaml.safe_dump_all(list(REAL_CASES.values()), sort_keys=False))
    result = run([cases], kube_version=version)
    ctx = ValidationContext(target=Target(version))
    for name, obj in REAL_CASES.items():
        verdict = result.by_name(name)
        ours = [(e.field, e.reason, e.body()) for e in check(obj, ctx).errors]
        assert verdict.admitted == (not ours), (name, verdict.message, ours, result.output)
        if not ours:
            continue
        theirs = _causes(verdict.causes)
        assert sorted(theirs) == sorted(ours), (name, theirs, ours)
        if name == "names-then-amounts":  # handwritten first, declarative after: a fixed order
            assert theirs == ours


def test_the_138_api_server_ratchets_like_draguard() -> None:
    """Updates on a live 1.38 API server: a template whose map gained a negative entry (its
    immutability error first, then the declarative one), and a status update that sets an
    allocation with a negative consumedCapacity."""
    from realapi import LiveApiServer, require_version

    require_version("1.38")
    base = "/apis/resource.k8s.io/v1/namespaces/default"
    stored_t = template([exact(capacity={"requests": {"memory": "1"}})], name="t1")
    changed_t = template([exact(capacity={"requests": {"memory": "1", "cores": "-2"}})], name="t1")
    stored_c = claim(name="c1")
    with LiveApiServer(kube_version="1.38") as api:
        created_t = api.apply(f"{base}/resourceclaimtemplates", stored_t)
        created_c = api.apply(f"{base}/resourceclaims", stored_c)
        update_t = {**changed_t, "metadata": {**changed_t["metadata"],
                                              "resourceVersion": created_t["metadata"]["resourceVersion"]}}
        code_t, answer_t = api.request("PUT", f"{base}/resourceclaimtemplates/t1", update_t)
        alloc = allocated({"memory": "-1"}, name="c1")
        update_c = {**alloc, "metadata": {**alloc["metadata"], "resourceVersion": created_c["metadata"]["resourceVersion"]}}
        code_c, answer_c = api.request("PUT", f"{base}/resourceclaims/c1/status", update_c)
    ours_t = [(e.field, e.reason, e.body()) for e in check_update(changed_t, stored_t, V138).errors]
    assert code_t == 422, answer_t
    theirs_t = _causes(answer_t["details"]["causes"])
    # the order, and every text but the immutable spec's value (the API server prints its internal type)
    assert [(f, r) for f, r, _ in theirs_t] == [(f, r) for f, r, _ in ours_t] == [
        ("spec", "FieldValueInvalid"), (f"{TREQ}[cores]", "FieldValueInvalid")]
    assert theirs_t[1:] == ours_t[1:]
    ours_c = [(e.field, e.reason, e.body()) for e in check_update(alloc, stored_c, V138).errors]
    assert code_c == 422, answer_c
    assert _causes(answer_c["details"]["causes"]) == ours_c


def test_the_138_api_server_no_longer_serves_v1beta1() -> None:
    """Why no v1beta1 path needs mapping at 1.38: ``APILifecycleRemoved`` is 1.38, so a 1.38 (beta)
    binary drops the version — a v1beta1 flat request's declarative errors (``requests[0].capacity``,
    no ``exactly``) cannot occur."""
    from realapi import require_version, run

    require_version("1.38")
    beta = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "beta"},
            "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}}}
    verdict = run([_write(beta)], kube_version="1.38").by_name("beta")
    assert verdict.code is None and "not served" in verdict.message, verdict.message


def _write(obj: dict[str, Any]) -> Path:
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="v138-")) / "case.yaml"
    path.write_text(yaml.safe_dump(obj, sort_keys=False))
    return path
