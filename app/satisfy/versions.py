"""Version-specific allocator behaviour: where an older target's allocator differs from 1.36's.

Why here and not in the review layer: the search follows the 1.36 allocator, so whether one of its
proofs holds for another target is a fact about allocators, decided beside the search.  Where an
older allocator is more permissive (1.34 compares ``distinctAttribute`` values by pointer, so
two different devices with equal values pass), a 1.36 proof is no proof for that target: it becomes SatisfiabilityUnknown, saying why.
"""

from __future__ import annotations

from ..k8s import Note, Reason, ResourceClaimSpec, Severity, Target

__all__ = ["sound_for_target"]


def sound_for_target(notes: list[Note], spec: ResourceClaimSpec, target: Target) -> list[Note]:
    """``notes`` with every Unsatisfiable that the target's own allocator might not share made unknown."""
    distinct = any(c.distinct_attribute is not None for c in spec.devices.constraints)
    if target.version != "1.34" or not distinct:
        return notes
    return [
        Note(
            Reason.SATISFIABILITY_UNKNOWN,
            f"{note.message} — not decided for Kubernetes 1.34, whose allocator checks distinctAttribute "
            "differently (two devices with equal values can pass); draguard models 1.36's",
            note.path,
            Severity.WARNING,
        )
        if note.reason == Reason.UNSATISFIABLE
        else note
        for note in notes
    ]
