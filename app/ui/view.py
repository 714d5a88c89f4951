"""The page's panels as JSON, computed from one :class:`~.source.Reading` by the engines the
commands use — never a second computation of the same figures.

* capacity — :func:`~app.satisfy.class_usage` rendered by :func:`~app.report.render_capacity`'s
  JSON (what ``draguard capacity --format json`` prints, summary included);
* devices — per pool and node, every device with its state (dedicated, shared, free), each
  capacity used of total, the claims that hold it, and the pool's shared counters (partitions);
  the figures are the snapshot's :class:`~app.inventory.Allocations`, the ones ``capacity`` sums;
* claims — each claim and the devices it got (share, consumed capacity);
* pending — each pod not yet bound and each claim not yet allocated, with
  :func:`~app.review.explain_object`'s answer as ``explain --format json`` prints it.

The tenant rule: a claim is named only when its namespace was read — every namespace's claims
when the user may list them, else only the user's namespace (:mod:`.source`); holders from other
namespaces are counted, never named.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..inventory import HeldClaim, Inventory
from ..k8s import Budget, BudgetExceeded, Quantity, Target
from ..report import explanation_json, render_capacity
from ..review import explain_object
from ..satisfy import CapacityUse, class_usage
from .source import Reading

__all__ = ["MAX_EXPLAINED", "View", "build_view"]

MAX_EXPLAINED = 60
"""Pending pods and claims explained per reading (each is two searches); the rest are counted."""


def _use(used: Quantity, total: Quantity) -> dict[str, Any]:
    use = CapacityUse()
    use.add(used, total)
    return {**use.as_json(), "text": f"{used.short()} of {total.short()}"}


def capacity_panel(reading: Reading) -> dict[str, Any]:
    """What ``draguard capacity --format json`` prints for the same inventory."""
    inv = reading.inventory
    alloc = inv.cluster.allocations
    summary: dict[str, Any] = {"allocated_claims": alloc.claims, "unknown_results": alloc.unknown,
                               "claims_known": inv.cluster.known, "gaps": list(reading.gaps)}
    doc: dict[str, Any] = json.loads(render_capacity(class_usage(inv), "json", summary=summary))
    return doc


def _named(reading: Reading, namespace: str) -> bool:
    """May the page name a claim of ``namespace``?  Only when that namespace's claims were read."""
    return reading.scope == "all" or namespace == reading.namespace


def _holders(reading: Reading, keys: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    named = [f"{ns}/{name}" for ns, name in keys if _named(reading, ns)]
    return {"named": named, "others": len(keys) - len(named)}


def devices_panel(reading: Reading) -> dict[str, Any]:
    """Per pool and node: each device's state, capacity used of total and holders; the pool's counters."""
    inv = reading.inventory
    alloc = inv.cluster.allocations
    real = sorted({i for g in inv.groups if not g.potential for i in g.devices})
    pools: dict[tuple[str, str], dict[str, Any]] = {}
    for i in real:
        dev = inv.devices[i]
        pool = pools.get((dev.driver, dev.pool))
        if pool is None:
            pool = pools[(dev.driver, dev.pool)] = {"driver": dev.driver, "pool": dev.pool, "nodes": {},
                                                   "counters": _counters(inv, dev.driver, dev.pool)}
        consumed = alloc.consumed.get(i)
        state = ("dedicated" if i in alloc.dedicated else
                 "shared" if consumed is not None or (dev.multi and i in alloc.holders) else "free")
        caps = []
        for name, cap in sorted(dev.capacity.items()):
            total = cap.value if cap.value is not None else Quantity(0)
            used = total if state == "dedicated" else (consumed or {}).get(name, Quantity(0))
            caps.append({"name": name, **_use(used, total)})
        pool["nodes"].setdefault(dev.node_label, []).append({
            "name": dev.name, "state": state, "shareable": dev.multi, "capacity": caps,
            "holders": _holders(reading, alloc.holders.get(i, ())),
        })
    out = []
    for (_, _), pool in sorted(pools.items()):
        nodes = [{"node": node, "devices": devs} for node, devs in sorted(pool.pop("nodes").items())]
        out.append({**pool, "nodes": nodes})
    return {"pools": out, "scope": reading.scope, "namespace": reading.namespace}


def _counters(inv: Inventory, driver: str, pool: str) -> list[dict[str, Any]]:
    record = inv.pools.get((driver, pool))
    if record is None:
        return []
    consumed = inv.cluster.allocations.counters.get((driver, pool), {})
    return [{"set": cset, "counter": name, **_use(consumed.get((cset, name), Quantity(0)), total)}
            for cset, counters in sorted(record.counter_sets.items()) for name, total in sorted(counters.items())]


def _claim_devices(held: HeldClaim) -> list[dict[str, Any]]:
    if held.allocation is None:
        return []
    return [{"request": r.request, "driver": r.driver, "pool": r.pool, "device": r.device,
             "shareID": r.share_id or "", "adminAccess": bool(r.admin_access),
             "consumedCapacity": {k: v.short() for k, v in sorted(r.consumed_capacity.items())}}
            for r in held.allocation.devices.results]


def _explained(kind: str, namespace: str, name: str, reading: Reading, objects: Mapping[tuple[str, str, str], Any],
               budget: Budget | None, target: Target) -> dict[str, Any] | None:
    try:
        exp = explain_object(kind, namespace, name, reading.inventory, objects, budget=budget, target=target)
    except BudgetExceeded as exc:
        return {"kind": kind, "namespace": namespace, "name": name, "ever": None, "now": None,
                "gaps": [f"not explained: the deadline passed ({exc.where})"], "claims": [], "classes": [],
                "findings": [], "rejected": [], "state": ""}
    return explanation_json(exp) if exp is not None else None


def claims_panel(reading: Reading) -> dict[str, Any]:
    """Every claim read (by name: its namespace was read) → the devices it got."""
    out = [{"namespace": ns, "name": name, "allocated": held.allocation is not None, "deleting": held.deleting,
            "reservedFor": list(held.reserved_for), "devices": _claim_devices(held)}
           for (ns, name), held in sorted(reading.inventory.cluster.claims.items()) if _named(reading, ns)]
    return {"claims": out, "scope": reading.scope, "namespace": reading.namespace}


def explain_claims(panel: dict[str, Any], reading: Reading, budget: Budget | None, target: Target) -> dict[str, Any]:
    """The claims panel with ``explain``'s answer on each claim not allocated yet (the first
    :data:`MAX_EXPLAINED`)."""
    claims = []
    explained = 0
    for entry in panel["claims"]:
        if not entry["allocated"] and explained < MAX_EXPLAINED:
            explained += 1
            ns, name = entry["namespace"], entry["name"]
            raw = reading.claims_raw.get((ns, name))
            objects = {("ResourceClaim", ns, name): raw} if raw is not None else {}
            entry = {**entry, "explain": _explained("ResourceClaim", ns, name, reading, objects, budget, target)}
        claims.append(entry)
    return {**panel, "claims": claims}


def _pending_pod(pod: Mapping[str, Any]) -> bool:
    spec = pod.get("spec")
    status = pod.get("status")
    if not isinstance(spec, Mapping) or spec.get("nodeName") or not spec.get("resourceClaims"):
        return False
    phase = status.get("phase") if isinstance(status, Mapping) else None
    return phase in (None, "", "Pending")


def pending_pods(reading: Reading) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(namespace, name, pod) of every pod read that is not bound to a node and names claims, in order."""
    out = []
    for pod in reading.pods:
        meta = pod.get("metadata")
        if _pending_pod(pod) and isinstance(meta, Mapping) and meta.get("name"):
            out.append((str(meta.get("namespace") or "default"), str(meta["name"]), pod))
    return sorted(out, key=lambda t: (t[0], t[1]))


def pending_panel(reading: Reading, budget: Budget | None, target: Target) -> dict[str, Any]:
    """Pods not bound to a node that use DRA, each with ``explain pod/NAME``'s answer."""
    pending = pending_pods(reading)
    pods = [got for ns, name, pod in pending[:MAX_EXPLAINED]
            if (got := _explained("Pod", ns, name, reading, {("Pod", ns, name): pod}, budget, target)) is not None]
    return {"pods": pods, "not_explained": max(0, len(pending) - MAX_EXPLAINED)}


def findings_panel(reading: Reading) -> dict[str, Any]:
    """The audit's results from the PolicyReports read (draguard's own results only)."""
    if reading.reports is None:
        return {"available": False, "note": reading.reports_note, "results": []}
    results = []
    for report in reading.reports:
        for r in report.get("results") or []:
            if not isinstance(r, Mapping) or r.get("source") != "draguard":
                continue
            resources = r.get("resources")
            res = resources[0] if isinstance(resources, list) and resources and isinstance(resources[0], Mapping) else {}
            props = r.get("properties")
            results.append({"result": r.get("result", ""), "severity": r.get("severity", ""),
                            "rule": r.get("rule", ""), "message": r.get("message", ""),
                            "kind": res.get("kind", ""), "namespace": res.get("namespace", ""),
                            "name": res.get("name", ""),
                            "field": props.get("field", "") if isinstance(props, Mapping) else ""})
    results.sort(key=lambda x: (x["namespace"], x["kind"], x["name"], x["rule"]))
    return {"available": True, "note": reading.reports_note, "results": results}


def _basis(reading: Reading, cheap: Mapping[str, Any]) -> str:
    """Everything the explanations read, as text: the cheap panels (allocations, claims), the
    pending pods, the devices' profiles, the classes, the nodes and the gaps.  Equal bases give
    equal explanations, so a re-read that changed none of it costs no search."""
    inv = reading.inventory
    return json.dumps([cheap, [p for _, _, p in pending_pods(reading)], reading.gaps, reading.scope,
                       [(d.driver, d.pool, d.name, d.node_label, d.profile) for d in inv.devices],
                       {n: c.model_dump(mode="json", by_alias=True) for n, c in inv.classes.items()},
                       {n: repr(i) for n, i in inv.node_info.items()},
                       {f"{ns}/{n}": repr(t) for (ns, n), t in inv.cluster.templates.items()}],
                      sort_keys=True, default=repr)


class View:
    """Every panel of one reading, and a generation that changes only when a panel does (the page
    polls the generation and fetches the panels when it moves)."""

    def __init__(self, reading: Reading, *, deadline: float, target: Target, previous: View | None = None) -> None:
        self.reading = reading
        cheap = {"capacity": capacity_panel(reading), "devices": devices_panel(reading),
                 "claims": claims_panel(reading), "findings": findings_panel(reading)}
        self.basis: str = _basis(reading, cheap)
        if previous is not None and previous.basis == self.basis:
            self.panels: dict[str, dict[str, Any]] = previous.panels
        else:  # one budget for all of this view's searches, as the commands' --deadline-seconds
            budget = Budget.within(deadline)
            self.panels = {**cheap, "claims": explain_claims(cheap["claims"], reading, budget, target),
                           "pending": pending_panel(reading, budget, target)}
        text = json.dumps(self.panels, sort_keys=True)
        changed = previous is None or previous.text != text
        self.text: str = text
        self.generation: int = 1 if previous is None else previous.generation + (1 if changed else 0)
        self.changed_at: float = reading.at if changed or previous is None else previous.changed_at

    def summary(self) -> dict[str, Any]:
        r = self.reading
        return {"generation": self.generation, "where": r.where, "namespace": r.namespace, "scope": r.scope,
                "gaps": list(r.gaps), "read_at": r.at, "changed_at": self.changed_at}


def build_view(reading: Reading, *, deadline: float, target: Target, previous: View | None = None) -> View:
    """The panels of ``reading``; ``previous`` carries the generation forward."""
    return View(reading, deadline=deadline, target=target, previous=previous)
