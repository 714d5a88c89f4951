"""``draguard capacity --fit FILE``: how many more of this claim fit now, and with every device free.

Why the replica count: "how many more" is the scheduler placing one pod after another, each with
its own copy of the claim, with the allocator's own device order — the engine's
:func:`~app.satisfy.count_replicas`, asked twice: from today's allocations (``now``) and from an
empty cluster.  Each copy is counted as a pod with no node constraints of its own (no
tolerations: tainted nodes do not count).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..inventory import Inventory
from ..k8s import Budget, Path, ResourceClaim, ResourceClaimTemplate, structural_pass
from ..satisfy import PodClaim, PodRequest, count_replicas

__all__ = ["fit_object"]

_MAX_COPIES = 10_000


def fit_object(obj: Mapping[str, Any], inventory: Inventory, *, budget: Budget | None = None) -> dict[str, Any]:
    """``{"object": ..., "now": {"fit", "exact"}, "ever": {...}, "notes": [...]}`` for a claim or template.

    ``budget`` (the command's one) bounds both counts; a count it cuts short has ``fit`` None
    ("unknown") and its note says why."""
    kind = str(obj.get("kind", ""))
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    label = f"{kind} {meta.get('name', '') if isinstance(meta, Mapping) else ''}".strip()
    try:
        model = structural_pass(kind, dict(obj)).model
    except (ValidationError, ValueError, TypeError):
        model = None
    if isinstance(model, ResourceClaim):
        spec, base = model.spec, Path.root("spec")
    elif isinstance(model, ResourceClaimTemplate):
        spec, base = model.spec.spec, Path.root("spec", "spec")
    else:
        return {"object": label, "now": {"fit": None}, "ever": {"fit": None},
                "notes": ["not a valid ResourceClaim or ResourceClaimTemplate: lint it first"]}
    request = PodRequest(claims=(PodClaim("claim", spec, f"{kind} {label}", base),))
    limit = min(_MAX_COPIES, len(inventory.devices) + 1)
    out: dict[str, Any] = {"object": label, "notes": []}
    for key, now in (("now", True), ("ever", False)):
        got = count_replicas(request, inventory, limit, budget=budget, now=now)
        cut = any(n.fail_open for n in got.notes)
        out[key] = {"fit": None} if cut else {"fit": got.fit, "exact": got.exact}
        out["notes"].extend(f"{key}: {n.message}" for n in got.notes)
    return out
