"""``draguard capacity``: amounts in the short form people write (issue #35, item 7), and an SVG
that clips nothing, labels every bar with what it measures and shows the text output's figures
(item 8)."""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "satisfy"))

from dra_builders import DRIVER, cap, dclass, device, node, rslice

SVG = "{http://www.w3.org/2000/svg}"
CHAR_EM = 0.62
"""A monospace glyph is 0.6 em wide; a little more, as a renderer's fallback font may be."""


def shared(name: str, ns: str, dev: str, pool: str, consumed: dict[str, str]) -> dict[str, Any]:
    """A claim as the scheduler leaves it: consumedCapacity in its BinarySI arithmetic form."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": DRIVER}}]}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "r", "driver": DRIVER, "pool": pool, "device": dev, "shareID": "s",
                 "consumedCapacity": consumed}]}}}}


@pytest.fixture
def ticket(tmp_path: Path) -> Path:
    long_node = "node-with-a-rather-long-name-in-zone-europe-west4-a"
    (tmp_path / "inventory.yaml").write_text(yaml.safe_dump_all([
        dclass(), node("node-1"), node(long_node),
        rslice("node-1", [device("gpu-0", multi=True, capacity={"memory": cap("40Gi"), "bandwidth": cap("20G")}),
                          device("gpu-1")]),
        rslice(long_node, [device("gpu-0"), device("gpu-1")], pool="a-pool-whose-name-is-also-rather-long"),
    ]))
    claims = [shared("a", "team-a", "gpu-0", "node-1", {"memory": "10737418240", "bandwidth": "1500000000"}),
              shared("b", "team-b", "gpu-0", "node-1", {"memory": "10Gi"})]
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": claims}))
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["capacity", *argv]) == 0
    return capsys.readouterr().out


def test_text_prints_amounts_short(ticket: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = run(capsys, "--inventory", str(ticket))
    assert "1500M of 20G used (8%)" in text
    assert "20Gi of 40Gi used (50%)" in text
    assert "1500000000" not in text and "Ki " not in text


def _texts(root: ET.Element) -> list[ET.Element]:
    return list(root.iter(f"{SVG}text"))


def test_svg_clips_nothing_and_labels_every_bar(ticket: Path, capsys: pytest.CaptureFixture[str]) -> None:
    svg = run(capsys, "--inventory", str(ticket), "--format", "svg")
    root = ET.fromstring(svg)
    width = float(root.attrib["width"])
    size = float(root.attrib["font-size"])
    assert "monospace" in root.attrib["font-family"]
    for t in _texts(root):
        x = float(t.attrib["x"])
        assert x + len(t.text or "") * CHAR_EM * size <= width, f"clipped: {t.text!r} at x={x}, width {width}"
    for r in root.iter(f"{SVG}rect"):
        assert float(r.attrib["x"]) + float(r.attrib["width"]) <= width
    # each bar (a background rect) sits on a row with a label saying what it measures
    rows = {round(float(r.attrib["y"])) + 11 for r in root.iter(f"{SVG}rect") if r.attrib["fill"] == "#e5e7eb"}
    labels = {round(float(t.attrib["y"])): t.text for t in _texts(root) if re.fullmatch(r"(devices in use|\w+ used)", t.text or "")}
    assert rows and rows <= set(labels), (rows, labels)
    assert {"devices in use", "memory used", "bandwidth used"} <= set(labels.values())


def test_svg_shows_the_text_outputs_figures(ticket: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = run(capsys, "--inventory", str(ticket))
    svg = run(capsys, "--inventory", str(ticket), "--format", "svg")
    figures = {t.text for t in _texts(ET.fromstring(svg))}
    for line in text.splitlines():
        got = re.search(r"\] (\S+ of \S+) used \((\d+%)\)", line)
        if got:
            assert f"{got[1]} ({got[2]})" in figures, line
        if line.startswith("class "):
            assert line in figures
