"""Node taints, cordon and allocatable are read leniently; Pod tolerations keep all core fields."""

from __future__ import annotations

from draguard.k8s import Node, Toleration


def test_node_keeps_taints_unschedulable_and_allocatable() -> None:
    node = Node.model_validate({
        "kind": "Node", "metadata": {"name": "a"},
        "spec": {"taints": [{"key": "gpu", "value": "x", "effect": "NoSchedule", "timeAdded": "t"}], "unschedulable": True},
        "status": {"allocatable": {"cpu": "4", "example.com/gpu": 2}},
    })
    assert [(t.key, t.value, t.effect) for t in node.spec.taints] == [("gpu", "x", "NoSchedule")]
    assert node.spec.unschedulable is True
    assert node.status.allocatable["example.com/gpu"] == 2


def test_node_without_spec_is_schedulable_and_untainted() -> None:
    node = Node.model_validate({"kind": "Node", "metadata": {"name": "a"}})
    assert node.spec.taints == [] and not node.spec.unschedulable and node.status.allocatable == {}


def test_toleration_reads_seconds() -> None:
    tol = Toleration.model_validate({"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30})
    assert (tol.key, tol.operator, tol.effect, tol.toleration_seconds) == ("k", "Exists", "NoExecute", 30)
