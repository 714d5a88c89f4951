"""Informational notes on satisfiable claims: rounding and defaulting of capacity requests.

Why only when *every* candidate agrees: a warning that "7Gi will consume 10Gi" is only true if
no device the request could land on consumes exactly 7Gi.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..k8s import Note, Quantity, Reason, Severity
from .candidates import Candidates, Entry, Status
from .plan import RequestPlan

__all__ = ["capacity_notes"]


def _ok_entries(cand: Candidates) -> list[tuple[Entry, int]]:
    """One entry per profile of the reachable devices the request can land on, with its device count."""
    return [(e, n) for e, n in cand.reachable_profiles() if e.status is Status.OK and e.fit is not None]


def capacity_notes(plans: Sequence[RequestPlan], cands: Mapping[int, Candidates]) -> list[Note]:
    notes: list[Note] = []
    for plan in plans:
        for alt in plan.alternatives:
            ok = _ok_entries(cands[alt.key])
            if not ok:
                continue
            for name, asked in alt.capacity.items():
                amounts: list[Quantity] = []
                for e, _ in ok:
                    assert e.fit is not None
                    hit = next((c for n, a, c in e.fit.rounded if a is asked or n == name or n.endswith("/" + name)), None)
                    if hit is None:
                        break
                    amounts.append(hit)
                else:
                    low = min(amounts)
                    same = all(a == low for a in amounts)
                    shown_amount = str(low) if same else f"at least {low}"
                    notes.append(
                        Note(
                            Reason.CAPACITY_ROUNDED,
                            f'request "{alt.display}": {asked} of {name} will consume {shown_amount} (the devices\' request policy rounds it up)',
                            alt.path.child("capacity").child("requests").key(name),
                            Severity.WARNING,
                            brief=f'{asked}->{shown_amount} {name} for request "{alt.display}" (policy rounds up)',
                        )
                    )
            defaults: dict[str, set[str]] = {}
            publishers: dict[str, int] = {}
            for e, n in ok:
                assert e.fit is not None
                for key in e.dev.capacity:
                    publishers[key] = publishers.get(key, 0) + n
                for key, default in e.fit.defaulted:
                    defaults.setdefault(key, set()).add(str(default))
            for key, values in sorted(defaults.items()):
                count = sum(n for e, n in ok if e.fit is not None and any(k == key for k, _ in e.fit.defaulted))
                if count != publishers.get(key, 0):
                    continue
                shown = " or ".join(sorted(values))
                notes.append(
                    Note(
                        Reason.CAPACITY_DEFAULTED,
                        f'request "{alt.display}": {key} is not requested, so the request policy default {shown} will be consumed',
                        alt.path,
                        Severity.INFO,
                        brief=f'{shown} {key} for request "{alt.display}", the policy default (none requested)',
                    )
                )
    return notes
