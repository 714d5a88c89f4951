"""Version-specific allocator behaviour: where an older target's allocator differs from 1.36's.

Why here and not in the review layer: the search follows the 1.36 allocator, so whether one of its
proofs holds for another target is a fact about allocators, decided beside the search.  Where an
older allocator is more permissive (1.34 compares ``distinctAttribute`` values by pointer, so
two different devices with equal values pass), a 1.36 proof is no proof for that target: it becomes SatisfiabilityUnknown, saying why.
"""

from __future__ import annotations

from ..capacity import qualified_capacity_names, target_qualifies_names
from ..k8s import Note, Reason, ResourceClaimSpec, Severity, Target

__all__ = ["sound_for_target"]


def _asks_capacity(spec: ResourceClaimSpec) -> bool:
    for request in spec.devices.requests:
        alternatives = [request.exactly] if request.exactly is not None else list(request.first_available)
        if any(alt.capacity is not None and alt.capacity.requests for alt in alternatives):
            return True
    return False


def sound_for_target(notes: list[Note], spec: ResourceClaimSpec, target: Target) -> list[Note]:
    """``notes`` with every Unsatisfiable that the target's own allocator might not share made unknown.

    1.38 resolves capacity request names with the driver's domain (``app.capacity.names``); a proof
    found with exact names (no :func:`~app.capacity.names.capacity_names_for` scope around the check)
    is no proof there for a claim that names capacities.
    """
    if target_qualifies_names(target) and not qualified_capacity_names() and _asks_capacity(spec):
        return _unknown(
            notes,
            f"not decided for Kubernetes {target.version}, whose allocator also finds a capacity by "
            "`<driver>/<name>` or `<name>` (the check ran with exact names)",
        )
    distinct = any(c.distinct_attribute is not None for c in spec.devices.constraints)
    if target.version != "1.34" or not distinct:
        return notes
    return _unknown(
        notes,
        "not decided for Kubernetes 1.34, whose allocator checks distinctAttribute "
        "differently (two devices with equal values can pass); draguard models 1.36's",
    )


def _unknown(notes: list[Note], why: str) -> list[Note]:
    return [
        Note(
            Reason.SATISFIABILITY_UNKNOWN,
            f"{note.message} — {why}",
            note.path,
            Severity.WARNING,
        )
        if note.reason == Reason.UNSATISFIABLE
        else note
        for note in notes
    ]
