"""Pods that share a claim, live (issue #37 item 1): the webhook LISTs the pods of the review's
namespace when the reviewed object names a claim the picture holds unallocated, and warns when it
and one of them can use no common node the claim's devices reach (app/server/sharing.py).

The API server is an ``httpx.MockTransport`` here (the fake API server serves no namespaced pod
list); tests/server/test_shared_claims_realapi.py does the same against a real one.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import yaml
from draguard.inventory import HeldClaim, Inventory, KubeConfig, with_cluster
from draguard.k8s import AllocationResult, ResourceClaimSpec
from draguard.server.answers import AnswerMemo, answer_call
from draguard.server.references import ReferenceLookup, SourceLookups, resolve_references
from draguard.server.sharing import PodLister, claims_by_name, sharing_pods
from draguard.server.state import ServerState
from draguard.server.webhook import AdmissionCall, Answer, parse_admission_review
from kube.helpers import wait_for
from review.test_shared_claims_admission import ALLOCATED_ON_A
from review.test_shared_claims_review import CLAIM, inventory, pod_doc

from server.reviews import admission_review

OPTIONS = ServerState().admission_options
CONFIG = KubeConfig(server="http://api.test")
PODS = "/api/v1/namespaces/default/pods"


def pod(name: str, zone: str, *, namespace: str = "default", phase: str = "Pending", claim: str = "shared-gpu",
        created: str = "2026-12-04T08:00:00Z") -> dict[str, Any]:
    obj: dict[str, Any] = yaml.safe_load(pod_doc(name, zone))
    obj["metadata"].update(namespace=namespace, creationTimestamp=created, uid=f"uid-{name}")
    obj["spec"]["resourceClaims"][0]["resourceClaimName"] = claim
    obj["status"] = {"phase": phase}
    return obj


class Api:
    """The pods the mock API server lists, and every request it got."""

    def __init__(self, *pods: dict[str, Any], status: int = 200) -> None:
        self.pods = list(pods)
        self.status = status
        self.requests: list[httpx.Request] = []
        self.release: threading.Event | None = None

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if not request.url.path.endswith("/pods"):  # a claim the picture lacks: not in this API server either
            return httpx.Response(404, json={"kind": "Status", "reason": "NotFound", "code": 404,
                                             "details": {"name": request.url.path.rsplit("/", 1)[1]}})
        if self.release is not None:
            self.release.wait(5)
        if self.status != 200:
            return httpx.Response(self.status, json={"kind": "Status", "code": self.status})
        ns = request.url.path.split("/")[4]
        items = [p for p in self.pods if p["metadata"]["namespace"] == ns]
        return httpx.Response(200, json={"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": items})

    def lookup(self, **kw: Any) -> ReferenceLookup:
        client = httpx.Client(base_url=CONFIG.server, transport=httpx.MockTransport(self.handler))
        return ReferenceLookup(CONFIG, client=client, **kw)

    def lists(self) -> list[str]:
        return [r.url.path for r in self.requests if r.url.path.endswith("/pods")]


def cluster(*, allocated: bool = False) -> Inventory:
    spec = ResourceClaimSpec.model_validate(yaml.safe_load(CLAIM)["spec"])
    allocation = AllocationResult.model_validate(ALLOCATED_ON_A) if allocated else None
    held = HeldClaim("default", "shared-gpu", spec=spec, allocation=allocation)
    return with_cluster(inventory(), {("default", "shared-gpu"): held}, {}, known=True)


# ---------------------------------------------------------------------------- the LIST
def test_the_list_asks_one_namespace_one_page_and_keeps_running_pods_that_name_the_claim() -> None:
    api = Api(pod("first", "a", created="2026-12-04T08:00:02Z"), pod("older", "a", created="2026-12-04T08:00:01Z"),
              pod("done", "a", phase="Succeeded"), pod("other-claim", "a", claim="another"),
              pod("elsewhere", "a", namespace="team-b"))
    deleting = pod("deleting", "a")
    deleting["metadata"]["deletionTimestamp"] = "2026-12-04T08:00:00Z"
    api.pods.append(deleting)
    listed = api.lookup().pods.pods("default")
    assert listed.state == "listed"
    (request,) = api.requests
    assert request.url.path == PODS
    assert request.url.params["limit"] == "500"
    assert request.url.params["fieldSelector"] == "status.phase!=Succeeded,status.phase!=Failed"
    # ended and deleting pods are left out even when the API server's selector let them through
    assert [p["metadata"]["name"] for p in listed.pods] == ["other-claim", "older", "first"]  # oldest first
    kept = sharing_pods(listed.pods, frozenset({"shared-gpu"}), exclude="older")
    assert [p["metadata"]["name"] for p in kept] == ["first"]
    assert set(kept[0]) == {"apiVersion", "kind", "metadata", "spec"}  # trimmed: no status, no managedFields


def test_claims_by_name_reads_only_resource_claim_names() -> None:
    spec = {"resourceClaims": [{"name": "a", "resourceClaimName": "c1"}, {"name": "b", "resourceClaimTemplateName": "t"},
                               {"name": "c", "resourceClaimName": "c2", "resourceClaimTemplateName": "t"}, "junk",
                               {"name": "d", "resourceClaimName": ""}]}
    assert claims_by_name(spec) == frozenset({"c1"})
    assert claims_by_name(None) == claims_by_name({"resourceClaims": "x"}) == frozenset()


def test_a_refused_or_slow_or_broken_list_says_nothing() -> None:
    assert Api(status=403).lookup().pods.pods("default").why == "forbidden"
    assert Api(status=500).lookup().pods.pods("default").why == "status 500"

    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    lister = PodLister(lambda: httpx.Client(base_url=CONFIG.server, transport=httpx.MockTransport(slow)))
    assert (lister.pods("default").state, lister.pods("default").why) == ("unknown", "timeout")
    assert lister.pods("default", seconds=0.0).why == "no time left in the review"

    def junk(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"not json")

    assert PodLister(lambda: httpx.Client(base_url=CONFIG.server, transport=httpx.MockTransport(junk))).pods(
        "default").why == "unreadable"


def test_concurrent_reviews_share_one_list_and_a_later_review_lists_again() -> None:
    api = Api(pod("first", "a"))
    api.release = threading.Event()
    lister = api.lookup().pods
    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.append(lister.pods("default").state)) for _ in range(4)]
    for t in threads:
        t.start()
    wait_for(lambda: api.requests, what="the first LIST")
    time.sleep(0.05)
    api.release.set()
    for t in threads:
        t.join(5)
    assert results == ["listed"] * 4 and len(api.lists()) == 1
    # a pod stored after that LIST is seen by the next review: nothing is kept past one LIST
    api.pods.append(pod("second", "b"))
    assert [p["metadata"]["name"] for p in lister.pods("default").pods] == ["first", "second"]
    assert len(api.lists()) == 2


# ---------------------------------------------------------------------------- when the review asks
def resolve(api: Api, obj: dict[str, Any], snapshot: Inventory, *, namespace: str = "default") -> Any:
    return resolve_references(api.lookup(), snapshot, kind=obj["kind"], api_version=obj["apiVersion"],
                              operation="CREATE", namespace=namespace, obj=obj, old_obj=None, workload_kinds=())


def test_only_an_unallocated_shared_claim_makes_the_review_list_pods() -> None:
    api = Api(pod("first", "a"))
    got = resolve(api, pod("second", "b"), cluster())
    assert got.asked == 1 and api.lists() == [PODS]
    pods = got.snapshot.cluster.sharing_pods
    assert [p["metadata"]["name"] for p in pods] == ["first"]
    api.requests.clear()
    assert resolve(api, pod("second", "b"), cluster(allocated=True)).asked == 0  # its allocation pins already
    assert resolve(api, pod("second", "b", claim="unknown"), cluster()).asked == 1  # the GET of the claim, no LIST
    template = pod("second", "b")
    template["spec"]["resourceClaims"][0] = {"name": "gpu", "resourceClaimTemplateName": "gpu"}
    assert resolve(api, template, cluster()).asked == 1  # the template's GET: a claim of its own, shared with none
    assert api.lists() == []


def test_the_reviewed_pod_itself_is_not_its_own_rival_and_a_failed_list_keeps_the_snapshot() -> None:
    api = Api(pod("second", "b"))
    snapshot = cluster()
    got = resolve(api, pod("second", "b"), snapshot)
    assert got.asked == 1 and got.snapshot is snapshot  # only itself: nothing added
    refused = Api(pod("first", "a"), status=403)
    got = resolve(refused, pod("second", "b"), snapshot)
    assert got.asked == 1 and got.snapshot is snapshot  # asked (not to be remembered), nothing learned


# ---------------------------------------------------------------------------- through the webhook's answer
class Source:
    """A live source's snapshot and kubeconfig (what ``SourceLookups`` looks for)."""

    synced = True

    def __init__(self, snapshot: Inventory) -> None:
        self.snap, self.config = snapshot, CONFIG

    def snapshot(self) -> Inventory:
        return self.snap

    def problem(self) -> None:
        return None


def call_of(obj: dict[str, Any]) -> AdmissionCall:
    return parse_admission_review(json.dumps(admission_review(obj, kind="Pod", group="")).encode())


def answer(memo: AnswerMemo, src: Source, obj: dict[str, Any]) -> Answer:
    return answer_call(memo, call_of(obj), "validate", src, OPTIONS, OPTIONS, size=1000)


def memo_over(api: Api) -> AnswerMemo:
    made = api.lookup()
    factory: Callable[[KubeConfig], ReferenceLookup] = lambda config: made  # noqa: E731
    return AnswerMemo(references=SourceLookups(factory))


def test_the_webhook_warns_names_the_claim_and_the_other_pod_and_never_remembers_the_answer() -> None:
    api = Api(pod("first", "a"))
    memo, src = memo_over(api), Source(cluster())
    got = answer(memo, src, pod("second", "b"))
    assert got.response["allowed"] is True and got.decision == "allowed"
    assert got.response["warnings"] == [
        'SatisfiabilityUnknown: one of these pods may wait: Pod "first" also uses claim "shared-gpu" and no node suits both']
    # the answer depends on which pods exist now: never remembered, so "first" gone is seen at once
    api.pods.clear()
    again = answer(memo, src, pod("second", "b"))
    assert again.response["allowed"] is True and not again.response.get("warnings")
    assert len(api.lists()) == 2 and len(memo) == 0


def test_compatible_pods_are_admitted_without_a_word_and_an_allocated_claim_is_not_listed_for() -> None:
    api = Api(pod("first", "a"))
    memo = memo_over(api)
    fine = answer(memo, Source(cluster()), pod("second", "a"))
    assert fine.response["allowed"] is True and not fine.response.get("warnings")
    api.requests.clear()
    pinned = answer(memo, Source(cluster(allocated=True)), pod("second", "b"))
    assert api.lists() == []  # the allocation's node selector decides, as before
    assert pinned.decision == "denied" and pinned.reason == "Unsatisfiable"


def test_another_namespace_is_never_listed_and_its_pods_never_named() -> None:
    api = Api(pod("first", "a", namespace="team-b"))
    got = answer(memo_over(api), Source(cluster()), pod("second", "b"))
    assert api.lists() == [PODS] and not got.response.get("warnings")
