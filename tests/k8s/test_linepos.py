"""Positions read off the lines (app/k8s/linepos.py) are the event reader's, or no answer at all."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
import yaml
from draguard.k8s.decode import _positions_only, decode_text
from draguard.k8s.fastyaml import DOCUMENT_START, LEADING_TRIVIA, fast_yaml_documents
from draguard.k8s.linepos import block_positions

ROOT = Path(__file__).resolve().parents[2]


def _spans(text: str) -> list[str]:
    starts = [m.start() for m in DOCUMENT_START.finditer(text)]
    body = LEADING_TRIVIA.match(text).end()  # type: ignore[union-attr]
    if not starts or starts[0] != body:
        starts.insert(0, 0)
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]


def _texts() -> list[str]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from workload import CLAIMS, make_inventory

    texts = [p.read_text() for p in sorted((ROOT / "examples").rglob("*.yaml"))]
    texts += [p.read_text() for p in sorted((ROOT / "tests").rglob("*.yaml"))]
    objects = make_inventory(60, seed=3) + CLAIMS
    texts.append(yaml.safe_dump_all(objects, sort_keys=False))
    texts.append(yaml.safe_dump_all(objects, sort_keys=False, indent=4))
    texts.append(yaml.safe_dump_all(objects, default_flow_style=None))
    return texts


_EDITS = [" #c", ":", " x", " - y", "  ", " 'q'", ' "a b"', " []", " {}", " [a]", " |", " &a", " *a", " 'it''s'"]
_LINES = ["", "# c", "  # c", "---", "...", "- a", "  - b", "x:", "  y: 1", "  z", "-", "- - a"]


def _edited(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        op = rng.randrange(7)
        if op == 0:
            lines[i] = " " + lines[i]
        elif op == 1:
            lines[i] = lines[i].removeprefix(" ")
        elif op == 2:
            lines[i] += rng.choice(_EDITS)
        elif op == 3:
            lines.insert(i, rng.choice(_LINES))
        elif op == 4:
            del lines[i]
        elif op == 5:
            lines[i] = lines[i].replace(": ", ":\n" + " " * rng.randint(0, 6), 1)
        else:
            lines[i] = lines[i].replace("- ", "-   ", 1)
    return "\n".join(lines)


def test_where_the_lines_answer_they_answer_what_the_events_say() -> None:
    rng = random.Random(20261202)
    spans = [s for t in _texts() for s in _spans(t)]
    cases = spans + [_edited(rng.choice(spans), rng) for _ in range(4000)]
    answered = 0
    for span in cases:
        if fast_yaml_documents(span) is None:
            continue  # positions are only read this way for what the fast path decoded
        events = _positions_only(span, "f.yaml", 7)
        got = block_positions(span, 7)
        if got is None:
            continue
        answered += 1
        assert len(events) == 1, span
        assert (events[0]._positions, events[0]._key_positions) == got, span
        assert (events[0]._line, events[0]._column) == got[0][()]
    assert answered > 1000  # the common style is read off the lines


@pytest.mark.parametrize(
    "text",
    [
        "a: {b: 1}\n",  # flow collections
        "a: |\n  text\n",  # block scalars
        "a: one\n  two\n",  # a plain scalar over two lines
        "a: 1 # note\n",  # a comment after content
        '"a": 1\n',  # a quoted key
        "a:\nb: 1\n",  # an empty value
        "a:\n\tb: 1\n",  # tabs
        "a: &x 1\n",  # anchors
        "kind: List\nitems:\n- a: 1\n",  # Lists are split into items by the event reader
        "- a: 1\n",  # a sequence as the document
        "a: 1\r\nb: 2\r\n",  # CRLF
    ],
)
def test_anything_else_is_left_to_the_events(text: str) -> None:
    assert block_positions(text) is None


def test_a_finding_in_a_plain_document_points_at_its_line() -> None:
    text = "a: 1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  k:   v\n  list:\n  - x: 1\n    y: 2\n"
    doc = decode_text(text, "f.yaml").documents[1]
    assert doc.position_of(["data", "k"]) == (8, 8)
    assert doc.position_of(["data", "list", 0, "y"]) == (11, 8)
    assert doc.position_of(["data", "list", 0, "y"], key=True) == (11, 5)
    assert (doc.line, doc.column) == (3, 1)
