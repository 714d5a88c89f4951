"""The backtracking search on one node group, replaying the 1.36 allocator.

Why a replay and not a clever solver: the verdict must be the scheduler's.  Apart from two
order-dependent corners (a CEL error aborts the attempt only if the search reaches the
device; ``distinctAttribute`` state is kept per request name) the scheduler's exhaustive
search answers "does an allocation exist", so when neither corner applies the search may prune
freely (symmetric devices, counting bounds); when one does, it visits devices in the
allocator's order and prunes nothing.

Semantics replayed: requests in order, ``firstAvailable`` alternatives in order, ``count`` picks
of *different* devices (each pick starts after the previous one), ``All`` takes every matching
device, dedicated devices are used once per claim, a multi-allocatable device serves several
requests while its capacity lasts (consumption adds up within the claim), shared counters of a
pool, taints, constraints, and at most 32 devices per claim.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..capacity import fits_on_top
from ..inventory import DeviceRecord, Inventory, PoolKey
from ..k8s import Budget, Format, Quantity
from .candidates import Candidates, Entry, Status
from .constraints import ConstraintState
from .plan import Alternative, RequestPlan

__all__ = ["MAX_DEVICES", "NOTHING_HELD", "Held", "Outcome", "OutcomeKind", "SearchAbort", "search_group"]

MAX_DEVICES = 32
_MEMO_LIMIT = 200_000  # failed states remembered per search; bounds memory, not correctness


class OutcomeKind(enum.StrEnum):
    """What a search found on one node class."""

    OK = "ok"
    UNSAT = "unsat"
    ERROR = "error"
    """A selector error was reached: Kubernetes aborts the scheduling attempt."""
    FATAL = "fatal"
    """A per-claim fatal condition (more than 32 devices, All mode over an unusable pool)."""
    DEADLINE = "deadline"
    """Cut short (the review's budget spent, too many pool orders, too deep): undecided."""


class SearchAbort(Exception):
    """The search stops: a selector error was reached, a fatal condition, or the budget is spent."""

    def __init__(self, kind: OutcomeKind, entry: Entry | None = None, detail: str = "", alt: Alternative | None = None) -> None:
        super().__init__(kind)
        self.kind = kind
        self.entry = entry
        self.detail = detail
        self.alt = alt


@dataclass
class Outcome:
    """What the search found on one group."""

    kind: OutcomeKind
    entry: Entry | None = None
    detail: str = ""
    depth: int = 0
    """How many requests the best attempt placed (for explanations)."""
    stalled: str = ""
    """The request at which the best attempt stalled."""
    picks: list[tuple[Alternative, Entry]] = field(default_factory=list)
    """For ``ok``: the first solution, pick by pick (replica counting holds these devices)."""
    alt: Alternative | None = None
    """For ``error``: the request alternative whose selectors failed."""
    claim: int = 0
    """For ``fatal``: the claim (of the pod) it is about."""


@dataclass(frozen=True, slots=True)
class Held:
    """Devices held before the search starts: by other claims ("now"), or by the pod's own
    allocated claims.  Indices are into ``Inventory.devices``; counters are keyed
    (pool, counter set, counter) as the search keeps them."""

    used: frozenset[int] = frozenset()
    consumed: Mapping[int, Mapping[str, Quantity]] = field(default_factory=dict)
    counters: Mapping[tuple[PoolKey, str, str], Quantity] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.used or self.consumed or self.counters)


NOTHING_HELD = Held()


class _Search:
    """One depth-first search over claims → requests → devices on one node class (upstream's
    ``Allocate(node, claims)``): dedicated devices are used once across every claim of the call,
    shared capacity and pool counters add up across claims, constraints and the 32-device limit
    hold per claim; the first complete solution wins."""

    def __init__(
        self,
        inventory: Inventory,
        plans: Sequence[RequestPlan],
        cands: Mapping[int, Candidates],
        devices: Sequence[DeviceRecord],
        constraints: Sequence[ConstraintState],
        budget: Budget | None,
        prune: bool,
        keys: Mapping[int, object] | None,
        held: Held = NOTHING_HELD,
    ) -> None:
        self.keys = keys or {}
        self.inventory = inventory
        self.plans = plans
        self.cands = cands
        self.devices = devices
        self.constraints = constraints
        self.budget = budget
        self.prune = prune
        self.used: set[int] = set(held.used)  # dedicated: held before, or picked in this call
        self.picked: dict[int, int] = {}  # device index -> number of picks in this call
        self.claim_picked: dict[tuple[int, int], int] = {}  # (claim, device index) -> picks for that claim
        self.consumed: dict[int, dict[str, Quantity]] = {i: dict(c) for i, c in held.consumed.items()}
        self.shared_before = frozenset(held.consumed)
        """Shareable devices with consumption before the call: their counters are charged already."""
        self.counters: dict[tuple[PoolKey, str, str], Quantity] = dict(held.counters)
        self.claims = sorted({p.claim for p in plans})
        self.results: dict[int, int] = dict.fromkeys(self.claims, 0)
        self.steps = 0
        self.depth = 0
        self.stalled = ""
        self.picks: list[tuple[Alternative, Entry]] = []
        self._lists: dict[int, list[Entry]] = {}
        self._alike_keys: dict[int, object] = {}
        self.failed: set[object] = set()
        """States (see :meth:`_state`) from which no placement of the remaining requests exists."""
        self.shortfall = ""
        """Why the counting bound stopped the deepest attempt (for the explanation)."""
        self.min_remaining = self._min_remaining()

    # ------------------------------------------------------------------ helpers
    def _min_remaining(self) -> list[int]:
        """Lower bound of devices still to place from request i to the end of its claim (the
        32-device rule is per claim, not per pod)."""
        need = [0] * (len(self.plans) + 1)
        for i in range(len(self.plans) - 1, -1, -1):
            lows = [0 if a.all_mode else a.count for a in self.plans[i].alternatives] or [0]
            same = i + 1 < len(self.plans) and self.plans[i + 1].claim == self.plans[i].claim
            need[i] = (need[i + 1] if same else 0) + min(lows)
        return need

    def _rest(self, ri: int) -> int:
        """Least devices the requests after ``ri`` of the same claim still need."""
        nxt = ri + 1
        return self.min_remaining[nxt] if nxt < len(self.plans) and self.plans[nxt].claim == self.plans[ri].claim else 0

    def claim_minimum(self) -> tuple[int, int]:
        """(claim, least devices) of the claim with the largest minimum (fatal above 32)."""
        starts = [i for i, p in enumerate(self.plans) if i == 0 or self.plans[i - 1].claim != p.claim]
        if not starts:
            return (0, 0)
        return max(((self.plans[i].claim, self.min_remaining[i]) for i in starts), key=lambda cm: cm[1])

    def entries(self, alt: Alternative) -> list[Entry]:
        got = self._lists.get(alt.key)
        if got is None:
            got = self.cands[alt.key].entries_of(self.devices)
            self._lists[alt.key] = got
        return got

    def _tick(self) -> None:
        self.steps += 1
        if self.steps & 0xFF == 0 and self.budget is not None and self.budget.spent():
            raise SearchAbort(OutcomeKind.DEADLINE)

    # ------------------------------------------------------------------ device placement
    def _counters_ok(self, dev: DeviceRecord) -> bool:
        if not dev.counters or (dev.multi and (self.picked.get(dev.index) or dev.index in self.shared_before)):
            return True
        pool = self.inventory.pools[dev.pool_key]
        for (cset, cname), amount in dev.counters.items():
            limit = pool.counter_sets.get(cset, {}).get(cname)
            if limit is None:
                return False
            prior = self.counters.get((dev.pool_key, cset, cname))
            total = amount if prior is None else prior.add(amount)
            if total.cmp(limit) > 0:
                return False
        return True

    def _place(self, alt: Alternative, entry: Entry) -> _Undo | None:
        """allocateDevice: counters, constraints, then mark. ``None`` when the device is refused."""
        dev = entry.dev
        if not self._counters_ok(dev):
            return None
        added: list[ConstraintState] = []
        for c in self.constraints:
            if not c.add(alt, dev):
                for a in reversed(added):
                    a.remove(alt, dev)
                return None
            added.append(c)
        charge_counters = bool(dev.counters) and not (
            dev.multi and (self.picked.get(dev.index) or dev.index in self.shared_before))
        if charge_counters:
            for (cset, cname), amount in dev.counters.items():
                key = (dev.pool_key, cset, cname)
                prior = self.counters.get(key)
                self.counters[key] = amount if prior is None else prior.add(amount)
        if dev.multi:
            assert entry.fit is not None
            acc = self.consumed.setdefault(dev.index, {})
            for name, amount in entry.fit.consumed.items():
                prior = acc.get(name)
                acc[name] = amount if prior is None else prior.add(amount)
        elif not alt.admin:
            self.used.add(dev.index)
        self.picked[dev.index] = self.picked.get(dev.index, 0) + 1
        ck = (alt.claim, dev.index)
        self.claim_picked[ck] = self.claim_picked.get(ck, 0) + 1
        self.results[alt.claim] += 1
        self.picks.append((alt, entry))
        return _Undo(added, charge_counters)

    def _unplace(self, alt: Alternative, entry: Entry, undo: _Undo) -> None:
        dev = entry.dev
        self.picks.pop()
        self.results[alt.claim] -= 1
        ck = (alt.claim, dev.index)
        if self.claim_picked[ck] > 1:
            self.claim_picked[ck] -= 1
        else:
            del self.claim_picked[ck]
        n = self.picked[dev.index] - 1
        if n:
            self.picked[dev.index] = n
        else:
            del self.picked[dev.index]
        if dev.multi:
            assert entry.fit is not None
            acc = self.consumed[dev.index]
            for name, amount in entry.fit.consumed.items():
                acc[name] = acc[name].sub(amount)
            if not n and dev.index not in self.shared_before:
                del self.consumed[dev.index]
        elif not alt.admin:
            self.used.discard(dev.index)
        if undo.counters:
            for (cset, cname), amount in dev.counters.items():
                key = (dev.pool_key, cset, cname)
                self.counters[key] = self.counters[key].sub(amount)
        for c in reversed(undo.constraints):
            c.remove(alt, dev)

    def _available(self, alt: Alternative, entry: Entry) -> bool:
        """In-use check, then selectors (error aborts), then the capacity check."""
        dev = entry.dev
        if alt.admin:
            if (alt.claim, dev.index) in self.claim_picked:
                return False
        elif dev.index in self.used:
            return False
        status = entry.status
        if status is Status.ERROR:
            raise SearchAbort(OutcomeKind.ERROR, entry, alt=alt)
        if status is not Status.OK:
            return False
        if dev.multi:
            already = self.consumed.get(dev.index)
            if already and entry.fit is not None and not fits_on_top(entry.fit, dev.capacity, already):
                return False
        return True

    # ------------------------------------------------------------------ counting bound
    def _suffix_may_fit(self, ri: int) -> bool:
        """A necessary condition for placing requests ``ri..``: enough slots per group of alike requests.

        Requests that behave alike (same class, selectors, capacity, tolerations) compete for the
        same devices; if all their picks together exceed the shares the devices have left (a
        dedicated device: one; a shared one: how many more of that consumption still fit), no
        assignment exists and the exhaustive search would only prove it slowly — 32 requests of
        1Gi over devices with 18 shares is 2^32 ways to fail.  Other requests, constraints and
        counters can only lower the real number, so the bound never prunes a solution.
        """
        need: dict[object, int] = {}
        members: dict[object, list[Alternative]] = {}
        for plan in self.plans[ri:]:
            if len(plan.alternatives) != 1 or plan.alternatives[0].all_mode:
                continue
            alt = plan.alternatives[0]
            sig = self._alike_key(alt)
            need[sig] = need.get(sig, 0) + alt.count
            members.setdefault(sig, []).append(alt)
        for sig, wanted in need.items():
            if wanted <= 1:
                continue
            room = self._slots(members[sig][0], wanted)
            if room < wanted:
                if ri >= self.depth:
                    self.shortfall = _shortfall_text(members[sig], wanted, room)
                return False
        return self._capacity_may_suffice(ri, [a for group in members.values() for a in group])

    def _capacity_may_suffice(self, ri: int, alts: list[Alternative]) -> bool:
        """Per capacity name: the least the remaining requests must take ≤ what shared devices have left.

        A request that could land on a dedicated device, or on a device that does not publish
        the capacity, may take none of it, so only requests bound to shared devices count — the
        bound is necessary, never a reason to miss a solution.
        """
        demand: dict[str, int] = {}
        devices: dict[int, Entry] = {}
        for alt in alts:
            least: dict[str, int] | None = None
            for entry in self.entries(alt):
                if entry.status is Status.ERROR:
                    return True
                if entry.status is not Status.OK:
                    continue
                if not entry.dev.multi or entry.fit is None:
                    least = {}
                    break
                devices[entry.dev.index] = entry
                takes = {name: q.nanos for name, q in entry.fit.consumed.items()}
                least = takes if least is None else {
                    name: min(n, takes[name]) for name, n in least.items() if name in takes
                }
            for name, amount in (least or {}).items():
                demand[name] = demand.get(name, 0) + amount * alt.count
        for name, wanted in demand.items():
            if wanted <= 0:
                continue
            supply = 0
            fmt = None
            for entry in devices.values():
                cap = entry.dev.capacity.get(name)
                if cap is None or cap.value is None:
                    continue
                fmt = fmt or cap.value.format
                prior = self.consumed.get(entry.dev.index, {}).get(name)
                supply += max(cap.value.nanos - (prior.nanos if prior is not None else 0), 0)
            if wanted > supply:
                if ri >= self.depth:
                    self.shortfall = (
                        f'request "{alts[-1].display}": the remaining requests need at least '
                        f"{Quantity(wanted, fmt or Format.DECIMAL_SI)} of {name} on shared devices, which have "
                        f"{Quantity(supply, fmt or Format.DECIMAL_SI)} left"
                    )
                return False
        return True

    def _alike_key(self, alt: Alternative) -> object:
        sig = self._alike_keys.get(alt.key)
        if sig is None:
            capacity = tuple(sorted((k, v.nanos) for k, v in alt.capacity.items()))
            sig = (alt.class_name, alt.selectors, capacity, alt.tolerations, alt.admin)
            self._alike_keys[alt.key] = sig
        return sig

    def _slots(self, alt: Alternative, enough: int) -> int:
        """How many more picks of ``alt`` the devices could take (stops counting at ``enough``)."""
        slots = 0
        for entry in self.entries(alt):
            if entry.status is Status.ERROR:
                return enough  # never prune where the search would stop on an error
            if entry.status is not Status.OK:
                continue
            dev = entry.dev
            if alt.admin:
                slots += 0 if (alt.claim, dev.index) in self.claim_picked else 1
            elif not dev.multi:
                slots += 0 if dev.index in self.used else 1
            else:
                slots += self._shares_left(entry, enough)
            if slots >= enough:
                return slots
        return slots

    def _shares_left(self, entry: Entry, enough: int) -> int:
        if entry.fit is None:
            return enough
        already = self.consumed.get(entry.dev.index, {})
        shares = enough
        for name, amount in entry.fit.consumed.items():
            if amount.nanos <= 0:
                continue
            value = entry.dev.capacity[name].value
            if value is None:
                return 0
            prior = already.get(name)
            room = value.nanos - (prior.nanos if prior is not None else 0)
            shares = min(shares, max(room, 0) // amount.nanos)
        return shares

    # ------------------------------------------------------------------ recursion
    def place_from(self, ri: int) -> bool:
        """Place requests ``ri..`` (all claims of the call, in order); True once all are placed."""
        if ri == len(self.plans):
            return True
        if ri > self.depth or not self.stalled:
            self.depth = ri
            self.stalled = self.plans[ri].name
        if self.prune and not self._suffix_may_fit(ri):
            return False
        key = self._state(ri)
        if key in self.failed:
            return False
        for alt in self.plans[ri].alternatives:
            if alt.all_mode:
                if self._all(ri, alt):
                    return True
            elif self._slot(ri, alt, 0, 0):
                return True
        if len(self.failed) < _MEMO_LIMIT:
            self.failed.add(key)
        return False

    def _state(self, ri: int) -> object:
        """Everything that decides whether requests ``ri..`` can still be placed.

        Two orders of the same picks (r0→a, r1→b and r0→b, r1→a) reach the same state; the
        search remembers states that failed, which turns the exhaustive search's repeated
        sub-problems into look-ups.  Sound in the faithful replay too: from the same state the
        replay visits the same devices in the same order, and a selector error on the way would
        have ended the search the first time (a failed state never hid an error).
        """
        consumed = tuple(sorted((i, _state_key(c)) for i, c in self.consumed.items()))
        counters = tuple(sorted((k, v.nanos) for k, v in self.counters.items()))
        constraints = tuple(c.state_key() for c in self.constraints)
        return (ri, tuple(self.results.values()), consumed, frozenset(self.used), tuple(sorted(self.picked.items())),
                counters, constraints)

    def _slot(self, ri: int, alt: Alternative, k: int, start: int) -> bool:
        if k == alt.count:
            return self.place_from(ri + 1)
        if self.results[alt.claim] + (alt.count - k) + self._rest(ri) > MAX_DEVICES:
            return False
        self._tick()
        entries = self.entries(alt)
        tried: set[tuple[object, ...]] = set()
        for pos in range(start, len(entries)):
            entry = entries[pos]
            if not self._available(alt, entry):
                continue
            if self.prune:
                dev = entry.dev
                twin = (
                    self.keys.get(dev.index, dev.profile),
                    dev.pool_key if dev.counters else None,
                    dev.index in self.picked,
                    _state_key(self.consumed.get(dev.index)),
                )
                if twin in tried:
                    continue
                tried.add(twin)
            added = self._place(alt, entry)
            if added is None:
                continue
            if self._slot(ri, alt, k + 1, pos + 1):
                return True
            self._unplace(alt, entry, added)
        return False

    def _all(self, ri: int, alt: Alternative) -> bool:
        members: list[Entry] = []
        for entry in self.entries(alt):
            pool = self.inventory.pools[entry.dev.pool_key]
            if not pool.usable:
                raise SearchAbort(OutcomeKind.FATAL, entry, f"pool {pool.name} is {'incomplete' if not pool.complete else 'invalid'}")
            if entry.status is Status.ERROR:
                raise SearchAbort(OutcomeKind.ERROR, entry, alt=alt)
            if entry.status is Status.OK:
                members.append(entry)
        if not members:
            return False
        if self.results[alt.claim] + len(members) + self._rest(ri) > MAX_DEVICES:
            return False
        placed: list[tuple[Entry, _Undo]] = []
        ok = True
        for entry in members:
            dev = entry.dev
            if (not alt.admin and dev.index in self.used) or (alt.admin and (alt.claim, dev.index) in self.claim_picked):
                ok = False
                break
            if dev.multi:
                already = self.consumed.get(dev.index)
                if already and entry.fit is not None and not fits_on_top(entry.fit, dev.capacity, already):
                    ok = False
                    break
            added = self._place(alt, entry)
            if added is None:
                ok = False
                break
            placed.append((entry, added))
        if ok and self.place_from(ri + 1):
            return True
        for entry, added in reversed(placed):
            self._unplace(alt, entry, added)
        return False


def _shortfall_text(alts: Sequence[Alternative], wanted: int, room: int) -> str:
    last = alts[-1].display
    names = ", ".join(f'"{a.display}"' for a in alts)
    alike = f"{len(alts)} alike requests ({names})" if len(alts) > 1 else f'request "{last}"'
    return f'request "{last}": {alike} need {wanted} device shares; the devices left have room for {room}'


@dataclass(frozen=True, slots=True)
class _Undo:
    """What one placement changed beyond the claim's own bookkeeping."""

    constraints: list[ConstraintState]
    counters: bool


def _state_key(consumed: Mapping[str, Quantity] | None) -> tuple[tuple[str, int], ...]:
    if not consumed:
        return ()
    return tuple(sorted((k, v.nanos) for k, v in consumed.items()))


def search_group(
    inventory: Inventory,
    plans: Sequence[RequestPlan],
    cands: Mapping[int, Candidates],
    devices: Sequence[DeviceRecord],
    constraints: Sequence[ConstraintState],
    *,
    budget: Budget | None,
    prune: bool,
    keys: Mapping[int, object] | None = None,
    held: Held = NOTHING_HELD,
) -> Outcome:
    """Run the search on one ordered device list; never raises.

    With ``prune``, devices whose ``keys`` (how they behave for this claim) and current state
    are equal to one already tried for the same slot are skipped: they lead to the same answer.
    """
    search = _Search(inventory, plans, cands, devices, constraints, budget, prune, keys, held)
    claim, least = search.claim_minimum()
    if least > MAX_DEVICES:
        return Outcome(OutcomeKind.FATAL, detail=f"the claim needs at least {least} devices; at most {MAX_DEVICES} are allowed",
                       claim=claim)
    try:
        ok = search.place_from(0)
    except SearchAbort as abort:
        return Outcome(abort.kind, abort.entry, abort.detail, search.depth, search.stalled, alt=abort.alt)
    except RecursionError:
        return Outcome(OutcomeKind.DEADLINE, detail="search too deep")
    if ok:
        return Outcome(OutcomeKind.OK, depth=len(plans), picks=list(search.picks))
    return Outcome(OutcomeKind.UNSAT, detail=search.shortfall, depth=search.depth, stalled=search.stalled)
