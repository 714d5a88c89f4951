"""Satisfiability and mutation follow the target where it matters for soundness.

The search models the 1.36 allocator.  For 1.34, whose allocator lets two devices with equal
values through a ``distinctAttribute`` (it compares pointers), a 1.36 proof is no proof: the
claim is not rejected.  The default-filling patch is only offered where it would survive
(v1-shaped objects, DRAConsumableCapacity on).
"""

from __future__ import annotations

from pathlib import Path

from draguard.inventory import build_inventory, load_paths, open_inventory
from draguard.k8s import parse_target
from draguard.review import ReviewOptions, review_documents

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


SHARED_SLICE = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  pool: {name: n1, resourceSliceCount: 1}
  nodeName: n1
  devices:
  - name: gpu-0
    allowMultipleAllocations: true
    capacity:
      memory: {value: 40Gi, requestPolicy: {default: 10Gi, validRange: {min: 1Gi}}}
"""

TWO_SHARES = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: two-shares, namespace: default}
spec:
  devices:
    requests:
    - {name: a, exactly: {deviceClassName: gpu.example.com, capacity: {requests: {memory: 10Gi}}}}
    - {name: b, exactly: {deviceClassName: gpu.example.com, capacity: {requests: {memory: 10Gi}}}}
"""


def test_file_inventory_is_read_as_the_target_stores_it(tmp_path: Path) -> None:
    """On 1.35 the slice is stored without allowMultipleAllocations: one device, two requests."""
    (tmp_path / "inventory.yaml").write_text(SHARED_SLICE)
    (tmp_path / "claim.yaml").write_text(TWO_SHARES)

    def reasons(version: str) -> set[str]:
        source = open_inventory([str(tmp_path / "inventory.yaml")], target=parse_target(version))
        review = review_documents(
            load_paths([str(tmp_path / "claim.yaml")]).documents, inventory=source.snapshot(),
            options=ReviewOptions(target=parse_target(version)),
        )
        return {f.reason for f in review.findings}

    assert "Unsatisfiable" not in reasons("1.36")
    assert "Unsatisfiable" in reasons("1.35")
