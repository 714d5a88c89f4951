"""Work bounded by the review's deadline (issue #10): budgets stop CEL, compilation and search."""

from __future__ import annotations

import pytest
import yaml
from draguard import satisfy
from draguard.cel import compile_selector
from draguard.cel import selector as cel_selector
from draguard.inventory import build_inventory
from draguard.k8s import Budget, BudgetExceeded, budget_scope, check_budget, current_budget, decode_text
from draguard.review import ReviewOptions, pipeline, review_documents
from draguard.satisfy import SEARCH_DEADLINE
from draguard.validation.device_selectors import unchecked_selector_notes
from test_pipeline import admit, claim_asking
from test_robustness import INVENTORY_OBJECTS

ITEMS = "[" + ",".join(str(i) for i in range(45)) + "]"
HEAVY = f"{ITEMS}.all(x, {ITEMS}.all(y, {ITEMS}.all(z, x + y + z >= 0)))"  # legal, ~2 s in cel-python


def _device() -> object:
    inv = build_inventory([{
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
        "spec": {"driver": "d", "nodeName": "n", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "a"}]},
    }])
    return inv.devices[0].cel


def test_budget_scope_and_check() -> None:
    assert current_budget() is None
    check_budget("nothing")  # no scope: never raises
    with budget_scope(60) as outer:
        assert outer is not None and not outer.spent()
        check_budget("plenty")
        with budget_scope(0) as inner:
            assert inner is not None and inner.deadline < outer.deadline  # the tighter one wins
            with pytest.raises(BudgetExceeded, match="spent"):
                check_budget("spent")
        with budget_scope(3600) as wider:
            assert wider is outer  # a wider inner scope does not extend the outer deadline
        check_budget("outer again")
    assert current_budget() is None


def test_selector_over_the_remaining_budget_is_refused_before_running_and_not_cached() -> None:
    compiled = compile_selector(HEAVY)
    assert not hasattr(compiled, "kind"), compiled  # the API server accepts it (cost under 1,000,000)
    device = _device()
    with budget_scope(1.0), pytest.raises(BudgetExceeded, match=r"estimated cost [\d,]+, ~\d\.\ds per device"):
        compiled.evaluate(device)  # type: ignore[union-attr, arg-type]
    cheap = compile_selector("[1, 2, 3].all(x, x > 0)")
    with budget_scope(1.0):
        assert cheap.evaluate(device) is True  # type: ignore[union-attr, arg-type]


def test_long_comprehension_stops_when_the_budget_is_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cel_selector, "_refuse_over_budget", lambda cost: None)  # only the loop check
    compiled = compile_selector("[" + ",".join(str(i) for i in range(600)) + "].all(x, x >= 0)")
    device = _device()
    with budget_scope(0), pytest.raises(BudgetExceeded, match="CEL evaluation"):
        compiled.evaluate(device)  # type: ignore[union-attr, arg-type]
    assert compiled.evaluate(device) is True  # type: ignore[union-attr, arg-type]  # nothing wrong was cached


def test_admission_review_out_of_budget_is_allowed_and_marked_fail_open() -> None:
    heavy = claim_asking("10Gi")
    heavy["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [{"cel": {"expression": HEAVY}}]
    with budget_scope(1.0):
        review = admit(heavy)
    assert not review.denied and review.fail_open.startswith("a CEL selector of estimated cost")
    unknown = [f for f in review.findings if f.reason == "SatisfiabilityUnknown"]
    assert unknown and "time budget ran out" in unknown[0].message
    with budget_scope(0):  # spent before validation even starts compiling selectors
        spent = admit(claim_asking("50Gi", name="other"))
    assert not spent.denied and [f.reason for f in spent.findings] == ["BudgetExceeded"]
    assert spent.fail_open == "selector compilation"
    assert admit(claim_asking("50Gi", name="third")).denied  # with time, the same claim is proven unsatisfiable


def _claim_with_selectors(n: int) -> object:
    from draguard.k8s import ResourceClaim

    sels = [{"cel": {"expression": f'device.attributes["d"].?x{i}.orValue(0) == 0'}} for i in range(n)]
    return ResourceClaim.model_validate({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "d"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "x", "selectors": sels}}]}},
    })


def test_selectors_past_the_api_limit_are_never_compiled() -> None:
    assert len(unchecked_selector_notes(_claim_with_selectors(32))) == 32  # type: ignore[arg-type]
    assert unchecked_selector_notes(_claim_with_selectors(33)) == []  # type: ignore[arg-type]  # TooMany, no work


POD_OF_CLAIM = """
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimName: c}]
"""


DEPLOYMENT_OF_CLAIM = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
      resourceClaims: [{name: gpu, resourceClaimName: c}]
"""


def _claim_and_pod(options: ReviewOptions) -> dict[str, list[tuple[str, str, str]]]:
    """A batch of a 50Gi claim (the one GPU has 40Gi) and a Pod that uses it, on a fresh snapshot
    (answers are remembered per snapshot, and a remembered proof needs no budget)."""
    text = yaml.safe_dump(claim_asking("50Gi")) + "---\n" + POD_OF_CLAIM
    review = review_documents(decode_text(text, "batch.yaml").documents, inventory=build_inventory(INVENTORY_OBJECTS),
                              options=options)
    out: dict[str, list[tuple[str, str, str]]] = {}
    for obj in review.objects:
        out[obj.ref.kind] = [(f.reason, f.severity.value, str(f.extra.get("fail_open", ""))) for f in obj.findings]
    return out


def test_the_deadline_option_bounds_the_claim_search_and_the_pod_search_alike() -> None:
    spent = _claim_and_pod(ReviewOptions(deadline_seconds=0.0))
    assert spent == {"ResourceClaim": [("SatisfiabilityUnknown", "warning", SEARCH_DEADLINE)],
                     "Pod": [("SatisfiabilityUnknown", "warning", SEARCH_DEADLINE)]}
    generous = _claim_and_pod(ReviewOptions(deadline_seconds=60.0))
    assert generous == {"ResourceClaim": [("Unsatisfiable", "error", "")], "Pod": [("Unsatisfiable", "error", "")]}


def test_every_search_of_one_review_shares_its_one_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """The claim search and its "now" check, the pod search and its replica count: one object each
    review, made from the deadline option and never past the door's scope."""
    seen: dict[str, list[object]] = {}

    def spy(module: object, name: str) -> None:
        real = getattr(module, name)

        def recording(*args: object, **kw: object) -> object:
            seen.setdefault(name, []).append(kw.get("budget"))
            return real(*args, **kw)

        monkeypatch.setattr(module, name, recording)

    for name in ("check_claim_spec", "capacity_in_use"):
        spy(pipeline, name)
    for name in ("check_pod", "count_replicas"):  # the pipeline imports the pod engine where it needs it
        spy(satisfy, name)
    text = yaml.safe_dump(claim_asking("10Gi")) + "---\n" + DEPLOYMENT_OF_CLAIM
    with budget_scope(30.0) as door:
        review_documents(decode_text(text, "batch.yaml").documents, inventory=build_inventory(INVENTORY_OBJECTS),
                         options=ReviewOptions(deadline_seconds=3600.0))
    assert door is not None
    claim_budgets = seen["check_claim_spec"] + seen["capacity_in_use"]
    pod_budgets = seen["check_pod"] + seen["count_replicas"]
    assert len(claim_budgets) == 2 and len(pod_budgets) == 2
    assert all(b is door for b in claim_budgets + pod_budgets)  # the door's ends first: it is the one
    seen.clear()
    review_documents(decode_text(text, "batch.yaml").documents, inventory=build_inventory(INVENTORY_OBJECTS),
                     options=ReviewOptions(deadline_seconds=5.0))
    claim_budgets = seen["check_claim_spec"] + seen["capacity_in_use"]
    pod_budgets = seen["check_pod"] + seen["count_replicas"]
    assert isinstance(claim_budgets[0], Budget) and all(b is claim_budgets[0] for b in claim_budgets)
    assert isinstance(pod_budgets[0], Budget) and all(b is pod_budgets[0] for b in pod_budgets)


def test_a_patch_the_budget_stopped_is_none_and_says_so_with_fail_open(monkeypatch: pytest.MonkeyPatch) -> None:
    def spent(*args: object) -> object:
        raise BudgetExceeded("selector compilation")

    monkeypatch.setattr(pipeline, "default_fill_patch", spent)
    review = admit(claim_asking(None, name="m"), options=ReviewOptions(admission=True, mutate=True))
    assert review.patch == [] and review.fail_open == "selector compilation"
    assert [(f.reason, f.severity.value) for f in review.findings if f.extra.get("fail_open")] == [("BudgetExceeded", "info")]
