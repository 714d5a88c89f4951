"""Why a claim cannot be allocated, in words a colleague would use.

Why separate from the search: the search only needs yes/no; explanations need the nearest
miss over the whole inventory (largest capacity offered, best node for a count or constraint),
which is computed only for the rare unsatisfiable claim.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence

from ..capacity import CapacityMiss
from ..cel import SelectorOrigin
from ..inventory import DeviceRecord, Inventory, NodeGroup
from .candidates import Candidates, Entry, Status
from .constraints import as_set, is_list, lookup_attribute
from .plan import Alternative, RequestPlan
from .search import Outcome, OutcomeKind

__all__ = ["explain_alternative", "explain_combination", "group_ok_counts"]


def _reachable(inventory: Inventory) -> list[DeviceRecord]:
    return inventory.reachable_devices()


def group_ok_counts(cand: Candidates, inventory: Inventory, group: NodeGroup) -> int:
    return sum(1 for i in group.devices if cand.status(inventory.devices[i]) is Status.OK)


def _best_group(cand: Candidates, inventory: Inventory) -> tuple[int, NodeGroup | None]:
    """The first node group with the most devices the alternative can use (counted once per class
    of groups with the same profiles)."""
    classes, first = cand.projection.group_classes(inventory.devices, inventory.groups)
    per_class = [group_ok_counts(cand, inventory, inventory.groups[g]) for g in first]
    best_n, best_group = 0, None
    for g, cls in zip(inventory.groups, classes, strict=True):
        n = per_class[cls]
        if n > best_n:
            best_n, best_group = n, g
    return best_n, best_group


def _quote(alt: Alternative) -> str:
    return f'request "{alt.display}"'


def _capacity_message(alt: Alternative, counted: list[tuple[Entry, int]]) -> str:
    def size(e: Entry) -> int:
        miss = e.fit.miss if e.fit is not None else None
        return miss.limit.nanos if miss is not None and miss.limit is not None else -1

    misses = [e for e, _ in counted]
    real = [e for e in misses if e.fit is not None and e.fit.miss is not None and e.fit.miss.kind != "missing"]
    if not real:
        miss0 = misses[0].fit.miss if misses[0].fit is not None else None
        name = miss0.capacity if miss0 is not None else "?"
        return (
            f"{_quote(alt)}: no device of class {alt.class_name} that matches the selectors publishes capacity "
            f"{name} ({_count(counted)} matching devices)"
        )
    best = max(real, key=size)
    miss: CapacityMiss = best.fit.miss  # type: ignore[union-attr,assignment]
    if miss.kind == "exceeds" and miss.requested is not None and miss.consumed is not None and miss.consumed.cmp(miss.requested) == 0:
        return (
            f"{_quote(alt)}: no device of class {alt.class_name} offers {miss.capacity} {miss.requested.short()} "
            f"(largest: {miss.limit.short() if miss.limit is not None else '?'} on {best.dev.where})"
        )
    return f"{_quote(alt)}: {miss.describe()} ({best.dev.where}, the nearest of {_count(counted)} matching devices)"


def explain_alternative(alt: Alternative, cand: Candidates, inventory: Inventory, memo: dict[object, str | None] | None = None) -> str | None:
    """Why this alternative cannot be satisfied on its own anywhere, or ``None`` if it can.

    ``memo`` shares the work between alternatives with the same candidates (requests that
    differ only in name)."""
    if memo is None:
        return _explain(alt, cand, inventory)
    key = (id(cand), alt.count, alt.all_mode)
    if key not in memo:
        memo[key] = _explain(alt, cand, inventory)
    text = memo[key]
    return None if text is None else text.replace(_PLACEHOLDER, alt.display)


_PLACEHOLDER = "\x00request\x00"


def _no_match_message(alt: Alternative, cand: Candidates, evaluated: list[tuple[Entry, int]]) -> str:
    """Blame the selector that turned away the devices of the class, not the class itself.

    Devices of other drivers are turned away by the class selectors; when some devices pass
    the class, the request's own selectors are the ones that matched nothing.
    """
    rejections = [(e.rejected_by, n) for e, n in evaluated]
    in_class = [(r, n) for r, n in rejections if r is None or not r[0].is_class]
    pool = in_class or rejections
    weights: Counter[tuple[SelectorOrigin, int, str] | None] = Counter()
    for r, n in pool:
        weights[r] += n
    top = weights.most_common(1)[0][0] if pool else None
    if top is None:
        which = "the selectors"
    else:
        origin, index, expr = top
        which = f"selector #{index} of the {origin.kind} ({expr})"
    if in_class:
        return f"{_quote(alt)}: no device matches {which} ({_count(in_class)} devices of class {alt.class_name} evaluated)"
    return (
        f"{_quote(alt)}: no device matches {which}: none of the {_count(evaluated)} reachable devices "
        f"belongs to class {alt.class_name}"
    )


def _count(entries: Sequence[tuple[object, int]]) -> int:
    return sum(n for _, n in entries)


def _explain(template: Alternative, cand: Candidates, inventory: Inventory) -> str | None:
    """Over the profiles of the reachable devices (first device of each, in allocator order, and
    how many devices share it): the same nearest miss and counts as a walk over every device."""
    alt = dataclasses.replace(template, request=_PLACEHOLDER, sub=None)
    entries = cand.reachable_profiles()
    evaluated = [(e, n) for e, n in entries if e.status is not Status.POOL]
    ok = [e for e, _ in entries if e.status is Status.OK]
    if not evaluated:
        if entries:
            pools = sorted({d.pool for d in _reachable(inventory)})
            return f"{_quote(alt)}: the only pools ({', '.join(pools)}) are incomplete or invalid, so their devices are skipped"
        return f"{_quote(alt)}: the inventory has no devices that any node can reach"
    matched = [(e, n) for e, n in evaluated if e.status in (Status.OK, Status.CAPACITY, Status.TAINT)]
    if not matched:
        return _no_match_message(alt, cand, evaluated)
    if not ok:
        caps = [(e, n) for e, n in matched if e.status is Status.CAPACITY]
        if caps:
            return _capacity_message(alt, caps)
        taint = next(e for e, _ in matched if e.status is Status.TAINT)
        t = taint.taint
        desc = f"{t.key}={t.value}:{t.effect}" if t is not None else "a taint"
        return (
            f"{_quote(alt)}: every matching device is tainted and not tolerated (e.g. {desc} on {taint.dev.where}; "
            f"{_count(matched)} matching devices)"
        )
    if alt.all_mode:
        return None
    best_n, best_group = _best_group(cand, inventory)
    if best_n < alt.count:
        where = f"the best node ({best_group.label}) has {best_n}" if best_group else "no node has any"
        return f"{_quote(alt)}: needs {alt.count} different devices; {where}"
    return None


def _constraint_message(
    plans: Sequence[RequestPlan], cands: Mapping[int, Candidates], inventory: Inventory, attr: str, scope: frozenset[str], distinct: bool
) -> str | None:
    alts = [p.alternatives[0] for p in plans if p.alternatives and (not scope or p.name in scope)]
    if not alts:
        return None
    needed = sum(a.count for a in alts if not a.all_mode)
    best, best_group, any_lists = -1, None, False
    distinct_cands = list({id(cands[a.key]): a for a in alts}.values())
    for g in inventory.groups:
        values: Counter[object] = Counter()
        elements: Counter[object] = Counter()
        devs: set[int] = set()
        lists = False
        for a in distinct_cands:
            for i in g.devices:
                e = cands[a.key].entry(inventory.devices[i])
                if e.status is Status.OK and i not in devs:
                    got = lookup_attribute(e.dev, attr)
                    if got is not None:
                        devs.add(i)
                        values[got] += 1
                        lists = lists or is_list(got)
                        kind, members = as_set(got)
                        elements.update((kind, m) for m in members)
        any_lists = any_lists or lists
        n = _constraint_bound(values, elements, len(devs), lists, distinct)
        if n > best:
            best, best_group = n, g
    if best >= needed or best_group is None:
        return None
    names = ", ".join(f'"{a.request}"' for a in alts)
    kind = "distinctAttribute" if distinct else "matchAttribute"
    if any_lists:  # list-typed values: compared as sets
        how = "no value in common" if distinct else "a value in common"
    else:
        how = "different values" if distinct else "the same value"
    return f"requests {names}: {kind} {attr} needs {needed} devices with {how}; the best node ({best_group.label}) has {best}"


def _constraint_bound(
    values: Counter[object], elements: Counter[object], devices: int, lists: bool, distinct: bool
) -> int:
    """At most how many of a node's devices one constraint lets a claim use together — a bound the
    allocator cannot beat, so a message built on it never blames the constraint wrongly.

    Scalars: distinct values / the largest group of equal values.  With list-typed values
    (see :mod:`.constraints`): a match needs one element all devices share (the most devices one
    element occurs in; a lone device always fits); for distinct only the device count bounds it."""
    if not values:
        return 0
    if not lists:
        return len(values) if distinct else max(values.values())
    if distinct:
        return devices
    return max(max(elements.values(), default=0), 1)


def explain_combination(
    plans: Sequence[RequestPlan], cands: Mapping[int, Candidates], inventory: Inventory, spec_constraints: Sequence[tuple[str, frozenset[str], bool]], best: Outcome | None, best_label: str
) -> str:
    for attr, scope, distinct in spec_constraints:
        msg = _constraint_message(plans, cands, inventory, attr, scope, distinct)
        if msg:
            return msg
    if best is not None and best.kind is OutcomeKind.FATAL and best.detail:
        return f"{best.detail} (node {best_label})"
    if best is not None and best.kind is OutcomeKind.UNSAT and best.detail:
        return f"{best.detail} (best node: {best_label})"
    if best is not None and best.stalled:
        placed = [f'"{p.name}"' for p in plans[: best.depth]]
        if placed:
            return (
                f'request "{best.stalled}": no device left for it once {", ".join(placed)} '
                f"{'is' if len(placed) == 1 else 'are'} placed, on any node (best: {best_label}); the devices they could "
                "share are taken or their capacity is used up"
            )
        return _stalled_alone(best.stalled, plans, cands, inventory, bool(spec_constraints), best_label)
    return "no node can allocate all requests of the claim together"


def _stalled_alone(
    stalled: str,
    plans: Sequence[RequestPlan],
    cands: Mapping[int, Candidates],
    inventory: Inventory,
    has_constraints: bool,
    best_label: str,
) -> str:
    """The first request cannot be completed although each of its devices matches on its own.

    Only constraints or shared counters can cause that; the message names the ones the claim and
    its matching devices actually have (never "the claim's constraints" when it has none).
    """
    counters = False
    for plan in plans:
        if plan.name != stalled:
            continue
        for alt in plan.alternatives:
            cand = cands.get(alt.key)
            if cand is None:
                continue
            for device in inventory.devices:
                entry = cand.entry(device)
                if entry.status is Status.OK and device.counters:
                    counters = True
                    break
    causes = []
    if has_constraints:
        causes.append("the claim's constraints")
    if counters:
        causes.append("the shared counters its matching devices consume")
    why = " and ".join(causes) if causes else "the devices it can use"
    return f'request "{stalled}": no combination of devices satisfies it on any node: {why} do not allow it (best: {best_label})'
