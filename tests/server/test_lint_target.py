"""``/lint?kubernetes-version=&feature-gates=``: one request answers for another target; a bad
value is a 400 that names the parameter, never a 500."""

from __future__ import annotations

from collections.abc import Callable

import yaml
from draguard.k8s.features import parse_target
from draguard.review.pipeline import ReviewOptions
from draguard.server.state import ServerState

from server.conftest import Served

CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "shared", "namespace": "default"},
    "spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "capacity": {"requests": {"memory": "1Gi"}}}}
    ]}},
}


def _reasons(s: Served, query: str) -> list[str]:
    response = s.client.post(f"/lint{query}", content=yaml.safe_dump(CLAIM))
    assert response.status_code == 200, response.text
    return [f["reason"] for f in response.json()["findings"]]


def test_query_parameters_choose_the_target(serve: Callable[..., Served]) -> None:
    s = serve(ServerState())
    assert "FieldDropped" not in _reasons(s, "")
    assert "FieldDropped" in _reasons(s, "?kubernetes-version=1.35")
    assert "FieldDropped" in _reasons(s, "?feature-gates=DRAConsumableCapacity=false")
    assert "FieldDropped" not in _reasons(s, "?kubernetes-version=1.35&feature-gates=DRAConsumableCapacity=true")


def test_server_flags_are_the_default_target(serve: Callable[..., Served]) -> None:
    s = serve(ServerState(options=ReviewOptions(target=parse_target("1.35"))))
    assert "FieldDropped" in _reasons(s, "")
    assert "FieldDropped" not in _reasons(s, "?kubernetes-version=1.36")


def test_bad_values_are_400_naming_the_parameter(serve: Callable[..., Served]) -> None:
    s = serve(ServerState())
    for query, parameter in (
        ("?kubernetes-version=1.20", "kubernetes-version"),
        ("?feature-gates=NoSuchGate=true", "feature-gates"),
        ("?feature-gates=DRAConsumableCapacity=maybe", "feature-gates"),
        ("?kubernetes-version=1.35&feature-gates=DRAListTypeAttributes=true", "feature-gates"),
    ):
        response = s.client.post(f"/lint{query}", content=yaml.safe_dump(CLAIM))
        assert response.status_code == 400, (query, response.text)
        assert parameter in response.json()["message"]
