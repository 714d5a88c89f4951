"""Self-managed certificates: the server keeps its own CA and serving certificate in a Secret,
renews them before they expire, patches both webhook configurations' ``caBundle``, and every
replica serves what the Secret holds.

Why in the server (the Kyverno/Gatekeeper model) rather than only cert-manager: a cluster
without cert-manager otherwise depends on someone running ``draguard certs`` every year, and an
expired certificate behind ``failurePolicy: Fail`` blocks every claim.

One tick (every ``interval`` seconds, on every replica):

1. read the Secret; :func:`~app.server.rotation_plan.plan_rotation` says whether anything is
   due, and the webhook configurations are checked to carry the Secret's CA bundle;
2. if something must be written, take the Lease (:class:`~app.server.lease.LeaseLock`), read
   and plan again under it, write the Secret (``resourceVersion``-checked), patch ``caBundle``,
   release — so exactly one replica writes, and a replica that lost a race simply picks up the
   winner's result on its next tick;
3. write the Secret's serving pair to ``--tls-cert``/``--tls-key`` when it differs from what is
   there and make the :class:`~app.server.tls.CertReloader` load it now (new handshakes get
   the new pair; open connections are untouched).

The Secret must exist (the manifests create it empty): the RBAC is then limited to get/update
of that one Secret, that one Lease and the two webhook configurations, by name.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import json
import logging
import os
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..certs import service_dns_names, write_atomic
from ..inventory import KubeConfig, make_client
from ..k8s import DraguardError
from .kube_objects import Conflict, ObjectApiError, ObjectClient
from .lease import LeaseLock
from .rotation_plan import BUNDLE_KEY, RotationPolicy, parse_certificates, plan_rotation
from .tls import CertReloader

__all__ = ["SelfCertError", "SelfManagedCerts", "SelfManagedSettings", "pod_identity", "pod_namespace"]

log = logging.getLogger("draguard.certs")

WEBHOOK_PLURALS = ("validatingwebhookconfigurations", "mutatingwebhookconfigurations")
NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


class SelfCertError(DraguardError):
    """The self-managed certificate could not be put in place (start-up gives up with this)."""


def pod_namespace(environ: dict[str, str] | None = None, namespace_file: Path = NAMESPACE_FILE) -> str | None:
    """``POD_NAMESPACE`` (downward API), else the service account's namespace file."""
    env = os.environ if environ is None else environ
    if env.get("POD_NAMESPACE"):
        return env["POD_NAMESPACE"]
    try:
        return namespace_file.read_text().strip() or None
    except OSError:
        return None


def pod_identity(environ: dict[str, str] | None = None) -> str:
    """Who holds the Lease: ``POD_NAME``, else the host name (a pod's host name is its name)."""
    env = os.environ if environ is None else environ
    return env.get("POD_NAME") or socket.gethostname()


@dataclass(frozen=True)
class SelfManagedSettings:
    """Where the certificate lives and whom it serves."""

    namespace: str
    secret: str
    service: str
    webhook_configurations: Sequence[str]
    cert_file: Path
    key_file: Path
    lease: str = "draguard-cert-rotation"
    identity: str = field(default_factory=pod_identity)
    policy: RotationPolicy = field(default_factory=RotationPolicy)
    interval: float = 60.0


def _secret_data(secret: dict[str, Any]) -> dict[str, bytes]:
    """The Secret's ``data``, base64-decoded; entries that are not valid base64 are left out."""
    data = secret.get("data") if isinstance(secret.get("data"), dict) else {}
    out: dict[str, bytes] = {}
    for key, value in (data or {}).items():
        if isinstance(value, str):
            try:
                out[key] = base64.b64decode(value, validate=True)
            except ValueError:
                continue  # a garbled entry is as good as none: the plan replaces it
    return out


def _encode(data: dict[str, bytes]) -> dict[str, str]:
    return {k: base64.b64encode(v).decode("ascii") for k, v in sorted(data.items())}


def _annotations(obj: dict[str, Any]) -> dict[str, str]:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    notes = (meta or {}).get("annotations")
    return {str(k): str(v) for k, v in notes.items()} if isinstance(notes, dict) else {}


class SelfManagedCerts:
    """The rotation loop of one replica; :meth:`bootstrap` before serving, :meth:`run` after."""

    def __init__(
        self,
        config: KubeConfig,
        settings: SelfManagedSettings,
        *,
        now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        self.config = config
        self.settings = settings
        self.reloader: CertReloader | None = None  # set once the server has one
        self._now = now
        self.names = service_dns_names(settings.service, settings.namespace)
        self.rotations = 0
        self.errors = 0
        self.last_error = ""
        self.last_reasons: list[str] = []
        self.bundle_not_after: float | None = None

    # ---------------------------------------------------------------- loop
    async def bootstrap(self, timeout: float = 60.0, retry: float = 2.0) -> None:
        """Tick until a serving pair is on disk; :class:`SelfCertError` after ``timeout``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        async with make_client(self.config) as client:
            api = ObjectClient(client)
            while True:
                await self.tick(api)
                if self.settings.cert_file.exists() and self.settings.key_file.exists():
                    return
                if loop.time() >= deadline:
                    raise SelfCertError(f"no serving certificate after {timeout:g}s: {self.last_error or 'the Secret holds none yet'}")
                await asyncio.sleep(retry)

    async def run(self) -> None:
        """Tick every ``interval`` seconds until cancelled; errors are logged and retried."""
        async with make_client(self.config) as client:
            api = ObjectClient(client)
            while True:
                await asyncio.sleep(self.settings.interval)
                await self.tick(api)

    async def tick(self, api: ObjectClient) -> None:
        """One round (see the module docstring); never raises for API or certificate trouble."""
        try:
            secret = await self._secret(api)
            if self._due(secret) or not await self._webhooks_carry(api, self._bundle(secret)):
                secret = await self._rotate_under_lease(api) or secret
            self._install(secret)
            self.last_error = ""
        except (ObjectApiError, SelfCertError, OSError, ValueError) as exc:
            self.errors += 1
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.error(json.dumps({"msg": "self-managed certificate round failed", "error": self.last_error}))
        except Exception as exc:  # httpx transport errors and the like: retried next tick
            self.errors += 1
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.error(json.dumps({"msg": "self-managed certificate round failed", "error": self.last_error}))

    # ---------------------------------------------------------------- steps
    async def _secret(self, api: ObjectClient) -> dict[str, Any]:
        s = self.settings
        secret = await api.get("secrets", s.namespace, s.secret)
        if secret is None:
            raise SelfCertError(f"Secret {s.namespace}/{s.secret} does not exist (the manifests create it)")
        return secret

    def _plan(self, secret: dict[str, Any]) -> Any:
        return plan_rotation(_secret_data(secret), _annotations(secret), names=self.names,
                             common_name=f"draguard-ca ({self.settings.namespace}/{self.settings.service})",
                             now=self._now(), policy=self.settings.policy)

    def _due(self, secret: dict[str, Any]) -> bool:
        return bool(self._plan(secret).changed)

    @staticmethod
    def _bundle(secret: dict[str, Any]) -> bytes:
        return _secret_data(secret).get(BUNDLE_KEY, b"")

    async def _rotate_under_lease(self, api: ObjectClient) -> dict[str, Any] | None:
        """Write what is due while holding the Lease; None when another replica holds it."""
        s = self.settings
        lock = LeaseLock(api, s.namespace, s.lease, s.identity, now=self._now)
        if not await lock.acquire():
            return None
        try:
            secret = await self._secret(api)  # fresh: the holder before us may have written
            plan = self._plan(secret)
            if plan.changed:
                meta = secret.setdefault("metadata", {})
                meta["annotations"] = plan.annotations or None
                secret["data"] = _encode(plan.data)
                secret.pop("stringData", None)
                try:
                    secret = await api.replace("secrets", s.namespace, secret)
                except Conflict:
                    return None  # written by someone else meanwhile: next tick reads theirs
                self.rotations += 1
                self.last_reasons = plan.reasons
                log.info(json.dumps({"msg": "self-managed certificate updated", "secret": s.secret,
                                     "reasons": plan.reasons}))
            await self._patch_webhooks(api, self._bundle(secret))
            return secret
        finally:
            await lock.release()

    async def _webhooks_carry(self, api: ObjectClient, bundle: bytes) -> bool:
        want = base64.b64encode(bundle).decode("ascii")
        for plural in WEBHOOK_PLURALS:
            for name in self.settings.webhook_configurations:
                obj = await api.get(plural, "", name)
                if obj is None:
                    continue
                for hook in obj.get("webhooks") or []:
                    if isinstance(hook, dict) and (hook.get("clientConfig") or {}).get("caBundle") != want:
                        return False
        return True

    async def _patch_webhooks(self, api: ObjectClient, bundle: bytes) -> None:
        """Set ``caBundle`` on every webhook of both configurations (absent ones are skipped:
        an installation may leave out the mutating webhook)."""
        if not bundle:
            return
        want = base64.b64encode(bundle).decode("ascii")
        for plural in WEBHOOK_PLURALS:
            for name in self.settings.webhook_configurations:
                for _attempt in range(3):
                    obj = await api.get(plural, "", name)
                    if obj is None:
                        break
                    changed = False
                    for hook in obj.get("webhooks") or []:
                        if not isinstance(hook, dict):
                            continue
                        config = hook.setdefault("clientConfig", {})
                        if config.get("caBundle") != want:
                            config["caBundle"] = want
                            changed = True
                    if not changed:
                        break
                    try:
                        await api.replace(plural, "", obj)
                        log.info(json.dumps({"msg": "caBundle patched", "kind": plural, "name": name}))
                        break
                    except Conflict:
                        continue  # edited meanwhile (e.g. kubectl apply): read again

    def _install(self, secret: dict[str, Any]) -> None:
        """Write the Secret's serving pair to the files the server loads, if it changed."""
        data = _secret_data(secret)
        cert, key = data.get("tls.crt"), data.get("tls.key")
        bundle = parse_certificates(data.get(BUNDLE_KEY))
        self.bundle_not_after = min((c.not_valid_after_utc.timestamp() for c in bundle), default=None)
        if not cert or not key:
            return
        s = self.settings
        try:
            same = s.cert_file.read_bytes() == cert and s.key_file.read_bytes() == key
        except OSError:
            same = False
        if same:
            return
        s.cert_file.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(s.key_file, key, 0o600)  # key first: a poller sees the cert only once both are new
        write_atomic(s.cert_file, cert, 0o644)
        if self.reloader is not None:
            self.reloader.check()

    def status(self) -> dict[str, Any]:
        return {"mode": "self-managed", "secret": f"{self.settings.namespace}/{self.settings.secret}",
                "rotations": self.rotations, "lastReasons": self.last_reasons,
                "lastError": self.last_error or None}
