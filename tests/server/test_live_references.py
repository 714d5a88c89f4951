"""Live references are never a guess (issue #35 item 3).

``kubectl apply -f`` of a ResourceClaimTemplate and the Deployment that uses it: the Deployment's
review arrives before the template's watch event.  The fake API server holds every watch event
back (``watch_delay``) while a GET sees the stored object at once — the window of that apply.
Before the fix the Deployment got ``ReferenceNotFound … is in none of the cluster`` and nothing
else was checked; now the webhook asks the API server (a bounded, cached GET in the review's own
namespace) and checks the Deployment in full, as ``lint`` does for the same files.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from draguard.certs import generate_bundle, write_bundle
from draguard.cli import main
from draguard.inventory import ClusterState, Inventory
from draguard.inventory.kube import KubeInventory
from draguard.inventory.kubeconfig import KubeConfig, load_kube_config
from draguard.server.answers import AnswerMemo
from draguard.server.references import (
    MAX_ASKED,
    Fetched,
    ReferenceLookup,
    Resolved,
    SourceLookups,
    references_of,
    resolve_references,
)
from draguard.server.state import ServerState
from fakeapi import FakeCluster, serve_fake_api
from kube.helpers import wait_for

from server.conftest import DATA, Served
from server.reviews import admission_review, template

HELD_BACK = 120.0  # seconds the fake's watches wait for an event: never within a test
RESOURCE = {"DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices", "Node": "nodes"}


def deployment(name: str, *, template_name: str = "", claim_name: str = "", namespace: str = "default",
               replicas: int = 2) -> dict[str, Any]:
    entry = {"name": "gpu", "resourceClaimTemplateName": template_name} if template_name else \
        {"name": "gpu", "resourceClaimName": claim_name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [entry]}}},
    }


def _template(name: str, memory: str, namespace: str = "default") -> dict[str, Any]:
    t = template(name, memory=memory, namespace=namespace)
    t["metadata"] = {"name": name, "namespace": namespace}
    return t


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[FakeCluster, Path]]:
    paths = write_bundle(generate_bundle("kubernetes", "default", extra_sans=["127.0.0.1"]), tmp_path / "api")
    cluster = FakeCluster(token="t0ken")
    with serve_fake_api(cluster, cert=paths["cert"], key=paths["key"]) as server:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump({
            "current-context": "c",
            "clusters": [{"name": "k", "cluster": {"server": server.url, "certificate-authority": str(paths["ca"])}}],
            "users": [{"name": "u", "user": {"token": "t0ken"}}],
            "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        }))
        for doc in yaml.safe_load_all((DATA / "inventory.yaml").read_text()):
            cluster.put(RESOURCE[doc["kind"]], doc)
        yield cluster, kubeconfig


Make = Callable[..., Served]


@pytest.fixture
def served(serve: Make, api: tuple[FakeCluster, Path]) -> Iterator[Callable[..., tuple[Served, FakeCluster]]]:
    """``start(absent_seconds=...)``: draguard ``serve --kubeconfig`` over the fake, synced, claims and
    templates listed; from then on the fake's watches deliver nothing (``watch_delay``)."""
    cluster, kubeconfig = api
    made: list[KubeInventory] = []

    def start(**lookup: Any) -> tuple[Served, FakeCluster]:
        live = KubeInventory(load_kube_config(kubeconfig), debounce=0.02, claims_interval=0.0)
        made.append(live)
        state = ServerState(inventory=live, answers=AnswerMemo(
            references=SourceLookups(lambda config: ReferenceLookup(config, **lookup))))
        state.background.append(live.run)
        s = serve(state)
        wait_for(lambda: s.client.get("/readyz").status_code == 200, what="ready")
        wait_for(lambda: live.claims_known and (live.snapshot() is not None and live.snapshot().cluster.known),
                 what="claims and templates listed")
        cluster.watch_delay = HELD_BACK
        return s, cluster

    yield start


def validate(s: Served, obj: dict[str, Any]) -> dict[str, Any]:
    review = admission_review(obj, kind=obj["kind"], group="apps", version="v1")
    answer: dict[str, Any] = s.client.post("/validate", json=review).json()["response"]
    return answer


def reasons(answer: dict[str, Any]) -> set[str]:
    """Every reason the answer gives: its denial's causes and its warnings' leading words."""
    causes = (answer.get("status") or {}).get("details", {}).get("causes", [])
    return {c["reason"] for c in causes} | {w.split(":", 1)[0] for w in answer.get("warnings", [])}


def lint_reasons(capsys: pytest.CaptureFixture[str], tmp_path: Path, *objects: dict[str, Any]) -> set[str]:
    """What ``draguard lint`` says about the Deployment among ``objects``, with the same inventory."""
    path = tmp_path / "apply.yaml"
    path.write_text(yaml.safe_dump_all(list(objects)))
    main(["lint", str(path), "--inventory", str(DATA / "inventory.yaml"), "--format", "json", "--no-cache"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    return {f["reason"] for f in findings if f["kind"] == "Deployment"}


# ---------------------------------------------------------------------------- through the webhook
def test_a_template_created_in_the_same_apply_is_found_and_the_deployment_checked_in_full(
    served: Callable[..., tuple[Served, FakeCluster]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    s, cluster = served()
    big = _template("big-gpu", "50Gi")  # over the device's 16Gi maximum: no pod of it can ever run
    cluster.put("resourceclaimtemplates", big)
    answer = validate(s, deployment("train", template_name="big-gpu"))
    assert answer["allowed"] is False, answer
    assert "ReferenceNotFound" not in reasons(answer)
    assert reasons(answer) == lint_reasons(capsys, tmp_path, big, deployment("train", template_name="big-gpu"))
    assert reasons(answer) == {"Unsatisfiable"}
    assert cluster.gets("resourceclaimtemplates") == [
        "/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates/big-gpu"]


def test_a_fitting_template_is_found_and_the_answer_is_lints(
    served: Callable[..., tuple[Served, FakeCluster]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    s, cluster = served()
    fine = _template("one-gpu", "8Gi")
    cluster.put("resourceclaimtemplates", fine)
    wide = deployment("wide", template_name="one-gpu", replicas=9)  # 40Gi / 8Gi: 5 of 9 fit at once
    answer = validate(s, wide)
    assert answer["allowed"] is True
    assert reasons(answer) == lint_reasons(capsys, tmp_path, fine, wide) == {"ReplicasExceedCapacity"}
    # a flood of reviews is not a flood of GETs: the found template is answered from the cache
    for i in range(5):
        assert reasons(validate(s, deployment(f"wide-{i}", template_name="one-gpu", replicas=9))) == {
            "ReplicasExceedCapacity"}
    assert len(cluster.gets("resourceclaimtemplates")) == 1


def test_a_shared_claim_created_in_the_same_apply_is_found(served: Callable[..., tuple[Served, FakeCluster]]) -> None:
    s, cluster = served()
    claim = copy.deepcopy(_template("c", "8Gi"))
    cluster.put("resourceclaims", {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                   "metadata": {"name": "shared", "namespace": "default"},
                                   "spec": claim["spec"]["spec"]})
    answer = validate(s, deployment("one", claim_name="shared", replicas=1))
    assert answer["allowed"] is True and "ReferenceNotFound" not in reasons(answer), answer
    assert cluster.gets("resourceclaims") == ["/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/shared"]


def test_an_absent_template_is_still_reported_and_asked_again_soon(
    served: Callable[..., tuple[Served, FakeCluster]]
) -> None:
    s, cluster = served(absent_seconds=0.2)
    answer = validate(s, deployment("train", template_name="later"))
    assert answer["allowed"] is True
    assert reasons(answer) == {"ReferenceNotFound"}
    assert "is in none of the cluster" in answer["warnings"][0]
    validate(s, deployment("train", template_name="later"))  # within the negative answer's life: no GET
    assert len(cluster.gets("resourceclaimtemplates")) == 1
    # created a moment later (its watch event still held back): the next review finds it — the answer
    # that said "not found" was never remembered by the answer memo
    cluster.put("resourceclaimtemplates", _template("later", "50Gi"))
    time.sleep(0.3)
    again = validate(s, deployment("train", template_name="later"))
    assert again["allowed"] is False and reasons(again) == {"Unsatisfiable"}, again
    assert len(cluster.gets("resourceclaimtemplates")) == 2


def test_another_namespaces_template_is_never_asked_for_nor_used(
    served: Callable[..., tuple[Served, FakeCluster]]
) -> None:
    s, cluster = served()
    cluster.put("resourceclaimtemplates", _template("big-gpu", "50Gi", namespace="team-b"))
    answer = validate(s, deployment("train", template_name="big-gpu", namespace="team-a"))
    assert answer["allowed"] is True and reasons(answer) == {"ReferenceNotFound"}
    assert "team-b" not in json.dumps(answer)
    assert cluster.gets("resourceclaimtemplates") == [
        "/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaimtemplates/big-gpu"]


def test_a_get_rbac_refuses_keeps_todays_warning_never_a_denial(
    served: Callable[..., tuple[Served, FakeCluster]]
) -> None:
    s, cluster = served()
    cluster.forbidden.add(("get", "resourceclaimtemplates"))
    cluster.put("resourceclaimtemplates", _template("big-gpu", "50Gi"))
    answer = validate(s, deployment("train", template_name="big-gpu"))
    assert answer["allowed"] is True and reasons(answer) == {"ReferenceNotFound"}
    validate(s, deployment("train", template_name="big-gpu"))
    assert len(cluster.gets("resourceclaimtemplates")) == 1  # the 403 is cached too: RBAC changes slowly


def test_a_template_the_picture_has_needs_no_get(served: Callable[..., tuple[Served, FakeCluster]]) -> None:
    s, cluster = served()
    cluster.watch_delay = 0.0
    cluster.put("resourceclaimtemplates", _template("big-gpu", "50Gi"))
    source = s.state.inventory
    wait_for(lambda: ("default", "big-gpu") in source.snapshot().cluster.templates, what="template watched")  # type: ignore[union-attr]
    answer = validate(s, deployment("train", template_name="big-gpu"))
    assert answer["allowed"] is False
    assert cluster.gets("resourceclaimtemplates") == []


# ---------------------------------------------------------------------------- the lookup itself
def _lookup(handler: Callable[[httpx.Request], httpx.Response], **kw: Any) -> ReferenceLookup:
    config = KubeConfig(server="http://api.test")
    client = httpx.Client(base_url=config.server, transport=httpx.MockTransport(handler))
    return ReferenceLookup(config, client=client, **kw)


def _template_body(name: str, namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}}


def _not_found(name: str) -> dict[str, Any]:
    return {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404,
            "details": {"name": name, "group": "resource.k8s.io", "kind": "resourceclaimtemplates"}}


def test_found_absent_and_unknown_answers() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        name = request.url.path.rsplit("/", 1)[1]
        if name == "here":
            return httpx.Response(200, json=_template_body("here"))
        if name == "gone":
            return httpx.Response(404, json=_not_found("gone"))
        if name == "unserved":  # the resource itself is not served: not a fact about the object
            return httpx.Response(404, json={"kind": "Status", "reason": "NotFound", "code": 404,
                                             "message": "the server could not find the requested resource"})
        if name == "other":  # an answer that is not the object asked for
            return httpx.Response(200, json=_template_body("else"))
        if name == "broken":
            return httpx.Response(500, text="oops")
        return httpx.Response(403, json={"kind": "Status", "reason": "Forbidden", "code": 403})

    lookup = _lookup(handler)
    here = lookup.get("template", "default", "here")
    assert here.state == "found" and here.spec is not None and here.spec.devices.requests[0].name == "gpu"
    assert lookup.get("template", "default", "gone").state == "absent"
    for name, why in (("unserved", "status 404"), ("other", "another object answered"), ("broken", "status 500"),
                      ("secret", "forbidden")):
        got = lookup.get("template", "default", name)
        assert (got.state, got.why) == ("unknown", why), name


def test_names_that_are_not_names_are_never_sent() -> None:
    sent: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.path)
        return httpx.Response(404, json=_not_found("x"))

    lookup = _lookup(handler)
    for namespace, name in (("default", "../../secrets/x"), ("default", "a/b"), ("Default", "x"), ("", "x"),
                            ("default", "")):
        assert lookup.get("template", namespace, name).state == "unknown"
    assert sent == []


def test_answers_are_cached_briefly_and_the_table_is_bounded() -> None:
    sent: list[str] = []
    now = [0.0]

    def handler(request: httpx.Request) -> httpx.Response:
        name = request.url.path.rsplit("/", 1)[1]
        sent.append(name)
        return httpx.Response(200, json=_template_body(name)) if name.startswith("t") else \
            httpx.Response(404, json=_not_found(name))

    lookup = _lookup(handler, entries=2, found_seconds=5.0, absent_seconds=1.0, clock=lambda: now[0])
    lookup.get("template", "default", "t1")
    lookup.get("template", "default", "t1")
    lookup.get("template", "default", "missing")
    lookup.get("template", "default", "missing")
    assert sent == ["t1", "missing"]
    now[0] = 1.5  # the negative answer is old, the found one not
    lookup.get("template", "default", "t1")
    lookup.get("template", "default", "missing")
    assert sent == ["t1", "missing", "missing"]
    lookup.get("template", "default", "t2")  # a third entry: the least recently used one goes
    assert len(lookup) == 2
    lookup.get("template", "default", "t1")
    assert sent == ["t1", "missing", "missing", "t2", "t1"]
    now[0] = 10.0
    lookup.get("template", "default", "t2")
    assert sent[-1] == "t2"


def test_concurrent_reviews_share_one_get() -> None:
    release = threading.Event()
    sent: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.path)
        release.wait(5)
        return httpx.Response(200, json=_template_body("t"))

    lookup = _lookup(handler)
    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.append(lookup.get("template", "default", "t").state))
               for _ in range(4)]
    for t in threads:
        t.start()
    wait_for(lambda: sent, what="the first GET")
    time.sleep(0.05)
    release.set()
    for t in threads:
        t.join(5)
    assert results == ["found"] * 4 and len(sent) == 1


def test_a_slow_api_server_costs_at_most_the_timeout() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    lookup = _lookup(handler, timeout=0.1)
    got = lookup.get("template", "default", "t")
    assert (got.state, got.why) == ("unknown", "timeout")
    assert lookup.get("template", "default", "t", seconds=0.0).why == "timeout"  # cached: no second GET
    assert lookup.stats()["gets"] == 1


def test_references_of_reads_every_pod_template() -> None:
    obj = deployment("d", template_name="t")
    obj["spec"]["template"]["spec"]["resourceClaims"] += [
        {"name": "s", "resourceClaimName": "shared"}, {"name": "t2", "resourceClaimTemplateName": "t"},
        {"name": "bad", "resourceClaimName": "x", "resourceClaimTemplateName": "y"}, "junk"]
    assert references_of(obj, "apps/v1", "Deployment", ()) == [("template", "t"), ("claim", "shared")]
    assert references_of(obj, "v1", "ConfigMap", ()) == []
    assert references_of(None, "apps/v1", "Deployment", ()) == []


class _Stub(ReferenceLookup):
    """Answers every template as found (a spec-less one), recording what was asked."""

    def __init__(self) -> None:
        super().__init__(KubeConfig(server="http://api.test"))
        self.asked: list[tuple[str, str, str]] = []

    def get(self, which: Any, namespace: str, name: str, *, seconds: float | None = None) -> Fetched:
        self.asked.append((which, namespace, name))
        return Fetched("found", spec=None)


def _resolve(stub: _Stub, obj: dict[str, Any], *, operation: str = "CREATE", old: dict[str, Any] | None = None,
             namespace: str = "default", known: bool = True) -> Resolved:
    snapshot = Inventory(cluster=ClusterState(templates={("default", "seen"): None}, known=known))
    return resolve_references(stub, snapshot, kind=obj["kind"], api_version=obj["apiVersion"], operation=operation,
                              namespace=namespace, obj=obj, old_obj=old, workload_kinds=())


def test_only_what_a_complete_picture_lacks_is_asked_in_the_requests_namespace() -> None:
    stub = _Stub()
    got = _resolve(stub, deployment("d", template_name="t"))
    assert stub.asked == [("template", "default", "t")] and got.asked == 1 and got.found == 1
    assert got.snapshot is not None and ("default", "t") in got.snapshot.cluster.templates
    assert ("default", "seen") in got.snapshot.cluster.templates  # the picture's own stay
    stub.asked.clear()
    assert _resolve(stub, deployment("d", template_name="seen")).asked == 0  # in the picture: no GET
    assert _resolve(stub, deployment("d", template_name="t"), known=False).asked == 0  # absence is no fact there
    assert _resolve(stub, deployment("d", template_name="t", namespace="b"), namespace="a").asked == 0
    assert stub.asked == []


def test_an_update_asks_only_when_it_changes_a_pod_template() -> None:
    stub = _Stub()
    old = deployment("d", template_name="t")
    scaled = {**old, "spec": {**old["spec"], "replicas": 5}}
    assert _resolve(stub, scaled, operation="UPDATE", old=old).asked == 0  # not reviewed again: nothing to ask
    changed = deployment("d", template_name="t2")
    assert _resolve(stub, changed, operation="UPDATE", old=old).asked == 1
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [], "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "t"}]}}
    assert _resolve(stub, pod, operation="UPDATE", old=pod).asked == 0  # a Pod's claims cannot change
    assert _resolve(stub, pod).asked == 1
    assert _resolve(stub, deployment("d", template_name="t"), operation="DELETE").asked == 0


def test_at_most_max_asked_references_per_review() -> None:
    stub = _Stub()
    obj = deployment("d", template_name="t0")
    obj["spec"]["template"]["spec"]["resourceClaims"] = [
        {"name": f"c{i}", "resourceClaimTemplateName": f"t{i}"} for i in range(MAX_ASKED + 4)]
    assert _resolve(stub, obj).asked == MAX_ASKED and len(stub.asked) == MAX_ASKED
