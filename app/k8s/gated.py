"""Feature-gated fields and how the API server drops them (``dropDisabledFields``).

Why: with a gate off, kube-apiserver still *decodes* a gated field (it is in the schema, so it is
no typo and strict decoding passes), then the registry strategy's ``PrepareForCreate`` /
``PrepareForUpdate`` sets it to nil before validation — the object is stored without it and
nobody is told.  draguard does the same (the field is neither validated nor used for
satisfiability) and says so with a ``FieldDropped`` warning.  On update a group of fields is kept
when the old object already used one of them ("in use" ratchet), as every ``drop…Fields``
function does.

The table is read from ``pkg/registry/resource/resourceslice/strategy.go``,
``pkg/registry/resource/deviceclass/strategy.go`` and ``pkg/api/resourceclaimspec/util.go``
(Kubernetes 1.36), one group per ``dropDisabled…Fields`` function, in their order; each was
checked on a real API server emulating 1.34/1.35 and with the alpha gates on.  Patterns use
``[]`` for "every list item" and ``{}`` for "every map value".
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from app.k8s.features import Target
from app.k8s.field import Path

__all__ = ["DroppedField", "GatedGroup", "drop_disabled_fields", "gated_groups"]

Pattern = tuple[str, ...]


@dataclass(frozen=True)
class GatedGroup:
    """The fields one ``dropDisabled…Fields`` function removes when any of ``gates`` is off."""

    gates: tuple[str, ...]
    patterns: tuple[Pattern, ...]


@dataclass(frozen=True)
class DroppedField:
    """A field removed because ``gate`` is off at the target (v1-shaped path)."""

    path: Path
    gate: str


def _p(text: str) -> Pattern:
    return tuple(text.split("."))


_SLICE: tuple[GatedGroup, ...] = (
    GatedGroup(("DRADeviceTaints",), (_p("spec.devices.[].taints"),)),
    GatedGroup(
        ("DRAPartitionableDevices",),
        (
            _p("spec.sharedCounters"),
            _p("spec.perDeviceNodeSelection"),
            _p("spec.devices.[].consumesCounters"),
            _p("spec.devices.[].nodeName"),
            _p("spec.devices.[].nodeSelector"),
            _p("spec.devices.[].allNodes"),
        ),
    ),
    GatedGroup(
        ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"),
        (
            _p("spec.devices.[].bindingConditions"),
            _p("spec.devices.[].bindingFailureConditions"),
            _p("spec.devices.[].bindsToNode"),
        ),
    ),
    GatedGroup(
        ("DRAConsumableCapacity",),
        (_p("spec.devices.[].allowMultipleAllocations"), _p("spec.devices.[].capacity.{}.requestPolicy")),
    ),
    GatedGroup(("DRANodeAllocatableResources",), (_p("spec.devices.[].nodeAllocatableResourceMappings"),)),
    GatedGroup(
        ("DRAListTypeAttributes",),
        tuple(_p(f"spec.devices.[].attributes.{{}}.{name}") for name in ("bools", "ints", "strings", "versions")),
    ),
)


def _claim_groups(base: str) -> tuple[GatedGroup, ...]:
    return (
        GatedGroup(("DRAPrioritizedList",), (_p(f"{base}.devices.requests.[].firstAvailable"),)),
        GatedGroup(
            ("DRADeviceTaints",),
            (
                _p(f"{base}.devices.requests.[].exactly.tolerations"),
                _p(f"{base}.devices.requests.[].firstAvailable.[].tolerations"),
            ),
        ),
        GatedGroup(("DRAAdminAccess",), (_p(f"{base}.devices.requests.[].exactly.adminAccess"),)),
        GatedGroup(
            ("DRAConsumableCapacity",),
            (
                _p(f"{base}.devices.constraints.[].distinctAttribute"),
                _p(f"{base}.devices.requests.[].exactly.capacity"),
                _p(f"{base}.devices.requests.[].firstAvailable.[].capacity"),
            ),
        ),
    )


_GROUPS: dict[str, tuple[GatedGroup, ...]] = {
    "ResourceSlice": _SLICE,
    "ResourceClaim": _claim_groups("spec"),
    "ResourceClaimTemplate": _claim_groups("spec.spec"),
    "DeviceClass": (GatedGroup(("DRAExtendedResource",), (_p("spec.extendedResourceName"),)),),
}


def gated_groups(kind: str) -> tuple[GatedGroup, ...]:
    return _GROUPS.get(kind, ())


def _matches(obj: Any, pattern: Pattern, path: Path) -> Iterator[tuple[dict[str, Any], str, Path]]:
    """Every (container, key, path) where ``pattern`` names a present field of ``obj``."""
    head, rest = pattern[0], pattern[1:]
    if head == "[]":
        for i, item in enumerate(obj if isinstance(obj, list) else []):
            yield from _matches(item, rest, path.index(i))
        return
    if head == "{}":
        for key, value in (obj.items() if isinstance(obj, dict) else []):
            yield from _matches(value, rest, path.key(str(key)))
        return
    if not isinstance(obj, dict) or head not in obj:
        return
    if not rest:
        yield obj, head, path.child(head)
    else:
        yield from _matches(obj[head], rest, path.child(head))


def _in_use(value: Any) -> bool:
    """Go's in-use tests: a non-empty list/map, a set pointer."""
    if isinstance(value, list | dict):
        return len(value) > 0
    return value is not None


def _group_in_use(obj: Any, group: GatedGroup) -> bool:
    return any(_in_use(c[k]) for pattern in group.patterns for c, k, _ in _matches(obj, pattern, Path()))


def drop_disabled_fields(
    kind: str, obj: dict[str, Any], target: Target, old: dict[str, Any] | None = None
) -> list[DroppedField]:
    """Remove, in place, every gated field whose gate is off at ``target``; say what went.

    ``old`` (v1-shaped, on update) keeps a group whose fields the old object already uses.
    Fields that were present but empty (``taints: []``) are removed without a report.
    """
    dropped: list[DroppedField] = []
    for group in gated_groups(kind):
        off = [gate for gate in group.gates if not target.enabled(gate)]
        if not off or (old is not None and _group_in_use(old, group)):
            continue
        for pattern in group.patterns:
            for container, key, path in list(_matches(obj, pattern, Path())):
                value = container.pop(key)
                if _in_use(value) or value == {}:
                    dropped.append(DroppedField(path, off[0]))
    return dropped
