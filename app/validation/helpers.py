"""Generic list/map validation that carries size limits once.

Why: Kubernetes validates every list with ``validateSlice`` / ``validateSet`` and every map with
``validateMap``; those helpers decide *where* a size error goes, that an over-long list is not
looked into at all (a DoS guard that also hides per-item errors — Kubernetes 1.35+), where
duplicates are reported (the later item's index) and, since 1.36, that a bad *map key* is
reported at the map's own path (``spec.devices[0].capacity``), not at ``[key]``.  Re-using one
copy of that logic keeps all rules consistent with each other.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar

from ..k8s import FieldError, Path, duplicate, too_many

__all__ = [
    "truncate_if_too_long",
    "validate_map",
    "validate_set",
    "validate_slice",
]

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

ItemValidator = Callable[[T, Path], list[FieldError]]



def validate_slice(
    items: Sequence[T], max_size: int, validate_item: ItemValidator[T], path: Path
) -> list[FieldError]:
    """``validateSlice``: TooMany (and nothing else) when over ``max_size``; else every item.

    A negative ``max_size`` disables the limit.
    """
    if 0 <= max_size < len(items):
        return [too_many(path, len(items), max_size)]
    errs: list[FieldError] = []
    for i, item in enumerate(items):
        errs.extend(validate_item(item, path.index(i)))
    return errs


def validate_set(
    items: Sequence[T],
    max_size: int,
    validate_item: ItemValidator[T],
    item_key: Callable[[T], K],
    path: Path,
    render_key: Callable[[K], object] | None = None,
) -> list[FieldError]:
    """``validateSet``: like :func:`validate_slice`, then Duplicate at each repeated key's index.

    ``render_key`` turns the key into the value shown in ``Duplicate value: …`` (default: the key).
    """
    if 0 <= max_size < len(items):
        return [too_many(path, len(items), max_size)]
    errs: list[FieldError] = []
    for i, item in enumerate(items):
        errs.extend(validate_item(item, path.index(i)))
    seen: set[K] = set()
    for i, item in enumerate(items):
        key = item_key(item)
        if key in seen:
            errs.append(duplicate(path.index(i), render_key(key) if render_key else key))
        else:
            seen.add(key)
    return errs


def truncate_if_too_long(text: str, max_len: int) -> str:
    """``truncateIfTooLong``: long map keys are shortened in the middle for the *path* only."""
    max_len = max(max_len, 16)
    if len(text) <= max_len:
        return text
    remaining = max_len - 3
    return text[: (remaining + 1) // 2] + "..." + text[len(text) - remaining // 2 :]


def validate_map(
    mapping: Mapping[str, T],
    max_size: int,
    truncate_key_len: int,
    validate_key: Callable[[str, Path], list[FieldError]],
    validate_item: ItemValidator[T],
    path: Path,
) -> list[FieldError]:
    """``validateMap`` as of Kubernetes 1.36: key problems at ``path``, item problems at ``path[key]``.

    Go iterates maps in random order; draguard uses document order, which is as good as any and
    stable for users.
    """
    if 0 <= max_size < len(mapping):
        return [too_many(path, len(mapping), max_size)]
    errs: list[FieldError] = []
    for key, item in mapping.items():
        errs.extend(validate_key(key, path))
        errs.extend(validate_item(item, path.key(truncate_if_too_long(key, truncate_key_len))))
    return errs
