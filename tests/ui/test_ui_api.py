"""``draguard ui``'s JSON API from files: each panel carries the figures and verdicts the commands
print for the same inventory (``capacity --format json``, ``explain --format json``, ``capacity
--fit``, the ``/lint`` report), the devices panel adds them up per device, the tenant rule holds,
and bad input in the paste box is an answer naming the field — never a 500."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from draguard.cli import main
from draguard.k8s import DEFAULT_TARGET
from draguard.ui import FileSource, Reading, UiState, build_view, make_app
from draguard.ui.http import STATIC_FILES
from ui_objects import claim, claim_objects, inventory_objects, pod, write

with warnings.catch_warnings():  # starlette's notice that its test client moves to httpx2: not ours to fix
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient


@pytest.fixture
def files(tmp_path: Path) -> list[str]:
    inv = write(tmp_path / "inventory.yaml", inventory_objects())
    dump = write(tmp_path / "claims.yaml", [*claim_objects(), pod("trainer", "team-a", "wait-h100")])
    return [str(inv), str(dump)]


def _client(reading: Reading) -> TestClient:
    return TestClient(make_app(UiState(reading, target=DEFAULT_TARGET, deadline=20.0)))


@pytest.fixture
def api(files: list[str]) -> Iterator[TestClient]:
    yield _client(FileSource(files, namespace="team-a").current())


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def _panel(api: TestClient, name: str) -> dict[str, Any]:
    resp = api.get(f"/api/{name}")
    assert resp.status_code == 200, resp.text
    body = resp.json()
    body.pop("generation")
    return dict(body)


def _inventory_args(files: list[str]) -> list[str]:
    return [arg for f in files for arg in ("--inventory", f)]


def test_the_capacity_panel_is_what_capacity_prints(api: TestClient, files: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    printed = _cli(capsys, "capacity", *_inventory_args(files), "--format", "json")
    panel = _panel(api, "capacity")
    assert panel == printed
    gpu = panel["classes"][0]
    assert (gpu["devices"], gpu["free"], gpu["shared"], gpu["dedicated"]) == (5, 2, 1, 2)


def test_the_pending_pod_is_what_explain_prints(api: TestClient, files: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    printed = _cli(capsys, "explain", "pod/trainer", "-n", "team-a", *_inventory_args(files), "--format", "json")
    pods = _panel(api, "pending")["pods"]
    assert pods == [printed]
    assert (printed["ever"], printed["now"]) == (True, False)  # two H100s exist; one is held


def test_a_pending_claim_carries_explain_s_answer(api: TestClient, files: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    printed = _cli(capsys, "explain", "claim/wait-h100", "-n", "team-a", *_inventory_args(files), "--format", "json")
    claims = {f"{c['namespace']}/{c['name']}": c for c in _panel(api, "claims")["claims"]}
    assert claims["team-a/wait-h100"]["explain"] == printed
    assert "explain" not in claims["team-a/train-1"]  # allocated: nothing to explain


def test_each_claim_shows_the_device_it_got_with_its_share(api: TestClient) -> None:
    claims = {f"{c['namespace']}/{c['name']}": c for c in _panel(api, "claims")["claims"]}
    (share,) = claims["team-a/infer-1"]["devices"]
    assert (share["pool"], share["device"], share["consumedCapacity"]) == ("node-1", "shared-0", {"memory": "10Gi"})
    assert share["shareID"].endswith("0001")
    assert claims["team-a/train-1"]["devices"][0]["device"] == "gpu-0"
    assert claims["team-a/wait-h100"]["devices"] == [] and not claims["team-a/wait-h100"]["allocated"]


def test_the_devices_panel_adds_up_to_the_capacity_rows(api: TestClient) -> None:
    devices = _panel(api, "devices")
    capacity = _panel(api, "capacity")["classes"][0]["pools"]
    by_pool = {p["pool"]: p for p in devices["pools"]}
    for row in capacity:
        devs = [d for n in by_pool[row["pool"]]["nodes"] for d in n["devices"]]
        assert len(devs) == row["devices"]
        for state in ("free", "shared", "dedicated"):
            assert sum(d["state"] == state for d in devs) == row[state]
    node1 = {d["name"]: d for d in by_pool["node-1"]["nodes"][0]["devices"]}
    assert node1["gpu-0"]["state"] == "dedicated" and node1["gpu-1"]["state"] == "free"
    (memory,) = node1["shared-0"]["capacity"]
    assert (memory["text"], memory["fraction"]) == ("35Gi of 40Gi", 0.875)  # 10Gi + 25Gi of two shares
    counters = by_pool["node-2"]["counters"]
    assert [(c["set"], c["counter"], c["text"]) for c in counters] == [("gpu", "memory", "20Gi of 40Gi")]


def test_files_are_the_user_s_own_every_holder_is_named(api: TestClient) -> None:
    devices = _panel(api, "devices")
    shared = next(d for p in devices["pools"] for n in p["nodes"] for d in n["devices"] if d["name"] == "shared-0")
    assert shared["holders"] == {"named": ["team-a/infer-1", "team-b/secret-share"], "others": 0}


def test_a_user_of_one_namespace_sees_its_claims_by_name_and_counts_for_the_rest(files: list[str]) -> None:
    """The tenant rule, as a reading of the cluster gives it when only team-a's claims may be
    listed: other namespaces' holders are counted; no panel names a claim of team-b."""
    reading = FileSource(files, namespace="team-a").current()
    reading.scope = "namespace"
    api = _client(reading)
    text = json.dumps([_panel(api, p) for p in ("capacity", "devices", "claims", "pending", "findings")])
    assert "secret-share" not in text and "secret-part" not in text and "team-b" not in text
    claims = [f"{c['namespace']}/{c['name']}" for c in _panel(api, "claims")["claims"]]
    assert claims == ["team-a/infer-1", "team-a/train-1", "team-a/wait-h100"]
    shared = next(d for p in _panel(api, "devices")["pools"] for n in p["nodes"] for d in n["devices"]
                  if d["name"] == "shared-0")
    assert shared["holders"] == {"named": ["team-a/infer-1"], "others": 1}


def test_the_paste_box_counts_as_capacity_fit(api: TestClient, files: list[str], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    pasted = write(tmp_path / "paste.yaml", [claim("more", "team-a", memory="5Gi", model="A100")])
    printed = _cli(capsys, "capacity", *_inventory_args(files), "--fit", str(pasted), "--format", "json")["fit"]
    resp = api.post("/api/check", content=pasted.read_bytes())
    assert resp.status_code == 200, resp.text
    answer = resp.json()
    assert answer["fit"] == printed
    assert (answer["fit"]["now"]["fit"], answer["fit"]["ever"]["fit"]) == (1, 8)  # 5Gi left now; 40Gi / 5Gi ever
    assert answer["lint"]["findings"] == [] and answer["lint"]["summary"]["objects"] == 1


def test_the_paste_box_gives_the_lint_report(api: TestClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same findings as ``draguard lint`` for the same text (file name aside)."""
    bad = claim("x", "team-a")
    bad["spec"]["devices"]["requests"][0]["exactly"]["count"] = "two"
    path = write(tmp_path / "bad.yaml", [bad])
    main(["lint", str(path), "--format", "json"])
    printed = json.loads(capsys.readouterr().out)
    answer = api.post("/api/check", content=path.read_bytes()).json()
    strip = [{k: v for k, v in f.items() if k != "file"} for f in printed["findings"]]
    assert [{k: v for k, v in f.items() if k != "file"} for f in answer["lint"]["findings"]] == strip
    assert answer["lint"]["findings"][0]["field"] == "spec.devices.requests[0].exactly.count"
    assert answer["fit"]["now"]["fit"] is None  # not counted: not valid


@pytest.mark.parametrize(("body", "names"), [
    (b"", "body: empty"),
    (b"   \n", "body: empty"),
    (b"x" * ((1 << 20) + 1), "body: 1048577 bytes"),
])
def test_a_body_that_cannot_be_checked_is_a_400_naming_it(api: TestClient, body: bytes, names: str) -> None:
    resp = api.post("/api/check", content=body)
    assert resp.status_code == 400
    assert resp.json()["error"].startswith(names)


@pytest.mark.parametrize(("body", "message"), [
    (b"kind: ResourceClaim\nspec: [\n", "not valid YAML or JSON"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
    (b"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec: 5\n", ""),
    (b"- just\n- a list\n", "is a list, not a Kubernetes object"),
    (b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {resourceClaims: 7}\n", ""),
])
def test_bad_input_is_a_finding_never_a_500(api: TestClient, body: bytes, message: str) -> None:
    resp = api.post("/api/check", content=body)
    assert resp.status_code == 200, resp.text
    findings = resp.json()["lint"]["findings"]
    assert findings, "bad input must say what is wrong"
    assert any(f["severity"] == "error" for f in findings)
    if message:
        assert any(message in f["message"] for f in findings)
    else:
        assert any(f["field"] for f in findings), findings  # the field is named


def test_a_good_claim_has_no_findings_and_a_count(api: TestClient) -> None:
    resp = api.post("/api/check", content=json.dumps(claim("ok", "team-a", model="H100")).encode())
    answer = resp.json()
    assert answer["lint"]["findings"] == []
    assert (answer["fit"]["now"]["fit"], answer["fit"]["ever"]["fit"]) == (1, 2)


def test_unknown_panels_and_files_are_404s(api: TestClient) -> None:
    assert api.get("/api/nothing").status_code == 404
    assert api.get("/static/../commands.py").status_code == 404
    assert api.get("/static/secret.txt").status_code == 404


def test_the_page_and_its_files_come_from_the_package(api: TestClient) -> None:
    page = api.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "http://" not in page.text and "https://" not in page.text  # no CDN
    for name in ("app.js", "style.css"):
        resp = api.get(f"/static/{name}")
        assert resp.status_code == 200 and resp.content
        assert "https://" not in resp.text
    assert page.headers["content-security-policy"].startswith("default-src 'self'")


def test_a_request_for_another_host_is_refused(files: list[str]) -> None:
    """DNS rebinding: a page of evil.example pointed at 127.0.0.1 cannot read the user's cluster."""
    state = UiState(FileSource(files).current(), target=DEFAULT_TARGET, deadline=20.0)
    api = TestClient(make_app(state, allowed_hosts=frozenset({"127.0.0.1", "localhost"})))
    assert api.get("/api/summary", headers={"Host": "evil.example:8765"}).status_code == 403
    assert api.get("/api/summary", headers={"Host": "127.0.0.1:8765"}).status_code == 200
    assert api.get("/", headers={"Host": "localhost:8765"}).status_code == 200


def test_the_generation_moves_only_when_a_panel_changes(files: list[str], tmp_path: Path) -> None:
    reading = FileSource(files).current()
    first = build_view(reading, deadline=20.0, target=DEFAULT_TARGET)
    same = build_view(FileSource(files).current(), deadline=20.0, target=DEFAULT_TARGET, previous=first)
    assert same.generation == first.generation
    fewer = write(tmp_path / "fewer.yaml", claim_objects()[1:])
    changed = build_view(FileSource([files[0], str(fewer)]).current(), deadline=20.0, target=DEFAULT_TARGET,
                         previous=same)
    assert changed.generation == first.generation + 1


def test_the_audit_s_findings_come_from_its_policy_reports(tmp_path: Path, files: list[str]) -> None:
    report = {"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
              "metadata": {"name": "draguard", "namespace": "team-a"},
              "results": [{"policy": "draguard", "rule": "Unsatisfiable", "result": "fail", "severity": "high",
                           "source": "draguard", "message": "request \"gpu\" needs 3 devices",
                           "resources": [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                          "name": "big", "namespace": "team-a"}],
                           "properties": {"field": "spec.devices.requests[0]"}},
                          {"policy": "other", "rule": "x", "result": "fail", "source": "kyverno", "message": "m",
                           "resources": []}]}
    path = write(tmp_path / "reports.yaml", [report])
    api = _client(FileSource([*files, str(path)]).current())
    findings = _panel(api, "findings")
    assert findings["available"]
    assert findings["results"] == [{"result": "fail", "severity": "high", "rule": "Unsatisfiable",
                                    "message": "request \"gpu\" needs 3 devices", "kind": "ResourceClaim",
                                    "namespace": "team-a", "name": "big", "field": "spec.devices.requests[0]"}]
    none = _panel(_client(FileSource(files).current()), "findings")
    assert not none["available"] and none["results"] == []


def test_ui_fails_at_once_on_files_it_cannot_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ui", "--inventory", str(tmp_path / "missing.yaml"), "--port", "0"]) == 2
    assert "missing.yaml" in capsys.readouterr().err


def test_ui_without_a_kubeconfig_says_how_to_give_one(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", "")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["ui", "--port", "0"]) == 2
    assert "no kubeconfig" in capsys.readouterr().err


def test_the_page_s_files_are_shipped_in_the_package() -> None:
    """What the page loads must be in the wheel: pyproject's package data names every static file
    (the editable install reads the folder, so only this catches a file left out of the wheel)."""
    import fnmatch
    import tomllib

    root = Path(__file__).resolve().parents[2]
    setuptools = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "draguard.ui" in setuptools["packages"]
    data = setuptools.get("package-data", {})
    patterns = [*(f"ui/{p}" for p in data.get("draguard.ui", [])), *data.get("draguard", [])]
    for name in STATIC_FILES:
        assert any(fnmatch.fnmatch(f"ui/static/{name}", p) for p in patterns), name


def test_kubectl_draguard_ui_is_the_same_command(capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``kubectl draguard ui`` runs ``kubectl-draguard ui``: the plugin passes the words through."""
    from draguard.cli import kubectl_entry

    monkeypatch.setattr(sys, "argv", ["kubectl-draguard", "ui", "--help"])
    with pytest.raises(SystemExit) as exit_:
        kubectl_entry()
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "--address" in out and "--port" in out and "--kubeconfig" in out and "--inventory" in out


def test_ui_fails_at_once_on_a_cluster_it_cannot_reach(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import base64

    from draguard.certs import generate_bundle

    ca = base64.b64encode(generate_bundle("nowhere", "default").ca_cert).decode()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:9", "certificate-authority-data": ca}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    assert main(["ui", "--kubeconfig", str(kubeconfig), "--port", "0"]) == 2
    assert "cannot reach the API server" in capsys.readouterr().err


def test_a_re_read_that_changed_nothing_searches_nothing(files: list[str], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A new picture (an event of a resource the explanations do not read, a watch back after an
    outage) rebuilds the view; the explanations (two searches each) are made again only when
    something they read changed — and then they are."""
    import draguard.ui.view as view

    calls: list[str] = []
    real = view.explain_object

    def counted(kind: str, namespace: str, name: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(f"{kind} {namespace}/{name}")
        return real(kind, namespace, name, *args, **kwargs)

    monkeypatch.setattr(view, "explain_object", counted)
    first = build_view(FileSource(files).current(), deadline=20.0, target=DEFAULT_TARGET)
    assert sorted(calls) == ["Pod team-a/trainer", "ResourceClaim team-a/wait-h100"]
    build_view(FileSource(files).current(), deadline=20.0, target=DEFAULT_TARGET, previous=first)
    assert len(calls) == 2
    freed = write(tmp_path / "freed.yaml", [*(c for c in claim_objects() if c["metadata"]["name"] != "train-1"),
                                            pod("trainer", "team-a", "wait-h100")])
    after = build_view(FileSource([files[0], str(freed)]).current(), deadline=20.0, target=DEFAULT_TARGET,
                       previous=first)
    assert len(calls) == 4
    waiting = next(c for c in after.panels["claims"]["claims"] if c["name"] == "wait-h100")
    assert waiting["explain"]["now"] is True  # both H100s free now
