"""CapacityInUse: fits an empty cluster, not today's allocations — a warning with figures, never a
denial, and never a name from another namespace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from dra_builders import DRIVER, cap, dclass, device, node, rslice
from draguard.inventory import StaticInventory
from draguard.k8s import Budget, Reason, ResourceClaimSpec, Severity, decode_text
from draguard.k8s import Path as K8sPath
from draguard.review import DenyPolicyError, ReviewOptions, parse_deny, review_admission, review_documents
from draguard.satisfy import (
    SEARCH_DEADLINE,
    PodClaim,
    PodRequest,
    capacity_in_use,
    check_claim_spec,
    check_pod,
    pod_capacity_in_use,
)


def held(name: str, ns: str, dev: str, pool: str = "node-1", **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "gpu", "driver": DRIVER, "pool": pool, "device": dev, **extra}]}}}}


def asking(name: str = "want", ns: str = "team-a", count: int = 1, memory: str | None = None) -> str:
    exactly: dict[str, Any] = {"deviceClassName": DRIVER, "count": count}
    if memory:
        exactly["capacity"] = {"requests": {"memory": memory}}
    return yaml.safe_dump({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                           "metadata": {"name": name, "namespace": ns},
                           "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}})


def source(tmp_path: Path, claims: list[dict[str, Any]], devices: list[dict[str, Any]] | None = None) -> StaticInventory:
    docs = [dclass(), node("node-1"), node("node-2"),
            rslice("node-1", devices or [device("gpu-0"), device("gpu-1")]),
            rslice("node-2", [device("gpu-0"), device("gpu-1")]), *claims]
    path = tmp_path / "inventory.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return StaticInventory([str(path)])


def review(src: StaticInventory, text: str, **options: Any) -> list[Any]:
    docs = decode_text(text, "claim.yaml").documents
    got = review_documents(docs, inventory=src.snapshot(), inventory_objects=src.objects(),
                           options=ReviewOptions(**options))
    return got.findings


FULL = [held("train-1", "team-a", "gpu-0"), held("train-2", "team-a", "gpu-1"),
        held("secret-job", "team-b", "gpu-0", pool="node-2"), held("other-job", "team-c", "gpu-1", pool="node-2")]


def test_a_claim_that_only_fits_an_empty_cluster_is_warned_with_figures(tmp_path: Path) -> None:
    findings = review(source(tmp_path, FULL), asking())
    [f] = [f for f in findings if f.reason == Reason.CAPACITY_IN_USE]
    assert f.severity == Severity.WARNING
    assert f.field == "spec.devices.requests[0].exactly"
    assert 'request "gpu" needs 1 device of class gpu.example.com on one node' in f.message
    assert "the most free on one node is 0; 4 of 4 such devices are held" in f.message
    assert "train-1, train-2 in this namespace" in f.message and "2 claims in other namespaces" in f.message
    assert f.details["needs"] == {"devices": 1} and f.details["available"] == {"devices": 0}
    assert f.details["matching"] == 4 and f.details["free"] == 0
    assert f.details["holders"] == {"namespace": ["train-1", "train-2"], "otherNamespaces": 2}
    assert not [f for f in findings if f.severity == Severity.ERROR]


def test_no_name_of_another_namespace_is_ever_shown(tmp_path: Path) -> None:
    """team-b asks: it sees its own claim's name, and only counts of team-a's and team-c's."""
    findings = review(source(tmp_path, FULL), asking(ns="team-b"))
    [f] = [f for f in findings if f.reason == Reason.CAPACITY_IN_USE]
    everything = f.message + json.dumps(f.details)
    for foreign in ("train-1", "train-2", "other-job", "team-a", "team-c"):
        assert foreign not in everything
    assert "secret-job in this namespace" in f.message and "3 claims in other namespaces" in f.message


def test_capacity_figures_name_what_is_needed_and_the_most_free(tmp_path: Path) -> None:
    shared = [device(f"gpu-{i}", multi=True, capacity={"memory": cap("40Gi")}) for i in range(2)]
    claims = [held("a", "team-b", "gpu-0", shareID="s1", consumedCapacity={"memory": "28Gi"}),
              held("b", "team-b", "gpu-1", shareID="s2", consumedCapacity={"memory": "40Gi"})]
    src = source(tmp_path, claims, devices=shared)
    # node-2's plain GPUs publish no memory: only node-1's two shared GPUs could take 30Gi
    findings = review(src, asking(memory="30Gi"))
    [f] = [f for f in findings if f.reason == Reason.CAPACITY_IN_USE]
    assert ("needs 30Gi of memory on one device of class gpu.example.com; the most free on any is 12Gi; "
            "1 of 2 such devices are fully held") in f.message
    assert f.details["needs"]["capacity"] == {"memory": "30Gi"}
    assert f.details["available"]["capacity"] == {"memory": "12Gi"}
    assert "2 claims in other namespaces" in f.message
    # 12Gi fits now on gpu-0: no warning
    assert not [f for f in review(src, asking(memory="12Gi")) if f.reason == Reason.CAPACITY_IN_USE]


def test_several_devices_on_one_node(tmp_path: Path) -> None:
    # one GPU held on each node: 2 free devices in all, but never 2 on one node
    src = source(tmp_path, [held("x", "team-a", "gpu-0"), held("y", "team-a", "gpu-0", pool="node-2")])
    [f] = [f for f in review(src, asking(count=2)) if f.reason == Reason.CAPACITY_IN_USE]
    assert "needs 2 devices of class gpu.example.com on one node; the most free on one node is 1; 2 of 4" in f.message
    assert not [f for f in review(src, asking(count=1)) if f.reason == Reason.CAPACITY_IN_USE]


def test_never_is_not_not_now(tmp_path: Path) -> None:
    """A claim no node could ever hold is Unsatisfiable, and only that: "not now" would mislead."""
    findings = review(source(tmp_path, FULL), asking(count=3))
    assert [f.reason for f in findings] == [Reason.UNSATISFIABLE]


def test_admin_access_and_unknown_devices_hold_nothing(tmp_path: Path) -> None:
    claims = [held("admin", "ops", "gpu-0", adminAccess=True), held("stale", "ops", "gone")]
    assert not [f for f in review(source(tmp_path, claims), asking(count=2)) if f.reason == Reason.CAPACITY_IN_USE]


def test_without_known_claims_nothing_is_not_now(tmp_path: Path) -> None:
    assert not [f for f in review(source(tmp_path, []), asking()) if f.reason == Reason.CAPACITY_IN_USE]


def test_an_allocated_claim_is_not_warned_about_itself(tmp_path: Path) -> None:
    text = yaml.safe_dump(held("train-1", "team-a", "gpu-0"))
    assert not [f for f in review(source(tmp_path, FULL), text) if f.reason == Reason.CAPACITY_IN_USE]


def test_capacity_in_use_can_never_deny() -> None:
    with pytest.raises(DenyPolicyError):
        parse_deny("Unsatisfiable,CapacityInUse")


def test_the_webhook_admits_it_with_the_warning(tmp_path: Path) -> None:
    src = source(tmp_path, FULL)
    obj = yaml.safe_load(asking())
    got = review_admission(kind="ResourceClaim", operation="CREATE", obj=obj, old_obj=None, namespace="team-a",
                           inventory=src.snapshot(), inventory_problem=None,
                           options=ReviewOptions(admission=True, deny=parse_deny("Unsatisfiable")))
    assert not got.denied
    assert [f.reason for f in got.findings] == [Reason.CAPACITY_IN_USE]


def test_a_pod_that_only_fits_an_empty_cluster(tmp_path: Path) -> None:
    """The per-pod question: the engine's own search from today's allocations (check_pod now=True)."""
    inv = source(tmp_path, FULL).snapshot()
    assert inv is not None
    spec = ResourceClaimSpec.model_validate(yaml.safe_load(asking())["spec"])
    request = PodRequest(claims=(PodClaim("gpu", spec, 'template "one-gpu"', K8sPath.root("spec", "resourceClaims").index(0)),))
    ever = check_pod(request, inv)
    assert ever.satisfiable is True
    [note] = pod_capacity_in_use(request, inv, ever, namespace="team-b")
    assert note.reason == Reason.CAPACITY_IN_USE and note.severity == Severity.WARNING
    assert note.message.startswith('fits an empty cluster but not today\'s allocations: template "one-gpu": request "gpu"')
    assert "secret-job in this namespace and 3 claims in other namespaces" in note.message
    assert "train-1" not in note.message and note.details is not None and note.details["claim"] == "gpu"
    # with every device free again (no claims known) there is nothing to say
    empty = source(tmp_path, []).snapshot()
    assert empty is not None and pod_capacity_in_use(request, empty, check_pod(request, empty), namespace="team-b") == []


ONE_GPU = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
           "metadata": {"name": "one-gpu", "namespace": "team-b"},
           "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}}


def _pod_spec(**extra: Any) -> dict[str, Any]:
    return {"containers": [{"name": "c", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}], **extra}


def _admit(src: StaticInventory, kind: str, obj: dict[str, Any]) -> list[Any]:
    got = review_admission(kind=kind, operation="CREATE", obj=obj, old_obj=None, namespace="team-b",
                           inventory=src.snapshot(), inventory_problem=None,
                           options=ReviewOptions(admission=True, deny=parse_deny("Unsatisfiable")))
    assert not got.denied
    return [f for f in got.findings if f.reason == Reason.CAPACITY_IN_USE]


def test_the_webhook_admits_a_pending_pod_with_the_warning(tmp_path: Path) -> None:
    src = source(tmp_path, [*FULL, ONE_GPU])
    [warning] = _admit(src, "Pod", {"apiVersion": "v1", "kind": "Pod",
                                    "metadata": {"name": "waiting", "namespace": "team-b"}, "spec": _pod_spec()})
    assert warning.severity == Severity.WARNING and 'template "one-gpu": request "gpu"' in warning.message
    assert "secret-job in this namespace and 3 claims in other namespaces" in warning.message
    assert "train-1" not in warning.message and "team-a" not in warning.message
    # with a GPU free again the same pod fits now: nothing to say
    assert _admit(source(tmp_path, [*FULL[1:], ONE_GPU]), "Pod", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "waiting", "namespace": "team-b"}, "spec": _pod_spec()}) == []


def test_a_bound_pod_or_a_workload_is_not_asked_about_now(tmp_path: Path) -> None:
    """A bound pod's claims hold their devices already, and a workload's own running pods hold
    what a "now" search would find missing: only a pending Pod gets CapacityInUse."""
    src = source(tmp_path, [*FULL, ONE_GPU])
    bound = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "running", "namespace": "team-b"},
             "spec": _pod_spec(nodeName="node-2")}
    assert _admit(src, "Pod", bound) == []
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "team-b"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                           "template": {"metadata": {"labels": {"a": "b"}}, "spec": _pod_spec()}}}
    assert _admit(src, "Deployment", deployment) == []


def test_a_now_check_the_budget_cuts_short_says_so_with_fail_open_and_never_warns(tmp_path: Path) -> None:
    """"Not now" is only a hint: cut short it is an info note — but one marked ``fail_open``, the
    one way an answer says it is incomplete (an answer memo must not keep it)."""
    inv = source(tmp_path, FULL).snapshot()
    assert inv is not None
    spec = ResourceClaimSpec.model_validate(yaml.safe_load(asking())["spec"])
    base = K8sPath.root("spec")
    ever = check_claim_spec(spec, inv, base=base)
    assert ever == []
    [cut] = capacity_in_use(spec, inv, base=base, ever=ever, namespace="team-a", budget=Budget.within(0.0))
    assert (cut.reason, cut.severity, cut.fail_open) == (Reason.SATISFIABILITY_UNKNOWN, Severity.INFO, SEARCH_DEADLINE)
    assert cut.message.startswith("not checked against today's allocations")
    [warned] = capacity_in_use(spec, inv, base=base, ever=ever, namespace="team-a", budget=Budget.within(60.0))
    assert warned.reason == Reason.CAPACITY_IN_USE and not warned.fail_open
    request = PodRequest(claims=(PodClaim("gpu", spec, 'template "one-gpu"', K8sPath.root("spec", "resourceClaims").index(0)),))
    pod_ever = check_pod(request, inv)
    [pod_cut] = pod_capacity_in_use(request, inv, pod_ever, namespace="team-a", budget=Budget.within(0.0))
    assert (pod_cut.severity, pod_cut.fail_open) == (Severity.INFO, SEARCH_DEADLINE)
    [pod_warned] = pod_capacity_in_use(request, inv, pod_ever, namespace="team-a", budget=Budget.within(60.0))
    assert pod_warned.reason == Reason.CAPACITY_IN_USE and not pod_warned.fail_open
