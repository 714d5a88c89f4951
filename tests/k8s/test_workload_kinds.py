"""Where each kind keeps its pod template and how many pods it runs at once; operator rows."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from draguard.k8s import (
    WorkloadKindsError,
    find_pod_templates,
    mentions_dra,
    parse_workload_kinds,
    workload_kind_for,
)

POD_SPEC = {"containers": [{"name": "c"}]}


def templates(api_version: str, kind: str, spec: dict[str, Any], extra: Any = ()) -> list[tuple[str, int | None]]:
    row = workload_kind_for(api_version, kind, extra)
    assert row is not None
    obj = {"apiVersion": api_version, "kind": kind, "spec": spec}
    return [(str(t.spec_path), t.replicas) for t in find_pod_templates(obj, row)]


def test_built_in_kinds_template_paths_and_counts() -> None:
    tpl = {"template": {"spec": POD_SPEC}}
    assert templates("v1", "Pod", POD_SPEC) == [("spec", 1)]
    assert templates("apps/v1", "Deployment", {"replicas": 8, **tpl}) == [("spec.template.spec", 8)]
    assert templates("apps/v1", "Deployment", tpl) == [("spec.template.spec", 1)]  # replicas default 1
    assert templates("apps/v1", "StatefulSet", {"replicas": 3, **tpl}) == [("spec.template.spec", 3)]
    assert templates("apps/v1", "ReplicaSet", {"replicas": 0, **tpl}) == [("spec.template.spec", 0)]
    assert templates("v1", "ReplicationController", {"replicas": 2, **tpl}) == [("spec.template.spec", 2)]
    assert templates("apps/v1", "DaemonSet", tpl) == [("spec.template.spec", None)]
    assert templates("batch/v1", "Job", {"parallelism": 3, "completions": 2, **tpl}) == [("spec.template.spec", 2)]
    assert templates("batch/v1", "Job", {"parallelism": 4, **tpl}) == [("spec.template.spec", 4)]
    assert templates("batch/v1", "Job", tpl) == [("spec.template.spec", 1)]
    cron = {"jobTemplate": {"spec": {"parallelism": 2, **tpl}}}
    assert templates("batch/v1", "CronJob", cron) == [("spec.jobTemplate.spec.template.spec", 2)]
    row = workload_kind_for("v1", "PodTemplate")
    assert row is not None
    found = find_pod_templates({"template": {"spec": POD_SPEC}}, row)
    assert [(str(t.spec_path), t.replicas) for t in found] == [("template.spec", None)]


def test_kinds_are_matched_with_their_group() -> None:
    assert workload_kind_for("apps/v1", "Job") is None
    assert workload_kind_for("example.com/v1", "Deployment") is None
    assert workload_kind_for("v1", "ConfigMap") is None
    assert workload_kind_for("batch/v1", "Job") is not None


JOBSET_ROWS = yaml.safe_load("""
kinds:
- apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  podTemplates:
  - each: spec.replicatedJobs
    template: template.spec.template
    replicas: [replicas]
    parallelism: template.spec.parallelism
    completions: template.spec.completions
- apiVersion: kubeflow.org/v2beta1
  kind: MPIJob
  podTemplates:
  - {each: spec.mpiReplicaSpecs, template: template, replicas: replicas}
""")


def test_operator_rows_find_every_template_with_its_count() -> None:
    rows = parse_workload_kinds(JOBSET_ROWS)
    spec = {"replicatedJobs": [
        {"name": "a", "replicas": 2, "template": {"spec": {"parallelism": 4, "completions": 3, "template": {"spec": POD_SPEC}}}},
        {"name": "b", "template": {"spec": {"template": {"spec": POD_SPEC}}}},
    ]}
    assert templates("jobset.x-k8s.io/v1alpha2", "JobSet", spec, rows) == [
        ("spec.replicatedJobs[0].template.spec.template.spec", 6), ("spec.replicatedJobs[1].template.spec.template.spec", 1)]
    mpi = {"mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": {"spec": POD_SPEC}},
                               "Worker": {"replicas": 4, "template": {"spec": POD_SPEC}}}}
    assert templates("kubeflow.org/v2beta1", "MPIJob", mpi, rows) == [
        ("spec.mpiReplicaSpecs.Launcher.template.spec", 1), ("spec.mpiReplicaSpecs.Worker.template.spec", 4)]


@pytest.mark.parametrize(("doc", "says"), [
    ({}, "a list `kinds`"),
    ({"kinds": [{"kind": "X", "podTemplates": [{"template": "spec.template"}]}]}, "kinds[0].apiVersion: required"),
    ({"kinds": [{"apiVersion": "x/v1", "kind": "X", "podTemplates": []}]}, "podTemplates: a non-empty list"),
    ({"kinds": [{"apiVersion": "x/v1", "kind": "X", "podTemplates": [{"tmpl": "a"}]}]}, "unknown key 'tmpl'"),
    ({"kinds": [{"apiVersion": "x/v1", "kind": "X", "podTemplates": [{"template": "a..b"}]}]}, "dotted field path"),
])
def test_bad_operator_rows_say_where(doc: Any, says: str) -> None:
    with pytest.raises(WorkloadKindsError, match=None) as caught:
        parse_workload_kinds(doc, "kinds.yaml")
    assert says in str(caught.value) and str(caught.value).startswith("kinds.yaml: ")


def test_mentions_dra_is_a_cheap_over_approximation() -> None:
    assert mentions_dra({"spec": {"template": {"spec": {"resourceClaims": []}}}})
    assert mentions_dra({"spec": {"containers": [{"resources": {"limits": {"deviceclass.resource.kubernetes.io/x": 1}}}]}})
    assert not mentions_dra({"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": 1}}}]}})
