"""What may deny at the webhook (issue #10, docs/guides/contract.md "What denies, what warns, and why"): only reasons in ``--deny``."""

from __future__ import annotations

import argparse

import pytest
from draguard.k8s.finding import Severity
from draguard.review.pipeline import (
    DEFAULT_DENY,
    DenyPolicyError,
    ReviewOptions,
    parse_deny,
    review_documents,
)
from draguard.server.cli_serve import UsageError, add_serve_arguments, deny_reasons
from test_pipeline import admit, claim_asking, reasons


def test_default_denies_only_proofs() -> None:
    assert frozenset({"Unsatisfiable", "SelectorRuntimeError"}) == DEFAULT_DENY
    assert admit(claim_asking("50Gi")).denied


@pytest.mark.parametrize("text", ["Unsatisfiable", "Unsatisfiable,SelectorRuntimeError", "LintMaxOffGrid", "none", ""])
def test_parse_deny_accepts_proofs_and_policies(text: str) -> None:
    got = parse_deny(text)
    assert got <= {"Unsatisfiable", "SelectorRuntimeError", "LintMaxOffGrid"}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("FieldValueInvalid", "API server validated the object first"),
        ("Unsatisfiable,DecodeError", "API server validated"),
        ("SatisfiabilityUnknown", "must not deny"),
        ("CapacityRounded", "use SelectorRuntimeError, Unsatisfiable or a Lint"),
    ],
)
def test_parse_deny_rejects_parity_and_undecided_reasons(text: str, why: str) -> None:
    with pytest.raises(DenyPolicyError, match=why):
        parse_deny(text)


def _serve_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    return parser.parse_args(list(argv))


def test_unsatisfiable_flag_maps_onto_deny() -> None:
    a = _serve_args("--unsatisfiable", "warn")
    assert deny_reasons(a.deny, a.unsatisfiable) == frozenset()
    a = _serve_args("--deny", "LintMaxOffGrid", "--unsatisfiable", "deny")
    assert deny_reasons(a.deny, a.unsatisfiable) == {"LintMaxOffGrid", "Unsatisfiable"}
    a = _serve_args()
    assert deny_reasons(a.deny, a.unsatisfiable) == DEFAULT_DENY
    with pytest.raises(UsageError, match="--deny: 'FieldValueRequired' cannot deny"):
        deny_reasons("FieldValueRequired", None)


def test_nothing_denies_with_deny_none() -> None:
    review = admit(claim_asking("50Gi"), options=ReviewOptions(admission=True, deny=parse_deny("none")))
    assert not review.denied and ("Unsatisfiable", "warning") in reasons(review)


def test_a_lint_policy_in_deny_turns_its_warning_into_a_denial() -> None:
    zero = claim_asking("0")
    plain = admit(zero)
    assert not plain.denied and ("LintNegativeCapacityRequest", "warning") in reasons(plain)
    policed = admit(zero, options=ReviewOptions(admission=True, deny=frozenset({"LintNegativeCapacityRequest"})))
    assert policed.denied and ("LintNegativeCapacityRequest", "error") in reasons(policed)


def test_parity_error_is_a_skew_warning_at_the_webhook_and_an_error_in_lint() -> None:
    bad = claim_asking("10Gi")
    bad["spec"]["devices"]["requests"][0]["name"] = "GPU_x"
    review = admit(bad, options=ReviewOptions(admission=True, deny=frozenset({"Unsatisfiable", "LintMaxOffGrid"})))
    assert not review.denied
    warned = [f for f in review.findings if f.reason == "FieldValueInvalid"]
    assert warned and all(f.severity is Severity.WARNING and "version skew?" in f.message for f in warned)
    import yaml
    from draguard.k8s.decode import decode_text

    linted = review_documents(decode_text(yaml.safe_dump(bad), "x.yaml").documents, inventory=None)
    assert any(f.reason == "FieldValueInvalid" and f.severity is Severity.ERROR for f in linted.findings)
