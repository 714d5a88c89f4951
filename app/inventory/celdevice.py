"""Building the CEL ``device`` value once per inventory snapshot.

Why here: converting a device into CEL values is the expensive part of evaluating selectors;
doing it once when the snapshot is built means every review afterwards only evaluates.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.cel import CelDevice, make_device
from app.k8s import Quantity

__all__ = ["build_cel_device"]


def build_cel_device(
    driver: str, multi: bool, attributes: Mapping[str, tuple[str | None, object]], capacity: Mapping[str, Quantity]
) -> CelDevice:
    """``app.cel.make_device(...)`` for one device of a ResourceSlice."""
    return make_device(driver, multi, attributes, capacity)
