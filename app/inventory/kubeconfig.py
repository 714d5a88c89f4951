"""Connection settings for the API server: the pod's service account, or a kubeconfig file.

Why apart from the watcher (:mod:`app.inventory.kube`): how to reach and authenticate to a
cluster (kubeconfig contexts, CAs, tokens, client certificates) changes for reasons of its own
and is tested on its own; the list+watch loop only asks for an HTTP client.
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

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


class KubeError(Exception):
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

    def ssl_context(self) -> ssl.SSLContext | bool:
        """Trust the configured CA only (or the system store when none is given)."""
        if not self.server.startswith("https"):
            return False
        ctx = ssl.create_default_context()
        if self.ca_pem:
            ctx = ssl.create_default_context(cadata=self.ca_pem.decode("ascii"))
        if self.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.client_cert_pem and self.client_key_pem:
            _load_client_cert(ctx, self.client_cert_pem, self.client_key_pem)
        return ctx

    def bearer_token(self) -> str | None:
        if self.token_file is not None:
            try:
                return self.token_file.read_text().strip() or None
            except OSError as exc:
                raise KubeConfigError(f"cannot read token file {self.token_file}: {exc}") from exc
        return self.token


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


def load_kube_config(path: str | Path, context: str | None = None) -> KubeConfig:
    """A kubeconfig's current (or given) context: server, CA, token or client certificate."""
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
    if "exec" in user or "auth-provider" in user:
        raise KubeConfigError("kubeconfig credential plugins (exec/auth-provider) are not supported; "
                              "use a token or a client certificate")
    base = path.parent
    token_file = user.get("tokenFile")
    return KubeConfig(
        server=server,
        ca_pem=_data_or_file(cluster, "certificate-authority", base),
        insecure=bool(cluster.get("insecure-skip-tls-verify", False)),
        token=user.get("token"),
        token_file=(base / token_file) if token_file and not user.get("token") else None,
        client_cert_pem=_data_or_file(user, "client-certificate", base),
        client_key_pem=_data_or_file(user, "client-key", base),
    )


class _BearerAuth(httpx.Auth):
    """Adds the token, read afresh for every request (bound service-account tokens rotate)."""

    def __init__(self, config: KubeConfig) -> None:
        self._config = config

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self._config.bearer_token()
        if token:
            request.headers["Authorization"] = f"Bearer {token}"
        yield request


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


