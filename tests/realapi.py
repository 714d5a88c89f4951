"""Ground truth from a real kube-apiserver 1.36: what would the API server (and draguard behind it) say?

``scripts/e2e-kube.py`` (the project's own harness) starts kube-apiserver 1.36 with etcd on free
loopback ports, optionally registers ``draguard serve`` as its webhook, POSTs case files and
writes every verdict as JSON. This module runs that harness in a subprocess and returns the
verdicts as typed records, so tests compare draguard with the real thing instead of with what
someone remembers Kubernetes to do.

The binaries are not in the repository: ``scripts/setup-apiserver.sh`` (``make apiserver``;
``.ci/run`` calls it) unpacks them into ``.cache/`` from ``../shared/tools/`` when a copy is beside
the clone, else downloads the official release where the network allows, and gets etcd from
Debian. Where they are still absent, :func:`require` skips the test with the reason, and the run's
closing summary lists it (tests/conftest.py). The API server is looked up in ``$KUBE_APISERVER``,
on ``PATH``, then in ``.cache/kube-apiserver``; etcd in ``$ETCD``, on ``PATH``, then in
``.cache/etcd-server/`` (Debian's package unpacked without root).

Each call starts its own etcd and API server (about 3 s) and stops them before returning: no
state leaks between tests, and a test that needs several objects posts them in one call.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

PROJECT = Path(__file__).resolve().parents[1]
HARNESS = PROJECT / "scripts" / "e2e-kube.py"
CLUSTER_ORACLE = PROJECT / "scripts" / "cluster-oracle.py"
"""The real control plane (scheduler + controller-manager too) for "would it ever schedule?" tests."""


BASE_VERSION = "1.36"
"""The minor of the default binaries (``../shared/tools``' 1.36.2 in ``.cache/``)."""


def version_dir(version: str) -> Path | None:
    """The newest ``.cache/kube/v<version>.*`` that ``scripts/build-kubernetes.sh`` made (a release
    before its pre-releases of the same patch), or ``None``."""
    found = [d for d in (PROJECT / ".cache" / "kube").glob(f"v{version}.*") if d.is_dir()]

    def key(d: Path) -> tuple[int, int, str]:
        patch, _, pre = d.name.split(".", 2)[2].partition("-")
        return (int(patch) if patch.isdigit() else -1, 0 if pre else 1, pre)

    return max(found, key=key) if found else None


def find_binary_of(name: str, version: str | None) -> str | None:
    """``name`` (kube-apiserver, kube-scheduler, kube-controller-manager, dra-oracle) built for
    Kubernetes ``version`` (a minor such as ``1.37``), or ``None``.  ``None``/``1.36`` without a
    build of 1.36 is the default binary (see :func:`find_apiserver`)."""
    if version is None:
        return None
    built = version_dir(version)
    if built is not None and os.access(built / name, os.X_OK):
        return str(built / name)
    return None


def missing_version(version: str | None, names: Sequence[str] = ("kube-apiserver",)) -> str | None:
    """Why ``version``'s binaries cannot run here (``None`` when they can)."""
    if version is None or version == BASE_VERSION:
        return missing() if names == ("kube-apiserver",) else control_plane_missing()
    if not HARNESS.is_file():
        return f"no harness at {HARNESS}"
    if find_etcd() is None:
        return "no etcd ($ETCD, PATH or .cache/etcd-server/): scripts/setup-apiserver.sh gets it from Debian"
    for name in names:
        if find_binary_of(name, version) is None:
            return (f"no {name} of Kubernetes {version} in .cache/kube/: `make kubernetes-version V=v{version}.N` "
                    "(scripts/build-kubernetes.sh) builds it from Go modules")
    return None


def require_version(version: str | None, names: Sequence[str] = ("kube-apiserver",)) -> None:
    """Skip the calling test, with the reason, when ``version``'s binaries are absent."""
    reason = missing_version(version, names)
    if reason is not None:
        pytest.skip(f"Kubernetes {version or BASE_VERSION} binaries unavailable: {reason}")


def find_apiserver(version: str | None = None) -> str | None:
    """The kube-apiserver binary to use, or ``None``; ``version`` (``1.37``) asks for a build of
    that minor, the default is the 1.36.2 binary."""
    if version is not None:
        built = find_binary_of("kube-apiserver", version)  # a build of that minor wins, 1.36's too
        if built is not None or version != BASE_VERSION:
            return built
    for candidate in (os.environ.get("KUBE_APISERVER"), "kube-apiserver"):
        if candidate:
            found = shutil.which(candidate)
            if found:
                return found
    cached = PROJECT / ".cache" / "kube-apiserver"
    return str(cached) if os.access(cached, os.X_OK) else None


def find_etcd() -> str | None:
    """The etcd binary to use, or ``None``."""
    found = shutil.which(os.environ.get("ETCD") or "etcd")
    if found:
        return found
    unpacked = PROJECT / ".cache" / "etcd-server" / "usr" / "bin" / "etcd"
    return str(unpacked) if os.access(unpacked, os.X_OK) else None


def missing() -> str | None:
    """Why the real API server cannot run here, or ``None`` when it can."""
    if not HARNESS.is_file():
        return f"no harness at {HARNESS}"
    if find_apiserver() is None:
        return ("no kube-apiserver ($KUBE_APISERVER, PATH or .cache/): scripts/setup-apiserver.sh gets it from "
                "../shared/tools or the Kubernetes release, and neither was there")
    if find_etcd() is None:
        return "no etcd ($ETCD, PATH or .cache/etcd-server/): scripts/setup-apiserver.sh gets it from Debian"
    return None


def require() -> None:
    """Skip the calling test, with the reason, when the real API server cannot run here."""
    reason = missing()
    if reason is not None:
        pytest.skip(f"real API server unavailable: {reason}")


@dataclass(frozen=True)
class Verdict:
    """What the API server answered for one posted object (one YAML document of a case file)."""

    file: str
    index: int
    kind: str | None
    namespace: str | None
    name: str | None
    code: int | None
    admitted: bool
    reason: str | None
    message: str
    causes: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    stored: dict[str, Any] | None = None

    def cause_fields(self) -> set[tuple[str, str]]:
        """``(field, reason)`` of every ``details.causes`` entry, as the API server gave them."""
        return {(str(c.get("field", "")), str(c.get("reason", ""))) for c in self.causes}


@dataclass(frozen=True)
class Run:
    """Every verdict of one harness run, plus its console output for failure messages."""

    verdicts: list[Verdict]
    output: str

    def by_name(self, name: str) -> Verdict:
        found = [v for v in self.verdicts if v.name == name]
        if len(found) != 1:
            raise AssertionError(f"{len(found)} verdicts named {name!r} in:\n{self.output}")
        return found[0]


def run(
    cases: Sequence[Path | str],
    *,
    inventory: Path | str | None = None,
    webhook: bool = False,
    mutate: bool = False,
    live: bool = False,
    dry_run: bool = True,
    feature_gates: str | None = None,
    apiserver_args: Sequence[str] = (),
    webhook_args: str | None = None,
    timeout: float = 240.0,
    workloads: bool = False,
    kube_version: str | None = None,
) -> Run:
    """POST ``cases`` to a fresh real API server and return its verdicts.

    ``webhook`` registers this checkout's ``draguard serve`` (run as ``python -m draguard`` with the
    interpreter running the tests) as validating webhook, ``mutate`` also as mutating webhook;
    ``live`` makes it list+watch the test API server instead of reading ``inventory`` from files.
    ``feature_gates`` is kube-apiserver's ``--feature-gates`` (``""`` for the version's defaults;
    ``None`` keeps the harness default), ``apiserver_args`` extra flags such as
    ``--emulated-version=1.35`` or ``--runtime-config=resource.k8s.io/v1beta1=true``.
    ``workloads`` also registers the shipped pods-and-workloads webhook entry (tests/e2e_workloads.py).
    ``kube_version`` (``1.37``) runs that version's own kube-apiserver (skips without it).
    """
    require_version(kube_version)
    with tempfile.TemporaryDirectory(prefix="realapi-") as tmp:
        out = Path(tmp) / "results.json"
        harness = PROJECT / "tests" / "e2e_workloads.py" if workloads else HARNESS
        argv = [sys.executable, str(harness), "--json-out", str(out), "--cases", *map(str, cases)]
        if inventory is not None:
            argv += ["--inventory", str(inventory)]
        if webhook:
            argv += ["--webhook-cmd", f"{sys.executable} -m draguard"]
            if mutate:
                argv.append("--mutate")
            if live:
                argv += ["--mode", "live"]
            if webhook_args:
                argv.append(f"--webhook-args={webhook_args}")
        else:
            argv.append("--no-webhook")
        if dry_run:
            argv.append("--dry-run")
        if feature_gates is not None:
            argv.append(f"--feature-gates={feature_gates}")
        argv += [f"--apiserver-arg={arg}" for arg in apiserver_args]
        env = dict(os.environ)
        env["KUBE_APISERVER"] = find_apiserver(kube_version) or "kube-apiserver"
        env["ETCD"] = find_etcd() or "etcd"
        proc = subprocess.run(
            argv, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
        output = proc.stdout + proc.stderr
        if not out.is_file():
            raise AssertionError(f"the harness wrote no results (exit {proc.returncode}):\n{output}")
        records = json.loads(out.read_text())
    verdicts = [
        Verdict(
            file=r["file"], index=r["index"], kind=r.get("kind"), namespace=r.get("namespace"),
            name=r.get("name"), code=r.get("code"), admitted=bool(r.get("admitted")),
            reason=r.get("reason"), message=r.get("message") or "", causes=r.get("causes") or [],
            warnings=r.get("warnings") or [], stored=r.get("stored"),
        )
        for r in records
    ]
    return Run(verdicts=verdicts, output=output)


# ---------------------------------------------------------------------------- a running API server
def _harness_module() -> Any:
    """``e2e-kube.py`` as a module (as cluster-oracle.py imports it): its etcd and kube-apiserver start-up."""
    spec = importlib.util.spec_from_file_location("e2e_kube", HARNESS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class LiveApiServer:
    """etcd + kube-apiserver that stay up for the ``with`` block (for tests of long-running clients,
    such as the audit): ``kubeconfig`` (admin token), ``request`` for JSON calls, ``apply`` for
    objects.  Everything stops, and the temp dir goes, when the block ends."""

    def __init__(self, feature_gates: str | None = None, *, kube_version: str | None = None) -> None:
        require_version(kube_version)
        self._binary = find_apiserver(kube_version) or "kube-apiserver"
        self._ek = _harness_module()
        argv = ["--no-webhook"] + ([f"--feature-gates={feature_gates}"] if feature_gates is not None else [])
        self._h = self._ek.Harness(self._ek.parse_args(argv))

    def __enter__(self) -> LiveApiServer:
        self._h.tmp = tempfile.mkdtemp(prefix="realapi-live-")
        try:
            self._h.start_etcd(self._ek.find_binary("ETCD", "etcd"))
            self._h.start_apiserver(self._binary)
        except BaseException:
            self._h.cleanup()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._h.cleanup()

    @property
    def kubeconfig(self) -> Path:
        return Path(self._h.kubeconfig)

    def request(self, method: str, path: str, body: Any = None, *, ctype: str = "application/json") -> tuple[int, Any]:
        status, _, answer = self._h.kube.request(method, path, body=body, ctype=ctype)
        return int(status), answer

    def apply(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        """POST ``obj`` to the collection ``path``; fails the test unless the API server stores it."""
        status, answer = self.request("POST", path, obj)
        if status not in (200, 201):
            raise AssertionError(f"POST {path}: {status} {answer}")
        return dict(answer)


ORACLE = CLUSTER_ORACLE
_CONTROL_PLANE = ("kube-apiserver", "kube-scheduler", "kube-controller-manager")


def find_component(env_var: str, name: str) -> str | None:
    """kube-scheduler / kube-controller-manager: ``$KUBE_SCHEDULER`` etc., PATH, then ``.cache/``."""
    for candidate in (os.environ.get(env_var), name):
        if candidate:
            found = shutil.which(candidate)
            if found:
                return found
    cached = PROJECT / ".cache" / name
    return str(cached) if os.access(cached, os.X_OK) else None


def control_plane_missing() -> str | None:
    """Why the real control plane cannot run here, or ``None`` when it can."""
    reason = missing()
    if reason is not None:
        return reason
    if not ORACLE.is_file():
        return f"no cluster oracle at {ORACLE}"
    for env_var, name in (("KUBE_SCHEDULER", "kube-scheduler"), ("KUBE_CONTROLLER_MANAGER", "kube-controller-manager")):
        if find_component(env_var, name) is None:
            return f"no {name} (${env_var}, PATH or .cache/; run scripts/setup-apiserver.sh)"
    if shutil.which("openssl") is None:
        return "no openssl on PATH"
    return None


class LiveControlPlane(LiveApiServer):
    """etcd, kube-apiserver, kube-scheduler and kube-controller-manager (resourceclaim, deployment,
    replicaset, ... controllers) as cluster-oracle.py starts them, Nodes without a kubelet: pods
    are scheduled (bound) but never run.  ``inventory`` (Nodes, DeviceClasses, ResourceSlices) is
    applied with the oracle's Node defaults (Ready, allocatable cpu/memory/pods)."""

    def __init__(self, inventory: Path | str, *, kube_version: str | None = None) -> None:
        reason = missing_version(kube_version, _CONTROL_PLANE) if kube_version not in (None, BASE_VERSION) \
            else control_plane_missing()
        if reason is not None:
            pytest.skip(f"real control plane unavailable: {reason}")
        self._binaries = {name: find_binary_of(name, kube_version) for name in _CONTROL_PLANE} \
            if kube_version not in (None, BASE_VERSION) else {}
        spec = importlib.util.spec_from_file_location("cluster_oracle", ORACLE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self._ek = module
        self._h = module.Oracle(module.parse_args(["--inventory", str(inventory)]))
        self._inventory = str(inventory)

    def __enter__(self) -> LiveControlPlane:
        binaries = dict(self._binaries) or {
            "kube-apiserver": find_apiserver() or "kube-apiserver",
            "kube-scheduler": find_component("KUBE_SCHEDULER", "kube-scheduler") or "kube-scheduler",
            "kube-controller-manager": find_component("KUBE_CONTROLLER_MANAGER", "kube-controller-manager")
            or "kube-controller-manager",
        }
        h = self._h
        h.tmp = tempfile.mkdtemp(prefix="realapi-control-plane-")
        try:
            h.start_etcd(find_etcd() or "etcd")
            h.start_apiserver(str(binaries["kube-apiserver"]))
            sched = h.start_component("kube-scheduler", str(binaries["kube-scheduler"]))
            kcm = h.start_component("kube-controller-manager", str(binaries["kube-controller-manager"]))
            h.wait_component(*sched, "/readyz")
            h.wait_component(*kcm, "/healthz")
            h.apply_oracle_inventory(self._inventory)
            h.wait_controllers()
        except BaseException:
            h.cleanup()
            raise
        return self
