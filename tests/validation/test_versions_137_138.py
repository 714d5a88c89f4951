"""What the API servers of Kubernetes 1.37 and 1.38 validate differently from 1.36 (app/validation/deltas.py).

Every change is shown both ways: rejected — exact path, cause and message of the upstream source
(``k8s.io/kubernetes`` v1.37.2 / v1.38.0-beta.0 ``pkg/apis/resource/validation``) — at the first
target that has it, and accepted at the target before it (or with the gate off).  The cases follow
the upstream tests of the PRs named, rebuilt from their semantics.
"""

from __future__ import annotations

from typing import Any

import pytest
from draguard.k8s import Target
from draguard.validation import ValidationContext

from .builders import claim, exact, multi_device, policy_slice, rslice, template, with_
from .support import check, check_update, lines

V136 = ValidationContext(target=Target("1.36"))
V137 = ValidationContext(target=Target("1.37"))
V137_FRACTIONAL = ValidationContext(target=Target("1.37", {"DRAFractionalCapacityRange": True}))
V138 = ValidationContext(target=Target("1.38"))

P = "spec.devices[0].capacity[memory].requestPolicy"
R = f"{P}.validRange"


def range_slice(rng: dict[str, Any], default: str, value: str = "10Gi") -> dict[str, Any]:
    return policy_slice({"default": default, "validRange": rng}, value=value)


# --------------------------------------------------------------------------- requestPolicy (1.37)
def test_step_zero_is_rejected_at_every_target() -> None:
    """kubernetes#139698.  1.36.2 and 1.36.3 have no such check (not backported): their step
    arithmetic divides by zero, an internal error, so no 1.36 server ever stores the object."""
    obj = range_slice({"min": "1Gi", "step": "0"}, "1Gi")
    want = [f'{R}.step: Invalid value: "0": must be greater than zero']
    assert lines(check(obj, V136)) == want
    assert lines(check(obj, V137)) == want
    assert lines(check(obj, V138)) == want


def test_negative_step_rejected_from_137_accepted_by_136() -> None:
    obj = range_slice({"min": "1Gi", "step": "-1Gi"}, "1Gi")
    assert lines(check(obj, V137)) == [f'{R}.step: Invalid value: "-1Gi": must be greater than zero']
    assert lines(check(obj, V136)) == []  # (default − min) % −1Gi == 0 in 1.36's whole units


def test_negative_bound_with_step_rejected_from_137() -> None:
    """kubernetes#140666: with a step, every bound must be in [0, MaxInt64] before the arithmetic."""
    obj = range_slice({"min": "-1", "step": "1"}, "0", value="10")
    assert lines(check(obj, V137)) == [f'{R}.min: Invalid value: "-1": must be greater than or equal to 0']
    assert lines(check(obj, V136)) == []


def test_negative_bounds_without_step_stay_accepted() -> None:
    obj = range_slice({"min": "-1"}, "-1", value="10")
    assert lines(check(obj, V137)) == []
    assert lines(check(obj, V138)) == []


def test_step_beyond_int64_rejected_from_137() -> None:
    obj = range_slice({"min": "0", "step": "9223372036854775808"}, "0", value="9223372036854775808")
    assert lines(check(obj, V137)) == [
        f'{R}.step: Invalid value: "9223372036854775808": must not be larger than 9223372036854775807'
    ]
    # 1.36 reads the step as −2^63 (Go's wrap-around) and finds 0 a multiple of it
    assert lines(check(obj, V136)) == []


def test_step_at_int64_max_is_accepted() -> None:
    obj = range_slice({"min": "0", "step": "9223372036854775807"}, "0", value="9223372036854775807")
    assert lines(check(obj, V137)) == []


def test_default_outside_the_range_is_reported_on_default_from_137() -> None:
    obj = range_slice({"min": "20Gi", "max": "1Gi"}, "2Gi", value="10Gi")
    assert lines(check(obj, V137)) == [
        f'{R}.min: Invalid value: "20Gi": min is larger than capacity value: 10Gi',
        f'{R}.default: Invalid value: "2Gi": default is less than min: 20Gi',
        f'{R}.max: Invalid value: "20Gi": min is larger than max: 1Gi',
        f'{R}.default: Invalid value: "2Gi": default is more than max: 1Gi',
    ]
    assert lines(check(obj, V136)) == [
        f'{R}.min: Invalid value: "20Gi": min is larger than capacity value: 10Gi',
        f'{R}.min: Invalid value: "2Gi": default is less than min: 20Gi',
        f'{R}.max: Invalid value: "20Gi": min is larger than max: 1Gi',
        f'{R}.max: Invalid value: "2Gi": default is more than max: 1Gi',
    ]


# --------------------------------------------------------------------------- fractional ranges (gate)
MISALIGNED = range_slice({"min": "200m", "max": "1", "step": "100m"}, "250m", value="1")


@pytest.mark.parametrize("ctx", [V137_FRACTIONAL, V138], ids=["1.37+gate", "1.38"])
def test_fractional_step_uses_milli_units_with_the_gate(ctx: ValidationContext) -> None:
    assert lines(check(MISALIGNED, ctx)) == [
        f'{R}.step: Invalid value: "250m": value is not a multiple of a given step (100m) from (200m)'
    ]
    aligned = range_slice({"min": "200m", "max": "1", "step": "100m"}, "200m", value="1")
    assert lines(check(aligned, ctx)) == []


def test_fractional_values_are_read_as_whole_units_without_the_gate() -> None:
    """1.36 and 1.37 by default neither reject nor rewrite milli values: ``Value()`` rounds them up
    to whole units, so 250m, 200m and 100m all read as 1 and nothing is off the grid."""
    assert lines(check(MISALIGNED, V137)) == []
    assert lines(check(MISALIGNED, V136)) == []


def test_fractional_default_alone_takes_the_milli_path() -> None:
    obj = range_slice({"min": "0", "step": "1"}, "100m", value="10")
    assert lines(check(obj, V138)) == [
        f'{R}.step: Invalid value: "100m": value is not a multiple of a given step (1) from (0)'
    ]
    assert lines(check(obj, V137)) == []


def test_values_finer_than_milli_cannot_be_represented_with_the_gate() -> None:
    obj = range_slice({"min": "10u"}, "20u", value="1")
    assert lines(check(obj, V137_FRACTIONAL)) == [
        f'{R}.default: Invalid value: "20u": value cannot be represented as a milli value',
        f'{R}.min: Invalid value: "10u": value cannot be represented as a milli value',
    ]
    assert lines(check(obj, V137)) == []


def test_values_beyond_the_milli_range_cannot_be_represented_with_the_gate() -> None:
    obj = range_slice({"min": "10P", "step": "100m"}, "20P", value="100P")
    assert lines(check(obj, V138)) == [
        f'{R}.default: Invalid value: "20P": value cannot be represented as a milli value',
        f'{R}.min: Invalid value: "10P": value cannot be represented as a milli value',
    ]


def test_valid_values_are_unique_by_exact_value_with_the_gate() -> None:
    obj = policy_slice({"default": "100m", "validValues": ["100m", "200m"]}, value="1")
    assert lines(check(obj, V137)) == [f'{P}.validValues[1]: Duplicate value: "1"']
    assert lines(check(obj, V137_FRACTIONAL)) == []
    assert lines(check(obj, V138)) == []


def test_equal_valid_values_are_still_duplicates_with_the_gate() -> None:
    obj = policy_slice({"default": "1Ki", "validValues": ["1Ki", "1024"]}, value="10Ki")
    assert lines(check(obj, V138)) == [f'{P}.validValues[1]: Duplicate value: "1024"']
    milli = policy_slice({"default": "500m", "validValues": ["500m", "500m"]}, value="1")
    assert lines(check(milli, V138)) == [f'{P}.validValues[1]: Duplicate value: "0.500"']


def test_unchanged_capacity_is_ratcheted_from_137() -> None:
    """kubernetes#140161: an update that leaves a device's capacity map alone does not re-check it."""
    stored = range_slice({"min": "1Gi", "step": "-1Gi"}, "1Gi")  # accepted by a 1.36 server
    updated = with_(stored, "metadata.labels", {"a": "b"})
    assert lines(check_update(updated, stored, V137)) == []
    bad = policy_slice({"validValues": ["1Gi"]})
    relabelled = with_(bad, "metadata.labels", {"a": "b"})
    assert lines(check_update(relabelled, bad, V136)) == [
        f"{P}.default: Required value: required when validValues is defined"
    ]
    assert lines(check_update(relabelled, bad, V137)) == []


# --------------------------------------------------------------------------- names (1.38)
SLASHES = rslice([{"name": "dev-0", "attributes": {"x.example.com/y/z": {"string": "v"}}}])


def test_qualified_name_with_two_slashes_rejected_from_138() -> None:
    """kubernetes#141644."""
    assert lines(check(SLASHES, V138)) == [
        'spec.devices[0].attributes: Invalid value: "x.example.com/y/z": must not contain more than one slash'
    ]
    assert lines(check(SLASHES, V137)) == []


def test_two_slashes_in_a_capacity_name_and_a_constraint_from_138() -> None:
    cap = rslice([multi_device({"a.example.com/b/c": {"value": "1"}})])
    assert lines(check(cap, V138)) == [
        'spec.devices[0].capacity: Invalid value: "a.example.com/b/c": must not contain more than one slash'
    ]
    assert lines(check(cap, V137)) == []
    c = claim(constraints=[{"matchAttribute": "a.example.com/b/c"}])
    assert lines(check(c, V138)) == [
        'spec.devices.constraints[0].matchAttribute: Invalid value: "a.example.com/b/c": '
        "must not contain more than one slash"
    ]
    assert lines(check(c, V137)) == []


def test_unchanged_device_list_is_ratcheted_in_138() -> None:
    bumped = with_(SLASHES, "spec.pool.generation", 2)
    assert lines(check_update(bumped, SLASHES, V138)) == []
    touched = with_(SLASHES, "spec.devices.0.attributes", {"x.example.com/y/z": {"string": "v"}, "other": {"int": 1}})
    assert lines(check_update(touched, SLASHES, V138)) == [
        'spec.devices[0].attributes: Invalid value: "x.example.com/y/z": must not contain more than one slash'
    ]


def test_138_revalidates_every_device_of_a_changed_list() -> None:
    """1.37 skips a device's unchanged capacity map; 1.38 re-checks the whole list once it changed."""
    bad = range_slice({"min": "1Gi", "step": "-1Gi"}, "1Gi")
    grown = with_(bad, "spec.devices", [*bad["spec"]["devices"], {"name": "dev-1"}])
    want = [f'{R}.step: Invalid value: "-1Gi": must be greater than zero']
    assert lines(check_update(grown, bad, V138)) == want
    assert lines(check_update(grown, bad, V137)) == []


# --------------------------------------------------------------------------- per-device node selector (1.38)
TWO_TERMS = {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "a", "operator": "In", "values": ["x"]}]},
    {"matchExpressions": [{"key": "b", "operator": "In", "values": ["y"]}]},
]}
PER_DEVICE = rslice(
    [{"name": "dev-0", "nodeSelector": TWO_TERMS}], nodeName=None, perDeviceNodeSelection=True
)


def test_per_device_node_selector_with_two_terms_rejected_from_138() -> None:
    """kubernetes#141213 (spec.nodeSelector already had this rule)."""
    errs = check(PER_DEVICE, V138).errors
    assert [(e.field, e.reason) for e in errs] == [
        ("spec.devices[0].nodeSelector.nodeSelectorTerms", "FieldValueInvalid")
    ]
    assert errs[0].detail == "must have exactly one node selector term"
    assert lines(check(PER_DEVICE, V137)) == []


def test_stored_two_term_device_selector_is_ratcheted_in_138() -> None:
    bumped = with_(PER_DEVICE, "spec.pool.generation", 2)
    assert lines(check_update(bumped, PER_DEVICE, V138)) == []
    touched = with_(PER_DEVICE, "spec.devices.0.attributes", {"foo": {"string": "bar"}})
    assert [e.field for e in check_update(touched, PER_DEVICE, V138).errors] == [
        "spec.devices[0].nodeSelector.nodeSelectorTerms"
    ]


# --------------------------------------------------------------------------- capacity request names (1.38)
C_IDENTIFIER = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
    "characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is "
    "'[A-Za-z_][A-Za-z0-9_]*')"
)


def test_capacity_request_names_are_checked_from_138() -> None:
    """kubernetes#142202: keys are qualified names, errors at the map's own path."""
    bad = claim([exact(capacity={"requests": {"1bad": "1Gi"}})])
    assert lines(check(bad, V138)) == [
        f'spec.devices.requests[0].exactly.capacity.requests: Invalid value: "1bad": {C_IDENTIFIER}'
    ]
    assert lines(check(bad, V137)) == []
    sub = claim([{"name": "gpu", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu.example.com", "capacity": {"requests": {"1bad": "1Gi"}}}
    ]}])
    assert lines(check(sub, V138)) == [
        f'spec.devices.requests[0].firstAvailable[0].capacity.requests: Invalid value: "1bad": {C_IDENTIFIER}'
    ]
    assert lines(check(sub, V137)) == []


def test_short_and_fully_qualified_capacity_request_names_are_accepted() -> None:
    ok = claim([exact(capacity={"requests": {"memory": "1Gi", "gpu.example.com/cores": "2"}})])
    assert lines(check(ok, V138)) == []


def test_stored_template_capacity_names_are_ratcheted_in_138() -> None:
    stored = template([exact(capacity={"requests": {"1bad": "1Gi"}})])
    relabelled = with_(stored, "metadata.labels", {"a": "b"})
    assert lines(check_update(relabelled, stored, V138)) == []
    changed = template([exact(capacity={"requests": {"2bad": "1Gi"}})])
    errs = check_update(changed, stored, V138).errors
    assert ("spec.spec.devices.requests[0].exactly.capacity.requests", "FieldValueInvalid") in {
        (e.field, e.reason) for e in errs
    }


def test_consumed_capacity_names_are_checked_from_138() -> None:
    c = claim()
    c["status"] = {"allocation": {"devices": {"results": [{
        "request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "dev-0",
        "consumedCapacity": {"1bad": "1Gi"},
    }]}}}
    assert lines(check(c, V138)) == [
        f'status.allocation.devices.results[0].consumedCapacity: Invalid value: "1bad": {C_IDENTIFIER}'
    ]
    assert lines(check(c, V137)) == []


# --------------------------------------------------------------------------- version attributes (1.38)
def test_version_numbers_have_at_most_18_digits_from_138() -> None:
    long = rslice([{"name": "dev-0", "attributes": {"fw": {"version": "1.2.1234567890123456789"}}}])
    assert lines(check(long, V138)) == [
        'spec.devices[0].attributes[fw].version: Invalid value: "1.2.1234567890123456789": '
        "must be a string compatible with semver.org spec 2.0.0, with at most 18 digits in numbers"
    ]
    assert lines(check(long, V137)) == []
    fits = rslice([{"name": "dev-0", "attributes": {"fw": {"version": "1.2.123456789012345678"}}}])
    assert lines(check(fits, V138)) == []


# --------------------------------------------------------------------------- capacity name lookup (1.38)
def test_capacity_request_names_resolve_with_the_driver_domain_at_138() -> None:
    """kubernetes#142202 (allocator ``resolveCapacityRequests``): the form a claim uses does not
    matter in 1.38; 1.37 matches exact keys only."""
    from draguard.capacity.names import capacity_names_for, resolve_capacity_name

    plain, qualified = {"bandwidth"}, {"nic.example.com/bandwidth"}
    with capacity_names_for(Target("1.37")):
        assert resolve_capacity_name("nic.example.com/bandwidth", "nic.example.com", plain) is None
        assert resolve_capacity_name("bandwidth", "nic.example.com", qualified) is None
    with capacity_names_for(Target("1.38")):
        assert resolve_capacity_name("nic.example.com/bandwidth", "nic.example.com", plain) == "bandwidth"
        assert resolve_capacity_name("bandwidth", "nic.example.com", qualified) == "nic.example.com/bandwidth"
        both = plain | qualified  # the qualified spelling wins, as the allocator's conversion does
        assert resolve_capacity_name("bandwidth", "nic.example.com", both) == "nic.example.com/bandwidth"
        assert resolve_capacity_name("other.example.com/bandwidth", "nic.example.com", plain) is None


def test_an_exact_name_proof_is_not_a_proof_for_138() -> None:
    from draguard.capacity.names import capacity_names_for
    from draguard.k8s import Note, Reason, Severity
    from draguard.satisfy import sound_for_target

    from .support import decode

    spec = decode(claim([exact(capacity={"requests": {"nic.example.com/bandwidth": "1G"}})])).spec  # type: ignore[union-attr]
    proof = [Note(Reason.UNSATISFIABLE, "no device offers bandwidth", None, Severity.ERROR)]
    assert sound_for_target(proof, spec, Target("1.37")) == proof
    assert [n.reason for n in sound_for_target(proof, spec, Target("1.38"))] == [Reason.SATISFIABILITY_UNKNOWN]
    with capacity_names_for(Target("1.38")):  # checked the 1.38 way: the proof stands
        assert sound_for_target(proof, spec, Target("1.38")) == proof
