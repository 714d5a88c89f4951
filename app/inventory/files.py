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

import fnmatch
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

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
    "IGNORE_FILE",
    "MANIFEST_SUFFIXES",
    "MAX_FILE_BYTES",
    "STDIN_NAME",
    "STREAM_ABOVE_BYTES",
    "InputError",
    "Selection",
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


IGNORE_FILE = ".draguardignore"


class InputError(DraguardError):
    """A path that cannot be read at all (missing or unreadable; an empty folder is fine)."""


@dataclass
class Selection:
    """What ``draguard lint`` walks of a repository (README "In CI"), beyond every manifest file.

    ``exclude``: globs (``--exclude``, and the lines of a :data:`IGNORE_FILE` in the working
    directory or a folder given) matched against a path relative to the working directory, to the
    folder given, and its base name; a matching folder is not entered.  ``render``: Helm charts and
    kustomizations are linted as their rendered output (:mod:`.render`) — a file inside one stands
    for its folder — or reported once in ``skipped`` (``render`` off, or no tool on ``PATH``).
    ``read``: the files and units read, for callers that must not read them again (``--context``)."""

    exclude: tuple[str, ...] = ()
    render: bool = True
    use_tools: bool = True
    skip_files: frozenset[str] = frozenset()
    """Files (absolute paths) read elsewhere already: not read again."""
    skipped: list[str] = field(default_factory=list)
    read: set[str] = field(default_factory=set)
    _units: set[str] = field(default_factory=set)


def load_paths(
    paths: Sequence[str], *, stdin_text: str | None = None, selection: Selection | None = None,
    exclude: Sequence[str] | None = None, use_tools: bool = True, skip_files: frozenset[str] = frozenset(),
    skipped: list[str] | None = None, read: set[str] | None = None,
) -> DecodeResult:
    """Decode files, folders (walked recursively, hidden folders skipped) and ``-`` (stdin).

    With a ``selection`` — or ``exclude`` given (lint's paths and ``--context``; the other keywords
    are the :class:`Selection`'s fields, ``skipped`` and ``read`` filled in as it fills its own) —
    excluded paths are left out and charts and kustomizations are rendered or skipped.
    Raises :class:`InputError` naming the first path that does not exist or cannot be read.
    """
    if selection is None and exclude is not None:
        selection = Selection(exclude=tuple(exclude), use_tools=use_tools, skip_files=skip_files,
                              skipped=skipped if skipped is not None else [], read=read if read is not None else set())
    result = DecodeResult()
    parts = _iter(paths, stdin_text, inventory=False) if selection is None else _select(paths, stdin_text, selection)
    for part in parts:
        result.extend(part)
    return result


def _ignore_patterns(folder: str) -> list[str]:
    try:
        with open(os.path.join(folder, IGNORE_FILE), encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def _matches(path: str, root: str, patterns: Sequence[str]) -> bool:
    rel = os.path.normpath(os.path.relpath(path))
    names = {rel, os.path.normpath(os.path.relpath(path, root)) if root else rel, os.path.basename(path)}
    for raw in patterns:
        pattern = os.path.normpath(raw.removeprefix("./").rstrip("/")) if raw.strip("/") else raw
        for name in names:
            if fnmatch.fnmatch(name, pattern) or name.startswith(pattern + os.sep):
                return True
    return False


def _select(paths: Sequence[str], stdin_text: str | None, sel: Selection) -> Iterator[DecodeResult]:
    from .render import Unit, render_unit, unit_of_dir, unit_of_file

    cwd_patterns = [*sel.exclude, *_ignore_patterns(".")]

    def unit(u: Unit) -> Iterator[DecodeResult]:
        key = os.path.abspath(u.directory)
        if key in sel._units or key in sel.skip_files:
            return
        sel._units.add(key)
        sel.read.add(key)
        if not sel.use_tools:
            sel.skipped.append(f"{u.label} not rendered (--no-render), skipped")
            return
        got, why = render_unit(u)
        if got is None:
            sel.skipped.append(why)
        else:
            yield got

    def file(path: str, root: str, patterns: Sequence[str]) -> Iterator[DecodeResult]:
        full = os.path.abspath(path)
        if full in sel.skip_files or full in sel.read or _matches(path, root, patterns):
            return
        if sel.render:
            u = unit_of_file(path, stop=root or os.getcwd())
            if u is not None and not _matches(u.directory, root, patterns):
                yield from unit(u)
                return
        sel.read.add(full)
        yield from _read_file(path, False)

    for path in paths:
        if path == "-":
            text = stdin_text if stdin_text is not None else sys.stdin.read()
            yield decode_text(text, STDIN_NAME, max_documents=MAX_DOCUMENTS)
            continue
        if not os.path.exists(path):
            raise InputError(f"{path}: no such file or directory")
        if not os.path.isdir(path):
            yield from file(path, "", cwd_patterns)
            continue
        patterns = [*cwd_patterns, *_ignore_patterns(path)]
        for root, dirs, files in os.walk(path):
            if sel.render:
                u = unit_of_dir(root)
                if u is not None:  # (an excluded folder is never entered, see below)
                    dirs[:] = []
                    yield from unit(u)
                    continue
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not _matches(os.path.join(root, d), path, patterns))
            for name in sorted(files):
                if name.endswith(MANIFEST_SUFFIXES):
                    yield from file(os.path.join(root, name), path, patterns)


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
