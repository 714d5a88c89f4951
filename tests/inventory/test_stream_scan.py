"""The scan of a large inventory file (``stream._scan``) jumps over the lines inside a List's
items; it must find exactly what a scan visiting every line finds — documents, heads, item
offsets and line numbers — whatever the layout and wherever the blocks it reads end."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from draguard.inventory import stream
from draguard.inventory.stream import _DOCUMENT_START, _ITEMS_KEY, _MAX_HEAD_BYTES, _TRIVIA, _Doc

PIECES = [b"- a: 1\n", b"-\n", b"  b: 2\n", b"    - x\n", b"\n", b"\r\n", b"# c\n", b"\t t\n", b"---\n", b"--- \n",
          b"items:\n", b"items: \r\n", b"kind: List\n", b"apiVersion: v1\n", b"metadata: {}\n", b"-x\n", b"... \n",
          b"%YAML 1.2\n", b"  # k\n", b"- - y\n", b"-  z\n", b"#\n", b" \n"]


def _reference_scan(path: str) -> list[_Doc] | None:
    """The scan as it was, one line at a time (the oracle)."""
    docs: list[_Doc] = []
    doc = _Doc(0, 0)
    state = 0  # 0: before items:, 1: in the items, 2: after them
    offset = 0
    with open(path, "rb") as fh:
        for number, line in enumerate(fh):
            first = line[:1]
            if first == b"-" and _DOCUMENT_START.match(line):
                if docs or not doc.trivia_only:  # comments before the first --- are not a document
                    if state == 1:
                        doc.items_end = offset
                    doc.end = offset
                    docs.append(doc)
                doc = _Doc(offset, number)
                state = 0
                offset += len(line)
                continue
            if first in (b"%", b".") and (first == b"%" or line.startswith(b"...")):
                return None  # directives and document ends: the whole-file reader knows them
            if doc.trivia_only and not _TRIVIA.fullmatch(line):
                doc.trivia_only = False
            if state == 1:
                if first == b"-" and (line[1:2] in (b" ", b"\n", b"\r")):
                    doc.item_starts.append(offset)
                    doc.item_lines.append(number)
                elif first in (b" ", b"\t", b"\n", b"\r", b"#") or not line:
                    if not doc.item_starts and first in (b" ", b"\t") and line.strip():
                        doc.head = None  # an indented sequence under items: not the layout split here
                else:
                    state = 2
                    doc.items_end = offset
            if state != 1 and doc.head is not None:
                if state == 0 and _ITEMS_KEY.fullmatch(line):
                    state = 1
                    doc.head += b"items: []\n"
                elif state == 2 and _ITEMS_KEY.fullmatch(line):
                    doc.head = None  # a second items key: leave it to the careful reader
                else:
                    doc.head += line
                    if len(doc.head) > _MAX_HEAD_BYTES:
                        doc.head = None
            offset += len(line)
    if state == 1:
        doc.items_end = offset
    doc.end = offset
    docs.append(doc)
    return docs



def _fields(docs: list[_Doc] | None) -> object:
    if docs is None:
        return None
    return [(d.start, d.line, d.end, None if d.head is None else bytes(d.head), list(d.item_starts), list(d.item_lines),
             d.items_end, d.trivia_only) for d in docs]


@pytest.mark.parametrize("seed", range(8))
def test_the_scan_finds_what_a_line_by_line_scan_finds(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    path = tmp_path / "list.yaml"
    for _ in range(150):
        data = b"".join(rng.choices(PIECES, [rng.random() for _ in PIECES], k=rng.randint(0, 40)))
        if rng.random() < 0.3:
            data = data.rstrip(b"\n")  # no newline at the end
        if rng.random() < 0.5:
            data = b"items:\n" + data
        path.write_bytes(data)
        monkeypatch.setattr(stream, "_BLOCK", rng.choice([1, 2, 5, 16, 1 << 20]))
        assert _fields(stream._scan(str(path))) == _fields(_reference_scan(str(path))), data


def test_a_kubectl_list_is_scanned_item_by_item(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    item = b"- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n\n    labels:\n      # a comment\n\n      a: b\n"
    path = tmp_path / "nodes.yaml"
    path.write_bytes(b"apiVersion: v1\nitems:\n" + item * 50 + b"kind: List\nmetadata:\n  resourceVersion: \"\"\n")
    monkeypatch.setattr(stream, "_BLOCK", 100)
    docs = stream._scan(str(path))
    assert docs is not None and len(docs) == 1
    assert list(docs[0].item_lines) == [2 + 8 * i for i in range(50)]
    assert _fields(docs) == _fields(_reference_scan(str(path)))


def test_a_line_longer_than_the_blocks_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "list.json"
    path.write_bytes(b'{"kind": "List", "items": [' + b'{"kind": "Node"}, ' * 20000 + b"{}]}\nitems:\n- a\n" + b"x" * 5000)
    monkeypatch.setattr(stream, "_BLOCK", 64)
    assert _fields(stream._scan(str(path))) == _fields(_reference_scan(str(path)))
