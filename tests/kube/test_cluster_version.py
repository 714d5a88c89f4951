"""``serve`` with a cluster answers for the cluster's own Kubernetes version and DRA gates
(issue #34 item 4): ``/version`` picks the version, ``/metrics``' ``kubernetes_feature_enabled``
the gates where RBAC allows, the operator's flags win, and what could not be read is said."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from draguard.inventory.clusterversion import detect, gates_from_metrics, target_for, version_of
from draguard.inventory.kubeconfig import load_kube_config
from draguard.k8s.features import NEWEST_VERSION, FeatureGateError, Target
from fakeapi import FakeCluster

METRICS = """\
# HELP kubernetes_feature_enabled [BETA] This metric records the data about the stage and enablement of a k8s feature.
# TYPE kubernetes_feature_enabled gauge
kubernetes_feature_enabled{name="DRAConsumableCapacity",stage="BETA"} 1
kubernetes_feature_enabled{name="DRAListTypeAttributes",stage="ALPHA"} 1
kubernetes_feature_enabled{name="DRAPartitionableDevices",stage="BETA"} 0
kubernetes_feature_enabled{name="SomethingElse",stage="ALPHA"} 1
apiserver_request_total{code="200"} 12
"""


@pytest.mark.parametrize(
    ("git", "minor", "noticed"),
    [("v1.37.2", "1.37", False), ("v1.36.2", "1.36", False), ("v1.38.0-rc.0", "1.38", False),
     ("v1.33.5", "1.34", True), ("v1.39.0-alpha.1", NEWEST_VERSION, True), ("1.35.4-gke.100", "1.35", False)],
)
def test_the_minor_of_git_version_picks_the_version(git: str, minor: str, noticed: bool) -> None:
    version, notice = version_of(git)
    assert version == minor
    assert (notice is not None) is noticed
    if notice:
        assert git in notice


def test_an_unreadable_version_is_refused() -> None:
    with pytest.raises(ValueError, match="unreadable version"):
        version_of("latest")
    with pytest.raises(ValueError, match="development build"):
        version_of("v0.0.0-master+4f2d1c")


def test_gates_are_read_from_the_feature_metric_dra_gates_only() -> None:
    assert gates_from_metrics(METRICS) == {
        "DRAConsumableCapacity": True, "DRAListTypeAttributes": True, "DRAPartitionableDevices": False,
    }
    assert gates_from_metrics("garbage\nkubernetes_feature_enabled{name=\"DRAConsumableCapacity\"} x\n") == {}


def test_gates_that_differ_from_the_defaults_become_overrides_and_flags_win() -> None:
    found = target_for("v1.37.2", gates_from_metrics(METRICS), None, gates_source="metrics")
    assert found.target == Target("1.37", found.target.overrides)
    assert dict(found.target.overrides) == {"DRAListTypeAttributes": True, "DRAPartitionableDevices": False}
    flagged = target_for("v1.37.2", gates_from_metrics(METRICS), "DRAListTypeAttributes=false", gates_source="metrics")
    assert flagged.target.enabled("DRAListTypeAttributes") is False
    with pytest.raises(FeatureGateError):
        target_for("v1.37.2", {}, "DRAExtendedResource=false", gates_source="metrics")  # locked in 1.37


def test_a_reported_setting_that_cannot_be_made_keeps_the_defaults_and_says_so() -> None:
    found = target_for("v1.37.2", {"DRAExtendedResource": False}, None, gates_source="metrics")  # locked to true
    assert not found.target.overrides
    assert found.gates_source.startswith("defaults (the gates the cluster reports are not a valid setting")


def _config(kubeconfig: Path):  # type: ignore[no-untyped-def]
    return load_kube_config(str(kubeconfig))


def test_detect_reads_version_and_gates_from_the_api_server(cluster: FakeCluster, kubeconfig: Path) -> None:
    cluster.git_version = "v1.36.2"
    cluster.metrics_text = METRICS
    found = asyncio.run(detect(_config(kubeconfig), fallback=Target(), operator_gates=None))
    assert found.problem is None and found.git_version == "v1.36.2"
    assert found.target.version == "1.36" and found.gates_source == "metrics"
    assert found.target.enabled("DRAListTypeAttributes") and not found.target.enabled("DRAPartitionableDevices")
    assert found.status()["clusterVersion"] == "v1.36.2"


def test_without_the_metrics_grant_the_versions_defaults_are_used_and_said(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    cluster.git_version = "v1.37.2"
    found = asyncio.run(detect(_config(kubeconfig), fallback=Target("1.35"), operator_gates=None))
    assert found.target == Target("1.37")
    assert "RBAC" in found.gates_source


def test_an_unreachable_cluster_keeps_the_configured_target_with_the_reason(
    cluster: FakeCluster, kubeconfig: Path
) -> None:
    cluster.available = False
    found = asyncio.run(detect(_config(kubeconfig), fallback=Target("1.35"), operator_gates=None))
    assert found.target == Target("1.35")
    assert found.problem is not None and "503" in found.problem


def test_the_target_is_exported_as_a_metric(cluster: FakeCluster, kubeconfig: Path) -> None:
    """``draguard_target_info`` carries the version answers are given for and where it came from."""
    from draguard.server.metrics import Metrics
    from draguard.server.state import ServerState

    cluster.git_version = "v1.38.0-beta.0"
    found = asyncio.run(detect(_config(kubeconfig), fallback=Target(), operator_gates=None))
    state = ServerState()
    text = Metrics(state.stats).render().decode()
    assert 'draguard_target_info{cluster_version="",feature_gates="",kubernetes_version="1.37",source="configured"} 1.0' \
        in text
    state.cluster_target = found
    text = Metrics(state.stats).render().decode()
    assert ('draguard_target_info{cluster_version="v1.38.0-beta.0",feature_gates="",kubernetes_version="1.38",'
            'source="cluster"} 1.0') in text
