"""Opaque parameters nested thousands deep: a correct decision, never "internal error".

Kubernetes accepts JSON nested up to 10,000 levels, and ``opaque.parameters`` is free-form.
Defaulting (a deep copy), the 10 KiB size rule, update immutability (comparison), the Invalid
value of an immutable spec (rendering) and every report format must work at that depth —
the parser's depth limit is meant to be the only one.  The objects are built in Python (the
JSON parser is not under test here) and the interpreter's recursion limit is left as is.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from draguard.inventory import StaticInventory
from draguard.k8s.decode import Document
from draguard.k8s.finding import Severity
from draguard.report.admission import validation_response
from draguard.report.render import render
from draguard.review.pipeline import ReviewOptions, review_admission, review_documents

INVENTORY = StaticInventory([str(Path(__file__).parents[1] / "server" / "data" / "inventory.yaml")])
UNDER_10KIB = 5_000  # "[[[…]]]" costs 2 bytes a level: 5,000 levels fit in the 10 KiB limit
OVER_10KIB = 10_000


def deep_list(levels: int) -> list[Any]:
    root: list[Any] = []
    node = root
    for _ in range(levels - 1):
        child: list[Any] = []
        node.append(child)
        node = child
    return root


def claim(memory: str, parameters: Any, name: str = "deep") -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {
            "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                                                      "capacity": {"requests": {"memory": memory}}}}],
            "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com", "parameters": parameters}}],
        }},
    }


def template(memory: str, parameters: Any) -> dict[str, Any]:
    inner = claim(memory, parameters)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": inner["metadata"],
            "spec": {"spec": inner["spec"]}}


def admit(obj: dict[str, Any], operation: str = "CREATE", old: dict[str, Any] | None = None) -> Any:
    return review_admission(kind=obj["kind"], operation=operation, obj=obj, old_obj=old, namespace="default",
                            inventory=INVENTORY.snapshot(), inventory_problem=None,
                            options=ReviewOptions(admission=True))


def reasons(review: Any) -> set[str]:
    return {f.reason for f in review.findings}


def test_the_depth_is_beyond_the_interpreters_recursion_limit() -> None:
    assert sys.getrecursionlimit() < UNDER_10KIB


def test_unsatisfiable_claim_with_deep_parameters_is_denied_not_allowed_as_internal_error() -> None:
    review = admit(claim("500Gi", {"p": deep_list(UNDER_10KIB)}))
    assert reasons(review) == {"Unsatisfiable"}
    response = validation_response("u", review, kind="ResourceClaim", name="deep")
    assert response["allowed"] is False and response["status"]["code"] == 422


def test_satisfiable_claim_with_deep_parameters_is_allowed() -> None:
    review = admit(claim("8Gi", {"p": deep_list(UNDER_10KIB)}))
    assert not [f for f in review.findings if f.severity == Severity.ERROR]


def test_deep_parameters_over_10kib_are_too_long() -> None:
    review = admit(claim("8Gi", {"p": deep_list(OVER_10KIB)}))
    assert reasons(review) == {"FieldValueTooLong"}


def test_update_compares_deep_specs() -> None:
    same = admit(claim("8Gi", {"p": deep_list(OVER_10KIB)}), "UPDATE", old=claim("8Gi", {"p": deep_list(OVER_10KIB)}))
    assert not same.findings
    changed_old = claim("8Gi", {"p": deep_list(OVER_10KIB), "q": 1})
    changed = admit(claim("8Gi", {"p": deep_list(OVER_10KIB)}), "UPDATE", old=changed_old)
    assert reasons(changed) == {"FieldValueInvalid"}
    assert "field is immutable" in changed.findings[0].message


def test_template_update_renders_the_deep_immutable_spec() -> None:
    new, old = template("8Gi", {"p": deep_list(UNDER_10KIB)}), template("9Gi", {"p": deep_list(UNDER_10KIB)})
    review = admit(new, "UPDATE", old=old)
    assert reasons(review) == {"FieldValueInvalid"}
    message = review.findings[0].message
    assert "field is immutable" in message and "[" * UNDER_10KIB in message


@pytest.mark.parametrize("fmt", ["json", "text", "junit", "sarif"])
def test_lint_reports_deep_objects_in_every_format(fmt: Any) -> None:
    documents = [Document(obj=claim("500Gi", {"p": deep_list(UNDER_10KIB)})),
                 Document(obj=claim("8Gi", {"p": deep_list(OVER_10KIB)}, name="too-long"))]
    review = review_documents(documents, inventory=INVENTORY.snapshot(), options=ReviewOptions(show_mutations=True))
    assert sorted(f.reason for f in review.findings) == ["FieldValueTooLong", "Unsatisfiable"]
    out = render(review, fmt)
    if fmt == "json":
        assert json.loads(out)["summary"]["errors"] == 2


def test_deep_values_where_a_string_belongs_are_described_not_repr_d() -> None:
    """Found by the fuzz job: ``apiVersion`` set to a deep array made the message's ``repr`` recurse."""
    obj = claim("8Gi", {"p": 1})
    obj["apiVersion"] = deep_list(UNDER_10KIB)
    review = review_documents([Document(obj=obj)], inventory=INVENTORY.snapshot())
    assert any("apiVersion must be a string" in f.message for f in review.findings)


def test_describe_is_short_and_never_recurses() -> None:
    from draguard.k8s import describe

    assert describe("v1") == "'v1'" and describe(None) == "None" and describe(3) == "3"
    assert describe(deep_list(UNDER_10KIB)) == "<array>" and describe({"a": deep_list(UNDER_10KIB)}) == "<object>"
    long = describe("x" * 1_000_000)
    assert len(long) <= 80 and long.startswith("'xxx")


def test_a_node_named_with_a_deep_value_among_linted_documents() -> None:
    """Found by make fuzz: merging inventory objects took ``str()`` of a Node's deep name."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": deep_list(UNDER_10KIB)}}
    review = review_documents([Document(obj=node), Document(obj=claim("8Gi", {"p": 1}))],
                              inventory=INVENTORY.snapshot())
    assert not [f for f in review.findings if f.severity == Severity.ERROR]
