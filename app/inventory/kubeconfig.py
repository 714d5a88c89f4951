"""Connection settings for the API server: the pod's service account, or a kubeconfig file.

Why apart from the watcher (:mod:`app.inventory.kube`): how to reach and authenticate to a
cluster (kubeconfig contexts, CAs, tokens, client certificates, exec plugins) changes for
reasons of its own and is tested on its own; the list+watch loop only asks for an HTTP client.

Like kubectl: ``token`` and ``tokenFile`` (re-read for every request; ``token`` wins when both
are set), ``client-certificate``/``client-key`` as files or ``-data``, exec credential plugins
(:mod:`app.inventory.execplugin`; a static token wins over a plugin, as in client-go).  Two
refusals where kubectl would go ahead, because draguard runs unattended next to a cluster's
admission path: ``insecure-skip-tls-verify`` unless the operator passes ``allow_insecure``
(``--allow-insecure-kubeconfig``), and an ``http://`` server whenever credentials would be sent
over it in clear text.  ``auth-provider`` (removed from kubectl) is refused with a pointer to exec.
"""

from __future__ import annotations

import asyncio
import base64
import os
import ssl
import tempfile
from collections.abc import AsyncGenerator, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from ..k8s import DraguardError
from .execplugin import ExecCredential, ExecPlugin, ExecPluginError, parse_exec

__all__ = [
    "SERVICE_ACCOUNT_DIR",
    "KubeConfig",
    "KubeConfigError",
    "KubeError",
    "load_in_cluster",
    "load_kube_config",
    "make_client",
]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


class KubeError(DraguardError):
    """Anything that went wrong talking to the API server."""


class KubeConfigError(KubeError):
    """The connection settings (in-cluster environment or kubeconfig) are unusable."""



# ------------------------------------------------------------------ connection settings
@dataclass(frozen=True)
class KubeConfig:
    """How to reach the API server: address, trust, and credentials."""

    server: str
    ca_pem: bytes | None = None
    insecure: bool = False
    token: str | None = None
    token_file: Path | None = None  # re-read per request: projected tokens rotate
    client_cert_pem: bytes | None = None
    client_key_pem: bytes | None = None
    exec_plugin: ExecPlugin | None = None  # holds the plugin's cached credential

    @property
    def sends_credentials(self) -> bool:
        return bool(self.token or self.token_file or self.client_cert_pem or self.exec_plugin)

    def ssl_context(self) -> ssl.SSLContext | bool:
        """Trust the configured CA only (or the system store when none is given).

        A client certificate from an exec plugin is the one the plugin gives now (the plugin
        runs here, once, when no static credential is set).
        """
        if not self.server.startswith("https"):
            return False
        ctx = ssl.create_default_context()
        if self.ca_pem:
            ctx = ssl.create_default_context(cadata=self.ca_pem.decode("ascii"))
        if self.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        cert, key = self.client_cert_pem, self.client_key_pem
        if self._uses_exec() and not cert:
            credential = self._exec_credential()
            cert, key = credential.client_cert_pem, credential.client_key_pem
        if cert and key:
            _load_client_cert(ctx, cert, key)
        return ctx

    def bearer_token(self, *, rejected: str | None = None) -> str | None:
        """The token for the next request; ``rejected``: the one the API server just answered
        401 to (an exec plugin then runs again; files are re-read anyway)."""
        if self.token:
            return self.token
        if self.token_file is not None:
            try:
                return self.token_file.read_text().strip() or None
            except OSError as exc:
                raise KubeConfigError(f"cannot read token file {self.token_file}: {exc}") from exc
        if self._uses_exec():
            return self._exec_credential(rejected=rejected).token
        return None

    @property
    def refreshable(self) -> bool:
        """Whether a 401 may be cured by asking again (an exec plugin's credential)."""
        return self._uses_exec()

    def _uses_exec(self) -> bool:
        return self.exec_plugin is not None and not self.token and self.token_file is None

    def _exec_credential(self, *, rejected: str | None = None) -> ExecCredential:
        assert self.exec_plugin is not None
        try:
            return self.exec_plugin.credential(rejected_token=rejected)
        except ExecPluginError as exc:
            raise KubeConfigError(str(exc)) from exc


def _load_client_cert(ctx: ssl.SSLContext, cert_pem: bytes, key_pem: bytes) -> None:
    """``load_cert_chain`` wants files; write the PEMs to a private temp dir for the call."""
    with tempfile.TemporaryDirectory(prefix="draguard-kube-") as tmp:
        cert_path = Path(tmp) / "client.crt"
        key_path = Path(tmp) / "client.key"
        for path, data in ((cert_path, cert_pem), (key_path, key_pem)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        try:
            ctx.load_cert_chain(cert_path, key_path)
        except ssl.SSLError as exc:
            raise KubeConfigError(f"client certificate/key unusable: {exc}") from exc


def load_in_cluster(sa_dir: Path = SERVICE_ACCOUNT_DIR, environ: dict[str, str] | None = None) -> KubeConfig:
    """The pod's service account: ``KUBERNETES_SERVICE_HOST``/``PORT``, its token and CA."""
    env = os.environ if environ is None else environ
    host = env.get("KUBERNETES_SERVICE_HOST", "")
    port = env.get("KUBERNETES_SERVICE_PORT", "443")
    if not host:
        raise KubeConfigError("not running in a cluster: KUBERNETES_SERVICE_HOST is not set")
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # IPv6 service address
    token_file = sa_dir / "token"
    if not token_file.exists():
        raise KubeConfigError(f"service account token not found at {token_file}")
    try:
        ca = (sa_dir / "ca.crt").read_bytes()
    except OSError as exc:
        raise KubeConfigError(f"service account CA not readable: {exc}") from exc
    return KubeConfig(server=f"https://{host}:{port}", ca_pem=ca, token_file=token_file)


def _data_or_file(entry: dict[str, Any], key: str, base: Path) -> bytes | None:
    data = entry.get(f"{key}-data")
    if data:
        try:
            return base64.b64decode(data)
        except ValueError as exc:
            raise KubeConfigError(f"{key}-data is not base64") from exc
    path = entry.get(key)
    if path:
        p = Path(path).expanduser()
        if not p.is_absolute():
            p = base / p  # kubeconfig paths are relative to the kubeconfig file
        try:
            return p.read_bytes()
        except OSError as exc:
            raise KubeConfigError(f"cannot read {key} {p}: {exc}") from exc
    return None


def _named(items: Any, name: str, what: str) -> dict[str, Any]:
    for item in items or []:
        if isinstance(item, dict) and item.get("name") == name:
            value = item.get(what)
            return value if isinstance(value, dict) else {}
    raise KubeConfigError(f"kubeconfig has no {what} named {name!r}")


def load_kube_config(path: str | Path, context: str | None = None, *, allow_insecure: bool = False) -> KubeConfig:
    """A kubeconfig's current (or given) context: server, CA, and the user's credentials.

    Raises :class:`KubeConfigError` for what kubectl refuses, for ``insecure-skip-tls-verify``
    unless ``allow_insecure``, and for credentials that would travel over ``http://``.
    """
    path = Path(path).expanduser()
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise KubeConfigError(f"cannot read kubeconfig {path}: {exc}") from exc
    if not isinstance(doc, dict):
        raise KubeConfigError(f"kubeconfig {path} is not a mapping")
    ctx_name = context or doc.get("current-context")
    if not ctx_name:
        raise KubeConfigError(f"kubeconfig {path} has no current-context")
    ctx = _named(doc.get("contexts"), ctx_name, "context")
    cluster = _named(doc.get("clusters"), str(ctx.get("cluster", "")), "cluster")
    user = _named(doc.get("users"), str(ctx.get("user", "")), "user") if ctx.get("user") else {}
    server = str(cluster.get("server", "")).rstrip("/")
    if not server:
        raise KubeConfigError(f"cluster {ctx.get('cluster')!r} in {path} has no server")
    if "auth-provider" in user:
        raise KubeConfigError("kubeconfig auth-provider plugins were removed from kubectl and are not "
                              "supported; use an exec credential plugin (user.exec)")
    base = path.parent
    insecure = cluster.get("insecure-skip-tls-verify", False) is True
    ca_pem = _data_or_file(cluster, "certificate-authority", base)
    if insecure and ca_pem:
        raise KubeConfigError(f"cluster {ctx.get('cluster')!r} sets both certificate-authority and "
                              "insecure-skip-tls-verify; kubectl refuses that too")
    if insecure and not allow_insecure:
        raise KubeConfigError(f"cluster {ctx.get('cluster')!r} sets insecure-skip-tls-verify: the API server's "
                              "identity would not be checked; pass --allow-insecure-kubeconfig to accept that")
    token_file = user.get("tokenFile")
    exec_plugin = None
    if user.get("exec") is not None:
        try:
            exec_plugin = parse_exec(user["exec"], base=base, server=server, ca_pem=ca_pem, insecure=insecure)
        except ExecPluginError as exc:
            raise KubeConfigError(f"user {ctx.get('user')!r} in {path}: {exc}") from exc
    config = KubeConfig(
        server=server,
        ca_pem=ca_pem,
        insecure=insecure,
        token=str(user["token"]) if user.get("token") else None,
        token_file=(base / str(token_file)) if token_file else None,
        client_cert_pem=_data_or_file(user, "client-certificate", base),
        client_key_pem=_data_or_file(user, "client-key", base),
        exec_plugin=exec_plugin,
    )
    if bool(config.client_cert_pem) != bool(config.client_key_pem):
        raise KubeConfigError(f"user {ctx.get('user')!r} in {path} has a client certificate without its key "
                              "(or a key without its certificate)")
    if not server.startswith("https://"):
        if not server.startswith("http://"):
            raise KubeConfigError(f"server {server!r} in {path} is neither https:// nor http://")
        if config.sends_credentials:
            raise KubeConfigError(f"server {server!r} in {path} is plain http://: draguard does not send "
                                  "credentials in clear text; use https://")
    return config


class _BearerAuth(httpx.Auth):
    """Adds the token, read afresh for every request (bound service-account tokens rotate), and
    retries once with a fresh exec credential when the API server answers 401 to a cached one."""

    def __init__(self, config: KubeConfig) -> None:
        self._config = config

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self._config.bearer_token()
        _authorize(request, token)
        response = yield request
        if response.status_code == 401 and token and self._config.refreshable:
            fresh = self._config.bearer_token(rejected=token)
            if fresh and fresh != token:
                _authorize(request, fresh)
                yield request

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        # an exec plugin is a subprocess: run it off the event loop that serves the watches
        token = await asyncio.to_thread(self._config.bearer_token)
        _authorize(request, token)
        response = yield request
        if response.status_code == 401 and token and self._config.refreshable:
            fresh = await asyncio.to_thread(lambda: self._config.bearer_token(rejected=token))
            if fresh and fresh != token:
                _authorize(request, fresh)
                yield request


def _authorize(request: httpx.Request, token: str | None) -> None:
    if token:
        request.headers["Authorization"] = f"Bearer {token}"


def make_client(config: KubeConfig) -> httpx.AsyncClient:
    """An httpx client for ``config``; watches set their own read timeout."""
    return httpx.AsyncClient(
        base_url=config.server,
        verify=config.ssl_context(),
        auth=_BearerAuth(config),
        timeout=httpx.Timeout(30.0, connect=5.0),
        headers={"Accept": "application/json", "User-Agent": "draguard"},
        trust_env=False,
    )


