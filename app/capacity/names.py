"""How a claim's capacity request name finds the device capacity it refers to, per Kubernetes release.

Why a module of its own: the rule differs between releases, and every caller (fit check,
explanations, default filling) must agree.

* Kubernetes 1.34–1.37 match the **exact key only**: a qualified request
  ``nic.example.com/bandwidth`` does not find a published ``bandwidth`` (conformance case
  ``bw-qualified-name-unsatisfiable``) and an unqualified ``cores`` does not find a published
  ``gpu.example.com/cores`` (case ``vv-cores-unqualified-name-unsatisfiable``).
* Kubernetes 1.38 (kubernetes#142202, ``resolveCapacityRequests`` of the allocator) reads both
  sides as fully-qualified names, a name without a domain being in the device's driver domain:
  ``bandwidth`` and ``<driver>/bandwidth`` are the same capacity, whichever way the slice spelled
  it; a slice that publishes both spellings is read as the qualified one.

A claim that names one capacity both ways (``bandwidth`` and ``<driver>/bandwidth``) is no
precedence question in 1.38: ``resolveCapacityRequests`` fails with an *error* on a device of that
driver that publishes the capacity — the allocation attempt aborts — and skips one that does not
publish it.  No device of that driver can ever serve such a request
(:func:`capacity_request_conflict`); devices of other drivers read ``bandwidth`` in their own
domain and are unaffected.  The API server does not reject the claim (only the keys' syntax is
validated), so this is an allocation failure, never a validation error.

Which rule applies is a context (:func:`capacity_names_for`), like the validation target: the
satisfiability search is target-independent and deep, and only this lookup differs.  Outside any
scope the exact rule holds.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from ..k8s import Target, minor_key

__all__ = [
    "capacity_names_for",
    "capacity_request_conflict",
    "qualified_capacity_names",
    "resolve_capacity_name",
    "target_qualifies_names",
]

_QUALIFIED: ContextVar[bool] = ContextVar("draguard_qualified_capacity_names", default=False)


def target_qualifies_names(target: Target) -> bool:
    """Whether ``target``'s allocator resolves capacity request names with the driver's domain (1.38+)."""
    return minor_key(target.version) >= (1, 38)


@contextmanager
def capacity_names_for(target: Target) -> Iterator[None]:
    """Resolve capacity request names as ``target``'s allocator does while the block runs."""
    token = _QUALIFIED.set(target_qualifies_names(target))
    try:
        yield
    finally:
        _QUALIFIED.reset(token)


def qualified_capacity_names() -> bool:
    """Whether the current scope resolves names the 1.38 way (part of cache keys of answers)."""
    return _QUALIFIED.get()


def resolve_capacity_name(request_name: str, driver: str, capacity_keys: Container[str]) -> str | None:
    """The device's capacity key that ``request_name`` refers to, or ``None`` if it has none."""
    if not _QUALIFIED.get():
        return request_name if request_name in capacity_keys else None
    domain, sep, ident = request_name.partition("/")
    if not sep:
        domain, ident = driver, request_name
    if domain != driver:
        return request_name if request_name in capacity_keys else None
    qualified = f"{driver}/{ident}"
    if qualified in capacity_keys:
        return qualified
    return ident if ident in capacity_keys else None


def capacity_request_conflict(request_names: Iterable[str], driver: str) -> tuple[str, str] | None:
    """``(name, f"{driver}/{name}")`` when a request names one of ``driver``'s capacities both ways.

    Only in a 1.38 scope: exact matching (1.34–1.37) takes the two spellings as two capacities.
    On a device of ``driver`` the 1.38 allocator then never allocates: it aborts with
    ``capacity "<name>" requested both as …`` where the device publishes the capacity, and skips
    the device where it does not (``resolveCapacityRequests``), whatever the amounts.
    """
    if not _QUALIFIED.get():
        return None
    names = set(request_names)
    prefix = f"{driver}/"
    for name in sorted(names):
        if name.startswith(prefix) and name.removeprefix(prefix) in names:
            return name.removeprefix(prefix), name
    return None
