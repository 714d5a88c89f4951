"""kubeconfig like kubectl, against the fake API server on loopback (a real HTTP(S) server):
exec credential plugins (a small script written here, run for real), client certificates from
files and -data, token and tokenFile, insecure-skip-tls-verify only when asked for, and no
credentials over http://."""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.certs import generate_bundle, generate_leaf, write_bundle
from draguard.inventory.kube import DEVICE_RESOURCES, KubeInventory
from draguard.inventory.kubeconfig import KubeConfig, KubeConfigError, load_kube_config
from draguard.server.cli_serve import UsageError, add_serve_arguments, build_state
from draguard.server.runner import BackgroundServer
from draguard.server.state import ServerState
from fakeapi import FakeCluster, serve_fake_api

from kube.conftest import TOKEN
from kube.helpers import LoopThread, device_class, node, resource_slice, wait_for

V1 = "client.authentication.k8s.io/v1"
V1BETA1 = "client.authentication.k8s.io/v1beta1"

PLUGIN = '''\
"""A fake exec credential plugin: its behaviour is steered by files in the folder argv[1]."""
import json, os, pathlib, sys

state = pathlib.Path(sys.argv[1])
runs = int((state / "runs").read_text()) if (state / "runs").exists() else 0
(state / "runs.tmp").write_text(str(runs + 1))
os.replace(state / "runs.tmp", state / "runs")  # atomic: the test reads it while the plugin runs
info = os.environ.get("KUBERNETES_EXEC_INFO", "")
(state / "exec_info.json").write_text(info)
(state / "env.json").write_text(json.dumps({k: v for k, v in os.environ.items() if k.startswith("FAKE_")}))
if (state / "fail").exists():
    sys.stderr.write("login expired: run fake-login\\n")
    sys.exit(3)
if (state / "cert").exists():
    status = {"clientCertificateData": (state / "cert").read_text(),
              "clientKeyData": (state / "key").read_text()}
else:
    status = {"token": (state / "token").read_text()}
if (state / "expires").exists():
    status["expirationTimestamp"] = (state / "expires").read_text()
api = (state / "answer_api").read_text() if (state / "answer_api").exists() else json.loads(info)["apiVersion"]
print(json.dumps({"apiVersion": api, "kind": "ExecCredential", "status": status}))
'''


class Plugin:
    """The fake plugin's script and its steering folder."""

    def __init__(self, root: Path) -> None:
        self.state = root / "plugin-state"
        self.state.mkdir()
        self.script = root / "fake-plugin.py"
        self.script.write_text(PLUGIN)

    def give(self, name: str, value: str) -> None:
        (self.state / name).write_text(value)

    @property
    def runs(self) -> int:
        path = self.state / "runs"
        return int(path.read_text()) if path.exists() else 0

    def exec_info(self) -> dict[str, Any]:
        info: dict[str, Any] = json.loads((self.state / "exec_info.json").read_text())
        return info

    def stanza(self, api_version: str = V1, **extra: Any) -> dict[str, Any]:
        stanza: dict[str, Any] = {"apiVersion": api_version, "command": sys.executable,
                                  "args": [str(self.script), str(self.state)]}
        if api_version == V1:
            stanza["interactiveMode"] = "Never"
        stanza.update(extra)
        return stanza


@pytest.fixture
def plugin(tmp_path: Path) -> Plugin:
    return Plugin(tmp_path)


def kubeconfig(path: Path, server: str, *, cluster: dict[str, Any] | None = None,
               user: dict[str, Any] | None = None) -> Path:
    doc = {
        "apiVersion": "v1", "kind": "Config", "current-context": "fake",
        "clusters": [{"name": "fake", "cluster": {"server": server, **(cluster or {})}}],
        "users": [{"name": "me", "user": user or {}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "me"}}],
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def ca_data(api_tls: dict[str, Path]) -> dict[str, str]:
    return {"certificate-authority-data": base64.b64encode(api_tls["ca"].read_bytes()).decode()}


def seed(cluster: FakeCluster) -> None:
    cluster.put("deviceclasses", device_class("gpu"))
    cluster.put("resourceslices", resource_slice("node-1-gpu", "node-1"))
    cluster.put("nodes", node("node-1"))


def start(config: KubeConfig, loop_thread: LoopThread) -> KubeInventory:
    inv = KubeInventory(config, build=lambda objs: frozenset(o["metadata"]["name"] for o in objs),  # type: ignore[arg-type,return-value]
                        debounce=0.02, backoff_initial=0.02, backoff_max=0.1, resources=DEVICE_RESOURCES)
    loop_thread.submit(inv.run())
    return inv


def names(inv: KubeInventory) -> set[str]:
    return {o["metadata"]["name"] for o in inv.objects()}


# ------------------------------------------------------------------ exec plugins
@pytest.mark.parametrize("api_version", [V1, V1BETA1])
def test_exec_plugin_token_syncs_once_cached(
    api_version: str, plugin: Plugin, cluster: FakeCluster, fake_api: BackgroundServer,
    api_tls: dict[str, Path], tmp_path: Path, loop_thread: LoopThread,
) -> None:
    seed(cluster)
    plugin.give("token", TOKEN)
    stanza = plugin.stanza(api_version, env=[{"name": "FAKE_REGION", "value": "eu-west-1"}],
                           provideClusterInfo=True)
    cfg = load_kube_config(kubeconfig(tmp_path / "kc", fake_api.url, cluster=ca_data(api_tls), user={"exec": stanza}))
    inv = start(cfg, loop_thread)
    wait_for(lambda: inv.synced, what="sync with an exec token")
    assert plugin.runs == 1  # three lists and three watches share the cached credential
    info = plugin.exec_info()
    assert info["apiVersion"] == api_version and info["kind"] == "ExecCredential"
    assert info["spec"]["interactive"] is False
    assert info["spec"]["cluster"]["server"] == fake_api.url
    assert base64.b64decode(info["spec"]["cluster"]["certificateAuthorityData"]) == api_tls["ca"].read_bytes()
    assert json.loads((plugin.state / "env.json").read_text()) == {"FAKE_REGION": "eu-west-1"}


def test_exec_plugin_runs_again_on_401(
    plugin: Plugin, cluster: FakeCluster, fake_api: BackgroundServer, api_tls: dict[str, Path],
    tmp_path: Path, loop_thread: LoopThread,
) -> None:
    seed(cluster)
    plugin.give("token", TOKEN)
    cfg = load_kube_config(kubeconfig(tmp_path / "kc", fake_api.url, cluster=ca_data(api_tls),
                                      user={"exec": plugin.stanza()}))
    inv = start(cfg, loop_thread)
    wait_for(lambda: inv.synced, what="first sync")
    cluster.token = "rotated-token"  # the old token is revoked before its expiry
    plugin.give("token", "rotated-token")
    cluster.fault("nodes", "end")  # the nodes watch reconnects: 401, plugin again, retry
    wait_for(lambda: plugin.runs == 2, what="a second plugin run after 401")
    cluster.put("nodes", node("node-2"))
    wait_for(lambda: "node-2" in names(inv), what="watch resumed with the new token")


def test_exec_credential_is_refreshed_before_it_expires(plugin: Plugin, tmp_path: Path) -> None:
    expiry = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    plugin.give("token", "t1")
    plugin.give("expires", "2030-01-01T00:00:00Z")
    cfg = load_kube_config(kubeconfig(tmp_path / "kc", "https://127.0.0.1:1", user={"exec": plugin.stanza()}))
    assert cfg.exec_plugin is not None
    now = [expiry.timestamp() - 3600]
    cfg.exec_plugin.clock = lambda: now[0]
    assert cfg.bearer_token() == "t1" and cfg.bearer_token() == "t1"
    assert plugin.runs == 1  # an hour before expiry: cached
    plugin.give("token", "t2")
    now[0] = expiry.timestamp() - 30  # inside the refresh margin, before the expiry itself
    assert cfg.bearer_token() == "t2" and plugin.runs == 2


def test_exec_credential_without_expiry_is_kept(plugin: Plugin, tmp_path: Path) -> None:
    plugin.give("token", "t1")
    cfg = load_kube_config(kubeconfig(tmp_path / "kc", "https://127.0.0.1:1", user={"exec": plugin.stanza()}))
    assert [cfg.bearer_token() for _ in range(3)] == ["t1"] * 3 and plugin.runs == 1
    assert cfg.bearer_token(rejected="some-other-token") == "t1" and plugin.runs == 1
    assert cfg.bearer_token(rejected="t1") == "t1" and plugin.runs == 2  # 401 on the cached one: ask again


def test_exec_plugin_client_certificate(plugin: Plugin, tmp_path: Path, loop_thread: LoopThread) -> None:
    bundle = generate_bundle("kubernetes", "default", extra_sans=["127.0.0.1"])
    paths = write_bundle(bundle, tmp_path / "api")
    cert, key = generate_leaf(bundle.ca_cert, bundle.ca_key, ["system:draguard"], 1, client=True)
    plugin.give("cert", cert.decode())
    plugin.give("key", key.decode())
    cluster = FakeCluster(token=None)
    seed(cluster)
    with serve_fake_api(cluster, cert=paths["cert"], key=paths["key"], client_ca=paths["ca"]) as api:
        cfg = load_kube_config(kubeconfig(tmp_path / "kc", api.url, cluster=ca_data(paths),
                                          user={"exec": plugin.stanza()}))
        inv = start(cfg, loop_thread)
        wait_for(lambda: inv.synced, what="sync with an exec client certificate")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"interactiveMode": None}, "interactiveMode must be specified"),
        ({"interactiveMode": "Always"}, "never runs a plugin interactively"),
        ({"interactiveMode": "Sometimes"}, "is not one of"),
        ({"apiVersion": "client.authentication.k8s.io/v1alpha1"}, "is not supported"),
        ({"command": None}, "command is required"),
        ({"args": "--oops"}, "args must be a list"),
        ({"env": [{"name": "X"}]}, "env must be a list"),
    ],
)
def test_exec_stanza_errors(plugin: Plugin, tmp_path: Path, change: dict[str, Any], message: str) -> None:
    stanza = {k: v for k, v in {**plugin.stanza(), **change}.items() if v is not None}
    with pytest.raises(KubeConfigError, match=message):
        load_kube_config(kubeconfig(tmp_path / "kc", "https://127.0.0.1:1", user={"exec": stanza}))


def test_exec_stanza_accepted(plugin: Plugin, tmp_path: Path) -> None:
    for mode in ("Never", "IfAvailable"):
        cfg = load_kube_config(kubeconfig(tmp_path / "kc", "https://127.0.0.1:1",
                                          user={"exec": plugin.stanza(interactiveMode=mode)}))
        assert cfg.exec_plugin is not None and cfg.refreshable


def test_exec_plugin_failures_are_reported(plugin: Plugin, tmp_path: Path) -> None:
    plugin.give("token", "t")
    plugin.give("fail", "")
    cfg = load_kube_config(kubeconfig(tmp_path / "kc", "https://127.0.0.1:1", user={"exec": plugin.stanza()}))
    with pytest.raises(KubeConfigError, match="exited with 3: login expired: run fake-login"):
        cfg.bearer_token()
    (plugin.state / "fail").unlink()
    plugin.give("answer_api", V1BETA1)  # asked v1, answers v1beta1
    with pytest.raises(KubeConfigError, match="answered apiVersion"):
        cfg.bearer_token()
    missing = {"apiVersion": V1, "interactiveMode": "Never", "command": "draguard-no-such-plugin",
               "installHint": "install it with: brew install no-such-plugin"}
    cfg = load_kube_config(kubeconfig(tmp_path / "kc2", "https://127.0.0.1:1", user={"exec": missing}))
    with pytest.raises(KubeConfigError, match="not found \\(install it with: brew install no-such-plugin\\)"):
        cfg.bearer_token()


def test_relative_exec_command_is_relative_to_the_kubeconfig(plugin: Plugin, tmp_path: Path) -> None:
    plugin.give("token", "rel")
    wrapper = tmp_path / "bin" / "plugin.sh"
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {plugin.script} {plugin.state}\n")
    wrapper.chmod(0o755)
    stanza = {"apiVersion": V1, "interactiveMode": "Never", "command": "./bin/plugin.sh"}
    cfg = load_kube_config(kubeconfig(tmp_path / "kc", "https://127.0.0.1:1", user={"exec": stanza}))
    assert cfg.bearer_token() == "rel"


def test_static_token_wins_over_exec(plugin: Plugin, tmp_path: Path) -> None:
    cfg = load_kube_config(kubeconfig(tmp_path / "kc", "https://127.0.0.1:1",
                                      user={"token": "static", "exec": plugin.stanza()}))
    assert cfg.bearer_token() == "static" and plugin.runs == 0 and not cfg.refreshable


# ------------------------------------------------------------------ certificates and tokens
def test_client_certificate_files_relative_to_the_kubeconfig(tmp_path: Path, loop_thread: LoopThread) -> None:
    bundle = generate_bundle("kubernetes", "default", extra_sans=["127.0.0.1"])
    paths = write_bundle(bundle, tmp_path / "api")
    cert, key = generate_leaf(bundle.ca_cert, bundle.ca_key, ["system:draguard"], 1, client=True)
    (tmp_path / "creds").mkdir()
    (tmp_path / "creds" / "me.crt").write_bytes(cert)
    (tmp_path / "creds" / "me.key").write_bytes(key)
    cluster = FakeCluster(token=None)
    seed(cluster)
    with serve_fake_api(cluster, cert=paths["cert"], key=paths["key"], client_ca=paths["ca"]) as api:
        user = {"client-certificate": "creds/me.crt", "client-key": "creds/me.key"}
        cfg = load_kube_config(kubeconfig(tmp_path / "kc", api.url, cluster={"certificate-authority": "api/ca.crt"},
                                          user=user))
        inv = start(cfg, loop_thread)
        wait_for(lambda: inv.synced, what="sync with client certificate files")


def test_half_a_client_certificate_is_refused(tmp_path: Path) -> None:
    (tmp_path / "me.crt").write_bytes(generate_bundle("a", "b").cert)
    with pytest.raises(KubeConfigError, match="without its key"):
        load_kube_config(kubeconfig(tmp_path / "kc", "https://127.0.0.1:1", user={"client-certificate": "me.crt"}))


def test_token_file_syncs(cluster: FakeCluster, fake_api: BackgroundServer, api_tls: dict[str, Path],
                          tmp_path: Path, loop_thread: LoopThread) -> None:
    seed(cluster)
    (tmp_path / "token").write_text(TOKEN + "\n")
    cfg = load_kube_config(kubeconfig(tmp_path / "kc", fake_api.url, cluster=ca_data(api_tls),
                                      user={"tokenFile": "token"}))
    inv = start(cfg, loop_thread)
    wait_for(lambda: inv.synced, what="sync with a token file")


# ------------------------------------------------------------------ refusals
def test_insecure_skip_tls_verify_is_refused_unless_allowed(
    cluster: FakeCluster, fake_api: BackgroundServer, tmp_path: Path, loop_thread: LoopThread
) -> None:
    seed(cluster)
    path = kubeconfig(tmp_path / "kc", fake_api.url, cluster={"insecure-skip-tls-verify": True},
                      user={"token": TOKEN})
    with pytest.raises(KubeConfigError, match="--allow-insecure-kubeconfig"):
        load_kube_config(path)
    inv = start(load_kube_config(path, allow_insecure=True), loop_thread)  # no CA: only insecure works
    wait_for(lambda: inv.synced, what="sync without verifying the server")


def test_insecure_with_a_ca_is_refused(api_tls: dict[str, Path], tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "kc", "https://127.0.0.1:1",
                      cluster={**ca_data(api_tls), "insecure-skip-tls-verify": True})
    with pytest.raises(KubeConfigError, match="both certificate-authority and insecure"):
        load_kube_config(path, allow_insecure=True)


@pytest.mark.parametrize(
    "user",
    [{"token": "t"}, {"tokenFile": "tok"}, {"exec": {"apiVersion": V1, "interactiveMode": "Never", "command": "x"}}],
)
def test_credentials_over_plain_http_are_refused(tmp_path: Path, user: dict[str, Any]) -> None:
    with pytest.raises(KubeConfigError, match="plain http://"):
        load_kube_config(kubeconfig(tmp_path / "kc", "http://127.0.0.1:8080", user=user))


def test_plain_http_without_credentials_works(tmp_path: Path, loop_thread: LoopThread) -> None:
    cluster = FakeCluster(token=None)  # e.g. behind `kubectl proxy`
    seed(cluster)
    with serve_fake_api(cluster) as api:
        assert api.url.startswith("http://")
        inv = start(load_kube_config(kubeconfig(tmp_path / "kc", api.url)), loop_thread)
        wait_for(lambda: inv.synced, what="sync over http without credentials")


def test_auth_provider_points_at_exec(tmp_path: Path) -> None:
    with pytest.raises(KubeConfigError, match="use an exec credential plugin"):
        load_kube_config(kubeconfig(tmp_path / "kc", "https://127.0.0.1:1", user={"auth-provider": {"name": "gcp"}}))


# ------------------------------------------------------------------ the serve door
def serve_state(*argv: str) -> ServerState:
    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    return build_state(parser.parse_args(list(argv)))


def test_serve_refuses_insecure_kubeconfig_without_the_flag(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "kc", "https://127.0.0.1:1", cluster={"insecure-skip-tls-verify": True},
                      user={"token": "t"})
    with pytest.raises(UsageError, match="--allow-insecure-kubeconfig"):
        serve_state("--kubeconfig", str(path))
    state = serve_state("--kubeconfig", str(path), "--allow-insecure-kubeconfig")
    assert state.inventory.status()["source"] == "kube"


def test_serve_reports_a_failing_exec_plugin_at_start(plugin: Plugin, tmp_path: Path) -> None:
    plugin.give("fail", "")
    path = kubeconfig(tmp_path / "kc", "https://127.0.0.1:1", user={"exec": plugin.stanza()})
    with pytest.raises(UsageError, match="login expired"):
        serve_state("--kubeconfig", str(path))
