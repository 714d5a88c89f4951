"""``draguard ui`` follows the cluster by watch (issue #38 item 3), against the fake API server of
the live-inventory tests (tests/fakeapi: real HTTP, chunked watches, faults).

* After the first lists, a change reaches the page's picture as one watch event — no LIST in
  between — and nothing that changes no object (a bookmark, a watch that ends and is made again)
  builds a new picture.
* A watch that ends with ``410 Gone`` is listed again, and the picture is what the list says (a
  change the watch never delivered included).
* The API server going away: the page's summary says "stale" within a few seconds and keeps the
  last picture; when it is back, the summary is fresh again and shows what changed meanwhile.
* A resource the user may not read is a gap, never a stale picture.

Every wait polls; bounds carry a margin for a loaded 2-core machine.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from draguard.inventory import KubeConfig
from draguard.k8s import DEFAULT_TARGET
from draguard.ui import ClusterSource, UiState, make_app
from fakeapi import PATHS, FakeCluster, serve_fake_api
from ui_objects import allocated, claim_objects, inventory_objects, pod

with warnings.catch_warnings():  # starlette's notice that its test client moves to httpx2: not ours to fix
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

TOKEN = "ui-token"
PLURAL = {"DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices", "Node": "nodes"}
WATCHED = ("deviceclasses", "resourceslices", "nodes", "resourceclaims", "pods")


def wait_for(check: Callable[[], Any], seconds: float, what: str) -> float:
    """Seconds until ``check()`` held; fails after ``seconds``."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if check():
            return time.monotonic() - start
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds} s: {what}")


@pytest.fixture
def cluster() -> Iterator[tuple[FakeCluster, KubeConfig]]:
    fake = FakeCluster(token=TOKEN)
    fake.policy_reports_installed = False  # the fake serves no watch of them: 404, the page's note
    for obj in inventory_objects():
        fake.put(PLURAL[obj["kind"]], obj)
    for obj in claim_objects():
        fake.put("resourceclaims", obj)
    fake.put("pods", pod("trainer", "team-a", "wait-h100"))
    with serve_fake_api(fake) as server:
        yield fake, KubeConfig(server=server.url, token=TOKEN)


class Page:
    """``draguard ui``'s server in-process: the source followed, the state it updates, the API."""

    def __init__(self, config: KubeConfig, **follow: Any) -> None:
        self.source = ClusterSource(config, "team-a", refused_retry=300.0, **follow)
        self.state = UiState(self.source.current(), target=DEFAULT_TARGET, deadline=20.0)
        self.api = TestClient(make_app(self.state))
        self.source.start(self.state.update)

    def summary(self) -> dict[str, Any]:
        return dict(self.api.get("/api/summary").json())

    def stale(self) -> list[str]:
        return [g for g in self.summary()["gaps"] if g.startswith("stale:")]

    def device_state(self, pool: str, name: str) -> str | None:
        for p in self.api.get("/api/devices").json()["pools"]:
            for n in p["nodes"]:
                for d in n["devices"]:
                    if p["pool"] == pool and d["name"] == name:
                        return str(d["state"])
        return None

    def pools(self) -> list[str]:
        return [p["pool"] for p in self.api.get("/api/devices").json()["pools"]]

    def claims(self) -> list[str]:
        return [f"{c['namespace']}/{c['name']}" for c in self.api.get("/api/claims").json()["claims"]]


@pytest.fixture
def page(cluster: tuple[FakeCluster, KubeConfig]) -> Iterator[Page]:
    shown = Page(cluster[1])
    try:
        wait_for(lambda: all(cluster[0].watching(r) for r in WATCHED), 10, "every watch open")
        yield shown
    finally:
        shown.source.stop()


def lists(fake: FakeCluster, resource: str | None = None) -> int:
    """LIST requests so far (of ``resource``, else of anything): every request that is not a watch."""
    with fake.lock:
        requests = list(fake.requests)
    path = None if resource is None else PATHS[resource][0]
    return sum(1 for p, q in requests if not q.get("watch") and q.get("verb") != "get" and (path is None or p == path))


def test_a_change_reaches_the_picture_as_a_watch_event_without_a_list(cluster: tuple[FakeCluster, KubeConfig],
                                                                      page: Page) -> None:
    fake, _ = cluster
    assert page.device_state("node-1", "gpu-1") == "free"
    before, events = lists(fake), page.source.follower.events
    fake.put("resourceclaims", allocated("late", "team-a", {"pool": "node-1", "device": "gpu-1"}, model="H100"))
    took = wait_for(lambda: page.device_state("node-1", "gpu-1") == "dedicated", 5, "the allocation shown")
    assert took < 3.0  # an event and a 0.25 s debounce, not a poll
    assert "team-a/late" in page.claims()
    assert lists(fake) == before  # no LIST: the watch brought it
    assert page.source.follower.events == events + 1
    fake.delete("resourceclaims", "late", "team-a")
    wait_for(lambda: page.device_state("node-1", "gpu-1") == "free", 5, "the deletion shown")
    assert lists(fake) == before


def test_nothing_changed_builds_no_new_picture(cluster: tuple[FakeCluster, KubeConfig], page: Page) -> None:
    """A bookmark and a watch that ends (the server's timeout) and is made again from where it was
    change no object: no LIST, no new picture, the page's generation stays."""
    fake, _ = cluster
    follower = page.source.follower
    pictures, generation, before = follower.pictures, page.summary()["generation"], lists(fake)
    watches = len(fake.watch_requests("nodes"))
    fake.bookmark("resourceslices")
    fake.fault("nodes", "end")
    wait_for(lambda: len(fake.watch_requests("nodes")) > watches, 5, "the nodes watch made again")
    time.sleep(1.0)  # four debounces: a picture would have been built by now
    assert follower.pictures == pictures
    assert page.summary()["generation"] == generation
    assert lists(fake) == before
    assert fake.watch_requests("nodes")[-1]["resourceVersion"] != "0"  # resumed, not started over


def test_a_watch_ended_by_410_is_listed_again_and_the_picture_is_right(cluster: tuple[FakeCluster, KubeConfig],
                                                                       page: Page) -> None:
    """The slice of node-2 goes without an event (as if compacted away); the watch then ends with
    ``410 Gone``.  Only a new list can say it is gone: the slices are listed once more, nothing
    else is, and the picture no longer has node-2's pool."""
    fake, _ = cluster
    assert "node-2" in page.pools()
    slices, others = lists(fake, "resourceslices"), lists(fake) - lists(fake, "resourceslices")
    with fake.lock:  # gone from the store, never from the watch
        del fake.objects["resourceslices"]["node-2-gpus"]
        fake.rv += 1
    fake.fault("resourceslices", "gone")
    wait_for(lambda: "node-2" not in page.pools(), 5, "node-2's pool gone after the relist")
    assert lists(fake, "resourceslices") == slices + 1
    assert lists(fake) - lists(fake, "resourceslices") == others
    assert page.stale() == []  # a relist is no outage
    assert page.device_state("node-1", "gpu-0") == "dedicated"  # the rest of the picture stands


def test_the_api_server_gone_makes_the_page_stale_and_its_return_fresh(cluster: tuple[FakeCluster, KubeConfig],
                                                                      page: Page) -> None:
    fake, _ = cluster
    assert page.stale() == []
    down = time.time()
    fake.go_down()
    took = wait_for(lambda: page.stale(), 8, "the summary says stale")
    assert took >= 2.0  # not before the bound (3 s; a dropped connection heals within it)
    (note,) = page.stale()
    assert "watch has failed since" in note and "503" in note, note
    summary = page.summary()
    assert down - 1 <= summary["changed_at"] <= down + 2  # "stale since" the moment it went
    assert page.device_state("node-1", "gpu-0") == "dedicated"  # the last picture, never a blank page

    fake.delete("resourceclaims", "train-1", "team-a")  # while nobody can see it
    fake.come_back()
    wait_for(lambda: not page.stale(), 8, "the summary fresh again")
    wait_for(lambda: page.device_state("node-1", "gpu-0") == "free", 5, "what changed meanwhile shown")
    assert "team-a/train-1" not in page.claims()


def test_a_resource_the_user_may_not_read_is_a_gap_not_a_stale_page(cluster: tuple[FakeCluster, KubeConfig]) -> None:
    """Nodes refused: said once at the top, the rest shown and followed; ``read_cluster``'s words."""
    fake, config = cluster
    fake.forbidden.add(("list", "nodes"))
    shown = Page(config, stale_after=0.5)
    try:
        gaps = shown.summary()["gaps"]
        assert "Nodes not readable (403: nodes is forbidden: cannot list)" in gaps
        assert "node-1" in shown.pools()
        fake.put("resourceclaims", allocated("late", "team-a", {"pool": "node-1", "device": "gpu-1"}, model="H100"))
        wait_for(lambda: shown.device_state("node-1", "gpu-1") == "dedicated", 5, "followed without Nodes")
        time.sleep(1.0)
        assert shown.stale() == []
    finally:
        shown.source.stop()


def test_claims_of_every_namespace_refused_fall_back_to_the_user_s_namespace(
        cluster: tuple[FakeCluster, KubeConfig]) -> None:
    """The tenant fallback, as ``read_cluster`` words it: every namespace's claims refused, the
    user's namespace tried next (this fake serves no per-namespace list: refused too, so no claim
    is named and none is known)."""
    fake, config = cluster
    fake.forbidden.add(("list", "resourceclaims"))
    shown = Page(config)
    try:
        summary = shown.summary()
        assert summary["scope"] == "none"
        assert summary["gaps"][0].startswith("ResourceClaims of every namespace not readable (403: ")
        assert summary["gaps"][1].startswith("ResourceClaims of namespace team-a not readable (404: ")
        assert shown.claims() == []
        text = shown.api.get("/api/devices").text
        assert "secret-share" not in text and "team-b" not in text
    finally:
        shown.source.stop()


def test_a_resource_that_may_be_listed_but_not_watched_is_listed_again_not_stale(
        cluster: tuple[FakeCluster, KubeConfig]) -> None:
    """A role with ``list`` but not ``watch`` on Nodes: the refused watch is no outage; Nodes are
    listed again every ``list_only`` seconds and a change is followed that way."""
    fake, config = cluster
    fake.forbidden.add(("watch", "nodes"))
    shown = Page(config, stale_after=0.5, list_only=0.5)
    try:
        first = lists(fake, "nodes")
        wait_for(lambda: lists(fake, "nodes") >= first + 2, 5, "Nodes listed again")
        assert shown.stale() == [] and not [g for g in shown.summary()["gaps"] if "Nodes" in g]
        tainted = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "labels": {"kubernetes.io/hostname": "node-1"}},
                   "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}}
        fake.put("nodes", tainted)
        wait_for(lambda: shown.source.current().inventory.node_info["node-1"].taints, 5, "the taint followed by lists")
        assert shown.stale() == []
    finally:
        shown.source.stop()
