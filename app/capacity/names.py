"""How a claim's capacity request name finds the device capacity it refers to (Kubernetes 1.36).

Why a module of its own: the rule differs between releases.  Later upstream versions
normalise names with the driver's domain in both directions (``bandwidth`` ≡
``<driver>/bandwidth``).  Kubernetes 1.36.2, which the conformance sample was produced with,
matches the **exact key only**: a qualified request ``nic.example.com/bandwidth`` does not find a
published ``bandwidth`` (case ``bw-qualified-name-unsatisfiable``) and an unqualified ``cores``
does not find a published ``gpu.example.com/cores`` (case
``vv-cores-unqualified-name-unsatisfiable``).  Keeping the rule in one place lets every caller
(fit check, explanations, default filling) agree, and makes a later switch a one-line change.
"""

from __future__ import annotations

from collections.abc import Container

__all__ = ["resolve_capacity_name"]


def resolve_capacity_name(request_name: str, driver: str, capacity_keys: Container[str]) -> str | None:
    """The device's capacity key that ``request_name`` refers to, or ``None`` if it has none.

    ``driver`` is accepted so that callers do not change when the rule becomes
    domain-aware; in 1.36 it is not consulted.
    """
    del driver
    if request_name in capacity_keys:
        return request_name
    return None
