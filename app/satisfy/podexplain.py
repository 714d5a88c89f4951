"""Why each kind of node cannot run the pod, in words: which claim, which request, what is missing.

Why per class and per claim: "cannot allocate all claims" is the one message the scheduler
gives whatever the cause; users need "node-a: the GPU claim fits, no NIC; node-b: no GPU".  For
a class that fails, each claim is searched alone on it (cheap: the rare failing pod only): a
claim that fails alone is named with its first request that has too few usable devices there;
when every claim fits alone, the combination is what fails, and the request it stalls at is named.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..inventory import Inventory, NodeGroup
from ..k8s import Budget, Path
from .candidates import Status
from .check import Problem, _search_on
from .plan import Alternative, RequestPlan, plan_claim
from .pod import ClassVerdict, PodClaim, PodRequest
from .search import Held, Outcome, OutcomeKind

if TYPE_CHECKING:
    from .podcheck import Candidate

__all__ = ["class_reason", "lead", "request_shortfall", "summary"]

_MAX_SHOWN = 6
_STATUS_WORDS = {
    Status.NO_MATCH: "no device here matches its class and selectors",
    Status.CAPACITY: "no matching device here has the capacity it asks for",
    Status.TAINT: "every matching device here has a taint it does not tolerate",
    Status.POOL: "the only pools here are incomplete or invalid",
    Status.ERROR: "a selector fails on the devices here",
}


def _alt_shortfall(problem: Problem, alt: Alternative, group: NodeGroup) -> str | None:
    devices = problem.inventory.devices
    cand = problem.cands[alt.key]
    statuses: Counter[Status] = Counter(cand.status(devices[i]) for i in group.devices)
    ok = statuses.get(Status.OK, 0)
    if alt.all_mode:
        return None if ok else _STATUS_WORDS.get(_worst(statuses), "no device here")
    if ok >= alt.count:
        return None
    if ok == 0:
        return _STATUS_WORDS.get(_worst(statuses), "these nodes reach no device") if statuses else "these nodes reach no device"
    return f"needs {alt.count} devices, {ok} here match"


def _worst(statuses: Counter[Status]) -> Status:
    """The nearest miss: capacity or taint (matched, then failed) before no match and pools."""
    for status in (Status.ERROR, Status.CAPACITY, Status.TAINT, Status.NO_MATCH, Status.POOL):
        if statuses.get(status):
            return status
    return Status.NO_MATCH


def request_shortfall(problem: Problem, plans: Sequence[RequestPlan], group: NodeGroup) -> str | None:
    """The first request none of whose alternatives has enough usable devices in ``group``."""
    for plan in plans:
        reasons = [_alt_shortfall(problem, alt, group) for alt in plan.alternatives]
        if plan.alternatives and all(r is not None for r in reasons):
            first = plan.alternatives[0]
            return f'request "{plan.name if first.sub is None else first.display}": {reasons[0]}'
    return None


def _stall_text(outcome: Outcome, plans: Sequence[RequestPlan]) -> str:
    if outcome.detail:
        return outcome.detail
    if outcome.stalled:
        return f'request "{outcome.stalled}": no combination of devices left for it here (constraints, counters or capacity)'
    return f'request "{plans[0].name}": no combination of devices satisfies it here' if plans else "no combination fits"


def class_reason(
    cand: Candidate, outcome: Outcome, held: Held, budget: Budget | None, phrase: Callable[[PodClaim], str]
) -> str:
    """One sentence for one failing class (see the module docstring)."""
    claims = cand.claims
    if outcome.kind is OutcomeKind.FATAL:
        return f"{phrase(claims[outcome.claim])}: {outcome.detail}" if claims else outcome.detail
    inventory = cand.problem.inventory
    fitting: list[str] = []
    for i, claim in enumerate(claims):
        plans = [p for p in cand.problem.plans if p.claim == i]
        short = request_shortfall(cand.problem, plans, cand.group)
        if short is not None:
            lead = f"{', '.join(fitting)} {'fits' if len(fitting) == 1 else 'fit'}; " if fitting else ""
            return f"{lead}{phrase(claim)}: {short}"
        alone = Problem(claim.spec, plan_claim(claim.spec, Path()), inventory)
        got, _ = _search_on(alone, cand.group, budget, held)
        if got.kind is not OutcomeKind.OK:
            lead = f"{', '.join(fitting)} {'fits' if len(fitting) == 1 else 'fit'}; " if fitting else ""
            return f"{lead}{phrase(claim)}: {_stall_text(got, alone.plans)}"
        fitting.append(phrase(claim))
    if len(claims) <= 1:
        return _stall_text(outcome, cand.problem.plans)
    counted = _joint_shortfall(cand.problem, cand.group)
    if counted is not None:
        return f"each claim fits alone, not all together: {counted}"
    plans = cand.problem.plans
    stalled = claims[plans[outcome.depth].claim] if 0 < outcome.depth < len(plans) else None
    where = f"; {phrase(stalled)} finds nothing left once the claims before it are placed" if stalled else ""
    return f"each claim fits alone, not all together (devices, capacity or counters they share run out){where}"


def _joint_shortfall(problem: Problem, group: NodeGroup) -> str | None:
    """Requests of several claims that compete for the same dedicated devices, counted: "together
    they need 3 devices of class gpu.example.com, these nodes have 2"."""
    devices = problem.inventory.devices
    need: dict[int, int] = {}
    first: dict[int, Alternative] = {}
    for plan in problem.plans:
        if len(plan.alternatives) != 1 or plan.alternatives[0].all_mode or plan.alternatives[0].admin:
            continue
        alt = plan.alternatives[0]
        key = id(problem.cands[alt.key])
        need[key] = need.get(key, 0) + alt.count
        first.setdefault(key, alt)
    for key, wanted in need.items():
        alt = first[key]
        cand = problem.cands[alt.key]
        usable = [devices[i] for i in group.devices if cand.status(devices[i]) is Status.OK]
        if usable and not any(d.multi for d in usable) and len(usable) < wanted:
            return f"together they need {wanted} devices of class {alt.class_name}, these nodes have {len(usable)}"
    return None


def summary(
    request: PodRequest, inventory: Inventory, classes: Sequence[ClassVerdict], excluded: bool, cands: Sequence[Candidate]
) -> tuple[str, Path]:
    """The Unsatisfiable message over all classes, and the field it points at."""
    if not inventory.groups:
        return "no node can reach any device in the inventory", request.spec_path
    classes = _once_each(classes)
    shown = [f"{c.label}: {c.reason}" for c in classes[:_MAX_SHOWN]]
    more = f"; and {len(classes) - _MAX_SHOWN} more kinds of nodes" if len(classes) > _MAX_SHOWN else ""
    text = "no node can run the pod with all its claims: " + "; ".join(shown) + more
    if not cands:
        return text, request.spec_path
    pending = [c for c in request.claims if c.allocation is None]
    return text, pending[0].path if pending else request.spec_path


def lead(inventory: Inventory, classes: Sequence[ClassVerdict]) -> str:
    """The Unsatisfiable message's short form for places with little room (the webhook's 120
    characters): what decides it first — the claim and template, the taint, the class — and the
    nodes after it, then the verdict; the summary's preamble would take a third of the room."""
    if not inventory.groups:
        return ""
    classes = _once_each(classes)
    shown = [f"{c.reason} on {c.label}" for c in classes[:_MAX_SHOWN] if c.reason]
    if not shown:
        return ""
    more = f"; and {len(classes) - _MAX_SHOWN} more kinds of nodes" if len(classes) > _MAX_SHOWN else ""
    return "; ".join(shown) + more + "; no node can run the pod"


def _once_each(classes: Sequence[ClassVerdict]) -> list[ClassVerdict]:
    """Each node once: nodes the filters keep out only for now (a cordon, a ``node.kubernetes.io/``
    taint) are also searched as if they were back; where that search fails, its reason is the one
    that holds for good, and the node's exclusion is left out of the sentence."""
    searched = {n for c in classes if c.eligible and c.ok is False for n in c.nodes}
    return [c for c in classes if c.eligible or not c.nodes or not set(c.nodes) <= searched]
