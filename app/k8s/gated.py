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

from .features import Target
from .field import Path

__all__ = [
    "DroppedField",
    "GatedGroup",
    "drop_disabled_fields",
    "gated_groups",
    "has_disabled_fields",
    "pop_present_fields",
    "present_fields",
]

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
    # 1.37 (dropDisabledDRADeviceCompatibilityGroupsFields)
    GatedGroup(("DRADeviceCompatibilityGroups",), (_p("spec.devices.[].consumesCounters.[].compatibilityGroups"),)),
    # 1.36's name and 1.37's: only the one the target's schema has can be present here
    # (app.k8s.versions.absent_fields removes the other first, as an unknown field)
    GatedGroup(
        ("DRANodeAllocatableResources",),
        (_p("spec.devices.[].nodeAllocatableResourceMappings"), _p("spec.devices.[].nodeAllocatableResources")),
    ),
    GatedGroup(
        ("DRAListTypeAttributes",),
        tuple(_p(f"spec.devices.[].attributes.{{}}.{name}") for name in ("bools", "ints", "strings", "versions")),
    ),
    # 1.37: dropDisabledDRAPartitionableDevicesTypeFields, dropDisabledDRAOptionalNodeOperationsFields
    GatedGroup(("DRAPartitionableDevicesType",), (_p("spec.partitionTypeAttribute"),)),
    GatedGroup(("DRAOptionalNodeOperations",), (_p("spec.skipNodeOperations"),)),
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
        GatedGroup(  # 1.37: dropDisabledDRADerivedAttributesFields
            ("DRADerivedAttributes",),
            (
                _p(f"{base}.devices.requests.[].exactly.derivedAttributes"),
                _p(f"{base}.devices.requests.[].firstAvailable.[].derivedAttributes"),
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


# A group's patterns as a trie: segment -> (sub-trie, index of the pattern ending here or -1).
_Trie = dict[str, tuple["_Trie", int]]
# A path built backwards, one cell per step (parent, kind, value): O(1) per visited node; turned
# into a :class:`Path` only for a field that is found.
_Where = tuple[Any, str, Any] | None
_Match = tuple[dict[str, Any], str, _Where]


def _trie(patterns: tuple[Pattern, ...]) -> _Trie:
    root: _Trie = {}
    for number, pattern in enumerate(patterns):
        node = root
        for depth, head in enumerate(pattern):
            child, end = node.get(head, ({}, -1))
            node[head] = (child, number if depth == len(pattern) - 1 else end)
            node = child
    return root


_TRIES: dict[tuple[Pattern, ...], _Trie] = {}
"""One trie per group of :data:`_GROUPS`, built on first use: bounded by that fixed table (the
combinations of groups off at a target are :data:`_STEPS`, emptied past :data:`_OFF_LIMIT`)."""


def _group_trie(group: GatedGroup) -> _Trie:
    trie = _TRIES.get(group.patterns)
    if trie is None:
        trie = _TRIES[group.patterns] = _trie(group.patterns)
    return trie


def _find(obj: Any, group: GatedGroup) -> list[list[_Match]]:
    """Per pattern of ``group``, every (container, key, where) naming a present field, in
    document order.

    Why one breadth-first walk per group rather than one recursive generator per pattern: a
    slice's patterns share their prefix (``spec.devices.[]``, ``….attributes.{}``), so the
    devices and attributes are visited once, and no path object is built for the thousands of
    nodes that match nothing.  Level by level, expanded in order, keeps each pattern's matches
    in the order a depth-first walk finds them.
    """
    found: list[list[_Match]] = [[] for _ in group.patterns]
    level: list[tuple[Any, _Trie, _Where]] = [(obj, _group_trie(group), None)]
    while level:
        following: list[tuple[Any, _Trie, _Where]] = []
        for node, trie, where in level:
            for head, (child, end) in trie.items():
                if head == "[]":
                    if isinstance(node, list):
                        following.extend((item, child, (where, "index", i)) for i, item in enumerate(node))
                elif head == "{}":
                    if isinstance(node, dict):
                        following.extend((value, child, (where, "key", str(key))) for key, value in node.items())
                elif isinstance(node, dict) and head in node:
                    step = (where, "field", head)
                    if end >= 0:
                        found[end].append((node, head, where))
                    if child:
                        following.append((node[head], child, step))
        level = following
    return found


def _path(where: _Where, name: str) -> Path:
    segments: list[tuple[str, str | int]] = [("field", name)]
    while where is not None:
        where, kind, value = where
        segments.append((kind, value))
    segments.reverse()
    return Path(tuple(segments))


def _in_use(value: Any) -> bool:
    """Go's in-use tests: a non-empty list/map, a set pointer."""
    if isinstance(value, list | dict):
        return len(value) > 0
    return value is not None


def _group_in_use(obj: Any, group: GatedGroup) -> bool:
    return any(_in_use(c[k]) for matches in _find(obj, group) for c, k, _ in matches)


def _off_groups(kind: str, target: Target) -> tuple[tuple[GatedGroup, str], ...]:
    """The groups of ``kind`` with a gate off at ``target``, and the first such gate of each.

    Remembered per kind and target (every object of a run asks the same question): at most
    :data:`_OFF_LIMIT` entries, emptied when full — a server has one target, a lint one too."""
    key = (kind, target.version, tuple(sorted(target.overrides.items())))
    found = _OFF.get(key)
    if found is None:
        found = tuple(
            (group, off[0])
            for group in gated_groups(kind)
            if (off := [gate for gate in group.gates if not target.enabled(gate)])
        )
        if len(_OFF) >= _OFF_LIMIT:
            _OFF.clear()
        _OFF[key] = found
    return found


_OFF: dict[tuple[str, str, tuple[tuple[str, bool], ...]], tuple[tuple[GatedGroup, str], ...]] = {}
_OFF_LIMIT = 64


def _disabled_groups(kind: str, target: Target, old: dict[str, Any] | None) -> Iterator[tuple[GatedGroup, str]]:
    """The groups to drop at ``target`` and the first gate of each that is off."""
    for group, gate in _off_groups(kind, target):
        if not (old is not None and _group_in_use(old, group)):
            yield group, gate


def has_disabled_fields(kind: str, obj: dict[str, Any], target: Target, old: dict[str, Any] | None = None) -> bool:
    """Whether :func:`drop_disabled_fields` would remove anything (``obj`` is not touched).

    Lets the caller copy the object only when it is about to change.  Without an old object the
    disabled groups are looked for in one walk of their combined patterns that stops at the
    first field present (the answer of one ``_find`` per group, which walks every device once
    per group and collects every match).
    """
    if old is None:
        groups = tuple(group for group, _ in _off_groups(kind, target))
        return bool(groups) and _any_present(obj, _combined_steps(groups))
    return any(any(_find(obj, group)) for group, _ in _disabled_groups(kind, target, old))


class _Step:
    """A node of the trie :func:`_any_present` walks, laid out for that walk: the field names
    that end a pattern (``ends``, one C-level ``isdisjoint`` against an object's keys), the
    fields to descend into (``into``), the step for every list item and for every map value,
    and — when the map values' step only names ending fields, as the attributes of a device
    do (``attributes.*.bools``) — those names alone (``value_ends``), so a map of 20 attributes
    is 20 ``isdisjoint`` calls and no recursion."""

    __slots__ = ("ends", "into", "items", "value_ends", "values")

    def __init__(self, trie: _Trie) -> None:
        named = {head: entry for head, entry in trie.items() if head not in ("[]", "{}")}
        self.ends = frozenset(head for head, (_, end) in named.items() if end >= 0)
        self.into = tuple((head, _Step(child)) for head, (child, _) in named.items() if child)
        items, values = trie.get("[]"), trie.get("{}")
        self.items = _Step(items[0]) if items and items[0] else None
        self.values = _Step(values[0]) if values and values[0] else None
        leaf = self.values is not None and not (self.values.into or self.values.items or self.values.values)
        self.value_ends = self.values.ends if leaf and self.values is not None else None


_STEPS: dict[tuple[Pattern, ...], _Step] = {}


def _combined_steps(groups: tuple[GatedGroup, ...]) -> _Step:
    patterns = tuple(p for group in groups for p in group.patterns)
    steps = _STEPS.get(patterns)
    if steps is None:
        if len(_STEPS) >= _OFF_LIMIT:
            _STEPS.clear()
        steps = _STEPS[patterns] = _Step(_trie(patterns))
    return steps


def _any_present(node: Any, step: _Step) -> bool:
    """Whether any pattern of ``step`` names a field present in ``node`` (what makes ``_find``'s
    lists non-empty: the key is there, whatever its value).  Recursive: the depth is a
    pattern's length, not the object's."""
    if isinstance(node, dict):
        if step.ends and not step.ends.isdisjoint(node):
            return True
        for head, child in step.into:
            value = node.get(head)
            if value is not None and _any_present(value, child):
                return True
        if step.value_ends is not None:
            ends = step.value_ends
            for value in node.values():
                if isinstance(value, dict) and not ends.isdisjoint(value):
                    return True
        elif step.values is not None:
            child = step.values
            for value in node.values():
                if _any_present(value, child):
                    return True
    elif isinstance(node, list) and step.items is not None:
        child = step.items
        for item in node:
            if _any_present(item, child):
                return True
    return False


def drop_disabled_fields(
    kind: str, obj: dict[str, Any], target: Target, old: dict[str, Any] | None = None
) -> list[DroppedField]:
    """Remove, in place, every gated field whose gate is off at ``target``; say what went.

    ``old`` (v1-shaped, on update) keeps a group whose fields the old object already uses.
    Fields that were present but empty (``taints: []``) are removed without a report.
    """
    dropped: list[DroppedField] = []
    for group, gate in _disabled_groups(kind, target, old):
        for matches in _find(obj, group):
            for container, key, where in matches:
                value = container.pop(key)
                if _in_use(value) or value == {}:
                    dropped.append(DroppedField(_path(where, key), gate))
    return dropped


def present_fields(obj: Any, patterns: tuple[str, ...]) -> list[list[Path]]:
    """Per dotted pattern (``spec.devices.[].basic.x``), the paths of the fields present in ``obj``,
    in document order — the same walk that finds gated fields (``obj`` is not touched)."""
    group = GatedGroup((), tuple(_p(p) for p in patterns))
    return [[_path(where, key) for _, key, where in matches] for matches in _find(obj, group)]


def pop_present_fields(obj: Any, patterns: tuple[str, ...]) -> int:
    """Remove, in place, every field of ``obj`` the dotted ``patterns`` name; how many went."""
    group = GatedGroup((), tuple(_p(p) for p in patterns))
    removed = 0
    for matches in _find(obj, group):
        for container, key, _ in matches:
            container.pop(key, None)
            removed += 1
    return removed
