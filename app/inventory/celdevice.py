"""Building the CEL ``device`` value of an inventory device.

Why here: converting a device into CEL values is the expensive part of evaluating selectors, so
it is done once per device record and kept; but only for the devices selectors are evaluated on
(one per profile, see :mod:`.profiles`), on first use: building every device's value up front
cost ~1 KB per device (most of the memory of a 100,000-device inventory whose devices each have
a unique ``uuid``).  Whether a device can be evaluated at all is known without building it.

Attributes arrive as ``(kind, value)``: the scalar kinds ``int``/``bool``/``string``/``version``
and, where the target serves DRAListTypeAttributes, the list kinds ``ints``/``bools``/``strings``/
``versions`` with a tuple of values (:data:`app.cel.LIST_KINDS`); both become CEL values here, a
list as a CEL list whose versions are parsed (one bad version makes the device unevaluable, as a
bad scalar version does).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..cel import CelDevice, device_error, make_device
from ..k8s import Quantity

__all__ = ["build_cel_device", "cel_device_error"]


def build_cel_device(
    driver: str, multi: bool, attributes: Mapping[str, tuple[str | None, object]], capacity: Mapping[str, Quantity]
) -> CelDevice:
    """``app.cel.make_device(...)`` for one device of a ResourceSlice."""
    return make_device(driver, multi, attributes, capacity)


def cel_device_error(attributes: Mapping[str, tuple[str | None, object]]) -> str | None:
    """What ``build_cel_device(...).error`` would be, without building the device."""
    return device_error(attributes)
