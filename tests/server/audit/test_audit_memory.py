"""The audit's memory follows the cluster, not its history (issue #36, row 6): the set of changed
keys is taken by audit passes only, so a standby replica (no Lease) or one whose passes are
skipped (inventory stale) must not collect every claim name that ever passed by."""

from __future__ import annotations

from typing import Any

from draguard.server.audit import AuditObjects
from draguard.server.audit.watch import _CHANGES_SLACK


def claim(i: int) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": f"churn-{i:06d}", "namespace": "chaos", "resourceVersion": str(i)},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}


def churn(objects: AuditObjects, start: int, count: int, alive: int = 100) -> None:
    """``count`` claims created, each deleted ``alive`` creations later (watch events)."""
    stream = objects._streams["resourceclaims"]
    for i in range(start, start + count):
        objects._apply(stream, {"type": "ADDED", "object": claim(i)})
        if i - alive >= start:
            objects._apply(stream, {"type": "DELETED", "object": claim(i - alive)})


def test_changes_never_taken_stay_bounded_and_then_say_everything_changed() -> None:
    objects = AuditObjects(None)
    churn(objects, 0, 3 * _CHANGES_SLACK)  # 12,288 names: ten minutes at 20/s
    assert len(objects._changed) <= _CHANGES_SLACK + 100
    held = {("ResourceClaim", "chaos", f"churn-{i:06d}") for i in range(3 * _CHANGES_SLACK - 100, 3 * _CHANGES_SLACK)}
    assert objects.take_changes() == held  # past the bound: every key held, as a relist would say
    assert objects.take_changes() == set()


def test_changes_taken_in_time_are_exactly_the_changed_keys() -> None:
    objects = AuditObjects(None)
    churn(objects, 0, 200)
    objects.take_changes()
    churn(objects, 200, 3, alive=1000)  # three creations, no deletion
    assert objects.take_changes() == {("ResourceClaim", "chaos", f"churn-{i:06d}") for i in (200, 201, 202)}
