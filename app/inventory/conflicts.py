"""Two different objects with one identity among the inventory inputs: a finding, not a silent pick.

Why: ``--inventory prod/ --inventory staging/`` (or two dumps of one cluster taken apart, or a copy
of one Node edited in place) gives the builder two Nodes, DeviceClasses or ResourceSlices of one
name.  The API server can hold only one; which one draguard used decided the answers — "4 of 12
replicas" became "8 of 12" when the arguments were swapped — and nothing said so.

The policy (README "Choices worth knowing"):

- an *identical* duplicate (the same object listed twice, or dumped twice — volatile metadata such
  as ``resourceVersion`` and a Node's heartbeats aside) is fine: it is used once and not reported;
- *different* objects of one identity (kind, namespace, name) are one ``DecodeError`` finding per
  identity that names every source (``file:line``), and the inventory reports a problem, so no
  claim is called ``Unsatisfiable`` against it (``SatisfiabilityUnknown`` names the conflict);
- which variant is used does not depend on the order of the inputs: the one whose canonical form
  sorts first (:func:`essence_key`), so swapping ``--inventory`` arguments never changes a count.

Only what the inventory reads is compared (:func:`essence`): labels and ``spec`` (and a Node's
``status.allocatable``, ``status`` of a claim), never ``resourceVersion``, ``uid``, timestamps,
``managedFields`` or a Node's conditions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..k8s import Finding, Reason, Severity

__all__ = ["Identity", "IdentityLedger", "Occurrence", "essence", "essence_key", "identity_of"]

Identity = tuple[str, str, str]
"""(kind, namespace, name); namespace is empty for cluster-scoped kinds."""

_CLUSTER_SCOPED = frozenset({"DeviceClass", "ResourceSlice", "DeviceTaintRule", "Node", "Namespace"})


def identity_of(obj: Mapping[str, Any]) -> Identity | None:
    """The identity the API server keys ``obj`` by; None for an object without a name
    (``generateName``: every create is a new object, so it conflicts with nothing)."""
    kind = obj.get("kind")
    meta = obj.get("metadata")
    if not isinstance(kind, str) or not isinstance(meta, Mapping):
        return None
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        return None
    namespace = "" if kind in _CLUSTER_SCOPED else str(meta.get("namespace") or "default")
    return (kind, namespace, name)


def essence(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What the inventory reads of ``obj``: two objects with the same essence are the same object."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    out: dict[str, Any] = {"labels": meta.get("labels") or {}, "spec": obj.get("spec")}
    status = obj.get("status") if isinstance(obj.get("status"), Mapping) else None
    if obj.get("kind") == "Node":
        out["allocatable"] = status.get("allocatable") if status is not None else None
    elif obj.get("kind") in ("ResourceClaim", "ResourceClaimTemplate"):
        out["status"] = status
    return out


def essence_key(obj: Mapping[str, Any]) -> str:
    """The canonical text of :func:`essence` (sorted keys): equal objects give equal keys, and the
    variant with the smallest key is the one used, whatever the order of the inputs."""
    return json.dumps(essence(obj), sort_keys=True, separators=(",", ":"), default=str)


@dataclass(slots=True)
class Occurrence:
    """Where one variant of an identity was read: enough to name it later (``file:line``)."""

    source: str
    index: int
    item: int | None
    line: int = 0
    slot: int = -1
    """The caller's handle for the object (its position among the kept objects); -1 for none."""


@dataclass(slots=True)
class _Seen:
    """An identity read more than once: its first occurrence and each distinct variant."""

    first: Occurrence
    key: str | None = None
    variants: dict[str, Occurrence] = field(default_factory=dict)
    """essence key → where that variant was first read (filled only once a second object arrives)."""


@dataclass(slots=True)
class IdentityLedger:
    """Every identity read so far and, for the few read twice, whether the copies agree.

    :meth:`offer` is called once per object as it streams past and costs a dict lookup for an
    identity seen once; only a second object of one identity is compared (``earlier`` fetches the
    first; without it the key is computed at once, for objects the caller does not keep raw)."""

    _seen: dict[Identity, _Seen | tuple[str, int, int | None, int]] = field(default_factory=dict)
    """An identity read once is a plain tuple (source, index, item, slot): a 100,000-Node inventory
    reads every identity once, and the ledger should cost it little."""
    conflicts: dict[Identity, _Seen] = field(default_factory=dict)

    def offer(self, identity: Identity, obj: Mapping[str, Any], where: Occurrence,
              earlier: Callable[[Occurrence], Mapping[str, Any] | None] | None = None) -> tuple[str, bool]:
        """``("new", True)`` (keep it), ``("same", False)`` (an identical copy: drop it) or
        ``("conflict", wins)``: a different object of a known identity, recorded; ``wins`` is whether
        it is now the variant to use (:meth:`winners`)."""
        got = self._seen.get(identity)
        if got is None:
            if earlier is None:
                seen = self._seen[identity] = _Seen(where, essence_key(obj))
                seen.variants[essence_key(obj)] = where
            else:
                self._seen[identity] = (where.source, where.index, where.item, where.slot)
            return "new", True
        if isinstance(got, tuple):
            got = self._seen[identity] = _Seen(Occurrence(got[0], got[1], got[2], slot=got[3]))
        seen = got
        if seen.key is None:
            first = earlier(seen.first) if earlier is not None else None
            seen.key = essence_key(first) if first is not None else ""
            seen.variants[seen.key] = seen.first
        key = essence_key(obj)
        if key in seen.variants:
            return "same", False
        seen.variants[key] = where
        self.conflicts[identity] = seen
        return "conflict", key == min(seen.variants)

    def winners(self) -> dict[Identity, Occurrence]:
        """Per conflicting identity, the variant used: the smallest essence key (order-independent)."""
        return {ident: seen.variants[min(seen.variants)] for ident, seen in self.conflicts.items()}

    def unlocated(self) -> dict[str, dict[tuple[Identity, str], Occurrence]]:
        """Per source, the variants whose line is not known yet, by (identity, essence key): a
        caller reads each such source once more to find them (only when there are conflicts)."""
        out: dict[str, dict[tuple[Identity, str], Occurrence]] = {}
        for ident, seen in self.conflicts.items():
            for key, occ in seen.variants.items():
                if not occ.line:
                    out.setdefault(occ.source, {})[(ident, key)] = occ
        return out

    def findings(self) -> list[Finding]:
        """One error per conflicting identity, naming every variant's ``file:line`` and the one used."""
        out: list[Finding] = []
        for ident, seen in sorted(self.conflicts.items()):
            kind, namespace, name = ident
            places = sorted(seen.variants.values(), key=lambda o: (o.source, o.line, o.index, o.item or 0))
            used = seen.variants[min(seen.variants)]
            where = [_where(occ) for occ in places]
            label = f"{kind} {namespace + '/' if namespace else ''}{name}"
            last = places[-1]
            out.append(Finding(
                severity=Severity.ERROR, reason=Reason.DECODE_ERROR,
                message=(f"inventory conflict: {label} is defined {len(places)} times with different content "
                         f"({', '.join(where)}); the cluster can hold only one (two environments' inputs "
                         f"mixed?): draguard uses the one at {_where(used)} whatever the order of the inputs, "
                         "and proves nothing unsatisfiable against this inventory"),
                kind=kind, namespace=namespace, name=name, file=last.source, line=last.line,
                details={"identity": {"kind": kind, "namespace": namespace, "name": name},
                         "sources": where, "used": _where(used)},
            ))
        return out


def _where(occ: Occurrence) -> str:
    return f"{occ.source}:{occ.line}" if occ.line else f"{occ.source} (document {occ.index + 1})"
