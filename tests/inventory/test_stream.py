"""Large inventory files read piece by piece (``app.inventory.stream``) say exactly what reading
them whole says: the same objects, documents, List items, lines and findings — and inventory
files have no document limit, while linted inputs keep theirs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.inventory import files, stream
from draguard.inventory.files import iter_paths, load_paths
from draguard.k8s import MAX_DOCUMENTS, decode_bytes


def _node(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{i:05d}", "labels": {"kubernetes.io/hostname": f"node-{i:05d}",
                                                            "model": "x" if i % 2 else "y"}}}


def _kubectl_list(items: list[dict[str, Any]]) -> str:
    """What ``kubectl get nodes -o yaml`` writes: one List, items at column 0, kind after them."""
    return yaml.safe_dump({"apiVersion": "v1", "items": items, "kind": "List",
                           "metadata": {"resourceVersion": ""}}, sort_keys=False)


def _picture(results: list[Any]) -> tuple[list[Any], list[Any]]:
    docs, finds = [], []
    for r in results:
        for d in r.documents:
            docs.append((d.obj, d.index, d.item, d.line, d.column, d.position_of(["metadata", "name"])))
        finds.extend((f.reason, f.message, f.line, f.column) for f in r.findings)
    return docs, finds


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "PIECE_BYTES", 700)  # many pieces from a small file
    monkeypatch.setattr(files, "STREAM_ABOVE_BYTES", 0)  # every file streamed


CASES = {
    "list": _kubectl_list([_node(i) for i in range(60)]),
    "documents": yaml.safe_dump_all([_node(i) for i in range(40)], sort_keys=False),
    "comments first": "# a dump\n\n---\n" + yaml.safe_dump_all([_node(i) for i in range(30)], sort_keys=False),
    "list between documents": (yaml.safe_dump(_node(1)) + "---\n" + _kubectl_list([_node(i) for i in range(25)])
                               + "---\n" + yaml.safe_dump(_node(2)) + "---\n"),
    "bad first item": _kubectl_list([_node(i) for i in range(20)]).replace("name: node-00001", "name: [node"),
    "item not an object": _kubectl_list([_node(i) for i in range(20)]) .replace(
        "- apiVersion: v1\n  kind: Node\n  metadata:\n    labels:\n      kubernetes.io/hostname: node-00007",
        "- 7\n- apiVersion: v1\n  kind: Node\n  metadata:\n    labels:\n      kubernetes.io/hostname: node-00007"),
    "indented items": yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [_node(i) for i in range(20)]},
                                     indent=2, sort_keys=False).replace("\n- ", "\n  - ").replace("\n  ", "\n    ")
                      .replace("\n    items:", "\nitems:"),
    "not a list kind": _kubectl_list([_node(i) for i in range(20)]).replace("kind: List", "kind: Node"),
    "anchors across items": _kubectl_list([_node(i) for i in range(20)]).replace(
        "model: x", "model: &m x", 1).replace("model: y\n", "model: *m\n", 3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_streamed_reading_matches_the_whole_file(name: str, tmp_path: Path, small_pieces: None) -> None:
    path = tmp_path / "dump.yaml"
    path.write_text(CASES[name])
    whole = decode_bytes(path.read_bytes(), str(path), max_documents=None)
    streamed = list(iter_paths([str(path)]))
    assert _picture(streamed) == _picture([whole])
    if name in ("list", "documents"):
        assert len(streamed) > 3  # it was read in pieces


def test_a_broken_item_late_in_a_streamed_list_keeps_what_was_read_before_it(
        tmp_path: Path, small_pieces: None) -> None:
    """Reading whole, a YAML error anywhere refuses the whole List; streamed, the pieces before
    the broken one were handed on already: the same finding, and only those items."""
    path = tmp_path / "dump.yaml"
    path.write_text(_kubectl_list([_node(i) for i in range(40)]).replace("name: node-00033", "name: [node"))
    whole = decode_bytes(path.read_bytes(), str(path), max_documents=None)
    docs, finds = _picture(list(iter_paths([str(path)])))
    assert whole.documents == [] and finds == _picture([whole])[1]
    assert 0 < len(docs) < 33 and [d[2] for d in docs] == list(range(len(docs)))


def test_a_list_is_split_into_pieces_of_bounded_size(tmp_path: Path, small_pieces: None) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text(_kubectl_list([_node(i) for i in range(200)]))
    pieces = list(iter_paths([str(path)]))
    assert sum(len(p.documents) for p in pieces) == 200
    assert max(len(p.documents) for p in pieces) < 20


def test_inventory_files_have_no_document_limit_but_linted_files_do(tmp_path: Path) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text(_kubectl_list([_node(i) for i in range(MAX_DOCUMENTS + 5)]))
    inventory = [d for r in iter_paths([str(path)]) for d in r.documents]
    assert len(inventory) == MAX_DOCUMENTS + 5
    linted = load_paths([str(path)])
    assert len(linted.documents) == MAX_DOCUMENTS
    assert any("too many documents" in f.message for f in linted.findings)


def test_a_large_streamed_list_has_no_limit_either(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "STREAM_ABOVE_BYTES", 0)
    path = tmp_path / "nodes.yaml"
    path.write_text(_kubectl_list([_node(i) for i in range(MAX_DOCUMENTS + 5)]))
    assert sum(len(r.documents) for r in iter_paths([str(path)])) == MAX_DOCUMENTS + 5
