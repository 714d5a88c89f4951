"""Satisfiability and mutation follow the target where it matters for soundness.

The search models the 1.36 allocator.  For 1.34, whose allocator lets two devices with equal
values through a ``distinctAttribute`` (it compares pointers), a 1.36 proof is no proof: the
claim is not rejected.  The default-filling patch is only offered where it would survive
(v1-shaped objects, DRAConsumableCapacity on).
"""

from __future__ import annotations

from pathlib import Path

from app.inventory import build_inventory, load_paths
from app.k8s import parse_target
from app.review import ReviewOptions, review_documents

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _review(claim: Path, version: str, gates: str = "", **options: object) -> list[tuple[str, str]]:
    inventory_docs = load_paths([str(EXAMPLES / "inventory")]).documents
    inventory = build_inventory([d.obj for d in inventory_docs])
    review = review_documents(
        load_paths([str(claim)]).documents, inventory=inventory,
        options=ReviewOptions(target=parse_target(version, gates), **options),  # type: ignore[arg-type]
    )
    return [(f.reason, f.severity.value) for f in review.findings]


def test_distinct_attribute_proofs_do_not_hold_for_134() -> None:
    claim = EXAMPLES / "claims" / "bad" / "30-three-distinct-nics.yaml"
    assert ("Unsatisfiable", "error") in _review(claim, "1.36")
    older = _review(claim, "1.34", "DRAConsumableCapacity=true")
    assert ("Unsatisfiable", "error") not in older
    assert ("SatisfiabilityUnknown", "warning") in older


def test_mutation_only_where_the_filled_request_survives() -> None:
    claim = EXAMPLES / "claims" / "good" / "70-default-memory.yaml"

    def patched(version: str, gates: str = "") -> bool:
        inventory_docs = load_paths([str(EXAMPLES / "inventory")]).documents
        inventory = build_inventory([d.obj for d in inventory_docs])
        review = review_documents(
            load_paths([str(claim)]).documents, inventory=inventory,
            options=ReviewOptions(target=parse_target(version, gates), show_mutations=True),
        )
        return any(o.patch for o in review.objects)

    assert patched("1.36")
    assert not patched("1.35")
    assert patched("1.35", "DRAConsumableCapacity=true")


def test_no_patch_for_a_v1beta1_claim(tmp_path: Path) -> None:
    claim = tmp_path / "b1.yaml"
    claim.write_text(
        "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: n, namespace: default}\n"
        "spec:\n  devices:\n    requests:\n    - name: gpu\n      deviceClassName: shared-gpu.example.com\n"
        "      selectors: [{cel: {expression: 'device.attributes[\"gpu.example.com\"].model == \"A100\"'}}]\n"
    )
    inventory = build_inventory([d.obj for d in load_paths([str(EXAMPLES / "inventory")]).documents])
    review = review_documents(load_paths([str(claim)]).documents, inventory=inventory,
                              options=ReviewOptions(show_mutations=True))
    assert not any(o.patch for o in review.objects)
    assert "CapacityDefaulted" in {f.reason for f in review.findings}  # still checked and explained
