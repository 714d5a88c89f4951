"""The webhook's answer memo: one remembered review per distinct object (issue #21).

Why: a warm review still re-runs decoding, API-parity validation and the satisfiability lookup
for objects the webhook has seen already — the claims of one template, a Deployment's replica
Pods, a controller re-applying the same object — about 1 ms of CPU each, three times what the
HTTP stack itself costs.  The answer depends only on what the key below holds, so it is looked
up on the event loop before a worker thread is even asked; a hit does everything per review
that can be observed (its own ``uid`` and, for a denial, its own name in the response, the one
log line, the metrics by reason) and nothing else.

**The key** is everything the pipeline reads (``app.review.review_admission``):

* the route, the AdmissionRequest's kind (group, version, kind), operation and namespace;
* the object and the old object as decoded, byte for byte in their own key order (the order of
  labels can order findings), hashed with BLAKE2b-256 — except the *volatile* top-level metadata
  fields in :data:`VOLATILE_METADATA` (``uid``, ``resourceVersion``, ``creationTimestamp``,
  ``managedFields``) when they are well-typed: no rule reads them (the API server resets them on
  create; ``app/validation/meta.py``), only the decoder checks their JSON type, so an ill-typed
  one stays in the key.  On UPDATE ``uid`` stays in the key (its change is an error);
* the review options (the object of the route, by identity) and the inventory snapshot (by
  identity: a new snapshot — devices or cluster state — starts an empty memo), and no entry
  at all while the inventory has a problem (not synced, stale: transient);
* for a ResourceClaim, whether the cluster holds an allocated claim of that namespace and name
  (the only place the pipeline looks its own name up).

**Without the name.** ``metadata.name``, ``generateName`` and the owner references' names and
uids differ between a Deployment's Pods and between the claims made from one template, and no
rule reads them except to check their syntax (``valid_object_names``; owner references only for
being non-empty).  So when they pass those checks they are replaced in the key by a placeholder
that itself passes them; the response's denial message is rendered with the request's own name.
A finding could still *quote* one (a message naming the object), so after a miss the answer is
kept name-free only when none of those values occurs in any finding's message, brief, field or
details, nor in a patch; otherwise it is kept under a key with the values themselves.

**Never remembered:** an answer something cut short — a finding with ``fail_open``, any
:class:`~app.k8s.BudgetExceeded` made during the review (even one a check suppressed), a review
that ran for as long as the satisfiability search's own deadline (a search may have stopped
there), an unsynced or stale inventory — and bodies over :data:`MAX_BODY_BYTES` (the key is
made on the event loop).

**Bounded:** a least-recently-used table of at most :data:`MEMO_WEIGHT` weight units, one
entry per distinct key; an entry weighs one unit per started KiB of its findings' text, so the
table holds 4,096 typical answers (a few hundred bytes each; ~2–4 MB) and never more than
~4 MB of finding text.  4,096 distinct objects is more than the claim templates and workload
templates of a large cluster that are created again and again; a stream of distinct objects
only evicts (README "Process-wide state").
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from ..inventory import BoundedCache, Inventory, InventorySource
from ..k8s import exceeded_on_thread
from ..report import limit_warnings
from ..review import ObjectReview, ReviewOptions
from ..validation import valid_object_names
from .references import Resolved, SourceLookups, resolve_references
from .webhook import AdmissionCall, Answer, Route, answer_for, review_object

__all__ = ["MAX_BODY_BYTES", "MEMO_WEIGHT", "VOLATILE_METADATA", "AnswerMemo", "MemoKey", "Remembered", "answer_call", "complete", "lookup", "memo_key",
           "review_and_remember", "stale_problem"]

MEMO_WEIGHT = 4096
"""Weight units of the memo: one per entry plus one per KiB of its findings' text."""
MAX_BODY_BYTES = 256 * 1024
"""Larger AdmissionReviews are never looked up: their key would cost the event loop too long."""
VOLATILE_METADATA = {
    "uid": str,
    "resourceVersion": str,
    "creationTimestamp": str,
    "managedFields": list,
}
"""Top-level metadata fields left out of the key when of this JSON type, or null for the strings
(the decoder's types: ``app.k8s.models.ObjectMeta``); no rule reads them."""
_PLACEHOLDER = "x"  # passes every check a left-out name passes, so no kept value can equal it by accident


@dataclass(frozen=True, slots=True)
class MemoKey:
    """What one review's answer depends on (besides snapshot and options, which own the table)."""

    digest: bytes
    """BLAKE2b-256 of route, kind, operation, namespace, object and old object (names left out)."""
    held_allocated: bool
    """A ResourceClaim: the cluster holds an allocated claim of its namespace and name."""
    names: tuple[str, ...]
    """The values left out of ``digest`` (name, generateName, owners' names and uids), in order."""


def _well_typed(key: str, value: Any) -> bool:
    kind = VOLATILE_METADATA[key]
    if kind is list:
        return isinstance(value, list) and all(isinstance(item, dict) for item in value)
    return value is None or isinstance(value, kind)


def _owners(refs: Any, left_out: list[str]) -> Any:
    """Owner references with non-empty string names and uids replaced (only emptiness is checked)."""
    if not isinstance(refs, list):
        return refs
    out: list[Any] = []
    for ref in refs:
        if isinstance(ref, dict):
            ref = dict(ref)
            for field in ("name", "uid"):
                value = ref.get(field)
                if isinstance(value, str) and value:
                    left_out.append(value)
                    ref[field] = _PLACEHOLDER
        out.append(ref)
    return out


def _keyed_object(obj: Mapping[str, Any] | None, *, keep_uid: bool, left_out: list[str] | None) -> Any:
    """``obj`` as it enters the key: volatile metadata dropped, names replaced when ``left_out``
    collects them (in place of the object: the caller's dict never changes)."""
    if obj is None:
        return None
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return obj
    name, generate_name = meta.get("name"), meta.get("generateName")
    name_ok, generate_ok = (False, False)
    if left_out is not None and isinstance(name, str):
        name_ok, generate_ok = valid_object_names(name, generate_name if isinstance(generate_name, str) else "")
    kept: dict[str, Any] = {}
    for key, value in meta.items():
        if key in VOLATILE_METADATA and not (keep_uid and key == "uid") and _well_typed(key, value):
            continue
        if left_out is not None:
            if (key == "name" and name_ok) or (key == "generateName" and generate_ok):
                left_out.append(value)
                value = _PLACEHOLDER
            elif key == "ownerReferences" and name_ok:
                value = _owners(value, left_out)
        kept[key] = value
    return {**obj, "metadata": kept}


def _held_allocated(call: AdmissionCall, snapshot: Inventory) -> bool:
    """What ``review_admission`` asks the cluster about the claim itself: is it allocated there."""
    if call.kind != "ResourceClaim" or not isinstance(call.obj, dict):
        return False
    meta = call.obj.get("metadata")
    if not isinstance(meta, dict):
        return False
    namespace = meta.get("namespace") or call.namespace or "default"
    name = meta.get("name") or meta.get("generateName") or ""
    held = snapshot.cluster.claims.get((namespace, name)) if isinstance(namespace, str) and isinstance(name, str) else None
    return held is not None and held.allocation is not None


def memo_key(call: AdmissionCall, route: Route, snapshot: Inventory) -> MemoKey | None:
    """The key of ``call``'s answer; None when it cannot be made (nesting orjson refuses, integers
    beyond 64 bits): such a call is simply reviewed."""
    left_out: list[str] | None = [] if call.operation == "CREATE" else None
    obj = _keyed_object(call.obj, keep_uid=call.operation == "UPDATE", left_out=left_out)
    old = _keyed_object(call.old_obj, keep_uid=True, left_out=None)
    try:
        text = orjson.dumps([route, call.group, call.version, call.kind, call.operation, call.namespace, obj, old])
    except (TypeError, orjson.JSONEncodeError):
        return None
    digest = hashlib.blake2b(text, digest_size=32).digest()
    return MemoKey(digest, _held_allocated(call, snapshot), tuple(left_out or ()))


def _quotes(review: ObjectReview, values: tuple[str, ...]) -> bool:
    """Whether any finding (or the patch) could show one of the left-out values."""
    if not values:
        return False
    parts: list[str] = []
    for f in review.findings:
        parts += (f.message, f.brief, f.field)
        if f.details:
            parts.append(orjson.dumps(f.details, default=str).decode())
    parts += review.patch_descriptions
    if review.patch:
        parts.append(orjson.dumps(review.patch, default=str).decode())
    text = "\n".join(parts)
    return any(v in text for v in values)


def _weight(review: ObjectReview) -> int:
    size = sum(len(f.message) + len(f.brief) + len(f.field) + 200 for f in review.findings)
    size += sum(len(d) for d in review.patch_descriptions) + 100 * len(review.patch)
    return 1 + size // 1024


@dataclass(slots=True)
class Remembered:
    """A remembered review, and the answers made from it: the allowed one once (only ``uid``
    differs between the allowed answers of equal objects), a denial once per name (it names its
    object: ``answer_for`` reads only the call's uid, kind, group and name, and the kind and group
    are in the key) — the last one made, which is the one a controller retrying the same object
    asks for again."""

    review: ObjectReview
    allowed: Answer | None = None
    denied: tuple[str, Answer] | None = None

    def answer(self, call: AdmissionCall, route: Route) -> Answer:
        made = self.allowed
        if made is None:
            named = self.denied
            if named is None or named[0] != call.name:
                answer = answer_for(call, route, self.review)
                if answer.decision == "allowed":
                    self.allowed = answer
                else:
                    self.denied = (call.name, answer)
                return answer
            made = named[1]
        return Answer({**made.response, "uid": call.uid}, made.decision, made.reason, made.reasons, 0.0,
                      made.fail_open)


class AnswerMemo:
    """Remembered reviews of the current inventory snapshot and review options.

    Lookups run on the event loop, stores in worker threads; the table follows one (snapshot,
    options) pair at a time — ``options`` is whatever object stands for the routes' options, by
    identity — and is emptied when a review made on a newer pair is stored.
    """

    def __init__(self, weight: int = MEMO_WEIGHT, references: SourceLookups | None = None) -> None:
        self._cache = BoundedCache(weight)
        self.references = references if references is not None else SourceLookups()
        """The API-server lookup of references the live picture lacks (``references.py``)."""
        self._owner: tuple[Inventory, object] | None = None
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.stale_decisions: dict[tuple[str, str], int] = {}
        """``/validate`` answers made while the live inventory was stale, by (decision, reason)."""

    def _owns(self, snapshot: Inventory, options: object) -> bool:
        owner = self._owner
        return owner is not None and owner[0] is snapshot and owner[1] is options

    def get(self, key: MemoKey, snapshot: Inventory, options: object) -> Remembered | None:
        """The remembered review for ``key``: name-free first, then under its own names."""
        found: object | None = None
        if self._owns(snapshot, options):
            found = self._cache.get((key.digest, key.held_allocated, None))
            if found is None and key.names:
                found = self._cache.get((key.digest, key.held_allocated, key.names))
        if isinstance(found, Remembered):
            self.hits += 1
            return found
        self.misses += 1
        return None

    def put(self, key: MemoKey, snapshot: Inventory, options: object, review: ObjectReview, *, current: bool) -> None:
        """Remember ``review`` (judged complete by the caller: :func:`complete`) while ``snapshot``
        is still the source's ``current`` one; a store for a newer pair empties the table first."""
        if not current:
            return
        names = key.names if _quotes(review, key.names) else None
        weight = _weight(review)
        with self._lock:
            if not self._owns(snapshot, options):
                self._cache = BoundedCache(self._cache.budget)
                self._owner = (snapshot, options)
            self._cache.put((key.digest, key.held_allocated, names), Remembered(review), weight)

    def __len__(self) -> int:
        return len(self._cache)

    def stats(self) -> dict[str, int]:
        """Entries, weight, hits, misses and evictions, for ``/metrics``."""
        cache = self._cache
        return {"entries": len(cache), "weight": cache.weight, "limit": cache.budget, "hits": self.hits,
                "misses": self.misses, "evictions": cache.evictions}

    def note_stale(self, answer: Answer) -> None:
        """Count one answer made while the inventory was stale (``draguard_stale_decisions_total``)."""
        key = (answer.decision, answer.reason or "none")
        with self._lock:
            self.stale_decisions[key] = self.stale_decisions.get(key, 0) + 1


def complete(review: ObjectReview, *, seconds: float, exceeded: int, search_deadline: float | None) -> bool:
    """Whether ``review`` may be remembered: nothing cut it short.

    ``exceeded`` is how many :class:`~app.k8s.BudgetExceeded` were made on the thread during the
    review (``exceeded_on_thread`` after minus before); ``seconds`` its duration: a satisfiability
    search stops at ``search_deadline`` after it started, so a review shorter than that was never
    stopped by one.
    """
    if exceeded or any(f.extra.get("fail_open") for f in review.findings):
        return False
    return search_deadline is None or seconds < search_deadline


def lookup(memo: AnswerMemo, call: AdmissionCall, route: Route, snapshot: Inventory | None, problem: str | None,
           generation: object, *, size: int) -> tuple[MemoKey | None, Remembered | None]:
    """The call's key (None: not to be remembered) and the review remembered under it, if any.

    ``generation`` stands for the routes' options (a change of them empties the memo); ``size``
    is the body's length in bytes."""
    if snapshot is None or problem is not None or size > MAX_BODY_BYTES:
        return None, None
    key = memo_key(call, route, snapshot)
    return key, memo.get(key, snapshot, generation) if key is not None else None


def review_and_remember(memo: AnswerMemo, call: AdmissionCall, route: Route, source: InventorySource,
                        snapshot: Inventory | None, problem: str | None, options: ReviewOptions, generation: object,
                        key: MemoKey | None) -> Answer:
    """The pipeline's answer (CPU-bound: in a worker thread), remembered under ``key`` when
    nothing cut it short and ``snapshot`` is still the source's current one."""
    before, started = exceeded_on_thread(), time.monotonic()
    resolved = _resolve_references(memo, call, route, source, snapshot, options)
    if resolved.asked:
        key = None  # the answer depends on what the API server said just now, not on the snapshot alone
    review = review_object(call, resolved.snapshot, problem, options)
    if key is not None and snapshot is not None and complete(
            review, seconds=time.monotonic() - started, exceeded=exceeded_on_thread() - before,
            search_deadline=options.deadline_seconds):
        memo.put(key, snapshot, generation, review, current=source.snapshot() is snapshot)
    answer = answer_for(call, route, review)
    stale = stale_problem(source, problem)
    if stale is not None and route == "validate":
        _mark_stale(answer, stale)
        memo.note_stale(answer)
    return answer


def _resolve_references(memo: AnswerMemo, call: AdmissionCall, route: Route, source: InventorySource,
                        snapshot: Inventory | None, options: ReviewOptions) -> Resolved:
    """The snapshot a pod or workload is reviewed on: with the claims and templates it names that
    the live picture lacks and the API server has (issue #35: read-your-writes within one apply)."""
    if route != "validate":
        return Resolved(snapshot)
    api_version = f"{call.group}/{call.version}" if call.group else call.version
    return resolve_references(memo.references.for_source(source), snapshot, kind=call.kind, api_version=api_version,
                              operation=call.operation, namespace=call.namespace, obj=call.obj, old_obj=call.old_obj,
                              workload_kinds=options.workload_kinds)


# ---------------------------------------------------------------- a stale live inventory (issue #36)
def stale_problem(source: object, problem: str | None) -> str | None:
    """``problem`` when it is that of a live source whose picture went stale after it synced
    (its ``stale()`` says so; a wrapper such as ``WithPotential`` is looked through by its
    ``inner``), else None: an unsynced start or a file's unreadable document is not staleness."""
    if problem is None:
        return None
    for _ in range(4):  # wrappers nest a few deep at most
        probe = getattr(source, "stale", None)
        if callable(probe):
            return problem if probe() is not None else None
        source = getattr(source, "inner", None)
        if source is None:
            break
    return None


def _mark_stale(answer: Answer, problem: str) -> None:
    """Every ``/validate`` answer made from a stale picture says so, first among its warnings (a
    claim's or pod's ``SatisfiabilityUnknown`` already carries it: not twice).  The pipeline made
    no satisfiability answer at all, so no denial comes from the stale picture."""
    warnings = list(answer.response.get("warnings") or [])
    lead = problem.split(": ", 1)[0]  # "inventory stale since 12:03:04Z"
    if not any(lead in w for w in warnings):
        answer.response["warnings"] = limit_warnings([f"draguard: {problem}", *warnings])


def answer_call(memo: AnswerMemo, call: AdmissionCall, route: Route, source: InventorySource, options: ReviewOptions,
                generation: object, *, size: int) -> Answer:
    """The answer remembered for an equal object, else the pipeline's (remembered when complete),
    all of it in the calling thread: for sources whose ``snapshot()`` may wait (one that builds on
    demand), which the event loop must never call."""
    snapshot, problem = source.snapshot(), source.problem()
    key, remembered = lookup(memo, call, route, snapshot, problem, generation, size=size)
    if remembered is not None:
        return remembered.answer(call, route)
    return review_and_remember(memo, call, route, source, snapshot, problem, options, generation, key)
