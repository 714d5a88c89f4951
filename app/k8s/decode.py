"""Decoding manifests (YAML or JSON, many documents, ``kind: List``) while keeping positions.

Why keep positions: a finding on ``spec.devices.requests[0].exactly.capacity.requests[memory]``
is only useful in CI when it points at the line to fix.  Every mapping value and list item
remembers the ``line:column`` of its node (1-based), and every mapping key its own position
(used for unknown-field findings, which are about the key).

Inputs that are not YAML/JSON become ``DecodeError`` findings with file and line — never a
traceback.  This module does no I/O: reading files, folders and standard input is
:mod:`app.inventory.files`'s job.
Documents of kinds draguard does not check (ConfigMaps, Services…) are kept with
``relevant = False`` so callers can skip them silently.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .fastyaml import LEADING_TRIVIA, document_starts, fast_yaml_documents
from .finding import Finding, Reason, Severity
from .jsonparse import DuplicateKeyError, JsonError, has_surrogates, loads_json
from .linepos import block_positions
from .templates import template_finding
from .workloads import WORKLOAD_KIND_NAMES, mentions_dra

__all__ = [
    "CHECKED_KINDS",
    "DRA_KINDS",
    "INVENTORY_KINDS",
    "MAX_DOCUMENTS",
    "NOT_CHECKED_KINDS",
    "DecodeResult",
    "Document",
    "Position",
    "decode_bytes",
    "decode_text",
    "shift_result",
]

DRA_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceClass", "DeviceTaintRule"})
"""The kinds of ``resource.k8s.io`` draguard checks as objects of their own (DeviceTaintRule:
v1alpha3/v1beta2 before 1.37, v1 from 1.37; its taints join the inventory)."""
NOT_CHECKED_KINDS = frozenset({"ResourcePoolStatusRequest", "Workload", "PodGroup"})
"""Kinds draguard recognises but does not check in depth: ``resource.k8s.io/v1alpha3``
ResourcePoolStatusRequest (only its name is validated) and ``scheduling.k8s.io`` Workload and
PodGroup (v1alpha1 in 1.35, v1alpha2 in 1.36, v1beta1 from 1.37) where the target does not serve
them (``GenericWorkload`` off): where it does, a lint run reads them for gangs and PodGroup claims
(:mod:`.podgroup`; the pipeline checks them there, not here).
Never an error about the kind: reported as not checked (skipped) unless a cheap rule fails."""
CHECKED_KINDS = DRA_KINDS | WORKLOAD_KIND_NAMES
"""Every kind draguard checks: the DRA kinds and the kinds that carry pods (Pod, Deployment, …)."""
INVENTORY_KINDS = frozenset({"DeviceClass", "ResourceSlice", "DeviceTaintRule", "Node", "Namespace"})
MAX_DOCUMENTS = 10_000

Position = tuple[int, int]
PathKey = tuple[str | int, ...]


class Document:
    """One decoded object and where each of its fields stands in the source.

    Positions cost as much as decoding itself, and most documents (a 10,000-device inventory)
    never get a finding, so documents decoded on the fast path carry a :class:`_Locator` instead:
    ``line``, ``column`` and the position tables are computed from the source text the first
    time anything asks for them, once per source.
    """

    __slots__ = ("_column", "_key_positions", "_line", "_locator", "_positions", "index", "item", "obj", "source")

    def __init__(
        self,
        obj: Any,
        source: str = "",
        index: int = 0,
        line: int = 1,
        column: int = 1,
        positions: dict[PathKey, Position] | None = None,
        key_positions: dict[PathKey, Position] | None = None,
        *,
        item: int | None = None,
        locator: _Locator | None = None,
    ) -> None:
        self.obj = obj
        self.source = source
        self.index = index
        self.item = item
        """Position in the ``items`` of the ``kind: List`` this document came from, if any."""
        self._line = line
        self._column = column
        self._positions = positions if positions is not None else {}
        self._key_positions = key_positions if key_positions is not None else {}
        self._locator = locator

    def __repr__(self) -> str:
        return f"Document(kind={self.kind!r}, name={self.name!r}, source={self.source!r}, index={self.index})"

    def _locate(self) -> None:
        locator, self._locator = self._locator, None
        if locator is None:
            return
        found = locator.find(self.index, self.item)
        if found is not None:
            self._line, self._column = found.line, found.column
            self._positions, self._key_positions = found.positions, found.key_positions

    @property
    def line(self) -> int:
        if self._locator is not None:
            self._locate()
        return self._line

    @property
    def column(self) -> int:
        if self._locator is not None:
            self._locate()
        return self._column

    @property
    def positions(self) -> dict[PathKey, Position]:
        if self._locator is not None:
            self._locate()
        return self._positions

    @property
    def key_positions(self) -> dict[PathKey, Position]:
        if self._locator is not None:
            self._locate()
        return self._key_positions

    def _meta(self, key: str) -> str:
        if not isinstance(self.obj, dict):
            return ""
        meta = self.obj.get("metadata")
        value = meta.get(key) if isinstance(meta, dict) else None
        return value if isinstance(value, str) else ""

    @property
    def kind(self) -> str:
        value = self.obj.get("kind") if isinstance(self.obj, dict) else None
        return value if isinstance(value, str) else ""

    @property
    def api_version(self) -> str:
        value = self.obj.get("apiVersion") if isinstance(self.obj, dict) else None
        return value if isinstance(value, str) else ""

    @property
    def name(self) -> str:
        return self._meta("name") or self._meta("generateName")

    @property
    def namespace(self) -> str:
        return self._meta("namespace")

    @property
    def relevant(self) -> bool:
        """Whether draguard checks this document or reads it as inventory."""
        return self.kind in CHECKED_KINDS or self.kind in INVENTORY_KINDS

    def position_of(self, parts: Sequence[str | int], *, key: bool = False) -> Position:
        """The closest known position of a field path (falls back to its nearest parent)."""
        path = tuple(parts)
        table = self.key_positions if key else self.positions
        positions = self.positions
        while path:
            if path in table:
                return table[path]
            if key and path in positions:
                return positions[path]
            path = path[:-1]
        return (self.line, self.column)


class _Locator:
    """Positions of the documents of one source, computed by the position-keeping decoder on demand.

    Only the document asked about is read again (its span of the text, found from the ``---``
    lines), so a finding in one document of a 10,000-document file costs one document's
    careful reading, not the file's.  When the spans cannot be told apart with certainty the
    whole text is read once.

    Why only the node tree, not the objects: the documents already hold them (the fast path
    built them; its guard — no anchors, aliases, tags, duplicate keys or reader-dependent
    scalars — makes them what the careful decoder would build), so the locator reads the C
    parser's events and records their marks (:func:`_positions_only`), skipping the composer's
    scalar resolution and the constructor (both Python): locating a finding costs 0.4x what
    decoding the document again did.  The located documents carry positions only (``obj`` is None).
    """

    def __init__(self, text: str, source: str, documents: int) -> None:
        self._text = text
        self._source = source
        self._documents = documents
        self._spans: list[tuple[int, int]] | None = None
        self._done: set[int] = set()
        self._whole = False
        self._found: dict[tuple[int, int | None], Document] = {}
        self._lock = threading.Lock()

    def find(self, index: int, item: int | None) -> Document | None:
        with self._lock:
            if not self._whole and index not in self._done:
                self._locate(index)
        return self._found.get((index, item))

    def _locate(self, index: int) -> None:
        spans = self._document_spans()
        if spans is None or index >= len(spans):
            self._whole = True
            for doc in _positions_only(self._text, self._source):
                self._found[(doc.index, doc.item)] = doc
            return
        start, end = spans[index]
        line0 = self._text.count("\n", 0, start)
        span = self._text[start:end]
        tables = block_positions(span, line0)
        if tables is not None:  # plain block style: read off the lines (see app/k8s/linepos.py)
            line, column = tables[0][()]
            self._found[(index, None)] = Document(obj=None, source=self._source, index=index, line=line,
                                                  column=column, positions=tables[0], key_positions=tables[1])
            self._done.add(index)
            return
        for doc in _positions_only(span, self._source, line0):
            doc.index = index
            self._found[(index, doc.item)] = doc
        self._done.add(index)

    def _document_spans(self) -> list[tuple[int, int]] | None:
        if self._spans is None:
            text = self._text
            starts = document_starts(text)
            body = LEADING_TRIVIA.match(text).end()  # type: ignore[union-attr]
            if not starts or starts[0] != body:
                starts.insert(0, 0)
            if len(starts) != self._documents:
                return None
            self._spans = [(a, b) for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
        return self._spans


@dataclass
class DecodeResult:
    """The documents of one input and the findings about the input itself (decode errors, limits)."""

    documents: list[Document] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def extend(self, other: DecodeResult) -> None:
        self.documents.extend(other.documents)
        self.findings.extend(other.findings)


def _split_list(doc: Document) -> list[Document]:
    """Expand ``kind: List`` (and ``*List`` kinds with ``items``) into one document per item.

    One pass over the position tables, so a List of 4,000 items costs what 4,000 documents cost.
    """
    obj = doc.obj
    if not (isinstance(obj, dict) and isinstance(obj.get("kind"), str) and obj["kind"].endswith("List")):
        return [doc]
    items = obj.get("items")
    if not isinstance(items, list):
        return [doc]
    if doc._locator is not None or not doc._positions:
        return [Document(obj=item, source=doc.source, index=doc.index, item=i, locator=doc._locator)
                for i, item in enumerate(items)]
    positions = _by_item(doc._positions)
    key_positions = _by_item(doc._key_positions)
    out: list[Document] = []
    for i, item in enumerate(items):
        table = positions.get(i, {})
        line, col = table.get((), (doc.line, doc.column))
        out.append(
            Document(obj=item, source=doc.source, index=doc.index, line=line, column=col, item=i,
                     positions=table, key_positions=key_positions.get(i, {}))
        )
    return out


def _by_item(table: dict[PathKey, Position]) -> dict[int, dict[PathKey, Position]]:
    out: dict[int, dict[PathKey, Position]] = {}
    for path, where in table.items():
        if len(path) >= 2 and path[0] == "items" and isinstance(path[1], int):
            out.setdefault(path[1], {})[path[2:]] = where
    return out


def _decode_error(source: str, message: str, line: int = 0, column: int = 0) -> Finding:
    return Finding(
        severity=Severity.ERROR,
        reason=Reason.DECODE_ERROR,
        message=message,
        file=source,
        line=line,
        column=column,
    )


def decode_text(text: str, source: str = "", *, max_documents: int | None = MAX_DOCUMENTS) -> DecodeResult:
    """Decode every document of a YAML (or JSON) text.

    Fast path first (JSON through the C scanner, YAML through yaml-rs when the text provably
    means the same in both readers, see :mod:`app.k8s.fastyaml`), positions on demand; anything
    the fast path does not take — errors, duplicate keys, anchors, YAML 1.1-only spellings — goes
    through the position-keeping PyYAML decoder, whose messages and positions are the reference.

    ``max_documents`` bounds what one input may hold (a hostile body at ``/lint``); the operator's
    own inventory files are read with ``None`` (no limit, :mod:`app.inventory.files`).
    """
    if "\x00" in text:
        return DecodeResult(findings=[_decode_error(source, "input contains a NUL byte: not a YAML or JSON text", 1, 1)])
    if has_surrogates(text):
        return DecodeResult(findings=[_decode_error(source, "input contains a lone surrogate: not UTF-8 text", 1, 1)])
    result = _decode_fast(text, source, max_documents)
    if result is None:
        result = _decode_with_positions(text, source, max_documents)
    if "{{" in text:
        template = template_finding(text, source, result.findings, (d.obj for d in result.documents))
        if template is not None:  # nothing in an unrendered template is what will be applied
            return DecodeResult(findings=[template])
    return result


def _decode_fast(text: str, source: str, max_documents: int | None = MAX_DOCUMENTS) -> DecodeResult | None:
    """Values without positions, or ``None`` when the careful decoder must answer."""
    values: list[Any] | None
    try:
        values = _fast_json(text)
    except JsonError as exc:
        if isinstance(exc, DuplicateKeyError) or exc.line == 0:
            return None  # positions of both keys come from the careful decoder
        if "nesting depth" in exc.message:
            return DecodeResult(findings=[_decode_error(source, f"not valid JSON: {exc.message}", exc.line, exc.column)])
        return None
    if values is None:
        values = fast_yaml_documents(text)
        if values is None:
            return None
    locator = _Locator(text, source, len(values))
    result = DecodeResult()
    for index, value in enumerate(values):
        if value is None:
            continue
        if not _add(result, _split_list(Document(obj=value, source=source, index=index, locator=locator)), source,
                    max_documents):
            break
    _drop_non_objects(result, source)
    return result


def _fast_json(text: str) -> list[Any] | None:
    """One JSON document (the text starts with ``{`` or ``[``), or ``None`` when not JSON."""
    stripped = text.lstrip(" \t\r\n\ufeff")
    if not stripped or stripped[0] not in "{[":
        return None
    try:
        return [loads_json(text, reject_duplicates=True)]
    except JsonError as exc:
        if "nesting depth" in exc.message or isinstance(exc, DuplicateKeyError):
            raise
        return None  # YAML flow style, several JSON documents… the YAML reader decides


def _add(result: DecodeResult, docs: list[Document], source: str, max_documents: int | None = MAX_DOCUMENTS) -> bool:
    if max_documents is None:
        result.documents.extend(docs)
        return True
    for item in docs:
        if len(result.documents) >= max_documents:
            result.findings.append(
                _decode_error(source, f"too many documents: at most {max_documents} are read per input")
            )
            return False
        result.documents.append(item)
    return True


def _drop_non_objects(result: DecodeResult, source: str) -> None:
    for doc in result.documents:
        if not isinstance(doc.obj, dict):
            result.findings.append(
                _decode_error(
                    source,
                    f"document {doc.index + 1} is a {type(doc.obj).__name__}, not a Kubernetes object",
                    doc.line,
                    doc.column,
                )
            )
    result.documents = [d for d in result.documents if isinstance(d.obj, dict)]


def _skipped_kind(value: Any) -> str | None:
    """The kind of a document draguard skips (a DaemonSet…), or None when it may matter."""
    kind = value.get("kind") if isinstance(value, dict) else None
    if not isinstance(kind, str) or not kind or kind.endswith("List"):
        return None
    if kind in WORKLOAD_KIND_NAMES:  # a workload is draguard's business only when its pods use DRA
        return None if mentions_dra(value) else kind
    return None if kind in CHECKED_KINDS or kind in INVENTORY_KINDS else kind


def _positions_only(text: str, source: str, line0: int = 0) -> list[Document]:
    """The positions of every document of ``text``, read by the careful decoder's events
    (:func:`app.k8s.careful.positions_only`; PyYAML is imported on the first call)."""
    from .careful import positions_only

    return positions_only(text, source, line0)


def _decode_with_positions(text: str, source: str = "", max_documents: int | None = MAX_DOCUMENTS) -> DecodeResult:
    """The careful decoder (:func:`app.k8s.careful.decode_with_positions`; PyYAML is imported on the first call)."""
    from .careful import decode_with_positions

    return decode_with_positions(text, source, max_documents)



def decode_bytes(data: bytes, source: str = "", *, max_documents: int | None = MAX_DOCUMENTS) -> DecodeResult:
    """Decode raw bytes (UTF-8, a BOM allowed); undecodable bytes are a DecodeError finding."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return DecodeResult(findings=[_decode_error(source, f"not UTF-8 text: {exc.reason} at byte {exc.start}")])
    return decode_text(text, source, max_documents=max_documents)


class _ShiftedLocator(_Locator):
    """The positions of a piece of a larger text, as positions in the larger text.

    A streamed inventory file (:mod:`app.inventory.files`) is decoded piece by piece; each piece
    numbers its lines, documents and List items from the start of the piece.  This wraps the
    piece's locator and adds where the piece starts.
    """

    def __init__(self, inner: _Locator, lines: int, index: int, item: int) -> None:
        self._inner = inner
        self._lines = lines
        self._index = index
        self._item = item
        self._lock = threading.Lock()

    def find(self, index: int, item: int | None) -> Document | None:
        found = self._inner.find(index - self._index, None if item is None else item - self._item)
        if found is None:
            return None
        out = Document(obj=found.obj, source=found.source, index=index, item=item)
        _shift_positions(out, found, self._lines)
        return out


def _shift_positions(doc: Document, found: Document, lines: int) -> None:
    doc._line, doc._column = found._line + lines, found._column
    doc._positions = {k: (ln + lines, col) for k, (ln, col) in found._positions.items()}
    doc._key_positions = {k: (ln + lines, col) for k, (ln, col) in found._key_positions.items()}


def shift_result(result: DecodeResult, *, lines: int, index: int, item: int = 0) -> DecodeResult:
    """``result`` of decoding a piece of a text, renumbered as part of the whole text: ``lines``
    added to every line, ``index`` to every document number, ``item`` to every List item number.
    Positions of documents decoded on the fast path stay lazy."""
    wrapped: dict[int, _ShiftedLocator] = {}
    for doc in result.documents:
        new_index = doc.index + index
        new_item = None if doc.item is None else doc.item + item
        if doc._locator is not None:
            inner = doc._locator
            if id(inner) not in wrapped:
                wrapped[id(inner)] = _ShiftedLocator(inner, lines, index, item)
            doc._locator = wrapped[id(inner)]
        else:
            _shift_positions(doc, doc, lines)
        doc.index, doc.item = new_index, new_item
    result.findings = [replace(f, line=f.line + lines) if f.line else f for f in result.findings]
    return result
