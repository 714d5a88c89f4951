"""A request that cannot be completed although each device matches: the message names what
stands in the way — shared counters, the claim's constraints — and never constraints it lacks."""

from __future__ import annotations

from pathlib import Path

import yaml
from draguard.inventory import build_inventory, load_paths
from draguard.review import ReviewOptions, review_documents

DATA = Path(__file__).parent / "data"


def _message(tmp_path: Path, claim: dict[str, object]) -> str:
    inventory_docs = load_paths([str(DATA / "counters-inventory.yaml")]).documents
    inventory = build_inventory([d.obj for d in inventory_docs])
    f = tmp_path / "claim.yaml"
    f.write_text(yaml.safe_dump(claim))
    review = review_documents(load_paths([str(f)]).documents, inventory=inventory, options=ReviewOptions())
    (finding,) = [x for x in review.findings if x.reason == "Unsatisfiable"]
    return finding.message


def _claim(count: int, constraints: list[dict[str, object]] | None = None) -> dict[str, object]:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "two-parts"},
        "spec": {"devices": {
            "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": count}}],
            **({"constraints": constraints} if constraints else {}),
        }},
    }


def test_counter_shortfall_without_constraints_names_the_counters(tmp_path: Path) -> None:
    message = _message(tmp_path, _claim(2))
    assert "constraints" not in message
    assert message == (
        'request "gpu": no combination of devices satisfies it on any node: the shared counters its matching '
        "devices consume do not allow it (best: n1)"
    )


def test_an_unmet_constraint_is_explained_first(tmp_path: Path) -> None:
    message = _message(tmp_path, _claim(2, [{"requests": ["gpu"], "matchAttribute": "gpu.example.com/x"}]))
    assert message == (
        'requests "gpu": matchAttribute gpu.example.com/x needs 2 devices with the same value; the best node (n1) has 0'
    )
