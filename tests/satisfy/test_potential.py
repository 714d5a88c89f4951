"""Potential inventory (issue #10): node-group templates count for proofs, never as "now"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from dra_builders import cap, check, claim, device, inventory, message, node, req, rslice, verdict
from draguard.inventory import POTENTIAL_ANNOTATION, StaticInventory, WithPotential, is_potential

BIG = {"memory": "60Gi"}


def _potential(obj: dict[str, Any]) -> dict[str, Any]:
    obj["metadata"].setdefault("annotations", {})[POTENTIAL_ANNOTATION] = "true"
    return obj


def _gpu(name: str, mem: str) -> dict[str, Any]:
    return device(name, capacity={"memory": cap(mem)})


def test_is_potential_reads_the_annotation() -> None:
    assert is_potential(_potential(node("t")))
    assert not is_potential(node("n"))
    assert not is_potential({"metadata": {"annotations": {POTENTIAL_ANNOTATION: "false"}}})


def test_a_scaled_to_zero_node_group_makes_a_claim_allowed_with_a_note() -> None:
    existing = [node("gpu-1"), rslice("gpu-1", [_gpu("g0", "40Gi")])]
    template = [_potential(node("h100-template")), _potential(rslice("h100-template", [_gpu("g0", "80Gi")]))]
    assert verdict(check(claim(req("gpu", capacity=BIG)), inventory(*existing))) == "unsat"
    notes = check(claim(req("gpu", capacity=BIG)), inventory(*existing, *template))
    assert verdict(notes) == "sat"
    assert "h100-template (potential)" in message(notes, "SatisfiableOnScaleUp")
    # satisfiable on an existing node: no scale-up note
    now = check(claim(req("gpu", capacity={"memory": "20Gi"})), inventory(*existing, *template))
    assert verdict(now) == "sat" and "SatisfiableOnScaleUp" not in {n.reason for n in now}


def test_no_node_group_can_ever_offer_it_is_still_unsatisfiable_and_names_the_template() -> None:
    existing = [node("gpu-1"), rslice("gpu-1", [_gpu("g0", "40Gi")])]
    template = [_potential(node("h100-template")), _potential(rslice("h100-template", [_gpu("g0", "80Gi")]))]
    notes = check(claim(req("gpu", capacity={"memory": "160Gi"})), inventory(*existing, *template))
    assert verdict(notes) == "unsat"
    assert "largest: 80Gi" in message(notes)


def test_a_class_only_a_template_offers_is_not_an_empty_class() -> None:
    template = [_potential(node("t")), _potential(rslice("t", [_gpu("g0", "80Gi")]))]
    notes = check(claim(req("gpu", capacity={"memory": "160Gi"})), inventory(node("cpu-1"), *template))
    assert verdict(notes) == "unsat"  # the template proves what the class can offer


def test_potential_all_nodes_devices_reach_potential_nodes_only() -> None:
    shared = _potential(rslice(None, [_gpu("g0", "80Gi")], pool="burst", allNodes=True))
    inv = inventory(node("cpu-1"), _potential(node("burst-template")), shared)
    groups = {g.nodes: g for g in inv.groups}
    assert groups[("burst-template",)].potential and groups[("burst-template",)].devices
    assert ("cpu-1",) not in groups or not groups[("cpu-1",)].devices


def test_with_potential_marks_every_template_object(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all([node("gpu-1"), rslice("gpu-1", [_gpu("g0", "40Gi")])]))
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "group.yaml").write_text(yaml.safe_dump_all([node("t"), rslice("t", [_gpu("g0", "80Gi")])]))
    source = WithPotential(StaticInventory([str(cluster)]), [str(templates)])
    snap = source.snapshot()
    assert snap is not None and snap is source.snapshot()  # rebuilt only when the inner snapshot changes
    assert [g.potential for g in snap.groups] == [False, True]
    assert all(is_potential(o) for o in source.potential)
    assert source.status()["potential"]["objects"] == 2
