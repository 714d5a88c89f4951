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


def find_apiserver() -> str | None:
    """The kube-apiserver binary to use, or ``None``."""
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
) -> Run:
    """POST ``cases`` to a fresh real API server and return its verdicts.

    ``webhook`` registers this checkout's ``draguard serve`` (run as ``python -m draguard`` with the
    interpreter running the tests) as validating webhook, ``mutate`` also as mutating webhook;
    ``live`` makes it list+watch the test API server instead of reading ``inventory`` from files.
    ``feature_gates`` is kube-apiserver's ``--feature-gates`` (``""`` for the version's defaults;
    ``None`` keeps the harness default), ``apiserver_args`` extra flags such as
    ``--emulated-version=1.35`` or ``--runtime-config=resource.k8s.io/v1beta1=true``.
    """
    require()
    with tempfile.TemporaryDirectory(prefix="realapi-") as tmp:
        out = Path(tmp) / "results.json"
        argv = [sys.executable, str(HARNESS), "--json-out", str(out), "--cases", *map(str, cases)]
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
        env["KUBE_APISERVER"] = find_apiserver() or "kube-apiserver"
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
