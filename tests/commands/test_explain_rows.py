"""``draguard explain`` as a new user meets it (issue #35, item 8): one row per node class, a
transient taint is "not now" and never "never", reasons only on the nodes they describe, the API
server's rejections first, workloads accepted, and a hint when the object is in another namespace
(only from what the user may read)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.cli import main

GPU, NIC = "gpu.acme.io", "nic.acme.io"


def _dclass(name: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{name}"'}}]}}


def _node(name: str, taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"zone": "a"}}}
    if taints:
        out["spec"] = {"taints": taints}
    return out


def _slice(node: str, driver: str, device: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-{driver}"},
            "spec": {"driver": driver, "nodeName": node, "pool": {"name": f"{node}-{driver}", "generation": 1,
                                                                  "resourceSliceCount": 1}, "devices": [device]}}


_SHARED_GPU = {"name": "gpu-0", "allowMultipleAllocations": True,
               "capacity": {"memory": {"value": "40Gi", "requestPolicy": {"default": "5Gi",
                                                                          "validRange": {"min": "5Gi", "step": "5Gi"}}}}}
_SHARED_NIC = {"name": "nic-0", "allowMultipleAllocations": True, "capacity": {"bandwidth": {"value": "10G"}}}


def _template(name: str, *requests: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "team-a"}, "spec": {"spec": {"devices": {"requests": list(requests)}}}}


def _request(name: str, cls: str, capacity: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": cls, "capacity": {"requests": capacity}}}


def _pod_spec(*templates: str) -> dict[str, Any]:
    return {"containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": t} for t in templates]}}],
            "resourceClaims": [{"name": t, "resourceClaimTemplateName": t} for t in templates]}


def _pod(name: str, *templates: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "team-a"},
            "spec": {**_pod_spec(*templates), **spec}}


def project(tmp_path: Path, *, node_c_taint: dict[str, str], nic: str = "1500M") -> Path:
    """Three nodes: node-a with a shared GPU and a shared NIC, node-b with a GPU only, node-c like
    node-a but tainted."""
    inventory = [_dclass(GPU), _dclass(NIC), _node("node-a"), _node("node-b"), _node("node-c", [node_c_taint]),
                 _slice("node-a", GPU, _SHARED_GPU), _slice("node-a", NIC, _SHARED_NIC),
                 _slice("node-b", GPU, _SHARED_GPU),
                 _slice("node-c", GPU, _SHARED_GPU), _slice("node-c", NIC, _SHARED_NIC)]
    apps = [_template("gpu", _request("gpu", GPU, {"memory": "10Gi"})),
            _template("nic", _request("nic", NIC, {"bandwidth": nic})),
            _pod("trainer", "gpu", "nic")]
    (tmp_path / "inventory.yaml").write_text(yaml.safe_dump_all(inventory))
    (tmp_path / "apps.yaml").write_text(yaml.safe_dump_all(apps))
    return tmp_path


NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
DEDICATED = {"key": "dedicated", "value": "ml", "effect": "NoSchedule"}


def explain(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["explain", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def explain_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, err = explain(capsys, *argv, "--format", "json")
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def rows_by_node(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        for n in row["nodes"]:
            assert n not in out, f"node {n} in two rows: {out[n]} and {row}"
            out[n] = row
    return out


def test_a_not_ready_node_is_one_row_not_now_never_never(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = explain_json(capsys, "pod/trainer", "-n", "team-a", "--inventory", str(project(tmp_path, node_c_taint=NOT_READY)))
    rows = rows_by_node(doc["classes"])
    assert (rows["node-c"]["ever"], rows["node-c"]["now"]) == (True, False)
    assert rows["node-c"]["reason"].startswith("not now: taint node.kubernetes.io/not-ready")
    assert (rows["node-a"]["ever"], rows["node-a"]["now"]) == (True, True)
    assert doc["ever"] is True and doc["now"] is True
    code, text, _ = explain(capsys, "pod/trainer", "-n", "team-a", "--inventory", str(tmp_path))
    assert code == 0
    table = text.split("per class of nodes:")[1].split("\n\n")[0]
    assert sum(line.lstrip().startswith("node-c") for line in table.splitlines()) == 1


def test_only_a_not_ready_node_fits_ever_yes_now_no(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With node-a's NIC too small for the request, only node-c could run it: once it is ready."""
    inv = project(tmp_path, node_c_taint=NOT_READY)
    docs = list(yaml.safe_load_all((inv / "inventory.yaml").read_text()))
    for d in docs:
        if d["kind"] == "ResourceSlice" and d["metadata"]["name"] == f"node-a-{NIC}":
            d["spec"]["devices"][0]["capacity"]["bandwidth"]["value"] = "1G"
    (inv / "inventory.yaml").write_text(yaml.safe_dump_all(docs))
    doc = explain_json(capsys, "pod/trainer", "-n", "team-a", "--inventory", str(inv))
    assert doc["ever"] is True and doc["now"] is False
    assert (rows_by_node(doc["classes"])["node-c"]["ever"], rows_by_node(doc["classes"])["node-c"]["now"]) == (True, False)
    assert not any(f["reason"] == "Unsatisfiable" for f in doc["findings"])


def test_a_lasting_taint_is_a_never(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = explain_json(capsys, "pod/trainer", "-n", "team-a", "--inventory", str(project(tmp_path, node_c_taint=DEDICATED)))
    row = rows_by_node(doc["classes"])["node-c"]
    assert (row["ever"], row["now"]) == (False, False) and "taint dedicated=ml:NoSchedule" in row["reason"]
    tolerating = _pod("trainer", "gpu", "nic", tolerations=[{"key": "dedicated", "operator": "Exists"}])
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(tolerating))
    (tmp_path / "apps.yaml").write_text(yaml.safe_dump_all(
        [d for d in yaml.safe_load_all((tmp_path / "apps.yaml").read_text()) if d["kind"] != "Pod"]))
    doc = explain_json(capsys, "pod/trainer", "-n", "team-a", "--inventory", str(tmp_path))
    assert rows_by_node(doc["classes"])["node-c"]["ever"] is True


def test_a_request_reason_stays_on_the_nodes_it_describes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A NIC request too big for every NIC: node-a is told about capacity, node-b (no NIC at all)
    that nothing there matches — never node-a's figures."""
    doc = explain_json(capsys, "pod/trainer", "-n", "team-a", "--inventory",
                       str(project(tmp_path, node_c_taint=NOT_READY, nic="20G")))
    assert doc["ever"] is False
    nic = next(c for c in doc["claims"] if c["name"] == "nic")
    rows = rows_by_node(nic["classes"])
    assert "capacity" in rows["node-a"]["reason"]
    assert "matches" in rows["node-b"]["reason"]
    assert "node-a" not in rows["node-b"]["reason"] and "10G" not in rows["node-b"]["reason"]
    gpu = next(c for c in doc["claims"] if c["name"] == "gpu")
    assert all(r["reason"] == "" for r in gpu["classes"]), gpu["classes"]
    assert sum(1 for r in doc["classes"] if "node-c" in r["nodes"]) == 1


def test_an_api_server_rejection_comes_first_and_is_never_a_yes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project(tmp_path, node_c_taint=NOT_READY)
    bad = _pod("broken", "gpu")
    bad["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}, {"name": "nope"}]
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad))
    code, text, _ = explain(capsys, "pod/broken", "-n", "team-a", "--inventory", str(tmp_path))
    assert code == 0
    assert "could ever run (every device free): yes" not in text
    assert text.index("rejected by the API server") < text.index("could ever run")
    assert "nope" in text.split("could ever run")[0]
    doc = explain_json(capsys, "pod/broken", "-n", "team-a", "--inventory", str(tmp_path))
    assert doc["ever"] is False and doc["rejected"] and doc["rejected"][0]["reason"].startswith("FieldValue")
    ok = explain_json(capsys, "pod/trainer", "-n", "team-a", "--inventory", str(tmp_path))
    assert ok["rejected"] == [] and ok["ever"] is True


@pytest.mark.parametrize(("kind", "word", "body"), [
    ("Deployment", "deployment", {"replicas": 2, "selector": {"matchLabels": {"a": "b"}},
                                  "template": {"metadata": {"labels": {"a": "b"}}, "spec": _pod_spec("gpu", "nic")}}),
    ("StatefulSet", "sts", {"serviceName": "s", "selector": {"matchLabels": {"a": "b"}},
                            "template": {"metadata": {"labels": {"a": "b"}}, "spec": _pod_spec("gpu", "nic")}}),
    ("DaemonSet", "daemonset", {"selector": {"matchLabels": {"a": "b"}},
                                "template": {"metadata": {"labels": {"a": "b"}}, "spec": _pod_spec("gpu", "nic")}}),
    ("ReplicaSet", "replicaset", {"selector": {"matchLabels": {"a": "b"}},
                                  "template": {"metadata": {"labels": {"a": "b"}}, "spec": _pod_spec("gpu", "nic")}}),
    ("Job", "job", {"template": {"spec": {**_pod_spec("gpu", "nic"), "restartPolicy": "Never"}}}),
    ("CronJob", "cronjob", {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {
        "spec": {**_pod_spec("gpu", "nic"), "restartPolicy": "Never"}}}}}),
])
def test_workloads_are_explained_by_their_pod_template(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str,
                                                       word: str, body: dict[str, Any]) -> None:
    project(tmp_path, node_c_taint=NOT_READY)
    group = "batch/v1" if kind in ("Job", "CronJob") else "apps/v1"
    (tmp_path / "w.yaml").write_text(yaml.safe_dump({"apiVersion": group, "kind": kind,
                                                     "metadata": {"name": "w", "namespace": "team-a"}, "spec": body}))
    doc = explain_json(capsys, f"{word}/w", "-n", "team-a", "--inventory", str(tmp_path))
    assert doc["kind"] == kind and doc["ever"] is True and doc["rejected"] == []
    assert rows_by_node(doc["classes"])["node-b"]["ever"] is False
    code, _, err = explain(capsys, f"{word}/missing", "-n", "team-a", "--inventory", str(tmp_path))
    assert code == 3 and "not found" in err


def test_not_found_hints_at_the_namespace_it_is_in(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project(tmp_path, node_c_taint=NOT_READY)
    code, _, err = explain(capsys, "pod/trainer", "--inventory", str(tmp_path))
    assert code == 3 and "exists in namespace team-a (give -n team-a)" in err
    code, _, err = explain(capsys, "pod/nobody", "--inventory", str(tmp_path))
    assert code == 3 and "exists in" not in err


class _Cluster:
    """An API server for the live path (httpx's MockTransport): the project's objects, a tenant
    who may list pods of every namespace or not (``list_all``)."""

    def __init__(self, root: Path, *, list_all: bool) -> None:
        self.objects = [d for f in sorted(root.glob("*.yaml")) for d in yaml.safe_load_all(f.read_text()) if d]
        self.list_all = list_all
        self.asked: list[str] = []

    def _items(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        return [d for d in self.objects if d["kind"] == kind
                and (namespace is None or d["metadata"].get("namespace") == namespace)]

    def handle(self, request: Any) -> Any:
        import httpx

        path, params = request.url.path, dict(request.url.params)
        self.asked.append(path)
        lists = {"/apis/resource.k8s.io/v1/deviceclasses": "DeviceClass",
                 "/apis/resource.k8s.io/v1/resourceslices": "ResourceSlice", "/api/v1/nodes": "Node"}
        if path in lists:
            return httpx.Response(200, json={"items": self._items(lists[path])})
        parts = path.strip("/").split("/")
        if "namespaces" not in parts:  # a list across every namespace
            if not self.list_all:
                return httpx.Response(403, json={"kind": "Status", "message": "forbidden"})
            kind = {"pods": "Pod", "resourceclaims": "ResourceClaim", "deployments": "Deployment"}[parts[-1]]
            name = params.get("fieldSelector", "").removeprefix("metadata.name=")
            return httpx.Response(200, json={"items": [d for d in self._items(kind) if d["metadata"]["name"] == name]})
        ns = parts[parts.index("namespaces") + 1]
        rest = parts[parts.index("namespaces") + 2:]
        kind = {"pods": "Pod", "resourceclaims": "ResourceClaim", "resourceclaimtemplates": "ResourceClaimTemplate",
                "deployments": "Deployment"}[rest[0]]
        if len(rest) == 1:
            return httpx.Response(200, json={"items": self._items(kind, ns)})
        got = [d for d in self._items(kind, ns) if d["metadata"]["name"] == rest[1]]
        return httpx.Response(200, json=got[0]) if got else httpx.Response(404, json={"kind": "Status", "message": "not found"})


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    import draguard.inventory
    import draguard.inventory.oneshot
    import httpx

    (tmp_path / "p").mkdir()
    root = project(tmp_path / "p", node_c_taint=NOT_READY)
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w", "namespace": "team-a"},
                  "spec": {"selector": {"matchLabels": {"a": "b"}},
                           "template": {"metadata": {"labels": {"a": "b"}}, "spec": _pod_spec("gpu", "nic")}}}
    (root / "w.yaml").write_text(yaml.safe_dump(deployment))
    config = tmp_path / "kubeconfig"
    config.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://api.example.invalid"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    box: dict[str, _Cluster] = {}

    def client(_: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url="https://api.example.invalid", transport=httpx.MockTransport(box["api"].handle))

    monkeypatch.setattr(draguard.inventory, "make_client", client)
    monkeypatch.setattr(draguard.inventory.oneshot, "make_client", client)

    def start(*, list_all: bool) -> tuple[_Cluster, str]:
        box["api"] = _Cluster(root, list_all=list_all)
        return box["api"], str(config)
    return start


def test_live_hint_only_for_a_user_who_may_list_every_namespace(live: Any, capsys: pytest.CaptureFixture[str]) -> None:
    api, config = live(list_all=True)
    code, _, err = explain(capsys, "pod/trainer", "--kubeconfig", config)
    assert code == 3 and "Pod default/trainer not found" in err and "exists in namespace team-a" in err
    api, config = live(list_all=False)  # a tenant: the API server refuses the list, so no hint
    code, _, err = explain(capsys, "pod/trainer", "--kubeconfig", config)
    assert code == 3 and "team-a" not in err
    assert "/api/v1/pods" in api.asked  # asked, with the user's own credentials, and refused


def test_live_deployment_is_read_and_explained(live: Any, capsys: pytest.CaptureFixture[str]) -> None:
    _, config = live(list_all=False)
    doc = explain_json(capsys, "deployment/w", "-n", "team-a", "--kubeconfig", config)
    assert doc["kind"] == "Deployment" and doc["ever"] is True
    assert rows_by_node(doc["classes"])["node-c"]["now"] is False
