"""Reading manifests from files, folders and standard input — the only file I/O of the pipeline.

Why here and not in ``k8s/``: the vocabulary layer turns text into documents and never touches
the file system, so it can be used (and fuzzed) on bytes from anywhere.  Everything that opens a
file, walks a folder or reads ``-`` lives in this module; both doors that read paths — ``draguard
lint`` for the linted manifests and every file inventory (:class:`~app.inventory.sources.FileInventory`)
— go through :func:`load_paths`, so a folder is walked the same way wherever it is given.

A path that does not exist or cannot be opened raises :class:`InputError` (a usage problem: the
CLI exits 2 naming it); a file that opens but is too large or not YAML/JSON is a ``DecodeError``
finding, like any other bad document.

Two readers: :func:`load_paths` keeps the limits of an input draguard is asked to lint (at most
``MAX_DOCUMENTS`` documents and :data:`MAX_FILE_BYTES` per file, as ``/lint`` has for bodies);
:func:`iter_paths` reads the operator's own inventory files — a ``kubectl get nodes -o yaml`` of a
real cluster is one ``kind: List`` of 100,000 items and hundreds of MB — with no document or size
limit and in bounded memory: a file larger than :data:`STREAM_ABOVE_BYTES` is decoded piece by
piece (:mod:`app.inventory.stream`), each piece freed once the caller has taken what it needs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence

from ..k8s import (
    MAX_DOCUMENTS,
    DecodeResult,
    DraguardError,
    Finding,
    Reason,
    Severity,
    WorkloadKind,
    WorkloadKindsError,
    decode_bytes,
    decode_text,
    parse_workload_kinds,
)
from .stream import stream_file

__all__ = [
    "MANIFEST_SUFFIXES",
    "MAX_FILE_BYTES",
    "STDIN_NAME",
    "STREAM_ABOVE_BYTES",
    "InputError",
    "iter_paths",
    "load_paths",
    "load_workload_kinds",
    "manifest_files",
]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
MAX_FILE_BYTES = 32 * 1024 * 1024
STREAM_ABOVE_BYTES = 4 * 1024 * 1024
"""Inventory files larger than this are decoded piece by piece (smaller ones at once, as lint does):
decoding 16 MB at once left ~100 MB of freed, unreturned memory behind the records built from it."""
STDIN_NAME = "<stdin>"


class InputError(DraguardError):
    """A path that cannot be read at all (missing or unreadable; an empty folder is fine)."""


def load_paths(paths: Sequence[str], *, stdin_text: str | None = None) -> DecodeResult:
    """Decode files, folders (walked recursively, hidden folders skipped) and ``-`` (stdin).

    Raises :class:`InputError` naming the first path that does not exist or cannot be read.
    """
    result = DecodeResult()
    for part in _iter(paths, stdin_text, inventory=False):
        result.extend(part)
    return result


def iter_paths(paths: Sequence[str], *, stdin_text: str | None = None) -> Iterator[DecodeResult]:
    """The documents of inventory files, folders and ``-``, in :func:`load_paths`' order, one
    file (or one piece of a large file) at a time; no limit on documents or file size.

    Why: a 100k-device inventory is ~50 MB of YAML and several hundred MB of decoded dicts; a
    reader that keeps only what it derives from each piece lets the dicts of one piece be freed
    before the next is read.  Raises :class:`InputError` when it reaches a path that cannot be read.
    """
    return _iter(paths, stdin_text, inventory=True)


def _iter(paths: Sequence[str], stdin_text: str | None, *, inventory: bool) -> Iterator[DecodeResult]:
    limit = None if inventory else MAX_DOCUMENTS
    for path in paths:
        if path == "-":
            text = stdin_text if stdin_text is not None else sys.stdin.read()
            yield decode_text(text, STDIN_NAME, max_documents=limit)
            continue
        if os.path.isdir(path):
            for file in manifest_files(path):
                yield from _read_file(file, inventory)
            continue
        if not os.path.exists(path):
            raise InputError(f"{path}: no such file or directory")
        yield from _read_file(path, inventory)


def _read_file(path: str, inventory: bool) -> Iterator[DecodeResult]:
    if not inventory:
        yield _load_file(path)
        return
    try:
        size = os.path.getsize(path)
        if size <= STREAM_ABOVE_BYTES:
            with open(path, "rb") as fh:
                data = fh.read()
            yield decode_bytes(data, path, max_documents=None)
            return
        yield from stream_file(path)
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from exc


def manifest_files(path: str) -> Iterator[str]:
    """The files :func:`iter_paths` reads for one path (other than ``-``), in its order: the
    manifests of a folder, or the path itself."""
    if os.path.isdir(path):
        yield from _walk(path)
    else:
        yield path


def _walk(path: str) -> Iterator[str]:
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(MANIFEST_SUFFIXES):
                yield os.path.join(root, name)


def _load_file(path: str) -> DecodeResult:
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            too_big = Finding(
                severity=Severity.ERROR,
                reason=Reason.DECODE_ERROR,
                message=f"file is {size} bytes; at most {MAX_FILE_BYTES} are read",
                file=path,
            )
            return DecodeResult(findings=[too_big])
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from exc
    return decode_bytes(data, path)


def load_workload_kinds(paths: Sequence[str]) -> tuple[WorkloadKind, ...]:
    """The operator's workload-kind rows (``--workload-kinds FILE``, README "Workloads").

    Raises :class:`InputError` with the file and the reason when a file cannot be read or does
    not describe kinds (a usage problem: the CLI exits 2 naming it).
    """
    rows: list[WorkloadKind] = []
    for path in paths:
        decoded = load_paths([path])
        if decoded.findings:
            raise InputError(f"{path}: {decoded.findings[0].message}")
        for doc in decoded.documents:
            try:
                rows.extend(parse_workload_kinds(doc.obj, path))
            except WorkloadKindsError as exc:
                raise InputError(str(exc)) from exc
    return tuple(rows)
