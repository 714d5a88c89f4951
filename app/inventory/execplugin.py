"""Exec credential plugins (``users[].user.exec`` in a kubeconfig), as kubectl runs them.

Why: managed clusters (EKS, GKE, AKS, OIDC via kubelogin) hand out short-lived credentials
through a plugin, not a static token.  The contract (``client.authentication.k8s.io/v1`` and
``v1beta1``): run ``command args…`` with the kubeconfig's ``env`` added to ours and
``KUBERNETES_EXEC_INFO`` set to an ``ExecCredential`` (``spec.interactive``, and
``spec.cluster`` when ``provideClusterInfo``); read an ``ExecCredential`` of the same apiVersion
from its standard output, whose ``status`` carries a ``token`` or a
``clientCertificateData``/``clientKeyData`` pair and, optionally, an ``expirationTimestamp``.

The credential is cached and the plugin run again shortly *before* the expiry (so a watch never
starts with a token about to lapse) and whenever the API server answers 401 to it (a token
revoked early).  draguard never runs a plugin interactively: there is no terminal behind a
webhook, so ``interactiveMode: Always`` is refused up front.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..k8s import DraguardError

__all__ = ["API_VERSIONS", "ExecCredential", "ExecPlugin", "ExecPluginError", "parse_exec"]

API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")
REFRESH_BEFORE_EXPIRY = 60.0  # seconds: re-run the plugin this long before the credential lapses
PLUGIN_TIMEOUT = 60.0  # a plugin that hangs must not hang the watcher forever
MAX_OUTPUT = 1024 * 1024


class ExecPluginError(DraguardError):
    """The plugin is misconfigured, cannot be run, fails, or prints something unusable."""


@dataclass(frozen=True)
class ExecCredential:
    """What one run of the plugin gave."""

    token: str | None = None
    client_cert_pem: bytes | None = None
    client_key_pem: bytes | None = None
    expires_at: float | None = None  # on the plugin's clock: time.time()


@dataclass
class ExecPlugin:
    """One ``exec`` stanza, with the credential it last produced (thread-safe)."""

    command: str
    api_version: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    install_hint: str = ""
    provide_cluster_info: bool = False
    cluster_info: Mapping[str, Any] = field(default_factory=dict)
    clock: Callable[[], float] = time.time
    refresh_before: float = REFRESH_BEFORE_EXPIRY
    runs: int = 0
    _cached: ExecCredential | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def credential(self, *, rejected_token: str | None = None) -> ExecCredential:
        """The cached credential, or a fresh one when there is none, it is about to expire, or
        the API server rejected ``rejected_token`` (401) and it is still the cached one."""
        with self._lock:
            cached = self._cached
            if cached is not None and not self._stale(cached, rejected_token):
                return cached
            self._cached = self._run()
            return self._cached

    def _stale(self, cached: ExecCredential, rejected_token: str | None) -> bool:
        if rejected_token is not None and rejected_token == cached.token:
            return True
        return cached.expires_at is not None and self.clock() >= cached.expires_at - self.refresh_before

    def exec_info(self) -> dict[str, Any]:
        """The ``KUBERNETES_EXEC_INFO`` the plugin is given."""
        spec: dict[str, Any] = {"interactive": False}
        if self.provide_cluster_info:
            spec["cluster"] = dict(self.cluster_info)
        return {"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec}

    def _run(self) -> ExecCredential:
        env = dict(os.environ)
        env.update(dict(self.env))
        env["KUBERNETES_EXEC_INFO"] = json.dumps(self.exec_info())
        self.runs += 1
        try:
            proc = subprocess.run(
                [self.command, *self.args], env=env, stdin=subprocess.DEVNULL, capture_output=True,
                timeout=PLUGIN_TIMEOUT, check=False,
            )
        except FileNotFoundError as exc:
            hint = f" ({self.install_hint.strip()})" if self.install_hint.strip() else ""
            raise ExecPluginError(f"exec plugin {self.command!r} not found{hint}") from exc
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ExecPluginError(f"exec plugin {self.command!r} could not run: {exc}") from exc
        if proc.returncode != 0:
            detail = proc.stderr.decode(errors="replace").strip()[-500:]
            raise ExecPluginError(f"exec plugin {self.command!r} exited with {proc.returncode}: {detail}")
        return self._parse(proc.stdout[:MAX_OUTPUT])

    def _parse(self, stdout: bytes) -> ExecCredential:
        try:
            doc = json.loads(stdout)
        except ValueError as exc:
            raise ExecPluginError(f"exec plugin {self.command!r} did not print an ExecCredential: {exc}") from exc
        if not isinstance(doc, dict) or doc.get("kind") != "ExecCredential":
            raise ExecPluginError(f"exec plugin {self.command!r} did not print an ExecCredential")
        if doc.get("apiVersion") != self.api_version:
            raise ExecPluginError(
                f"exec plugin {self.command!r} answered apiVersion {doc.get('apiVersion')!r}, "
                f"the kubeconfig asks for {self.api_version!r}"
            )
        status = doc.get("status")
        if not isinstance(status, dict):
            raise ExecPluginError(f"exec plugin {self.command!r} returned no status")
        token = status.get("token") or None
        cert, key = status.get("clientCertificateData") or None, status.get("clientKeyData") or None
        if bool(cert) != bool(key):
            raise ExecPluginError(f"exec plugin {self.command!r} returned only half of a client certificate pair")
        if not token and not cert:
            raise ExecPluginError(f"exec plugin {self.command!r} returned neither a token nor a client certificate")
        for name, value in (("token", token), ("clientCertificateData", cert), ("clientKeyData", key)):
            if value is not None and not isinstance(value, str):
                raise ExecPluginError(f"exec plugin {self.command!r}: status.{name} is not a string")
        return ExecCredential(
            token=token,
            client_cert_pem=cert.encode() if cert else None,
            client_key_pem=key.encode() if key else None,
            expires_at=_timestamp(status.get("expirationTimestamp"), self.command),
        )


def _timestamp(value: Any, command: str) -> float | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise ExecPluginError(f"exec plugin {command!r}: expirationTimestamp is not a string")
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ExecPluginError(f"exec plugin {command!r}: expirationTimestamp {value!r} is not RFC 3339") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


def parse_exec(
    stanza: Any, *, base: Path, server: str, ca_pem: bytes | None, insecure: bool,
    clock: Callable[[], float] = time.time,
) -> ExecPlugin:
    """An :class:`ExecPlugin` from a kubeconfig ``exec`` mapping (``base``: the kubeconfig's folder)."""
    if not isinstance(stanza, dict):
        raise ExecPluginError("user.exec is not a mapping")
    command = stanza.get("command")
    if not isinstance(command, str) or not command:
        raise ExecPluginError("user.exec.command is required")
    api_version = stanza.get("apiVersion")
    if api_version not in API_VERSIONS:
        raise ExecPluginError(
            f"user.exec.apiVersion {api_version!r} is not supported: use one of {', '.join(API_VERSIONS)}"
        )
    mode = stanza.get("interactiveMode")
    if mode is None and api_version.endswith("/v1"):
        raise ExecPluginError(f"user.exec.interactiveMode must be specified for {api_version}")
    if mode is not None and mode not in INTERACTIVE_MODES:
        raise ExecPluginError(f"user.exec.interactiveMode {mode!r} is not one of {', '.join(INTERACTIVE_MODES)}")
    if mode == "Always":
        raise ExecPluginError("user.exec.interactiveMode is Always, but draguard never runs a plugin interactively")
    if os.sep in command and not os.path.isabs(command):
        command = str(base / command)  # as kubectl: a relative path is relative to the kubeconfig
    args = stanza.get("args") or []
    env_list = stanza.get("env") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ExecPluginError("user.exec.args must be a list of strings")
    if not isinstance(env_list, list) or not all(
        isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(e.get("value"), str) for e in env_list
    ):
        raise ExecPluginError("user.exec.env must be a list of {name, value} strings")
    cluster: dict[str, Any] = {"server": server}  # the ExecCredential's Cluster, in its JSON names
    if insecure:
        cluster["insecureSkipTLSVerify"] = True
    if ca_pem:
        cluster["certificateAuthorityData"] = base64.b64encode(ca_pem).decode()
    return ExecPlugin(
        command=command,
        api_version=api_version,
        args=tuple(args),
        env=tuple((e["name"], e["value"]) for e in env_list),
        install_hint=str(stanza.get("installHint") or ""),
        provide_cluster_info=bool(stanza.get("provideClusterInfo", False)),
        cluster_info=cluster,
        clock=clock,
    )
