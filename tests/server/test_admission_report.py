"""ObjectReview → AdmissionResponse, without a server: message form, causes, warning limits."""

from __future__ import annotations

import base64
import json

import pytest
from draguard.k8s.finding import Finding, ObjectRef, Severity
from draguard.report.admission import (
    MAX_CAUSES,
    denial_message,
    finding_warning,
    limit_warnings,
    mutation_response,
    validation_response,
)
from draguard.review.pipeline import ObjectReview

REF = ObjectRef(kind="ResourceClaim", namespace="default", name="c")


def err(field: str, message: str, reason: str = "FieldValueInvalid") -> Finding:
    return Finding.for_object(REF, Severity.ERROR, reason, message, field)


def test_single_error_message_is_bare() -> None:
    assert denial_message("ResourceClaim", "c", [err("spec.x", "Required value")]) == (
        'ResourceClaim.resource.k8s.io "c" is invalid: spec.x: Required value'
    )


def test_several_errors_are_bracketed_and_deduplicated() -> None:
    errors = [err("spec.a", "Required value"), err("spec.b", "Invalid value: 1"), err("spec.a", "Required value")]
    assert denial_message("DeviceClass", "gpu", errors) == (
        'DeviceClass.resource.k8s.io "gpu" is invalid: [spec.a: Required value, spec.b: Invalid value: 1]'
    )


def test_object_level_error_has_no_field_prefix() -> None:
    review = ObjectReview(ref=REF, findings=[err("", "request gpu can never be allocated", "Unsatisfiable")])
    response = validation_response("u", review, kind="ResourceClaim", name="c")
    assert response["status"]["message"].endswith("is invalid: request gpu can never be allocated")
    assert response["status"]["details"]["causes"] == [
        {"reason": "Unsatisfiable", "message": "request gpu can never be allocated", "field": ""}
    ]


def test_causes_are_capped() -> None:
    errors = [err(f"spec.f{i}", "Required value") for i in range(MAX_CAUSES + 7)]
    review = ObjectReview(ref=REF, findings=errors)
    status = validation_response("u", review, kind="ResourceClaim", name="c")["status"]
    assert len(status["details"]["causes"]) == MAX_CAUSES
    assert status["message"].endswith("and 7 more errors]")


def test_warnings_are_clipped_to_120_and_summarised() -> None:
    long = Finding.for_object(REF, Severity.WARNING, "LintStepZero", "x" * 300 + "\nsecond line", "spec.a")
    text = finding_warning(long)
    assert len(text) == 120 and text.endswith("...") and text.startswith("LintStepZero: xxx")
    many = limit_warnings([f"w{i}" for i in range(25)])
    assert len(many) == 10
    assert many[:9] == [f"w{i}" for i in range(9)]
    assert many[9] == "draguard: 16 more warnings; run draguard lint for the full list"
    assert limit_warnings(["a", "", "b"]) == ["a", "b"]


def test_denial_keeps_warnings_and_allow_has_no_status() -> None:
    review = ObjectReview(ref=REF, findings=[
        err("spec.a", "Required value"),
        Finding.for_object(REF, Severity.INFO, "CapacityDefaulted", "default 4Gi", "spec.b"),
    ])
    response = validation_response("u", review, kind="ResourceClaim", name="c")
    assert response["allowed"] is False and response["warnings"] == ["CapacityDefaulted: default 4Gi at spec.b"]
    allowed = validation_response("u", ObjectReview(ref=REF), kind="ResourceClaim", name="c")
    assert allowed == {"uid": "u", "allowed": True}


def test_mutation_response() -> None:
    review = ObjectReview(ref=REF, patch=[{"op": "add", "path": "/spec/x", "value": 1}],
                          patch_descriptions=["set x=1"])
    response = mutation_response("u", review)
    assert response["patchType"] == "JSONPatch"
    assert json.loads(base64.b64decode(response["patch"])) == review.patch
    assert response["warnings"] == ["CapacityDefaulted: set x=1"]
    assert mutation_response("u", ObjectReview(ref=REF)) == {"uid": "u", "allowed": True}


# ------------------------------------------------------------------ concise warnings (#13 item 5)
ROUNDED_FIELD = "spec.devices.requests[0].exactly.capacity.requests[memory]"
ROUNDED_MESSAGE = "request \"gpu\": 7Gi of memory will consume 10Gi (the devices' request policy rounds it up)"


def test_warning_puts_the_figure_first_from_the_checks_brief() -> None:
    rounded = Finding.for_object(REF, Severity.WARNING, "CapacityRounded", ROUNDED_MESSAGE, ROUNDED_FIELD,
                                 brief='7Gi->10Gi memory for request "gpu" (policy rounds up)')
    text = finding_warning(rounded)
    assert text.startswith("CapacityRounded: 7Gi->10Gi memory")
    assert len(text) <= 120 and "10Gi" in text


def test_without_a_brief_the_message_comes_before_the_field_and_keeps_its_figure() -> None:
    # the old order (reason: field: message) cut this one at "will consume…", dropping 10Gi
    rounded = Finding.for_object(REF, Severity.WARNING, "CapacityRounded", ROUNDED_MESSAGE, ROUNDED_FIELD)
    text = finding_warning(rounded)
    assert text.startswith('CapacityRounded: request "gpu": 7Gi of memory will consume 10Gi')
    assert len(text) <= 120


def test_the_field_is_added_only_when_it_fits() -> None:
    short = Finding.for_object(REF, Severity.WARNING, "LintMaxOffGrid", "round max down to 79Gi", "spec.a")
    assert finding_warning(short) == "LintMaxOffGrid: round max down to 79Gi at spec.a"


@pytest.mark.parametrize("pad", range(0, 12))
def test_a_number_is_never_cut_in_half(pad: int) -> None:
    # slide the figure 123456789Gi across the 120-character limit: it is whole or absent
    message = "a" * 10 + " " + "word " * 18 + "x" * pad + " 123456789Gi of memory requested"
    text = finding_warning(Finding.for_object(REF, Severity.WARNING, "LintX", message))
    assert len(text) <= 120
    tokens = text.removesuffix("...").split()
    assert all(t == "123456789Gi" for t in tokens if t[0].isdigit()), text


def test_the_summary_of_many_warnings_stays_within_the_limit() -> None:
    many = limit_warnings([f"CapacityRounded: {i}Gi->{i + 1}Gi memory" for i in range(30)])
    assert len(many) == 10 and all(len(w) <= 120 for w in many)
