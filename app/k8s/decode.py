"""Decoding manifests (YAML or JSON, many documents, ``kind: List``) while keeping positions.

Why keep positions: a finding on ``spec.devices.requests[0].exactly.capacity.requests[memory]``
is only useful in CI when it points at the line to fix.  Every mapping value and list item
remembers the ``line:column`` of its node (1-based), and every mapping key its own position
(used for unknown-field findings, which are about the key).

Inputs that are not YAML/JSON become ``DecodeError`` findings with file and line — never a
traceback.  This module does no I/O: reading files, folders and standard input is
:mod:`app.inventory.files`'s job.
Documents of kinds draguard does not check (Deployments, ConfigMaps…) are kept with
``relevant = False`` so callers can skip them silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from app.k8s.finding import Finding, Reason, Severity

__all__ = [
    "CHECKED_KINDS",
    "INVENTORY_KINDS",
    "MAX_DOCUMENTS",
    "DecodeResult",
    "Document",
    "Position",
    "decode_bytes",
    "decode_text",
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

CHECKED_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceClass"})
INVENTORY_KINDS = frozenset({"DeviceClass", "ResourceSlice", "Node", "Namespace"})
MAX_DOCUMENTS = 10_000

Position = tuple[int, int]
PathKey = tuple[str | int, ...]


@dataclass
class Document:
    """One decoded object and where each of its fields stands in the source."""

    obj: Any
    source: str = ""
    index: int = 0
    line: int = 1
    column: int = 1
    positions: dict[PathKey, Position] = field(default_factory=dict)
    key_positions: dict[PathKey, Position] = field(default_factory=dict)

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
        while path:
            if path in table:
                return table[path]
            if key and path in self.positions:
                return self.positions[path]
            path = path[:-1]
        return (self.line, self.column)


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


def _rebase(table: dict[PathKey, Position], prefix: PathKey) -> dict[PathKey, Position]:
    n = len(prefix)
    return {k[n:]: v for k, v in table.items() if k[:n] == prefix}


def _split_list(doc: Document) -> list[Document]:
    """Expand ``kind: List`` (and ``*List`` kinds with ``items``) into one document per item."""
    obj = doc.obj
    if not (isinstance(obj, dict) and isinstance(obj.get("kind"), str) and obj["kind"].endswith("List")):
        return [doc]
    items = obj.get("items")
    if not isinstance(items, list):
        return [doc]
    out: list[Document] = []
    for i, item in enumerate(items):
        prefix: PathKey = ("items", i)
        line, col = doc.positions.get(prefix, (doc.line, doc.column))
        out.append(
            Document(
                obj=item,
                source=doc.source,
                index=doc.index,
                line=line,
                column=col,
                positions=_rebase(doc.positions, prefix),
                key_positions=_rebase(doc.key_positions, prefix),
            )
        )
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


def decode_text(text: str, source: str = "") -> DecodeResult:
    """Decode every document of a YAML (or JSON, a subset) text."""
    result = DecodeResult()
    if "\x00" in text:
        result.findings.append(_decode_error(source, "input contains a NUL byte: not a YAML or JSON text", 1, 1))
        return result
    loader = _Loader(text)
    index = 0
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:  # pragma: no cover - check_node said there is one
                break
            value = loader.construct_document(node)
            if value is None:
                index += 1
                continue
            positions: dict[PathKey, Position] = {}
            key_positions: dict[PathKey, Position] = {}
            duplicates: list[tuple[PathKey, Position, Position]] = []
            _record(node, (), positions, key_positions, duplicates)
            for dup_path, first, (line, column) in duplicates:
                key = ".".join(str(p) for p in dup_path)
                result.findings.append(
                    _decode_error(
                        source,
                        f'duplicate key "{key}" (first at line {first[0]}): Kubernetes refuses documents '
                        "with repeated fields; YAML readers silently keep the last one",
                        line,
                        column,
                    )
                )
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
            for item in _split_list(doc):
                if len(result.documents) >= MAX_DOCUMENTS:
                    result.findings.append(
                        _decode_error(source, f"too many documents: at most {MAX_DOCUMENTS} are read per input")
                    )
                    return result
                result.documents.append(item)
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
    return result


def decode_bytes(data: bytes, source: str = "") -> DecodeResult:
    """Decode raw bytes (UTF-8, a BOM allowed); undecodable bytes are a DecodeError finding."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return DecodeResult(findings=[_decode_error(source, f"not UTF-8 text: {exc.reason} at byte {exc.start}")])
    return decode_text(text, source)
