"""A cluster newer than every Kubernetes version draguard knows (issue #34 item 4): the newest
known rules, and every denial turned into a ``SatisfiabilityUnknown`` warning naming the gap —
never a denial from rules that may not be the cluster's."""

from __future__ import annotations

from collections.abc import Callable

from draguard.inventory import StaticInventory
from draguard.inventory.clusterversion import version_of
from draguard.review.pipeline import ReviewOptions
from draguard.server.state import ServerState

from server.conftest import DATA, Served
from server.reviews import admission_review, claim


def _answer(serve: Callable[..., Served], notice: str | None) -> dict[str, object]:
    state = ServerState(inventory=StaticInventory([str(DATA / "inventory.yaml")]),
                        options=ReviewOptions(version_notice=notice))
    s = serve(state)
    response = s.client.post("/validate", json=admission_review(claim("big", memory="50Gi")))
    assert response.status_code == 200, response.text
    answer: dict[str, object] = response.json()["response"]
    return answer


def test_a_known_cluster_denies_the_unsatisfiable_claim(serve: Callable[..., Served]) -> None:
    answer = _answer(serve, None)
    assert answer["allowed"] is False


def test_a_newer_cluster_gets_a_warning_naming_the_version_instead(serve: Callable[..., Served]) -> None:
    _, notice = version_of("v1.41.0")
    assert notice is not None
    answer = _answer(serve, notice)
    assert answer["allowed"] is True
    warnings = answer["warnings"]
    assert isinstance(warnings, list) and warnings[0].startswith("SatisfiabilityUnknown:")
    assert any("v1.41.0" in w for w in warnings) or any("newer than any version" in w for w in warnings)
