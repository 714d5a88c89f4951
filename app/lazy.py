"""Names a package exports but imports only when first used (PEP 562 ``__getattr__``).

Why: every package re-exports its public names (other packages import ``from app.k8s import
PodSpec``, never from a module), so its ``__init__`` imports every module — and ``draguard lint``
of claims and slices, which never touches a pod, paid for the pod and workload machinery at
every start: its pydantic models and ~20 dataclasses, ~10 ms, ~4 % of linting 400 objects.  A
package lists such names with the module that defines them; the first ``app.k8s.PodSpec`` (or
``from app.k8s import PodSpec``) imports the module and keeps the name, so later uses cost
nothing.  Type checkers see the names through the package's ``if TYPE_CHECKING:`` import.

A server is the other case: it reviews pods sooner or later, and the first pod must not pay for
the imports inside its deadline, so ``create_app`` loads everything up front (:func:`load_all`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping

__all__ = ["lazy_exports", "load_all"]

_REGISTERED: list[tuple[str, tuple[str, ...]]] = []


def lazy_exports(package: str, modules: Mapping[str, Iterable[str]]) -> Callable[[str], object]:
    """The module ``__getattr__`` of ``package`` for ``modules``: {relative module: its names}.

    A module listed with no names is one the package's own code imports where it first needs
    it; it is listed so that :func:`load_all` loads it too."""
    owner = {name: module for module, names in modules.items() for name in names}
    _REGISTERED.append((package, tuple(modules)))

    def __getattr__(name: str) -> object:
        module = owner.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


def load_all() -> None:
    """Import every module a package defers (a long-running process, before its first request)."""
    for package, modules in list(_REGISTERED):
        for module in modules:
            importlib.import_module(module, package)
