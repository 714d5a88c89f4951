""""Not now": a claim that fits an empty cluster but not today's allocations (``CapacityInUse``).

Why a warning and never a denial: allocations are the most mutable state there is — a job ends,
a claim is deleted, and the claim fits.  "Could it ever fit?" is the proof that may deny; "does
it fit now?" only tells the user why the pod will wait, and how long it might (README "What denies, what warns, and why").

For a claim, the now answer is the same claim search run on the snapshot with what allocated
claims hold taken away (:meth:`~app.inventory.Inventory.held_view`) — node taints and cordons stay
out of it, as in the claim's "ever" answer; for a pod, the engine's own per-pod search started
from the same allocations (``check_pod(..., now=True)``).  The figures — what the claim needs, the most any
device or node has free now, how many such devices are held, and by whom — are computed over the
devices the request could use with every device free.  Holders are named only in the claim's own
namespace; other namespaces' claims are counted, never named (no leak across tenants).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..capacity import resolve_capacity_name
from ..inventory import Inventory, ObjectKey
from ..k8s import DEFAULT_TARGET, Budget, Note, Path, Quantity, Reason, ResourceClaimSpec, Severity, Target
from .candidates import Status, candidates_for
from .check import check_claim_spec
from .plan import Alternative, plan_claim

if TYPE_CHECKING:
    from .pod import PodClaim, PodRequest, PodVerdict

__all__ = ["HeldFigures", "capacity_in_use", "held_figures", "holders_phrase", "now_not_checked", "pod_capacity_in_use"]

_NAMES_SHOWN = 5
_NOT_DECIDED = frozenset({Reason.UNSATISFIABLE, Reason.SATISFIABILITY_UNKNOWN, Reason.SELECTOR_RUNTIME_ERROR,
                          Reason.SATISFIABLE_ON_SCALE_UP, Reason.CAPACITY_IN_USE})


@dataclass(frozen=True)
class HeldFigures:
    """What one request alternative needs and what is free for it now."""

    alt: Alternative
    matching: int
    """Devices of existing nodes that could serve it with every device free."""
    free: int
    """Of those, devices that can serve it now."""
    fully_held: int
    """Of those, devices held whole (or with nothing left of what it asks)."""
    most_on_one_node: int
    """The most free devices any one node offers it now."""
    best: dict[str, Quantity] = field(default_factory=dict)
    """Per capacity asked: the most left on any matching device now."""
    own: tuple[str, ...] = ()
    """Names of the claims in the asking namespace that hold matching devices."""
    others: int = 0
    """How many claims of other namespaces hold matching devices."""

    @property
    def short(self) -> bool:
        if self.alt.all_mode:
            return self.free < self.matching
        return self.most_on_one_node < self.alt.count

    def details(self) -> dict[str, Any]:
        needs: dict[str, Any] = {"devices": "all" if self.alt.all_mode else self.alt.count}
        available: dict[str, Any] = {"devices": self.most_on_one_node}
        if self.alt.capacity:
            needs["capacity"] = {k: str(v) for k, v in self.alt.capacity.items()}
            available["capacity"] = {k: str(v) for k, v in self.best.items()}
        return {
            "request": self.alt.display, "deviceClassName": self.alt.class_name, "needs": needs,
            "available": available, "matching": self.matching, "free": self.free, "fullyHeld": self.fully_held,
            "holders": {"namespace": list(self.own), "otherNamespaces": self.others},
        }


def _real_devices(inventory: Inventory) -> set[int]:
    got = inventory.cache.get(("real-devices",))
    if isinstance(got, frozenset):
        return set(got)
    real = frozenset(i for g in inventory.groups if not g.potential for i in g.devices)
    inventory.cache.put(("real-devices",), real, weight=1 + len(real) // 64)
    return set(real)


def held_figures(alt: Alternative, inventory: Inventory, namespace: str, *, within: Collection[int] | None = None) -> HeldFigures:
    """The figures of ``alt`` over ``inventory`` (every device free) and its held view (now);
    ``within`` restricts them to these devices (one class of nodes)."""
    now = inventory.held_view()
    ever_c, now_c = candidates_for(alt, inventory), candidates_for(alt, now)
    devices, now_devices = inventory.devices, now.devices
    real = _real_devices(inventory)
    if within is not None:
        real &= set(within)
    matching = [i for i in sorted(real) if ever_c.status(devices[i]) is Status.OK]
    reach_now = {i for g in now.groups for i in g.devices}
    free = {i for i in matching if i in reach_now and now_c.status(now_devices[i]) is Status.OK}
    alloc = inventory.cluster.allocations
    best: dict[str, Quantity] = {}
    fully = 0
    for i in matching:
        dev = now_devices[i]
        whole = i in alloc.dedicated or i not in reach_now
        empty = False
        for name in alt.capacity:
            key = resolve_capacity_name(name, dev.driver, dev.capacity)
            cap = dev.capacity.get(key) if key is not None else None
            left = Quantity(0) if whole or cap is None or cap.value is None else cap.value
            if left.nanos == 0:
                empty = True
            if name not in best or best[name] < left:
                best[name] = left
        if whole or empty:
            fully += 1
    most = max((sum(1 for i in g.devices if i in free) for g in now.groups if within is None or set(g.devices) <= real),
               default=0)
    own: set[str] = set()
    others: set[ObjectKey] = set()
    for i in matching:
        if i in free and not alt.capacity:
            continue
        for ns, name in alloc.holders.get(i, ()):
            if ns == namespace:
                own.add(name)
            else:
                others.add((ns, name))
    return HeldFigures(alt, len(matching), len(free), fully, most, best, tuple(sorted(own)), len(others))


def holders_phrase(fig: HeldFigures) -> str:
    """``held by claims a, b in this namespace and 12 claims in other namespaces`` (or empty)."""
    parts: list[str] = []
    if fig.own:
        shown = ", ".join(fig.own[:_NAMES_SHOWN])
        more = f" and {len(fig.own) - _NAMES_SHOWN} more" if len(fig.own) > _NAMES_SHOWN else ""
        parts.append(f"claim{'s' if len(fig.own) > 1 else ''} {shown}{more} in this namespace")
    if fig.others:
        parts.append(f"{fig.others} claim{'s' if fig.others > 1 else ''} in other namespaces")
    return f"held by {' and '.join(parts)}" if parts else ""


def _message(fig: HeldFigures) -> str:
    alt = fig.alt
    who = f'request "{alt.display}"'
    of_class = f"of class {alt.class_name}"
    if alt.capacity:
        asked = ", ".join(f"{v} of {k}" for k, v in alt.capacity.items())
        most = ", ".join(f"{fig.best.get(k, Quantity(0))}" for k in alt.capacity)
        per = "one device" if alt.count == 1 else f"each of {alt.count} devices"
        text = (f"{who} needs {asked} on {per} {of_class}; the most free on any is {most}; "
                f"{fig.fully_held} of {fig.matching} such devices are fully held")
    elif alt.all_mode:
        text = f"{who} asks for all matching devices {of_class} on a node; {fig.matching - fig.free} of {fig.matching} are held"
    else:
        text = (f"{who} needs {alt.count} device{'s' if alt.count > 1 else ''} {of_class} on one node; "
                f"the most free on one node is {fig.most_on_one_node}; {fig.matching - fig.free} of "
                f"{fig.matching} such devices are held")
    holders = holders_phrase(fig)
    return f"{text} ({holders})" if holders else text


def now_not_checked(where: str) -> Note:
    """What a "now" check cut short says (``where``: what stopped it).  "Not now" is only a hint,
    so this never warns; but an answer without it is incomplete, and says so the one way every
    answer does: ``fail_open`` (an answer memo must not keep it, a metric counts it)."""
    return Note(Reason.SATISFIABILITY_UNKNOWN, f"not checked against today's allocations: {where}", None, Severity.INFO,
                fail_open=where)


def capacity_in_use(
    spec: ResourceClaimSpec,
    inventory: Inventory,
    *,
    base: Path,
    ever: Sequence[Note],
    namespace: str,
    budget: Budget | None = None,
) -> list[Note]:
    """``CapacityInUse`` (warning) when ``ever`` (the claim's notes with every device free) says it
    fits and the same search on today's snapshot says it does not; else nothing.  ``budget`` is
    the review's (the one ``ever`` was searched under): with none left, nothing is said."""
    state = inventory.cluster
    if not state.known or state.allocations.empty or any(n.reason in _NOT_DECIDED for n in ever):
        return []
    now_notes = check_claim_spec(spec, inventory.held_view(), base=base, budget=budget)
    cut = next((n.fail_open for n in now_notes if n.fail_open), "")
    if cut:
        return [now_not_checked(cut)]
    if not any(n.reason == Reason.UNSATISFIABLE for n in now_notes):
        return []  # fits now
    figures: list[HeldFigures] = []
    for plan in plan_claim(spec, base):
        figs = [held_figures(alt, inventory, namespace) for alt in plan.alternatives]
        if figs and all(f.short for f in figs):
            figures.append(figs[0])
    if figures:
        fig = figures[0]
        message = "fits an empty cluster but not today's allocations: " + _message(fig)
        return [Note(Reason.CAPACITY_IN_USE, message, fig.alt.path, Severity.WARNING, details=fig.details())]
    # every request alone finds room; together (constraints, one node, shared counters) they do not
    all_figs = [held_figures(alt, inventory, namespace) for plan in plan_claim(spec, base) for alt in plan.alternatives[:1]]
    held = sum(f.matching - f.free for f in all_figs)
    total = sum(f.matching for f in all_figs)
    counters = " or shared counters" if state.allocations.counters else ""
    message = (f"fits an empty cluster but not today's allocations: each request finds free devices, but no node has "
               f"enough of them free together{counters} ({held} of {total} matching devices are held)")
    details: dict[str, Any] = {"requests": [f.details() for f in all_figs]}
    return [Note(Reason.CAPACITY_IN_USE, message, None, Severity.WARNING, details=details)]


def pod_capacity_in_use(
    request: PodRequest,
    inventory: Inventory,
    ever: PodVerdict,
    *,
    namespace: str,
    budget: Budget | None = None,
    target: Target = DEFAULT_TARGET,
) -> list[Note]:
    """``CapacityInUse`` (warning) for a pod that some node could run with every device free
    (``ever``, :func:`~.podcheck.check_pod`'s answer) but none can with today's allocations —
    the engine's own search started from them (``check_pod(..., now=True)``).  The figures are
    those of the first claim request that is short on its own; else the claims only fail together."""
    state = inventory.cluster
    if not state.known or state.allocations.empty or ever.satisfiable is not True:
        return []
    if any(n.reason in _NOT_DECIDED for n in ever.notes):
        return []
    from .podcheck import check_pod  # the pod engine loads with the first pod (app/lazy.py says why)

    now = check_pod(request, inventory, budget=budget, target=target, now=True)
    cut = next((n.fail_open for n in now.notes if n.fail_open), "")
    if cut:
        return [now_not_checked(cut)]
    if now.satisfiable is not False:
        return []
    all_figs: list[tuple[PodClaim, HeldFigures]] = []
    for claim in request.claims:
        if claim.allocation is not None:
            continue
        for plan in plan_claim(claim.spec, claim.path):
            figs = [held_figures(alt, inventory, namespace) for alt in plan.alternatives]
            if not figs:
                continue
            if all(f.short for f in figs):
                fig = figs[0]
                message = f"fits an empty cluster but not today's allocations: {claim.origin}: {_message(fig)}"
                return [Note(Reason.CAPACITY_IN_USE, message, fig.alt.path, Severity.WARNING,
                             details={"claim": claim.name, **fig.details()})]
            all_figs.append((claim, figs[0]))
    held = sum(f.matching - f.free for _, f in all_figs)
    total = sum(f.matching for _, f in all_figs)
    message = (f"fits an empty cluster but not today's allocations: each claim finds free devices, but no node the pod may "
               f"use has all of them free together ({held} of {total} matching devices are held)")
    details: dict[str, Any] = {"requests": [{"claim": c.name, **f.details()} for c, f in all_figs]}
    return [Note(Reason.CAPACITY_IN_USE, message, None, Severity.WARNING, details=details)]
