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

import yaml

from .fastyaml import DOCUMENT_START, LEADING_TRIVIA, fast_yaml_documents
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
    "DecodeResult",
    "Document",
    "Position",
    "decode_bytes",
    "decode_text",
    "shift_result",
]

try:  # the C loader is ~10x faster; fall back to pure Python where libyaml is missing
    _BaseLoader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _BaseLoader = yaml.SafeLoader


class _Loader(_BaseLoader):  # type: ignore[misc]
    """Safe loader that keeps timestamps as strings, as Kubernetes' YAML→JSON step does."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}

DRA_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceClass"})
"""The kinds of ``resource.k8s.io`` draguard checks as objects of their own."""
CHECKED_KINDS = DRA_KINDS | WORKLOAD_KIND_NAMES
"""Every kind draguard checks: the DRA kinds and the kinds that carry pods (Pod, Deployment, …)."""
INVENTORY_KINDS = frozenset({"DeviceClass", "ResourceSlice", "Node", "Namespace"})
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
            starts = [m.start() for m in DOCUMENT_START.finditer(text)]
            body = LEADING_TRIVIA.match(text).end()  # type: ignore[union-attr]
            if not starts or starts[0] != body:
                starts.insert(0, 0)
            if len(starts) != self._documents:
                return None
            self._spans = [(a, b) for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
        return self._spans


@dataclass
class DecodeResult:
    documents: list[Document] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def extend(self, other: DecodeResult) -> None:
        self.documents.extend(other.documents)
        self.findings.extend(other.findings)


# ---------------------------------------------------------------------------- node walking
def _record(
    node: yaml.Node,
    path: PathKey,
    positions: dict[PathKey, Position],
    key_positions: dict[PathKey, Position],
    duplicates: list[tuple[PathKey, Position, Position]],
    depth: int = 0,
) -> None:
    """Remember the position of every value (and mapping key) below ``node``.

    A key that appears twice in one mapping is collected in ``duplicates``: YAML loaders keep
    the last value silently, but Kubernetes' strict decoding refuses the document.
    """
    positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if depth > 200:  # absurdly deep documents: positions below are not worth the recursion
        return
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            child = (*path, key_node.value)
            here = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            if child in key_positions and key_node.value != "<<":
                duplicates.append((child, key_positions[child], here))
            key_positions[child] = here
            _record(value_node, child, positions, key_positions, duplicates, depth + 1)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _record(item, (*path, i), positions, key_positions, duplicates, depth + 1)


# go-yaml's alias-expansion rule (yaml.v2/v3 decode.go, "document contains excessive aliasing"):
# more than 100 nodes decoded through aliases, more than 1,000 in all, and a share of aliased
# nodes above 99 % for small documents, falling linearly to 10 % between 400,000 and 4,000,000.
_ALIAS_RATIO_LOW = 400_000
_ALIAS_RATIO_HIGH = 4_000_000


def _allowed_alias_ratio(decoded: int) -> float:
    if decoded <= _ALIAS_RATIO_LOW:
        return 0.99
    if decoded >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


def _excessive_aliasing(root: yaml.Node) -> bool:
    """Whether expanding the aliases of ``root`` would decode too many nodes (a billion-laughs bomb).

    PyYAML's composer makes every alias the *same* node object as its anchor, so the node graph
    is a DAG whose expansion can be exponential.  The expanded size of each node is computed once
    (post-order, iteratively), so the check is linear in the distinct nodes whatever the bomb.
    """
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        key = id(node)
        if key in size:
            continue
        children = _children(node)
        if expanded or not children:
            size[key] = 1 + sum(size[id(c)] for c in children)
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in size)
    decoded = 0
    aliased = 0
    seen: set[int] = set()
    order: list[yaml.Node] = [root]
    while order:  # document order; a node met again is an alias and counts its whole expansion
        node = order.pop()
        key = id(node)
        if key in seen:
            decoded += size[key]
            aliased += size[key]
            if aliased > 100 and decoded > 1000 and aliased / decoded > _allowed_alias_ratio(decoded):
                return True
            continue
        seen.add(key)
        decoded += 1
        order.extend(reversed(_children(node)))
    return False


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


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
    """Every document of ``text`` (one the fast path read) with its positions and no object.

    What :func:`_record` records from the node tree of :func:`_decode_with_positions`, read from
    the C parser's events instead (see :class:`_Locator` for why no objects; events rather than
    nodes because composing nodes resolves every scalar in Python: 2.5x the time of this loop).
    Every document counts (empty ones and scalars too, as the careful decoder numbers them); a
    ``kind: …List`` document is split into its items as :func:`_split_list` splits the object.
    Anything the fast path never lets through (an alias), or that libyaml refuses where the fast
    reader did not (nesting deeper than libyaml's limit), is decoded the careful way.  ``line0``
    is added to every line (``text`` is a span of a larger text that starts there).
    """
    out: list[Document] = []
    loader = _Loader(text)
    index = 0
    try:
        get = loader.get_event
        while True:
            event = get()
            if isinstance(event, yaml.StreamEndEvent):
                break
            if not isinstance(event, yaml.DocumentStartEvent):
                continue
            root = get()
            located = _located_document(root, get, source, index, line0 + 1)
            if located is None:
                return _shifted(_decode_with_positions(text, source).documents, line0)
            out.extend(located)
            index += 1
    except (yaml.YAMLError, ValueError, TypeError, RecursionError):
        # what the fast reader took and libyaml refuses (its nesting limit, a scalar it reads
        # otherwise): the careful decoder's answer, as before — the documents before the error
        return _shifted(_decode_with_positions(text, source).documents, line0)
    finally:
        loader.dispose()
    return out


_MAP_START, _SEQ_START, _SCALAR = yaml.MappingStartEvent, yaml.SequenceStartEvent, yaml.ScalarEvent
_CONTAINER_END = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
_MAX_RECORDED_DEPTH = 200  # :func:`_record`'s limit: children of deeper nodes are not recorded


def _located_document(root: Any, get: Any, source: str, index: int, first: int) -> list[Document] | None:
    """The positions of one document whose first event is ``root`` (its events read with ``get``,
    up to and including its end), as :func:`_record` records them (``first``: the number of the
    text's first line); ``None`` on an alias."""
    mark = root.start_mark
    line, column = mark.line + first, mark.column + 1
    if root.__class__ is not _MAP_START and root.__class__ is not _SEQ_START:
        if not isinstance(root, _SCALAR):
            return None
        get()  # DocumentEndEvent
        return []  # a scalar or empty document: nothing in it is ever located
    positions: dict[PathKey, Position] = {(): (line, column)}
    key_positions: dict[PathKey, Position] = {}
    # A frame per open container: [is_map, path, next index | current key, expecting a key,
    # depth, skip (record nothing below: too deep, or the key or value of a non-scalar key)].
    stack: list[list[Any]] = [[root.__class__ is _MAP_START, (), 0, True, 0, False]]
    kind: str | None = None  # the root's kind and whether its items are a sequence: _split_list's test
    items_listed = False
    while stack:
        event = get()
        cls = event.__class__
        if cls in _CONTAINER_END:
            stack.pop()
            continue
        container = cls is _MAP_START or cls is _SEQ_START
        if not container and cls is not _SCALAR:
            return None  # an alias: the careful decoder expands (and limits) it
        top = stack[-1]
        if top[5]:
            if container:
                stack.append([False, (), 0, False, 0, True])
            continue
        if top[0]:
            if top[3]:  # a key
                top[3] = False
                if container:  # a complex key: _record skips it and its value
                    top[2] = _SKIP
                    stack.append([False, (), 0, False, 0, True])
                else:
                    top[2] = event.value
                    m = event.start_mark
                    key_positions[(*top[1], event.value)] = (m.line + first, m.column + 1)
                continue
            top[3] = True
            if top[2] is _SKIP:
                if container:
                    stack.append([False, (), 0, False, 0, True])
                continue
            path = (*top[1], top[2])
        else:
            path = (*top[1], top[2])
            top[2] += 1
        m = event.start_mark
        positions[path] = (m.line + first, m.column + 1)
        if len(path) == 1 and top[0]:
            if path[0] == "kind":
                kind = event.value if cls is _SCALAR else None
            elif path[0] == "items":
                items_listed = cls is _SEQ_START
        if container:
            depth = top[4] + 1
            stack.append([cls is _MAP_START, path, 0, True, depth, depth > _MAX_RECORDED_DEPTH])
    get()  # DocumentEndEvent
    # Without tags (the fast path refuses them) a scalar ending in "List" is a string, a sequence a list.
    if not (kind is not None and kind.endswith("List") and items_listed):
        return [Document(obj=None, source=source, index=index, line=line, column=column,
                         positions=positions, key_positions=key_positions)]
    by_item, keys_by_item = _by_item(positions), _by_item(key_positions)
    out: list[Document] = []
    for i in range(sum(1 for p in positions if len(p) == 2 and p[0] == "items")):
        table = by_item.get(i, {})
        item_line, item_column = table.get((), (line, column))
        out.append(Document(obj=None, source=source, index=index, line=item_line, column=item_column, item=i,
                            positions=table, key_positions=keys_by_item.get(i, {})))
    return out


_SKIP = object()


def _shifted(documents: list[Document], line0: int) -> list[Document]:
    """``documents`` of a span that starts at line ``line0 + 1`` of the whole text, renumbered."""
    if line0:
        for doc in documents:
            doc._line += line0
            doc._positions = {k: (ln + line0, col) for k, (ln, col) in doc._positions.items()}
            doc._key_positions = {k: (ln + line0, col) for k, (ln, col) in doc._key_positions.items()}
    return documents


def _decode_with_positions(text: str, source: str = "", max_documents: int | None = MAX_DOCUMENTS) -> DecodeResult:
    """The careful decoder: PyYAML nodes, every position, duplicate keys, alias limits."""
    result = DecodeResult()
    loader = _Loader(text)
    index = 0
    may_alias = "*" in text  # no alias indicator anywhere: nothing to expand
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:  # pragma: no cover - check_node said there is one
                break
            if may_alias and _excessive_aliasing(node):
                result.findings.append(
                    _decode_error(source, "document contains excessive aliasing (alias expansion refused, as "
                                  "Kubernetes' YAML decoder does)", node.start_mark.line + 1, node.start_mark.column + 1)
                )
                return result
            value = loader.construct_document(node)
            if value is None:
                index += 1
                continue
            positions: dict[PathKey, Position] = {}
            key_positions: dict[PathKey, Position] = {}
            duplicates: list[tuple[PathKey, Position, Position]] = []
            _record(node, (), positions, key_positions, duplicates)
            skipped_kind = _skipped_kind(value)
            for dup_path, first, (line, column) in duplicates:
                key = ".".join(str(p) for p in dup_path)
                finding = _decode_error(
                    source,
                    f'duplicate key "{key}" (first at line {first[0]}): Kubernetes refuses documents '
                    "with repeated fields; YAML readers silently keep the last one",
                    line,
                    column,
                )
                if skipped_kind is not None:  # not draguard's business: never fail the run for it
                    finding = replace(
                        finding,
                        severity=Severity.WARNING,
                        message=f"{finding.message} (in a {skipped_kind}, which draguard does not check)",
                    )
                result.findings.append(finding)
            doc = Document(
                obj=value,
                source=source,
                index=index,
                line=node.start_mark.line + 1,
                column=node.start_mark.column + 1,
                positions=positions,
                key_positions=key_positions,
            )
            index += 1
            if not _add(result, _split_list(doc), source, max_documents):
                return result
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        column = mark.column + 1 if mark else 0
        problem = exc.problem or exc.context or "invalid YAML"
        context = f" ({exc.context})" if exc.context and exc.problem else ""
        result.findings.append(_decode_error(source, f"not valid YAML or JSON: {problem}{context}", line, column))
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        result.findings.append(_decode_error(source, f"not valid YAML or JSON: {exc}", 1, 1))
    finally:
        loader.dispose()
    _drop_non_objects(result, source)
    return result


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
