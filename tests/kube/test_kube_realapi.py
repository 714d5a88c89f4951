"""The live inventory against a real kube-apiserver 1.36: Nodes listed and watched metadata-only
(``PartialObjectMetadata``) still sync, and the webhook denies an unsatisfiable claim from the
inventory it watched."""

from __future__ import annotations

from pathlib import Path

import realapi

ROOT = Path(__file__).resolve().parents[2]


def test_live_inventory_with_metadata_only_nodes_syncs_and_decides() -> None:
    run = realapi.run([ROOT / "examples/claims/bad/10-unsatisfiable-50gi.yaml"],
                      inventory=ROOT / "examples/inventory", webhook=True, live=True)
    verdict = run.by_name("llm-50gi")
    assert not verdict.admitted, run.output
    assert "no device of class shared-gpu.example.com offers memory 50Gi" in verdict.message, run.output
