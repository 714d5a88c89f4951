"""The live inventory against a real (fake) API server: sync, watch resume, 410, disconnects, outages."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from draguard.certs import generate_bundle, generate_leaf, write_bundle
from draguard.inventory import build_inventory
from draguard.inventory.kube import DEVICE_RESOURCES, KubeInventory
from draguard.inventory.kubeconfig import KubeConfigError, load_in_cluster, load_kube_config
from draguard.server.runner import BackgroundServer
from fakeapi import FakeCluster, serve_fake_api

from kube.helpers import LoopThread, device_class, node, resource_slice, wait_for, write_kubeconfig


def names(objects: Iterable[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(o["kind"], o["metadata"]["name"]) for o in objects}


def snapshot_of(objects: Iterable[dict[str, Any]]) -> frozenset[tuple[str, str]]:
    """Stand-in for build_inventory: what the watcher would hand to the builder."""
    return frozenset(names(objects))


def make_inventory(kubeconfig: Path, **kw: Any) -> KubeInventory:
    kw.setdefault("debounce", 0.02)
    kw.setdefault("backoff_initial", 0.02)
    kw.setdefault("backoff_max", 0.1)
    kw.setdefault("resources", DEVICE_RESOURCES)  # claims and templates: tests/kube/test_kube_claims.py
    return KubeInventory(load_kube_config(kubeconfig), build=snapshot_of, **kw)  # type: ignore[arg-type]


def seed(cluster: FakeCluster) -> None:
    cluster.put("deviceclasses", device_class("gpu"))
    cluster.put("resourceslices", resource_slice("node-1-gpu", "node-1", devices=2))
    cluster.put("nodes", node("node-1"))


def test_initial_sync_lists_everything(cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    seed(cluster)
    inv = make_inventory(kubeconfig, page_size=1)
    assert not inv.synced and inv.problem() is not None and inv.snapshot() is None
    loop_thread.submit(inv.run())
    wait_for(lambda: inv.synced, what="sync")
    assert inv.snapshot() == {("DeviceClass", "gpu"), ("ResourceSlice", "node-1-gpu"), ("Node", "node-1")}
    assert inv.problem() is None
    age = inv.last_sync_age()
    assert age is not None and age < 5
    # watches start from the list's resourceVersion with bookmarks enabled
    watch = wait_for(lambda: cluster.watch_requests("resourceslices"), what="watch")[0]
    assert watch["allowWatchBookmarks"] == "true"
    assert int(watch["resourceVersion"]) >= 103
    assert 0 < int(watch["timeoutSeconds"]) <= 300


def test_paged_list(cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    for i in range(5):
        cluster.put("nodes", node(f"n{i}"))
    inv = make_inventory(kubeconfig, page_size=2)
    loop_thread.submit(inv.run())
    wait_for(lambda: inv.synced, what="sync")
    snap = inv.snapshot()
    assert snap is not None and {n for k, n in snap if k == "Node"} == {f"n{i}" for i in range(5)}
    pages = cluster.list_requests("nodes")
    assert [p.get("continue") for p in pages[:3]] == [None, "2", "4"]


def test_watch_events_update_the_snapshot(cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    seed(cluster)
    inv = make_inventory(kubeconfig)
    loop_thread.submit(inv.run())
    wait_for(lambda: inv.synced, what="sync")
    cluster.put("resourceslices", resource_slice("node-2-gpu", "node-2"))
    cluster.put("nodes", node("node-2"))
    wait_for(lambda: ("Node", "node-2") in (inv.snapshot() or ()), what="added node")
    cluster.delete("resourceslices", "node-1-gpu")
    wait_for(lambda: ("ResourceSlice", "node-1-gpu") not in (inv.snapshot() or ()), what="deleted slice")
    modified = resource_slice("node-2-gpu", "node-2", devices=4)
    cluster.put("resourceslices", modified)
    wait_for(lambda: any(len(o.get("spec", {}).get("devices", [])) == 4 for o in inv.objects()), what="modify")
    assert inv.restarts == 0
    assert len(cluster.list_requests("resourceslices")) == 1  # no relist on the happy path


def test_watch_resumes_after_disconnect_without_relist(
    cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread
) -> None:
    seed(cluster)
    inv = make_inventory(kubeconfig)
    loop_thread.submit(inv.run())
    wait_for(lambda: inv.synced, what="sync")
    rv = cluster.put("nodes", node("node-2"))
    wait_for(lambda: ("Node", "node-2") in (inv.snapshot() or ()), what="node-2")
    cluster.fault("nodes", "drop")
    wait_for(lambda: inv.restarts >= 1, what="restart after drop")
    cluster.put("nodes", node("node-3"))  # happens while (or after) reconnecting
    wait_for(lambda: ("Node", "node-3") in (inv.snapshot() or ()), what="node-3 after reconnect")
    resumed = cluster.watch_requests("nodes")[-1]
    assert int(resumed["resourceVersion"]) >= rv  # resumed from what it had seen, not from 0
    assert len(cluster.list_requests("nodes")) == 1  # and did not relist
    assert inv.relists == 0


def test_clean_end_of_watch_resumes_silently(cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    seed(cluster)
    inv = make_inventory(kubeconfig)
    loop_thread.submit(inv.run())
    wait_for(lambda: inv.synced, what="sync")
    cluster.bookmark("deviceclasses")
    cluster.fault("deviceclasses", "end")
    wait_for(lambda: len(cluster.watch_requests("deviceclasses")) >= 2, what="re-watch")
    assert inv.restarts == 0
    assert int(cluster.watch_requests("deviceclasses")[-1]["resourceVersion"]) == cluster.rv  # from the bookmark


def test_410_gone_event_relists(cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    seed(cluster)
    inv = make_inventory(kubeconfig)
    loop_thread.submit(inv.run())
    wait_for(lambda: inv.synced, what="sync")
    # a deletion the watcher never sees as an event: only a relist can notice it
    with cluster.lock:
        cluster.objects["nodes"].pop("node-1")
    cluster.fault("nodes", "gone")
    wait_for(lambda: inv.relists >= 1, what="relist")
    wait_for(lambda: ("Node", "node-1") not in (inv.snapshot() or ()), what="relisted snapshot")
    assert len(cluster.list_requests("nodes")) == 2
    assert inv.synced  # stays synced (old snapshot served meanwhile)


def test_410_status_on_watch_start_relists(cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    seed(cluster)
    inv = make_inventory(kubeconfig)
    loop_thread.submit(inv.run())
    wait_for(lambda: inv.synced, what="sync")
    cluster.compact()
    cluster.fault("resourceslices", "end")  # the next watch resumes from a compacted version
    wait_for(lambda: len(cluster.list_requests("resourceslices")) >= 2, what="relist after 410")
    assert inv.relists >= 1


def test_malformed_event_relists(cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    seed(cluster)
    inv = make_inventory(kubeconfig)
    loop_thread.submit(inv.run())
    wait_for(lambda: inv.synced, what="sync")
    cluster.fault("deviceclasses", "malformed")
    wait_for(lambda: len(cluster.list_requests("deviceclasses")) >= 2, what="relist after garbage")
    cluster.put("deviceclasses", device_class("gpu-2"))
    wait_for(lambda: ("DeviceClass", "gpu-2") in (inv.snapshot() or ()), what="recovery")


def test_api_server_down_at_start_then_recovers(
    cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread
) -> None:
    seed(cluster)
    cluster.available = False
    inv = make_inventory(kubeconfig)
    loop_thread.submit(inv.run())
    wait_for(lambda: inv.restarts >= 3, what="retries")
    assert not inv.synced
    problem = inv.problem()
    assert problem is not None and "not synced" in problem and "503" in problem
    cluster.available = True
    wait_for(lambda: inv.synced, what="sync after recovery")
    assert inv.problem() is None


def test_connection_refused_at_start(tmp_path: Path, api_tls: dict[str, Path], loop_thread: LoopThread) -> None:
    # bind and close: nothing listens on that port any more
    probe = BackgroundServer(lambda *a: None)
    port = probe.port
    probe.sock.close()
    cfg = write_kubeconfig(tmp_path / "kc", f"https://127.0.0.1:{port}", api_tls["ca"].read_bytes(), token="t")
    inv = make_inventory(cfg)
    loop_thread.submit(inv.run())
    wait_for(lambda: inv.restarts >= 3, what="retries")
    assert not inv.synced and "not synced" in (inv.problem() or "")


def test_stale_when_watch_keeps_failing(cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    seed(cluster)
    inv = make_inventory(kubeconfig, stale_after=0.2)
    loop_thread.submit(inv.run())
    wait_for(lambda: inv.synced, what="sync")
    # every watch is open before the API goes down: only the dropped one can fail
    wait_for(lambda: all(cluster.watch_requests(r) for r in ("deviceclasses", "resourceslices", "nodes")),
             what="all watches open")
    cluster.available = False
    cluster.fault("nodes", "drop")
    problem = wait_for(inv.problem, what="stale problem")
    assert "stale" in problem and "nodes" in problem
    cluster.available = True
    wait_for(lambda: inv.problem() is None, what="fresh again")


def test_wrong_token_is_reported(cluster: FakeCluster, fake_api: BackgroundServer, api_tls: dict[str, Path],
                                 tmp_path: Path, loop_thread: LoopThread) -> None:
    cfg = write_kubeconfig(tmp_path / "kc", fake_api.url, api_tls["ca"].read_bytes(), token="wrong")
    inv = make_inventory(cfg)
    loop_thread.submit(inv.run())
    wait_for(lambda: inv.restarts >= 3, what="retries")
    assert "401" in (inv.problem() or "")


def test_untrusted_server_certificate_fails(cluster: FakeCluster, fake_api: BackgroundServer,
                                            tmp_path: Path, loop_thread: LoopThread) -> None:
    other_ca = generate_bundle("x", "y").ca_cert
    cfg = write_kubeconfig(tmp_path / "kc", fake_api.url, other_ca, token="fake-token-123")
    inv = make_inventory(cfg)
    loop_thread.submit(inv.run())
    wait_for(lambda: inv.restarts >= 2, what="retries")
    assert not inv.synced and "CERTIFICATE_VERIFY_FAILED" in (inv.problem() or "")


def test_client_certificate_auth(tmp_path: Path, loop_thread: LoopThread) -> None:
    """kubeconfig with client-certificate-data: the fake requires a client cert from its CA."""
    bundle = generate_bundle("kubernetes", "default", extra_sans=["127.0.0.1"])
    paths = write_bundle(bundle, tmp_path / "api")
    client_cert, client_key = generate_leaf(bundle.ca_cert, bundle.ca_key, ["system:draguard"], 1, client=True)
    cluster = FakeCluster(token=None)
    seed(cluster)
    with serve_fake_api(cluster, cert=paths["cert"], key=paths["key"], client_ca=paths["ca"]) as api:
        cfg = write_kubeconfig(tmp_path / "kc", api.url, bundle.ca_cert,
                               client_cert=client_cert, client_key=client_key)
        inv = make_inventory(cfg)
        loop_thread.submit(inv.run())
        wait_for(lambda: inv.synced, what="sync with client cert")


def test_in_cluster_config(tmp_path: Path) -> None:
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("tok-1\n")
    (sa / "ca.crt").write_bytes(generate_bundle("a", "b").ca_cert)
    cfg = load_in_cluster(sa, {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "6443"})
    assert cfg.server == "https://10.0.0.1:6443"
    assert cfg.bearer_token() == "tok-1"
    (sa / "token").write_text("tok-2")  # projected tokens rotate; the next request uses the new one
    assert cfg.bearer_token() == "tok-2"
    v6 = load_in_cluster(sa, {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"})
    assert v6.server == "https://[fd00::1]:443"
    with pytest.raises(KubeConfigError, match="KUBERNETES_SERVICE_HOST"):
        load_in_cluster(sa, {})


def test_kubeconfig_errors_and_files(tmp_path: Path) -> None:
    ca = generate_bundle("a", "b").ca_cert
    (tmp_path / "ca.crt").write_bytes(ca)
    (tmp_path / "kc").write_text(
        "current-context: c\n"
        "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1/', certificate-authority: ca.crt}}]\n"
        "users: [{name: u, user: {tokenFile: tok}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
    )
    (tmp_path / "tok").write_text("from-file")
    cfg = load_kube_config(tmp_path / "kc")
    assert cfg.server == "https://127.0.0.1:1" and cfg.ca_pem == ca and cfg.bearer_token() == "from-file"
    (tmp_path / "bad").write_text("current-context: nope\ncontexts: []\n")
    with pytest.raises(KubeConfigError, match="no context named 'nope'"):
        load_kube_config(tmp_path / "bad")
    (tmp_path / "exec").write_text(
        "current-context: c\nclusters: [{name: k, cluster: {server: 'https://x'}}]\n"
        "users: [{name: u, user: {exec: {command: aws}}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
    )
    with pytest.raises(KubeConfigError, match=r"exec\.apiVersion None is not supported"):
        load_kube_config(tmp_path / "exec")  # exec plugins: tests/kube/test_kubeconfig_auth.py
    with pytest.raises(KubeConfigError, match="cannot read"):
        load_kube_config(tmp_path / "missing")


def test_unusable_client_certificate_is_reported_not_retried(tmp_path: Path, loop_thread: LoopThread) -> None:
    bundle = generate_bundle("kubernetes", "default")
    other = generate_bundle("x", "y")
    cfg = write_kubeconfig(tmp_path / "kc", "https://127.0.0.1:1", bundle.ca_cert,
                           client_cert=bundle.cert, client_key=other.key)  # key does not match
    inv = make_inventory(cfg)
    done = loop_thread.submit(inv.run())
    done.result(5)  # returns instead of retrying forever
    assert "cannot watch" in (inv.problem() or "") and inv.restarts == 0


def test_nodes_are_trimmed_to_what_scheduling_reads(
    cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread
) -> None:
    fat = node("node-1")
    fat["spec"] = {"taints": [{"key": "gpu", "effect": "NoSchedule"}], "podCIDR": "10.0.0.0/24"}
    fat["status"] = {"images": [{"names": [f"registry/image-{i}"], "sizeBytes": i} for i in range(100)],
                     "allocatable": {"cpu": "8", "nvidia.com/gpu": "2", "hugepages-1Gi": "0"}}
    cluster.put("nodes", fat)
    cluster.put("deviceclasses", device_class("gpu"))
    inv = make_inventory(kubeconfig)
    loop_thread.submit(inv.run())
    wait_for(lambda: inv.synced, what="sync")
    cluster.put("nodes", {**node("node-2"), "spec": {"unschedulable": True}, "status": {"capacity": {"cpu": "64"}}})
    wait_for(lambda: len([o for o in inv.objects() if o["kind"] == "Node"]) == 2, what="watched node")
    nodes = {o["metadata"]["name"]: o for o in inv.objects() if o["kind"] == "Node"}
    assert nodes["node-1"]["metadata"]["labels"] == {"kubernetes.io/hostname": "node-1"}
    assert nodes["node-1"]["spec"] == {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}
    assert nodes["node-1"]["status"] == {"allocatable": {"nvidia.com/gpu": "2"}}  # native resources dropped
    assert nodes["node-2"]["spec"] == {"unschedulable": True} and "status" not in nodes["node-2"]
    assert "images" not in str(nodes)
    snap = build_inventory(inv.objects())
    assert snap.node_info["node-2"].unschedulable
    assert [t.key for t in snap.node_info["node-1"].taints] == ["gpu"]
    assert snap.node_info["node-1"].device_plugin == frozenset({"nvidia.com/gpu"})


def test_an_empty_metadata_only_list_syncs(cluster: FakeCluster, kubeconfig: Path, loop_thread: LoopThread) -> None:
    """A cluster without Nodes answers ``"items": null`` to a metadata-only list (found against
    the real API server): that is an empty list, not a malformed one."""
    cluster.put("deviceclasses", device_class("gpu"))
    inv = make_inventory(kubeconfig)
    loop_thread.submit(inv.run())
    wait_for(lambda: inv.synced, what="sync")
    assert inv.restarts == 0 and inv.snapshot() == {("DeviceClass", "gpu")}
