"""The careful decoder: PyYAML's node tree and events, every position, duplicate keys, alias limits.

Why a module of its own: :mod:`app.k8s.decode` reads almost every input on its fast path
(JSON's C scanner, yaml-rs) and finds the positions of a plain block-style document from its
lines (:mod:`app.k8s.linepos`); PyYAML is needed only for what those refuse (errors, duplicate
keys, anchors, YAML 1.1-only spellings) and for positions in other styles.  Importing PyYAML
costs ~17 ms of every ``draguard lint``, so it is imported here, and this module only when one
of those cases comes up (:func:`app.k8s.decode._decode_with_positions`,
:func:`app.k8s.decode._positions_only`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import yaml

from .decode import (
    MAX_DOCUMENTS,
    DecodeResult,
    Document,
    PathKey,
    Position,
    _add,
    _by_item,
    _decode_error,
    _drop_non_objects,
    _skipped_kind,
    _split_list,
)
from .finding import Severity

__all__ = ["decode_with_positions", "positions_only"]

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


def positions_only(text: str, source: str, line0: int = 0) -> list[Document]:
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
                return _shifted(decode_with_positions(text, source).documents, line0)
            out.extend(located)
            index += 1
    except (yaml.YAMLError, ValueError, TypeError, RecursionError):
        # what the fast reader took and libyaml refuses (its nesting limit, a scalar it reads
        # otherwise): the careful decoder's answer, as before — the documents before the error
        return _shifted(decode_with_positions(text, source).documents, line0)
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


def decode_with_positions(text: str, source: str = "", max_documents: int | None = MAX_DOCUMENTS) -> DecodeResult:
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
