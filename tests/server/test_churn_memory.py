"""Claim churn keeps nothing per claim: the webhook's memory follows the claims alive, not the
claims ever seen (issue #36, the soak's slow RSS growth; benchmarks/churn_memory.py replays it).

A busy cluster creates claims with new names all the time (one per pod of a template, each with
a generated suffix) and deletes them again.  Everything the live inventory keeps of a claim —
the reduced claim, the allocation ledger's holders, the held view's id tables — is dropped with
its DELETED event.  One thing outlived the claim: its name, and the names of the pods in its
``reservedFor``, were put into the interpreter's table of interned strings.  On CPython 3.11 and
3.13+ an interned string leaves that table with its last reference; on 3.12 every interned
string is immortal, so each claim name ever seen stayed for the life of the process (~90 bytes
per claim).  The tests check the mechanism directly (the names held are not the interned
strings; any Python version) and the bound it guarantees (traced memory over thousands of new
claims, after a warm-up, stays flat).
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
import uuid
from collections import deque
from typing import Any

from draguard.inventory import Inventory, build_inventory
from draguard.inventory.claims import ClaimReducer
from draguard.inventory.live import LiveClaims
from satisfy.dra_builders import DRIVER, dclass, device, node, rslice

GPUS = [f"gpu-{i}" for i in range(4)]


def base() -> Inventory:
    return build_inventory([dclass(), node("node-1"), rslice("node-1", [device(name) for name in GPUS])])


def fresh(text: str) -> str:
    """An equal string that is a new object (not the literal, which the compiler interns)."""
    return "".join(list(text))


def churned_claim(i: int, *, allocated: bool) -> dict[str, Any]:
    """A claim as the watch delivers it: a name never seen before, a uid, reserved for its pod
    and, when ``allocated``, holding one of the GPUs."""
    name = fresh(f"worker-{uuid.uuid4().hex[:5]}-{i}-gpu")
    obj: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": fresh("team-a"), "uid": str(uuid.uuid4())},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
    }
    if allocated:
        obj["status"] = {
            "allocation": {"devices": {"results": [
                {"request": "gpu", "driver": DRIVER, "pool": "node-1", "device": GPUS[i % len(GPUS)]}]}},
            "reservedFor": [{"resource": "pods", "name": fresh(f"worker-{i}"), "uid": str(uuid.uuid4())}],
        }
    return obj


def churn(reducer: ClaimReducer, live: LiveClaims, start: int, n: int, alive: int = 40) -> None:
    """``n`` new claims through the live claims, each deleted once ``alive`` newer ones exist;
    a snapshot published every few events, as the debounced publish does."""
    window: deque[tuple[str, str]] = deque()
    for i in range(start, start + n):
        held = reducer.claim(churned_claim(i, allocated=i % 2 == 0))
        assert held is not None
        key = (held.namespace, held.name)
        live.put(key, held)
        window.append(key)
        while len(window) > alive:
            live.delete(window.popleft())
        if i % 7 == 0:
            live.snapshot()
    while window:
        live.delete(window.popleft())
    live.snapshot()


def test_claim_and_pod_names_are_not_interned() -> None:
    """Unbounded names stay out of the interned-string table (immortal there on CPython 3.12);
    the namespace, one per many claims, is shared."""
    reducer = ClaimReducer()
    raw = churned_claim(1, allocated=True)
    held = reducer.claim(raw)
    assert held is not None
    assert held.name == raw["metadata"]["name"] and held.reserved_for == ("worker-1",)
    assert sys.intern(fresh(held.name)) is not held.name
    assert sys.intern(fresh(held.reserved_for[0])) is not held.reserved_for[0]
    assert sys.intern(fresh("team-a")) is held.namespace


def test_an_unchanged_claim_name_still_keys_the_store() -> None:
    """Without interning the store still finds a claim by an equal, separately decoded name:
    a MODIFIED event replaces it and a DELETED one takes what it held away."""
    reducer = ClaimReducer()
    live = LiveClaims(base(), {}, {}, known=True)
    raw = churned_claim(2, allocated=True)
    first = reducer.claim(raw)
    assert first is not None
    live.put((first.namespace, first.name), first)
    assert live.snapshot().cluster.allocations.claims == 1
    raw["metadata"]["name"] = fresh(raw["metadata"]["name"])
    again = reducer.claim(raw)
    assert again is not None and again.name is not first.name
    live.delete((again.namespace, again.name))
    after = live.snapshot()
    assert not after.cluster.claims and after.cluster.allocations.empty


def test_memory_follows_the_claims_alive_not_the_claims_seen() -> None:
    """After a warm-up (tables at their working size), 6,000 more new claims leave traced memory
    where it was: well under the ~90 bytes per claim a kept name costs (540 KB here)."""
    reducer = ClaimReducer()
    live = LiveClaims(base(), {}, {}, known=True)
    churn(reducer, live, 0, 3000)
    gc.collect()
    tracemalloc.start()
    try:
        churn(reducer, live, 3000, 1000)  # the tables traced from here reach their working size
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        churn(reducer, live, 4000, 6000)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert not live.snapshot().cluster.claims
    assert grown < 6000 * 10, f"{grown} bytes kept after 6,000 deleted claims ({grown / 6000:.1f} per claim)"
