"""Built file inventories kept on disk between ``draguard lint`` runs (bounded, versioned).

Why: CI lints a handful of claims against the same inventory file on every push, and building a
1,000-node inventory (decoding 3 MB of YAML, strict decoding of every slice, the per-device
profiles and node groups) is ~0.9 s of a ~1.3 s run, where loading the built
:class:`~.sources.StaticInventory` back is ~0.1 s.  The answer never depends on the cache: an
entry is found only by a key over everything the build reads —

* every byte of every inventory file, in the order they are read, with the paths as given (a
  finding names the file as the user wrote it);
* the target version and gate settings (gated fields are dropped while building);
* draguard's own code (path, size and modification time of every module, so an edited checkout
  or a new version never reads an older build), the Python version, and the versions of the
  libraries whose objects are kept (pydantic, pydantic-core) or that read the YAML (PyYAML, yaml-rs);

— and the files are hashed again after a build, so a file that changed while it was read is
not stored under the old content.

Bounded: only inventories of at least :data:`MIN_BYTES` are kept (a small one builds faster
than its entry loads), an entry larger than :data:`MAX_ENTRY_BYTES` is not written, and the
folder keeps the :data:`MAX_ENTRIES` most recently used entries (older ones are deleted when a
new one is written).  Where: :func:`app.k8s.cache_folder` (``DRAGUARD_CACHE_DIR``, ``off`` turns
it off; a folder someone else may write to is never read, since an entry is a pickle);
``draguard lint --no-cache`` turns it off for one run.  Standard input is never cached.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import os
import pickle
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..collector import bulk_allocation
from ..k8s import Target, cache_folder
from .files import manifest_files

__all__ = ["MAX_ENTRIES", "MAX_ENTRY_BYTES", "MIN_BYTES", "cached_build"]

MIN_BYTES = 512 * 1024
"""Inventories smaller than this (all files together) are built every time."""
MAX_ENTRY_BYTES = 64 * 1024 * 1024
MAX_ENTRIES = 4
_FORMAT = 2
_PREFIX = "inventory-"
_SUFFIX = ".pickle"

T = TypeVar("T")


def cached_build(paths: Sequence[str], target: Target, build: Callable[[], T]) -> T:
    """``build()``, or what an earlier ``build()`` over the same files, target and code returned.

    ``build`` raises for a path that cannot be read (:class:`~.files.InputError`); such inputs
    are simply built (and raise), never looked up.
    """
    folder = cache_folder()
    if folder is None or "-" in paths:
        return build()
    key = _key(paths, target)
    if key is None:
        return build()
    entry = os.path.join(folder, f"{_PREFIX}{key}{_SUFFIX}")
    found = _load(entry)
    if found is not None:
        return found  # type: ignore[return-value]
    built = build()
    if _key(paths, target) == key:
        _store(folder, entry, built)
    return built


def _key(paths: Sequence[str], target: Target) -> str | None:
    """The entry's name for these inputs, or ``None`` (not cached: too small, or unreadable)."""
    digest = hashlib.sha256()
    size = 0
    try:
        for path in paths:
            digest.update(b"\0path\0" + os.fsencode(path))
            for file in manifest_files(path):
                with open(file, "rb") as fh:
                    data = fh.read()
                size += len(data)
                digest.update(b"\0file\0" + os.fsencode(file) + b"\0" + str(len(data)).encode() + b"\0")
                digest.update(data)
    except OSError:
        return None
    if size < MIN_BYTES:
        return None  # before the environment's fingerprint: a small inventory pays only the read
    digest.update(_environment())
    digest.update(repr((target.version, sorted(target.overrides.items()))).encode())
    return digest.hexdigest()


_environment_digest: bytes | None = None


def _environment() -> bytes:
    """What else a build depends on: draguard's modules, Python, the libraries' versions."""
    global _environment_digest
    if _environment_digest is None:
        import pydantic
        import pydantic_core
        import yaml
        import yaml_rs

        parts = [f"format {_FORMAT}", sys.version, str(pickle.HIGHEST_PROTOCOL), pydantic.VERSION,
                 pydantic_core.__version__, yaml.__version__, str(getattr(yaml_rs, "__version__", ""))]
        root = Path(__file__).resolve().parents[1]
        for module in sorted(root.rglob("*.py")):
            with contextlib.suppress(OSError):
                info = module.stat()
                parts.append(f"{module.relative_to(root)} {info.st_size} {info.st_mtime_ns}")
        _environment_digest = hashlib.sha256("\n".join(parts).encode()).digest()
    return _environment_digest


def _load(entry: str) -> object | None:
    """The entry's object, when the file exists, is ours alone and reads; else ``None``."""
    try:
        with open(entry, "rb") as fh:
            info = os.fstat(fh.fileno())
            if info.st_uid != os.getuid() or info.st_mode & 0o022:
                return None
            data = fh.read()
        os.utime(entry)  # most recently used: kept longest
    except OSError:
        return None
    try:
        with bulk_allocation():  # reading makes ~60,000 containers and no garbage
            value: object = pickle.loads(data)
    except Exception:  # a damaged or foreign entry: built again (and rewritten)
        return None
    return value


class _Pickler(pickle.Pickler):
    """Frozen slotted dataclasses (a :class:`~.records.DeviceRecord` per device) are written as
    their class and field values and read back by :func:`_restore`: the dataclasses' own
    ``__setstate__`` looks the fields up again for every object, 0.1 s of reading 8,000 devices."""

    def reducer_override(self, obj: object) -> Any:
        cls = type(obj)
        names = _frozen_fields(cls)
        if names is None:
            return NotImplemented
        return (_restore, (cls, tuple(getattr(obj, name) for name in names)))


_FIELDS: dict[type, tuple[str, ...] | None] = {}
_SETTERS: dict[type, tuple[Callable[[object, object], None], ...]] = {}


def _frozen_fields(cls: type) -> tuple[str, ...] | None:
    """The field names of a frozen dataclass with slots whose state is its fields, else ``None``."""
    if cls not in _FIELDS:
        names: tuple[str, ...] | None = None
        params = cls.__dict__.get("__dataclass_params__")
        getstate = cls.__dict__.get("__getstate__")
        if (params is not None and params.frozen and "__slots__" in cls.__dict__
                and getattr(getstate, "__name__", "") == "_dataclass_getstate"):
            names = tuple(f.name for f in dataclasses.fields(cls))
        _FIELDS[cls] = names
    return _FIELDS[cls]


def _restore(cls: type, values: tuple[object, ...]) -> object:
    """A frozen slotted dataclass from its field values, as its ``__setstate__`` makes it."""
    setters = _SETTERS.get(cls)
    if setters is None:
        setters = _SETTERS[cls] = tuple(type.__getattribute__(cls, f.name).__set__ for f in dataclasses.fields(cls))
    obj: object = object.__new__(cls)
    for setter, value in zip(setters, values, strict=True):
        setter(obj, value)
    return obj


def _store(folder: str, entry: str, value: object) -> None:
    """Write ``value`` (atomically, mode 0600) and keep the folder to :data:`MAX_ENTRIES` entries."""
    buffer = io.BytesIO()
    try:
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    except Exception:  # something in this build does not pickle: it is simply not kept
        return
    data = buffer.getvalue()
    if len(data) > MAX_ENTRY_BYTES:
        return
    temporary = f"{entry}.{os.getpid()}.tmp"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(temporary, entry)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return
    _trim(folder)


def _trim(folder: str) -> None:
    entries: list[tuple[float, str]] = []
    with contextlib.suppress(OSError):
        for item in os.scandir(folder):
            if item.name.startswith(_PREFIX) and item.name.endswith(_SUFFIX):
                with contextlib.suppress(OSError):
                    entries.append((item.stat().st_mtime, item.path))
    entries.sort(reverse=True)
    for _, path in entries[MAX_ENTRIES:]:
        with contextlib.suppress(OSError):
            os.unlink(path)
