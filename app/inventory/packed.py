"""Raw inventory objects kept packed (pickled, one ``bytes`` per object) rather than as dicts.

Why: a file inventory must keep its raw objects — ``/lint`` and ``draguard lint`` merge the
DeviceClasses, ResourceSlices and Nodes of a request into them and build a new snapshot — but
as nested dicts they cost about as much memory as the snapshot itself (~4 KB per device, most of
the RSS of a 100,000-device server).  Packed, an object costs its pickle (a few hundred bytes),
and the dicts exist only while a merge reads them.  Pickle, not JSON: it gives back exactly the
objects the decoder produced (integer sizes, key types), so a merge sees what a build saw.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

__all__ = ["ChainedObjects", "PackedObjects"]


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


class PackedObjects(_Objects):
    """An immutable sequence of raw objects, each unpacked afresh when read (callers may mutate
    what they get without changing what is kept)."""

    __slots__ = ("_packed",)

    def __init__(self, objects: Iterable[dict[str, Any]] = ()) -> None:
        self._packed: list[bytes] = [self.pack(o) for o in objects]

    @staticmethod
    def pack(obj: dict[str, Any]) -> bytes:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)

    def append_packed(self, packed: bytes) -> None:
        """Add an object packed with :meth:`pack` (used while the inventory is being read)."""
        self._packed.append(packed)

    def __len__(self) -> int:
        return len(self._packed)

    def _item(self, index: int) -> dict[str, Any]:
        got: dict[str, Any] = pickle.loads(self._packed[index])
        return got

    def _slice(self, index: slice) -> list[dict[str, Any]]:
        return [pickle.loads(p) for p in self._packed[index]]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for packed in self._packed:
            yield pickle.loads(packed)


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
