"""Informational notes on satisfiable claims: rounding and defaulting of capacity requests, and a
capacity request on devices that cannot be shared.

Why only when *every* candidate agrees: a warning that "7Gi will consume 10Gi" is only true if
no device the request could land on consumes exactly 7Gi — and "the claim takes a whole device"
only if no device it could land on allows multiple allocations.  Amounts are shown as written
or in their short form (:meth:`~app.k8s.Quantity.short`: ``10G``, never ``9765625Ki``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..k8s import Note, Quantity, Reason, Severity
from .candidates import Candidates, Entry, Status
from .plan import Alternative, RequestPlan

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
            whole = _whole_device(alt, ok)
            if whole is not None:
                notes.append(whole)
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
                    shown_amount = low.short() if same else f"at least {low.short()}"
                    notes.append(
                        Note(
                            Reason.CAPACITY_ROUNDED,
                            f'request "{alt.display}": {asked.short()} of {name} will consume {shown_amount} (the devices\' request policy rounds it up)',
                            alt.path.child("capacity").child("requests").key(name),
                            Severity.WARNING,
                            brief=f'{asked.short()}->{shown_amount} {name} for request "{alt.display}" (policy rounds up)',
                        )
                    )
            defaults: dict[str, set[str]] = {}
            publishers: dict[str, int] = {}
            for e, n in ok:
                assert e.fit is not None
                for key in e.dev.capacity:
                    publishers[key] = publishers.get(key, 0) + n
                for key, default in e.fit.defaulted:
                    defaults.setdefault(key, set()).add(default.short())
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


def _whole_device(alt: Alternative, ok: Sequence[tuple[Entry, int]]) -> Note | None:
    """``capacity.requests`` on a request none of whose usable devices allows multiple allocations:
    Kubernetes allocates it (the amount only has to fit), but the claim holds the whole device —
    a user asking 100Gi of a 1920G device rarely means that.  Info, never a denial."""
    if not alt.capacity or alt.admin or any(e.dev.multi for e, _ in ok):
        return None
    first = ok[0][0].dev
    name, asked = next(iter(sorted(alt.capacity.items())))
    total = first.capacity.get(name)
    value = getattr(total, "value", None)
    of = f" of {value.short()}" if isinstance(value, Quantity) else ""
    return Note(
        Reason.CAPACITY_ON_EXCLUSIVE_DEVICE,
        f'request "{alt.display}": asks {asked.short()} of {name}, but no device it can get allows multiple '
        f"allocations (allowMultipleAllocations), so the claim takes a whole device ({first.where}: all{of}) and "
        "nothing else can use it",
        alt.path.child("capacity").child("requests").key(name),
        Severity.INFO,
        brief=f'request "{alt.display}" takes a whole device for its {asked.short()} {name}: devices not shareable',
    )
