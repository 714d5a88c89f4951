"""Reading a large inventory file piece by piece: ``kubectl get ... -o yaml`` of a real cluster.

Why: ``kubectl get nodes -o yaml`` (or ``resourceslices``, or ``resourceclaims -A``) of a cluster
writes *one* YAML document, a ``kind: List`` whose ``items`` are every object — 100,000 of them
and hundreds of MB for a large cluster.  Decoding it at once would hold every item's dicts (and
the text) at the same time; this reader holds one piece (~1 MB of text) at a time.

How, in two passes over the file:

1. a scan of its lines (bytes, no YAML) finds the documents (``---`` lines) and, in a document
   that is a block mapping with a column-0 ``items:`` key followed by column-0 ``- `` entries (how
   kubectl and every YAML writer lay out a List), where each item starts; the rest of such a
   document (``apiVersion``, ``kind``, ``metadata``) is kept with ``items: []`` in place;
2. the pieces are decoded: runs of ordinary documents up to :data:`PIECE_BYTES` together, and a
   List's items in runs of the same size, each run as a small List of its own.  Line, document and
   item numbers are renumbered as in the whole file (:func:`app.k8s.shift_result`).

Exactness over cleverness: a document is split only when what is left of it decodes to a
``*List`` with no other items, and a run of items is taken only when it decodes cleanly to
exactly the entries the scan counted; otherwise that document is decoded whole (today's reading,
memory and all).  A file with ``%`` directives or ``...`` document ends is decoded whole.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from ..k8s import DecodeResult, decode_bytes, decode_text, shift_result

__all__ = ["PIECE_BYTES", "stream_file"]

PIECE_BYTES = 1024 * 1024
"""Why 1 MB and not more: what a piece decodes to (dicts, models: ~10× the text) is freed once the
builder has reduced it, but the allocator keeps the arenas the snapshot's records were allocated
into among them — at 100,000 devices the RSS at ready was 349 MB with 4 MB pieces, 240 MB with
1 MB ones (``benchmarks/RESULTS.md``); smaller pieces gain nothing more and cost per-piece work."""
_MAX_HEAD_BYTES = 1 << 20  # what a List keeps besides its items: a few lines
_DOCUMENT_START = re.compile(rb"---(?:[ \t\r\n]|$)")
_ITEMS_KEY = re.compile(rb"items:[ \t]*\r?\n?")
_TRIVIA = re.compile(rb"[ \t\r]*(?:#.*)?\n?")


@dataclass
class _Doc:
    """One document of the file as the scan saw it (byte offsets; lines 0-based)."""

    start: int
    line: int
    end: int = 0
    head: bytearray | None = field(default_factory=bytearray)
    """The document without its items (``items: []`` in their place); ``None`` once it cannot be split."""
    item_starts: array[int] = field(default_factory=lambda: array("q"))
    item_lines: array[int] = field(default_factory=lambda: array("q"))
    items_end: int = 0
    trivia_only: bool = True

    @property
    def split(self) -> bool:
        return self.head is not None and len(self.item_starts) > 0


_NEXT_COLUMN_0 = re.compile(rb"\n[^ \t\r\n#]")
"""The end of a line followed by one that starts in column 0 with something other than blank or
comment: inside a List's items only such lines (the next item, the List's next key, ``---``)
change what the scan knows, so it jumps from one to the next (see :func:`_scan`)."""
_BLOCK = 1 << 20


def _scan(path: str) -> list[_Doc] | None:
    """The documents of ``path`` and the items of its Lists, or ``None`` to decode it whole.

    Read in blocks; every line is looked at, except inside the items of a List once its first
    item is seen, where only column-0 lines can matter: the lines between are counted, not
    visited (a 53 MB List is ~2.5 million lines, of which ~12,000 start an item)."""
    docs: list[_Doc] = []
    doc = _Doc(0, 0)
    state = 0  # 0: before items:, 1: in the items, 2: after them
    number = 0  # the line's number (0-based)
    buf = b""
    base = 0  # file offset of buf[0]
    pos = 0  # where the current line starts in buf
    searched = 0  # buf holds no newline before this (while a long line is being read)
    with open(path, "rb") as fh:
        while True:
            nl = buf.find(b"\n", max(pos, searched))
            if nl < 0:
                # a line longer than what is read (minified JSON is one line): read as much again
                # as is held and search only the new bytes, so a long line costs linear time
                more = fh.read(max(_BLOCK, len(buf) - pos))
                if more:
                    searched = len(buf) - pos
                    buf, base, pos = buf[pos:] + more, base + pos, 0
                    continue
                if pos >= len(buf):
                    break
                end = len(buf)
            else:
                end = nl + 1
            line = buf[pos:end]
            offset = base + pos
            first = line[:1]
            if first == b"-" and _DOCUMENT_START.match(line):
                if docs or not doc.trivia_only:  # comments before the first --- are not a document
                    if state == 1:
                        doc.items_end = offset
                    doc.end = offset
                    docs.append(doc)
                doc = _Doc(offset, number)
                state = 0
            else:
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
            pos = end
            number += 1
            if state == 1 and doc.item_starts and nl >= 0:
                # blank, comment and indented lines of the items change nothing: jump to the
                # next column-0 line (or to the last whole line of the block read so far)
                found = _NEXT_COLUMN_0.search(buf, pos - 1)
                target = found.start() + 1 if found is not None else buf.rfind(b"\n") + 1
                if target > pos:
                    number += buf.count(b"\n", pos, target)
                    pos = target
    if state == 1:
        doc.items_end = base + pos
    doc.end = base + pos
    docs.append(doc)
    return docs


def stream_file(path: str) -> Iterator[DecodeResult]:
    """The documents of the inventory file ``path`` (a List split into its items), piece by piece."""
    docs = _scan(path)
    with open(path, "rb") as fh:
        if docs is None:
            yield _decode(fh.read(), path, first=True)
            return
        pending: list[tuple[int, _Doc]] = []
        for index, doc in enumerate(docs):
            if doc.split and _is_empty_list(bytes(doc.head or b""), path):
                yield from _flush(fh, path, pending)
                pending = []
                yield from _items(fh, path, index, doc)
                continue
            pending.append((index, doc))
            if pending[-1][1].end - pending[0][1].start >= PIECE_BYTES:
                yield from _flush(fh, path, pending)
                pending = []
        yield from _flush(fh, path, pending)


def _decode(data: bytes, path: str, *, first: bool) -> DecodeResult:
    if first:
        return decode_bytes(data, path, max_documents=None)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return decode_bytes(data, path, max_documents=None)  # its finding, at this piece's byte
    return decode_text(text, path, max_documents=None)


def _flush(fh: BinaryIO, path: str, pending: list[tuple[int, _Doc]]) -> Iterator[DecodeResult]:
    """The ordinary documents ``pending`` (consecutive), decoded together and renumbered."""
    if not pending:
        return
    index, first = pending[0]
    data = _read(fh, first.start, pending[-1][1].end)
    result = _decode(data, path, first=first.start == 0)
    yield shift_result(result, lines=first.line, index=index)


def _read(fh: BinaryIO, start: int, end: int) -> bytes:
    fh.seek(start)
    return fh.read(end - start)


def _is_empty_list(head: bytes, path: str) -> bool:
    """Whether the document without its items is a ``*List`` with ``items: []`` and nothing else odd."""
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError:
        return False
    result = decode_text(text, path, max_documents=None)
    if result.findings or len(result.documents) != 0:
        return False  # a List with no items decodes to no documents at all
    return _list_kind(text)


_KIND_LIST = re.compile(r"^kind:[ \t]*['\"]?[A-Za-z0-9]*List['\"]?[ \t]*(?:#.*)?$", re.MULTILINE)


def _list_kind(text: str) -> bool:
    return _KIND_LIST.search(text) is not None


def _items(fh: BinaryIO, path: str, index: int, doc: _Doc) -> Iterator[DecodeResult]:
    """A List's items in runs of about :data:`PIECE_BYTES`, each decoded as a List of its own."""
    starts, lines = doc.item_starts, doc.item_lines
    count = len(starts)
    k = 0
    while k < count:
        m = k + 1
        while m < count and starts[m] - starts[k] < PIECE_BYTES:
            m += 1
        end = starts[m] if m < count else doc.items_end
        data = _read(fh, starts[k], end)
        piece = _run(data, path, m - k)
        if piece is None:  # not what the scan promised: the whole document, from this item on
            whole = _decode(_read(fh, doc.start, doc.end), path, first=doc.start == 0)
            whole = shift_result(whole, lines=doc.line, index=index)
            whole.documents = [d for d in whole.documents if d.item is None or d.item >= k]
            yield whole
            return
        yield shift_result(piece, lines=lines[k] - 1, index=index, item=k)
        k = m


def _run(data: bytes, path: str, expected: int) -> DecodeResult | None:
    """``expected`` sequence entries as a List (line 2 of the text is the first entry), or ``None``."""
    try:
        body = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not body.endswith("\n"):
        body += "\n"
    result = decode_text("items:\n" + body + "kind: List\n", path, max_documents=None)
    if result.findings or len(result.documents) != expected:
        return None
    if any(d.item != i for i, d in enumerate(result.documents)):
        return None
    return result
