"""Raw inventory objects kept packed — pickled, and compressed in chunks of :data:`CHUNK` — rather
than as dicts.

Why: a file inventory must keep its raw objects — ``/lint`` and ``draguard lint`` merge the
DeviceClasses, ResourceSlices and Nodes of a request into them and build a new snapshot — but
as nested dicts they cost about as much memory as the snapshot itself (~4 KB per device, most of
the RSS of a 100,000-device server).  Pickled, an object costs a few hundred bytes per device
(25 MB at 100,000 devices); compressed together, objects of one inventory share their keys and
repeated values, so a chunk of 64 is ~10× smaller.  The dicts exist only while a merge reads them
(a chunk is decompressed once per pass, ~1 ms).  Pickle, not JSON: it gives back exactly the
objects the decoder produced (integer sizes, key types), so a merge sees what a build saw.
"""

from __future__ import annotations

import pickle
import zlib
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

__all__ = ["CHUNK", "ChainedObjects", "PackedObjects"]

CHUNK = 64
"""Objects per compressed chunk: large enough for the compressor to find what objects repeat,
small enough that reading one object decompresses little."""


class _Objects(Sequence[dict[str, Any]]):
    """A read-only sequence of raw objects; subclasses say how one item and a slice are read."""

    __slots__ = ()

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        return self._slice(index) if isinstance(index, slice) else self._item(index)

    def _item(self, index: int) -> dict[str, Any]:
        raise NotImplementedError

    def _slice(self, index: slice) -> list[dict[str, Any]]:
        raise NotImplementedError


def _compress(pickles: list[bytes]) -> bytes:
    sizes = array("I", (len(p) for p in pickles))
    return zlib.compress(sizes.tobytes() + b"".join(pickles), 3)  # 6 gains a third more for 3x the time


def _split(chunk: bytes, count: int) -> list[memoryview]:
    """The pickles of a chunk of ``count`` objects (see :func:`_compress`)."""
    data = memoryview(zlib.decompress(chunk))
    sizes = array("I")
    sizes.frombytes(data[: count * sizes.itemsize])
    out: list[memoryview] = []
    at = count * sizes.itemsize
    for size in sizes:
        out.append(data[at : at + size])
        at += size
    return out


class PackedObjects(_Objects):
    """An immutable sequence of raw objects, each unpacked afresh when read (callers may mutate
    what they get without changing what is kept).  Objects are added while the inventory is
    read (:meth:`append_packed`); the last ``len % CHUNK`` of them stay uncompressed pickles."""

    __slots__ = ("_chunks", "_pending")

    def __init__(self, objects: Iterable[dict[str, Any]] = ()) -> None:
        self._chunks: list[bytes] = []
        """Every full chunk of :data:`CHUNK` objects, compressed."""
        self._pending: list[bytes] = []
        for obj in objects:
            self.append_packed(self.pack(obj))

    @staticmethod
    def pack(obj: dict[str, Any]) -> bytes:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)

    def append_packed(self, packed: bytes) -> None:
        """Add an object packed with :meth:`pack` (used while the inventory is being read)."""
        self._pending.append(packed)
        if len(self._pending) >= CHUNK:
            self._chunks.append(_compress(self._pending))
            self._pending = []

    def __len__(self) -> int:
        return len(self._chunks) * CHUNK + len(self._pending)

    def _item(self, index: int) -> dict[str, Any]:
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("object index out of range")
        chunk, at = divmod(index, CHUNK)
        packed = self._pending[at] if chunk == len(self._chunks) else _split(self._chunks[chunk], CHUNK)[at]
        got: dict[str, Any] = pickle.loads(packed)
        return got

    def _slice(self, index: slice) -> list[dict[str, Any]]:
        wanted = range(len(self))[index]
        if wanted.step == 1 or len(wanted) <= 1:
            return list(self._run(wanted.start, wanted.stop)) if len(wanted) else []
        return [self._item(i) for i in wanted]

    def _run(self, start: int, stop: int) -> Iterator[dict[str, Any]]:
        """Objects ``start`` to ``stop`` (exclusive), each chunk decompressed once."""
        for chunk in range(start // CHUNK, (stop + CHUNK - 1) // CHUNK):
            packed: Sequence[bytes | memoryview] = (
                self._pending if chunk == len(self._chunks) else _split(self._chunks[chunk], CHUNK))
            base = chunk * CHUNK
            for at in range(max(start - base, 0), min(stop - base, len(packed))):
                yield pickle.loads(packed[at])

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self._run(0, len(self))


class ChainedObjects(_Objects):
    """Several object sequences read as one, without copying them (or unpacking packed ones)
    until read."""

    __slots__ = ("_parts",)

    def __init__(self, *parts: Sequence[dict[str, Any]]) -> None:
        self._parts = parts

    def __len__(self) -> int:
        return sum(len(p) for p in self._parts)

    def _slice(self, index: slice) -> list[dict[str, Any]]:
        return list(self)[index]

    def _item(self, index: int) -> dict[str, Any]:
        if index < 0:
            index += len(self)
        for part in self._parts:
            if 0 <= index < len(part):
                return part[index]
            index -= len(part)
        raise IndexError("object index out of range")

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for part in self._parts:
            yield from part
