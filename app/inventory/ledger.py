"""What allocated claims hold, kept as running sums that one claim's change updates.

Why: :func:`~.held.compute_allocations` sums every allocated claim; with 50,000 claims that is
a few tenths of a second of CPU holding the GIL, and under allocation churn (the scheduler
re-allocates claims all the time) it ran again after every burst of watch events, stalling the
reviews that share the process (issue #21, figure 4b).  A watch event changes one claim, so the
ledger subtracts what the claim's old version held and adds what its new version holds — work
in the size of the claim, not of the cluster.

To make subtraction exact every sum keeps a count of what contributes to it: a device is held
whole while at least one dedicated result names it, a consumed capacity exists while at least
one share names it, a pool's counter while at least one dedicated device draws on it.  A sum
whose count drops to zero is removed, so the ledger holds exactly the keys a sum from scratch
would (and equal values: quantities are exact integers of nano-units).  Only the *format* a sum
prints in may differ — it follows the order the amounts were added in, which is arbitrary in a
sum from scratch too.

Single writer, immutable readers: :meth:`AllocationLedger.freeze` hands out an
:class:`~.cluster.Allocations` whose maps are copies of the ledger's (shallow: the inner maps
and tuples are replaced, never mutated, once made), so a reader holding a snapshot never sees a
half-applied change; the next change builds new inner values.  A freeze copies the outer maps
(one entry per held device): a C-level copy, far below a re-sum.

The ledger is tied to one device snapshot (indices into its ``devices``): when the devices
change it is built again from every claim (:class:`~.live.LiveClaims`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import TypeVar

from ..k8s import Quantity
from .cluster import Allocations, HeldClaim, ObjectKey
from .held import device_index
from .records import PoolKey
from .snapshot import Inventory

__all__ = ["AllocationLedger"]

CounterKey = tuple[str, str]
"""(counter set, counter)."""
K = TypeVar("K", bound=Hashable)


def _moved(sums: Mapping[K, Quantity], counts: dict[K, int], amounts: Mapping[K, Quantity], sign: int) -> dict[K, Quantity]:
    """A new map: ``sums`` with ``amounts`` added (``sign`` 1) or taken away (-1); ``counts`` (the
    contributors per key, updated in place) says when a key is gone."""
    out: dict[K, Quantity] = dict(sums)
    for name, amount in amounts.items():
        n = counts.get(name, 0) + sign
        if n <= 0:
            counts.pop(name, None)
            out.pop(name, None)
            continue
        counts[name] = n
        prior = out.get(name)
        if prior is None:
            out[name] = amount
        else:
            out[name] = prior.add(amount) if sign > 0 else prior.sub(amount)
    return out


class AllocationLedger:
    """Running sums of what allocated claims hold of one inventory's devices.

    ``add`` and ``remove`` take a claim's contribution in or out; ``freeze`` gives the
    :class:`~.cluster.Allocations` equal to :func:`~.held.compute_allocations` of the claims
    added and not removed.  The ``touched_*`` sets say what changed since they were last
    cleared, for a held view kept up to date the same way (:mod:`.heldview`).
    """

    def __init__(self, inventory: Inventory) -> None:
        self._index = device_index(inventory)
        self._devices = inventory.devices
        self._dedicated: dict[int, int] = {}
        """Device → dedicated results naming it (held whole while > 0)."""
        self._shares: dict[int, int] = {}
        """Device → share results naming it (its ``consumed`` entry exists while > 0)."""
        self._consumed: dict[int, Mapping[str, Quantity]] = {}
        self._consumed_n: dict[int, dict[str, int]] = {}
        self._counters: dict[PoolKey, Mapping[CounterKey, Quantity]] = {}
        self._counters_n: dict[PoolKey, dict[CounterKey, int]] = {}
        self._holds: dict[int, dict[ObjectKey, int]] = {}
        """Device → claim → results of the claim naming it."""
        self._holders: dict[int, tuple[ObjectKey, ...]] = {}
        self._unknown = 0
        self._claims = 0
        self._frozen: Allocations | None = None
        self.touched_devices: set[int] = set()
        """Devices whose held-whole state or consumed capacity changed."""
        self.touched_pools: set[PoolKey] = set()
        """Pools whose counters in use changed."""
        self.flipped: set[int] = set()
        """Devices that became held whole or stopped being (node groups' free devices change)."""

    def add_all(self, claims: Iterable[HeldClaim]) -> AllocationLedger:
        for claim in claims:
            self.add(claim)
        return self

    def add(self, claim: HeldClaim) -> None:
        self._apply(claim, 1)

    def remove(self, claim: HeldClaim) -> None:
        """Take away what ``claim`` (as it was added) holds."""
        self._apply(claim, -1)

    def freeze(self) -> Allocations:
        """The allocations now, as an immutable value; the same object while nothing changed
        (caches keyed on it stay valid)."""
        if self._frozen is None:
            self._frozen = Allocations(
                dedicated=frozenset(self._dedicated), consumed=dict(self._consumed), counters=dict(self._counters),
                holders=dict(self._holders), unknown=self._unknown, claims=self._claims,
            )
        return self._frozen

    def clear_touched(self) -> None:
        self.touched_devices = set()
        self.touched_pools = set()
        self.flipped = set()

    # ---------------------------------------------------------------- the sums
    def _apply(self, claim: HeldClaim, sign: int) -> None:
        allocation = claim.allocation
        if allocation is None:
            return
        self._frozen = None
        self._claims += sign
        key = (claim.namespace, claim.name)
        for result in allocation.devices.results:
            if result.admin_access:
                continue
            i = self._index.get((result.driver, result.pool, result.device))
            if i is None:
                self._unknown += sign
                continue
            self._hold(i, key, sign)
            if result.share_id is None:
                self._dedicate(i, sign)
            else:
                self._consume(i, result.consumed_capacity, sign)

    def _hold(self, i: int, key: ObjectKey, sign: int) -> None:
        holds = self._holds.setdefault(i, {})
        n = holds.get(key, 0) + sign
        if n > 0:
            holds[key] = n
            if n == 1 and sign > 0:
                self._holders[i] = tuple(sorted(holds))
            return
        holds.pop(key, None)
        if holds:
            self._holders[i] = tuple(sorted(holds))
        else:
            del self._holds[i]
            self._holders.pop(i, None)

    def _dedicate(self, i: int, sign: int) -> None:
        n = self._dedicated.get(i, 0) + sign
        if n > 0:
            self._dedicated[i] = n
            if n > 1 or sign < 0:
                return  # held whole before and after
        else:
            self._dedicated.pop(i, None)
        self.touched_devices.add(i)
        self.flipped.add(i)
        dev = self._devices[i]
        if not dev.counters:
            return
        pool = dev.pool_key
        counts = self._counters_n.setdefault(pool, {})
        sums = _moved(self._counters.get(pool, {}), counts, dev.counters, sign)
        if sums:
            self._counters[pool] = sums
        else:
            self._counters.pop(pool, None)
            self._counters_n.pop(pool, None)
        self.touched_pools.add(pool)

    def _consume(self, i: int, amounts: Mapping[str, Quantity], sign: int) -> None:
        n = self._shares.get(i, 0) + sign
        self.touched_devices.add(i)
        if n <= 0:
            self._shares.pop(i, None)
            self._consumed.pop(i, None)
            self._consumed_n.pop(i, None)
            return
        self._shares[i] = n
        counts = self._consumed_n.setdefault(i, {})
        self._consumed[i] = _moved(self._consumed.get(i, {}), counts, amounts, sign)
