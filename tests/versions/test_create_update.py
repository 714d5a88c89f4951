"""Create clears a claim's status before validation (PrepareForCreate); a webhook UPDATE keeps
the old status and keeps gated fields the old object already uses (the "in use" ratchet)."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

from draguard.k8s.features import parse_target
from draguard.review.pipeline import ReviewOptions, review_admission

from .compare import verdicts

CLAIM_WITH_STATUS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: copied}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
status:
  reservedFor: [{resource: pods, name: p}]
"""


def test_create_ignores_the_status_a_copied_claim_carries(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(CLAIM_WITH_STATUS)
    assert verdicts([f], parse_target())["copied"].admitted


def test_status_is_still_strictly_decoded_on_create(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(CLAIM_WITH_STATUS.replace("reservedFor:", "reservedFro:"))
    verdict = verdicts([f], parse_target())["copied"]
    assert not verdict.admitted and verdict.decode_error


SLICE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "s"},
    "spec": {
        "driver": "gpu.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "n1",
        "devices": [{"name": "gpu-0", "taints": [{"key": "bad key!", "effect": "NoSchedule"}]}],
    },
}


def _admit(operation: str, obj: dict[str, Any], old: dict[str, Any] | None, version: str) -> Any:
    return review_admission(
        kind=obj["kind"], operation=operation, obj=obj, old_obj=old, namespace="", inventory=None,
        inventory_problem=None, options=ReviewOptions(admission=True, target=parse_target(version)),
    )


def test_update_keeps_gated_fields_the_old_object_already_uses() -> None:
    created = _admit("CREATE", SLICE, None, "1.35")
    assert [f.reason for f in created.findings] == ["FieldDropped"]
    old = copy.deepcopy(SLICE)
    old["spec"]["devices"][0]["taints"] = [{"key": "k", "effect": "NoSchedule"}]
    updated = _admit("UPDATE", SLICE, old, "1.35")
    assert "FieldDropped" not in {f.reason for f in updated.findings}
    # a parity finding (a warning at the webhook since issue #10: the API server validated first)
    assert {f.field for f in updated.findings if f.reason.startswith("FieldValue")} == {"spec.devices[0].taints[0].key"}
    without_taints = copy.deepcopy(old)
    del without_taints["spec"]["devices"][0]["taints"]
    assert "FieldDropped" in {f.reason for f in _admit("UPDATE", SLICE, without_taints, "1.35").findings}


def test_update_keeps_the_status() -> None:
    claim: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "d"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
        "status": {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]},
    }
    review = _admit("UPDATE", claim, claim, "1.36")
    assert not review.denied


def test_cli_flags_choose_the_target_and_bad_gates_exit_2(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(CLAIM_WITH_STATUS.replace("exactly: {deviceClassName: gpu.example.com}",
                                           "exactly: {deviceClassName: gpu.example.com, capacity: {requests: {memory: 1Gi}}}"))

    def lint(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "draguard", "lint", str(f), *args],
                              capture_output=True, text=True, timeout=120, check=False)

    assert '"FieldDropped"' not in lint("--format", "json").stdout
    old = lint("--kubernetes-version", "1.35")
    assert old.returncode == 0 and "warning: ResourceClaim default/copied: spec.devices.requests[0].exactly.capacity" in old.stdout
    assert '"FieldDropped"' in lint("--kubernetes-version", "1.35", "--format", "json").stdout
    on = lint("--kubernetes-version", "1.35", "--feature-gates", "DRAConsumableCapacity=true", "--format", "json")
    assert on.returncode == 0 and '"FieldDropped"' not in on.stdout
    bad = lint("--feature-gates", "Nope=true")
    assert bad.returncode == 2 and bad.stderr.startswith("draguard: --feature-gates: unrecognized feature gate: Nope")
    bad_version = lint("--kubernetes-version", "1.31")
    assert bad_version.returncode == 2 and "--kubernetes-version" in bad_version.stderr
