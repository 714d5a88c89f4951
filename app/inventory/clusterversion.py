"""Which Kubernetes the webhook sits in front of: its version (``/version``) and DRA gates
(``/metrics``' ``kubernetes_feature_enabled``), turned into the :class:`~app.k8s.features.Target`
draguard answers for.

Why: draguard's verdicts are a version's verdicts — what a 1.35 API server drops, a 1.37 one
validates; an allocator fix of 1.37 changes what "never" means.  A webhook configured by hand
answers for the wrong version the day the cluster is upgraded, so ``serve`` with a cluster asks
the cluster, at start and again every :data:`RECHECK_SECONDS` (an upgrade, or a reconnect to an
API server of another version behind the same address, is seen within that time).

Rules (README "Kubernetes versions and feature gates"):

* the minor of ``gitVersion`` picks the version when draguard knows it; a cluster newer than
  every known version gets the newest known semantics and a *notice* that later answers carry
  (soundness: a newer allocator only allocates more, so the newest known one never denies what
  it would allocate — and where that is not sure the answer is ``SatisfiabilityUnknown``); one
  older than the oldest known version (1.34, the first with ``resource.k8s.io/v1``) gets 1.34's
  with a notice;
* the DRA gates are read from ``kubernetes_feature_enabled{name=...}`` when the service account
  may ``get`` the ``/metrics`` non-resource URL (the chart and manifests grant it; optional):
  each gate of the version whose value differs from its default becomes an override; a gate
  that cannot be set that way (locked, or its dependencies off) leaves the defaults, said in
  the source text;
* ``--feature-gates`` given by the operator wins over what the cluster says, gate by gate;
* nothing read (no permission for ``/version``, API server down, a development build that
  reports ``v0.0.0-master``): the configured or default target, and the reason in the status —
  never a guess presented as the cluster's.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import httpx

from ..k8s import (
    DRA_GATES,
    NEWEST_VERSION,
    SUPPORTED_VERSIONS,
    FeatureGateError,
    Target,
    parse_feature_gates,
)
from .kubeconfig import KubeConfig, make_client

__all__ = [
    "RECHECK_SECONDS",
    "ClusterTarget",
    "detect",
    "gates_from_metrics",
    "target_for",
    "version_of",
]

RECHECK_SECONDS = 60.0
"""How often ``serve`` asks the cluster again (``/version`` is one small GET)."""

_GIT_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")
_FEATURE_LINE = re.compile(r'^kubernetes_feature_enabled\{([^}]*)\}\s+([0-9.eE+-]+)\s*$')
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class ClusterTarget:
    """What the cluster said, and the target draguard takes from it."""

    target: Target
    git_version: str = ""
    """The cluster's ``gitVersion`` as reported (``v1.37.2``); empty when it could not be read."""
    gates_source: str = "defaults"
    """``metrics`` (read from the API server), ``defaults`` (the version's), or why not read."""
    notice: str | None = None
    """Said with every answer whose truth depends on the version, when the cluster's version is
    not one draguard knows."""
    problem: str | None = None
    """Why the cluster could not be asked (the target is then the configured one)."""
    gates: Mapping[str, bool] = field(default_factory=lambda: MappingProxyType({}))
    """The DRA gates the cluster reported (empty when not read)."""

    def status(self) -> dict[str, Any]:
        """For ``/readyz`` and the start-up log."""
        out: dict[str, Any] = {
            "kubernetesVersion": self.target.version,
            "featureGates": self.target.gates_text(),
            "clusterVersion": self.git_version or None,
            "gatesFrom": self.gates_source,
        }
        if self.notice:
            out["notice"] = self.notice
        if self.problem:
            out["problem"] = self.problem
        return out


def version_of(git_version: str) -> tuple[str, str | None]:
    """``v1.37.2`` → (``1.37``, None); a version draguard does not know → the nearest known
    one and the notice to carry.  Raises ValueError for text that is no version at all."""
    match = _GIT_VERSION.match(git_version.strip())
    if match is None:
        raise ValueError(f"the cluster reports an unreadable version {git_version!r}")
    minor = (int(match.group(1)), int(match.group(2)))
    if minor[0] == 0:  # a build from a source tree without a release tag (v0.0.0-master)
        raise ValueError(f"the cluster reports a development build ({git_version}), not a release version")
    known = [tuple(int(p) for p in v.split(".")) for v in SUPPORTED_VERSIONS]
    text = f"{minor[0]}.{minor[1]}"
    if text in SUPPORTED_VERSIONS:
        return text, None
    if minor > known[-1]:
        return NEWEST_VERSION, (
            f"the cluster runs Kubernetes {git_version}, newer than any version this draguard knows: "
            f"answers follow Kubernetes {NEWEST_VERSION}'s rules (upgrade draguard for {text})"
        )
    oldest = SUPPORTED_VERSIONS[0]
    return oldest, (
        f"the cluster runs Kubernetes {git_version}, older than {oldest} (the first with resource.k8s.io/v1): "
        f"answers follow Kubernetes {oldest}'s rules"
    )


def gates_from_metrics(text: str) -> dict[str, bool]:
    """The DRA gates of a ``/metrics`` page: ``kubernetes_feature_enabled{name="X",stage="BETA"} 1``."""
    gates: dict[str, bool] = {}
    for line in text.splitlines():
        _note_gate(line, gates)
    return gates


def _note_gate(line: str, gates: dict[str, bool]) -> None:
    """Record the DRA gate of one ``/metrics`` line, if it is a ``kubernetes_feature_enabled`` one."""
    if not line.startswith("kubernetes_feature_enabled{"):
        return
    match = _FEATURE_LINE.match(line)
    if match is None:
        return
    name = dict(_LABEL.findall(match.group(1))).get("name", "")
    if name in DRA_GATES:
        try:
            gates[name] = float(match.group(2)) != 0.0
        except ValueError:
            return


async def _gates_streamed(client: httpx.AsyncClient) -> tuple[dict[str, bool], str]:
    """The DRA gates of the API server's ``/metrics``, read line by line as it arrives.

    Why streamed: a kube-apiserver's page is megabytes (histograms per resource and verb); read
    whole, then split, it made the webhook's and the audit's RSS jump by ~7-9 MiB at every
    :data:`RECHECK_SECONDS` (the 30-minute soak of the team's chaos harness), for a handful of lines."""
    gates: dict[str, bool] = {}
    async with client.stream("GET", "/metrics", headers={"Accept": "text/plain"}) as metrics:
        if metrics.status_code != 200:
            why = "not allowed (RBAC: get on the /metrics non-resource URL)" if metrics.status_code in (401, 403) \
                else f"HTTP {metrics.status_code}"
            return gates, f"defaults (GET /metrics: {why})"
        async for line in metrics.aiter_lines():
            _note_gate(line, gates)
    return gates, "metrics" if gates else "defaults (/metrics has no DRA gate)"


def target_for(
    git_version: str, cluster_gates: Mapping[str, bool], operator_gates: str | None, *, gates_source: str
) -> ClusterTarget:
    """The target for a cluster of ``git_version`` reporting ``cluster_gates``, with the
    operator's ``--feature-gates`` on top.  Raises :class:`FeatureGateError` only for the
    operator's own flag (a usage error at start)."""
    version, notice = version_of(git_version)
    explicit = parse_feature_gates(operator_gates or "", version)
    base = Target(version)
    overrides = {gate: on for gate, on in cluster_gates.items()
                 if base.state(gate) is not None and on != base.enabled(gate)}
    source = gates_source
    try:
        target = Target(version, MappingProxyType({**overrides, **explicit}))
        parse_feature_gates(",".join(f"{g}={str(v).lower()}" for g, v in overrides.items()), version)
    except FeatureGateError as exc:  # what the cluster reports cannot be set so: keep the defaults
        target = Target(version, MappingProxyType(dict(explicit)))
        source = f"defaults (the gates the cluster reports are not a valid setting for {version}: {exc})"
    return ClusterTarget(target, git_version=git_version, gates_source=source, notice=notice,
                         gates=MappingProxyType(dict(cluster_gates)))


async def _read(config: KubeConfig, timeout: float) -> tuple[str, dict[str, bool], str]:
    async with make_client(config) as client:
        resp = await asyncio.wait_for(client.get("/version"), timeout)
        if resp.status_code != 200:
            raise LookupError(f"GET /version: HTTP {resp.status_code}")
        body = resp.json()
        git_version = body.get("gitVersion") if isinstance(body, dict) else None
        if not isinstance(git_version, str):
            raise LookupError("GET /version: no gitVersion in the answer")
        try:
            gates, source = await asyncio.wait_for(_gates_streamed(client), timeout)
        except Exception as exc:  # timeouts, httpx errors: the gates are optional
            return git_version, {}, f"defaults (GET /metrics failed: {type(exc).__name__})"
        return git_version, gates, source


async def detect(
    config: KubeConfig, *, fallback: Target, operator_gates: str | None, timeout: float = 5.0
) -> ClusterTarget:
    """Ask the cluster; on any failure, ``fallback`` with the reason (never an exception but the
    operator's own bad ``--feature-gates``, which :func:`target_for` raises)."""
    try:
        git_version, gates, source = await _read(config, timeout)
    except Exception as exc:  # unreachable, refused, malformed: say it, keep the fallback
        detail = str(exc) or type(exc).__name__
        return ClusterTarget(fallback, problem=f"cannot read the cluster's version: {detail}")
    try:
        version_of(git_version)
    except ValueError as exc:
        return ClusterTarget(fallback, git_version=git_version, problem=str(exc))
    return target_for(git_version, gates, operator_gates, gates_source=source)
