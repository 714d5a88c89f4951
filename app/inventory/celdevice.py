"""Building the CEL ``device`` value once per inventory snapshot.

Why a bridge: the CEL package is owned by another engineer and may be absent or still
incomplete; the inventory must still build (selectors are then reported as "not evaluated").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.k8s.quantity import Quantity

__all__ = ["build_cel_device"]


def build_cel_device(
    driver: str, multi: bool, attributes: Mapping[str, tuple[str, object]], capacity: Mapping[str, Quantity]
) -> Any:
    """``app.cel.make_device(...)``, or ``None`` when the CEL package is not available."""
    try:
        from app.cel import make_device
    except ImportError:
        return None
    return make_device(driver, multi, attributes, capacity)
