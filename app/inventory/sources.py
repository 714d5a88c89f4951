"""Where an inventory comes from — nothing, files (folders, stdin) read once, or the live cluster —
behind the one interface both doors use.

Why one interface: ``draguard lint --inventory`` and ``draguard serve --inventory`` must read
the same files the same way and treat a bad document the same way, and a review only needs
"the current snapshot, the raw objects, and what is wrong with them"; whether they came from
files or from list+watch (:class:`app.inventory.kube.KubeInventory`) is decided once, by
:func:`open_inventory`.

The bad-document policy (README "Choices worth knowing"): a document of an inventory file that
cannot be decoded is reported as a ``DecodeError`` finding naming file and line
(:meth:`InventorySource.findings`), the rest of the inventory is used, and the source reports a
:meth:`~InventorySource.problem` — so no claim is ever called ``Unsatisfiable`` against an
inventory that may be missing the very devices that would satisfy it; claims get
``SatisfiabilityUnknown`` naming the bad document instead.  ``lint`` prints the finding (and
fails on it, it is an error); ``serve`` starts, logs it, and shows it in ``/readyz`` — a webhook
that refuses to start over one bad line would block every claim under ``failurePolicy: Fail``.
A path that does not exist is a usage error (exit 2) in both.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from ..k8s import DEFAULT_TARGET, INVENTORY_KINDS, Finding, Target
from .build import build_inventory
from .claims import CLAIM_KINDS, ClaimReducer
from .cluster import HeldClaim, ObjectKey
from .conflicts import IdentityLedger, Occurrence, essence_key, identity_of
from .files import STDIN_NAME, InputError, iter_paths
from .held import with_cluster
from .packed import PackedObjects
from .snapshot import Inventory

if TYPE_CHECKING:
    from .kubeconfig import KubeConfig

__all__ = ["InventorySource", "NoInventory", "StaticInventory", "open_inventory"]


class InventorySource(Protocol):
    """What reviews, readiness and metrics need from an inventory, wherever it comes from."""

    @property
    def synced(self) -> bool: ...

    def snapshot(self) -> Inventory | None: ...

    def problem(self) -> str | None:
        """Why satisfiability answers cannot be trusted right now (None when they can)."""
        ...

    def findings(self) -> list[Finding]:
        """What was wrong with the inventory's own documents (``DecodeError`` findings)."""
        ...

    def objects(self) -> Sequence[dict[str, Any]]: ...

    def last_sync_age(self) -> float | None: ...

    def status(self) -> dict[str, Any]: ...

    async def run(self) -> None:
        """Keep the snapshot current for the life of the server (returns at once when read once)."""
        ...


class NoInventory:
    """No inventory configured: satisfiability is simply not checked."""

    restarts = 0
    synced = True
    instant_snapshot = True
    """``snapshot()`` and ``problem()`` return at once (attribute reads): the server may ask them
    on its event loop (a source without this attribute is asked in a worker thread only)."""

    def snapshot(self) -> Inventory | None:
        return None

    def problem(self) -> str | None:
        return None

    def findings(self) -> list[Finding]:
        return []

    def objects(self) -> Sequence[dict[str, Any]]:
        return []

    def last_sync_age(self) -> float | None:
        return None

    def status(self) -> dict[str, Any]:
        return {"source": "none", "synced": True}

    async def run(self) -> None:
        return None


_OTHER_TARGETS = 4
"""How many builds of one file inventory for other targets than the server's are kept."""


class StaticInventory:
    """DeviceClasses, ResourceSlices, Nodes and Namespaces from files, folders or ``-``, read once.

    ResourceClaims and ResourceClaimTemplates among them are what the cluster holds (the cluster state):
    they are reduced as they stream past (:mod:`.claims`; no raw object is kept) into the
    snapshot's :class:`~.cluster.ClusterState`, allocated claims being allocations.  The state is
    ``known`` when at least one of them was found (an inventory folder without any says nothing
    about the cluster's claims).

    Raises :class:`~app.inventory.files.InputError` for a path that does not exist or cannot be
    read; bad documents inside readable files follow the module's policy instead.
    """

    instant_snapshot = True  # see NoInventory

    restarts = 0
    synced = True

    def __init__(self, paths: Sequence[str], *, stdin_text: str | None = None, target: Target = DEFAULT_TARGET) -> None:
        self.paths = list(paths)
        self._findings: list[Finding] = []
        self._objects = PackedObjects()
        self._claims: dict[ObjectKey, HeldClaim] = {}
        self._templates: dict[ObjectKey, object] = {}
        self._reducer = ClaimReducer()
        self.target = target
        self._other_targets: dict[object, Inventory] = {}
        self._ledger = IdentityLedger()
        snapshot = build_inventory(self._read(stdin_text), target=target)
        if self._ledger.conflicts:
            snapshot = self._settle_conflicts()
        del self._ledger
        self._snapshot = self._with_claims(snapshot)
        self._loaded_at = time.monotonic()

    def _with_claims(self, snapshot: Inventory) -> Inventory:
        if self._claims or self._templates:
            return with_cluster(snapshot, self._claims, self._templates, known=True)
        return snapshot

    def __getstate__(self) -> dict[str, object]:
        """What a built file inventory is (:mod:`.filecache` keeps it on disk): the reducer's
        interning tables and the load time are not part of it."""
        return {"paths": self.paths, "findings": self._findings, "objects": self._objects,
                "claims": self._claims, "templates": self._templates, "snapshot": self._snapshot,
                "target": (self.target.version, dict(self.target.overrides))}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.paths = state["paths"]
        self._findings = state["findings"]
        self._objects = state["objects"]
        self._claims = state["claims"]
        self._templates = state["templates"]
        self._snapshot = state["snapshot"]
        version, overrides = state.get("target", (DEFAULT_TARGET.version, {}))
        self.target = Target(version, MappingProxyType(dict(overrides)))
        self._other_targets = {}
        self._reducer = ClaimReducer()
        self._loaded_at = time.monotonic()

    def _read(self, stdin_text: str | None) -> Iterator[Mapping[str, Any]]:
        """The inventory objects of every file, one file at a time: each is packed for
        :meth:`objects` and handed to the builder, and its dicts are freed once the builder has
        decoded them (see :mod:`.packed`)."""
        for part in iter_paths(self.paths, stdin_text=stdin_text):
            self._findings.extend(part.findings)
            for doc in part.documents:
                if doc.kind in INVENTORY_KINDS:
                    verdict, _ = self._offer(doc, len(self._objects))
                    if verdict == "same":
                        continue  # an identical copy (the same object listed twice): used once
                    self._objects.append_packed(PackedObjects.pack(doc.obj))
                    if verdict == "new":
                        yield doc.obj
                    # a conflicting variant is kept aside: _settle_conflicts picks one after the build
                elif doc.kind in CLAIM_KINDS and isinstance(doc.obj, dict):
                    verdict, wins = self._offer(doc, -1)
                    if verdict == "new" or (verdict == "conflict" and wins):
                        self._keep_claim(doc.kind, doc.obj)

    def _offer(self, doc: Any, slot: int) -> tuple[str, bool]:
        """The ledger's verdict on one document (:mod:`.conflicts`); a nameless object is always new."""
        identity = identity_of(doc.obj) if isinstance(doc.obj, Mapping) else None
        if identity is None:
            return "new", True
        where = Occurrence(doc.source, doc.index, doc.item, slot=slot)
        earlier = (lambda occ: self._objects[occ.slot]) if slot >= 0 else None
        verdict, wins = self._ledger.offer(identity, doc.obj, where, earlier)
        if verdict == "conflict":
            where.line = doc.line
        return verdict, wins

    def _settle_conflicts(self) -> Inventory:
        """Different objects of one identity were read: keep the variant :mod:`.conflicts` picks
        (whatever the order of the inputs), build again from the kept objects, and report each
        identity once, naming every source."""
        ledger = self._ledger
        winners = ledger.winners()
        dropped = {occ.slot for ident, seen in ledger.conflicts.items() for occ in seen.variants.values()
                   if occ.slot >= 0 and occ is not winners[ident]}
        self._objects = PackedObjects(obj for i, obj in enumerate(self._objects) if i not in dropped)
        for source, wanted in ledger.unlocated().items():
            if source != STDIN_NAME:
                _locate(source, wanted)
        self._findings.extend(ledger.findings())
        return build_inventory(iter(self._objects), target=self.target)

    def _keep_claim(self, kind: str, obj: dict[str, Any]) -> None:
        if kind == "ResourceClaim":
            claim = self._reducer.claim(obj)
            if claim is not None:
                self._claims[(claim.namespace, claim.name)] = claim
            return
        template = self._reducer.template(obj)
        if template is not None:
            self._templates[template[0]] = template[1]

    def snapshot(self) -> Inventory | None:
        return self._snapshot

    def snapshot_for(self, target: Target) -> Inventory:
        """The snapshot as the ``target`` API server would store these files.

        Why: ``/lint?kubernetes-version=`` answers for another target than the server's, and a
        file inventory is stored differently per target (a 1.35 server drops a slice's
        ``allowMultipleAllocations``); the CLI builds it for the asked target, so the endpoint must
        too, or the two doors disagree.  At most :data:`_OTHER_TARGETS` builds are kept (a server
        has one target; a query for another is rare and its build is reused)."""
        if target.key == self.target.key:
            return self._snapshot
        built = self._other_targets.get(target.key)
        if built is None:
            if len(self._other_targets) >= _OTHER_TARGETS:
                self._other_targets.clear()
            built = self._with_claims(build_inventory(iter(self._objects), target=target))
            self._other_targets[target.key] = built
        return built

    def problem(self) -> str | None:
        if not self._findings:
            return None
        conflict = next((f for f in self._findings if "identity" in f.details), None)
        if conflict is not None:
            return (f"inventory ambiguous: {conflict.kind} {conflict.name} is defined differently in "
                    f"{' and '.join(conflict.details['sources'])}")
        first = self._findings[0]
        where = f"{first.file}:{first.line}" if first.line else first.file
        more = f" and {len(self._findings) - 1} more" if len(self._findings) > 1 else ""
        return f"inventory incomplete: a document could not be read ({where}{more})"

    def findings(self) -> list[Finding]:
        return list(self._findings)

    def objects(self) -> Sequence[dict[str, Any]]:
        return self._objects

    def last_sync_age(self) -> float | None:
        return time.monotonic() - self._loaded_at

    def status(self) -> dict[str, Any]:
        return {
            "source": "files",
            "synced": True,
            "paths": self.paths,
            "objects": len(self._objects),
            "claims": len(self._claims),
            "templates": len(self._templates),
            "bad_documents": len(self._findings),
        }

    async def run(self) -> None:
        return None


def _locate(source: str, wanted: dict[tuple[tuple[str, str, str], str], Occurrence]) -> None:
    """Read ``source`` once more to find the lines of the conflicting variants first read there
    (their documents were let go as they streamed past; only a conflict needs them again)."""
    try:
        for part in iter_paths([source]):
            for doc in part.documents:
                identity = identity_of(doc.obj) if isinstance(doc.obj, Mapping) else None
                if identity is None:
                    continue
                occ = wanted.get((identity, essence_key(doc.obj)))
                if occ is not None and not occ.line:
                    occ.line = doc.line
    except InputError:
        return  # the finding then names the document's number instead of its line


def open_inventory(
    paths: Sequence[str] = (),
    *,
    kube_config: KubeConfig | None = None,
    stdin_text: str | None = None,
    target: Target = DEFAULT_TARGET,
    disk_cache: bool = False,
    stale_after: float | None = None,
) -> InventorySource:
    """The source for a door's flags: files, the API server, or nothing.

    ``disk_cache``: files (not standard input) may be read back as built by an earlier run over
    the same bytes, target and code (:mod:`.filecache`; ``draguard lint`` asks for it).
    Raises ``ValueError`` when both files and a cluster are given (they would disagree), and
    :class:`~app.inventory.files.InputError` for a path that cannot be read.
    """
    if paths and kube_config is not None:
        raise ValueError("use either inventory files or the API server, not both")
    if kube_config is not None:
        from .kube import KubeInventory  # httpx only when a cluster is asked for

        # built for the target: whether DeviceTaintRules apply, what a selector-less rule selects
        if stale_after is None:
            return KubeInventory(kube_config, target=target)
        return KubeInventory(kube_config, target=target, stale_after=stale_after)
    if paths and disk_cache and stdin_text is None:
        from .filecache import cached_build

        return cached_build(paths, target, lambda: StaticInventory(paths, target=target))
    if paths:
        return StaticInventory(paths, stdin_text=stdin_text, target=target)  # a cluster drops fields itself
    return NoInventory()
