"""The pipeline's decisions, door by door (no HTTP here; the server tests cover the wire)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from draguard.k8s.decode import decode_text
from draguard.k8s.finding import Severity
from draguard.review.pipeline import ReviewOptions, review_admission, review_documents
from test_robustness import CLAIM, INVENTORY, INVENTORY_OBJECTS

ADMISSION = ReviewOptions(admission=True)


def claim_asking(memory: str | None, name: str = "c") -> dict[str, Any]:
    obj = copy.deepcopy(CLAIM)
    obj["metadata"]["name"] = name
    exactly = obj["spec"]["devices"]["requests"][0]["exactly"]
    if memory is None:
        del exactly["capacity"]
    else:
        exactly["capacity"]["requests"]["memory"] = memory
    obj["spec"]["devices"]["constraints"] = []
    return obj


def admit(obj: dict[str, Any], operation: str = "CREATE", old: dict[str, Any] | None = None, **kw: Any) -> Any:
    return review_admission(
        kind=obj.get("kind", "ResourceClaim"), operation=operation, obj=obj, old_obj=old, namespace="default",
        inventory=kw.pop("inventory", INVENTORY), inventory_problem=kw.pop("problem", None),
        options=kw.pop("options", ADMISSION),
    )


def reasons(review: Any) -> set[tuple[str, str]]:
    return {(f.reason, f.severity.value) for f in review.findings}


def test_unsatisfiable_claim_is_denied_and_warn_mode_downgrades() -> None:
    review = admit(claim_asking("50Gi"))
    assert review.denied and ("Unsatisfiable", "error") in reasons(review)
    warned = admit(claim_asking("50Gi"), options=ReviewOptions(admission=True, deny=frozenset()))
    assert not warned.denied and ("Unsatisfiable", "warning") in reasons(warned)


def test_satisfiable_claim_is_allowed() -> None:
    review = admit(claim_asking("10Gi"))
    assert not review.denied
    assert "Unsatisfiable" not in {r for r, _ in reasons(review)}


def test_unsynced_inventory_allows_with_a_warning() -> None:
    review = admit(claim_asking("50Gi"), problem="inventory not synced yet")
    assert not review.denied
    assert ("SatisfiabilityUnknown", "warning") in reasons(review)


def test_update_of_a_claim_checks_only_immutability() -> None:
    old = claim_asking("50Gi")
    same = admit(copy.deepcopy(old), operation="UPDATE", old=old)
    assert not same.denied  # unsatisfiable, but specs are immutable: nothing new to decide
    changed = admit(claim_asking("10Gi"), operation="UPDATE", old=old)
    assert not changed.denied  # the API server enforces immutability before the webhook is called
    assert any(f.field == "spec" and "field is immutable" in f.message and "version skew" in f.message
               for f in changed.findings if f.severity is Severity.WARNING)
    assert _lint_update_denies(claim_asking("10Gi"), old)


def _lint_update_denies(new: Any, old: Any) -> bool:
    """Without the webhook's deny policy (a lint-like review) the same finding is an error."""
    from draguard.k8s.structure import structural_pass
    from draguard.validation import ValidationContext, validate_update

    result = validate_update(structural_pass("ResourceClaim", new).model, structural_pass("ResourceClaim", old).model,
                             ValidationContext())
    return any("field is immutable" in e.body() for e in result.errors)


def test_mutation_fills_the_default_on_create_only() -> None:
    created = admit(claim_asking(None))
    assert created.patch == [
        {"op": "add", "path": "/spec/devices/requests/0/exactly/capacity", "value": {"requests": {"memory": "5Gi"}}}
    ]
    no_mutate = admit(claim_asking(None), options=ReviewOptions(admission=True, mutate=False))
    assert no_mutate.patch == []
    assert admit(claim_asking(None), operation="UPDATE", old=claim_asking(None)).patch == []


def test_templates_are_checked_but_never_patched() -> None:
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": "default"},
        "spec": {"spec": claim_asking(None)["spec"]},
    }
    review = admit(template)
    assert review.patch == [] and not review.denied
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["capacity"] = {"requests": {"memory": "50Gi"}}
    assert ("Unsatisfiable", "error") in reasons(admit(template))


def test_resource_slices_are_validated_never_checked_for_satisfiability() -> None:
    bad = copy.deepcopy(INVENTORY_OBJECTS[1])
    bad["spec"]["devices"][0]["capacity"]["memory"]["requestPolicy"]["validRange"]["min"] = "50Gi"
    review = admit(bad)  # parity findings warn at the webhook: the API server validated first
    assert not review.denied
    assert any(f.reason.startswith("FieldValue") and f.severity is Severity.WARNING for f in review.findings)
    assert "Unsatisfiable" not in {f.reason for f in review.findings}


def test_unknown_kinds_are_allowed_with_a_warning() -> None:
    review = review_admission(kind="ConfigMap", operation="CREATE", obj={"kind": "ConfigMap"}, old_obj=None,
                              namespace="default", inventory=INVENTORY, inventory_problem=None, options=ADMISSION)
    assert not review.denied and ("UnsupportedKind", "warning") in reasons(review)


def _lint(text: str, inventory: Any = INVENTORY) -> Any:
    decoded = decode_text(text, "x.yaml")
    return review_documents(decoded.documents, inventory=inventory, inventory_objects=INVENTORY_OBJECTS,
                            decode_findings=decoded.findings)


SECOND_NODE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n2-gpu}
spec:
  driver: gpu.example.com
  nodeName: n2
  pool: {name: n2, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    allowMultipleAllocations: true
    attributes: {model: {string: a100}}
    capacity:
      memory: {value: 80Gi, requestPolicy: {default: 5Gi, validRange: {min: 5Gi, step: 5Gi}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: big}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        capacity: {requests: {memory: 50Gi}}
"""


def test_linted_slices_join_a_given_inventory() -> None:
    review = _lint(SECOND_NODE)
    assert not any(f.reason == "Unsatisfiable" for f in review.findings)


def test_linted_slices_do_not_make_an_inventory_by_themselves() -> None:
    review = _lint(SECOND_NODE, inventory=None)
    assert not any(f.reason in ("Unsatisfiable", "SatisfiabilityUnknown") for f in review.findings)


def test_invalid_linted_slices_are_not_merged() -> None:
    broken = SECOND_NODE.replace("min: 5Gi, step: 5Gi", "min: 500Gi, step: 5Gi")
    review = _lint(broken)
    assert any(f.reason == "Unsatisfiable" for f in review.findings)
    assert any(f.kind == "ResourceSlice" and f.severity is Severity.ERROR for f in review.findings)


_TOO_DEEP_FOR_CEL_PYTHON = " && ".join(f'device.attributes["gpu.example.com"].index != {i}' for i in range(110))


@pytest.mark.parametrize(
    "expression", ['device.attributes["gpu.example.com"].?model.orValue("") == "x"', _TOO_DEEP_FOR_CEL_PYTHON]
)
def test_selector_draguard_cannot_evaluate_is_allowed_with_warnings(expression: str) -> None:
    obj = claim_asking("10Gi")
    exactly = obj["spec"]["devices"]["requests"][0]["exactly"]
    exactly["selectors"] = [{"cel": {"expression": expression}}]
    review = admit(obj)
    assert not review.denied
    assert ("SelectorNotChecked", "warning") in reasons(review)
    assert ("SatisfiabilityUnknown", "warning") in reasons(review)
