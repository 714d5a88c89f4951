"""The real-API-server harness works, and draguard behind a real kube-apiserver decides as promised.

These are end-to-end checks through kube-apiserver 1.36's real admission path (they skip, with a
reason, where the binaries are absent — see tests/realapi.py).
"""

from __future__ import annotations

from pathlib import Path

import realapi

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
INVENTORY = EXAMPLES / "inventory"
BAD = EXAMPLES / "claims" / "bad"
GOOD = EXAMPLES / "claims" / "good"


def test_plain_api_server_admits_unsatisfiable_claims_and_refuses_typos() -> None:
    # Without draguard, the API server stores a claim no device can ever serve: the reason draguard exists.
    run = realapi.run([BAD / "10-unsatisfiable-50gi.yaml", BAD / "40-schema-errors.yaml"], inventory=INVENTORY)
    assert run.by_name("llm-50gi").admitted, run.output
    typo = run.by_name("typo-capacty")
    assert not typo.admitted and typo.code == 400, run.output
    assert 'unknown field "spec.devices.requests[0].exactly.capacty"' in typo.message


def test_draguard_as_webhook_denies_the_unsatisfiable_and_admits_the_satisfiable() -> None:
    run = realapi.run(
        [BAD / "10-unsatisfiable-50gi.yaml", GOOD / "20-shared-gpu-7gi-rounds-up.yaml"],
        inventory=INVENTORY,
        webhook=True,
    )
    denied = run.by_name("llm-50gi")
    assert not denied.admitted, run.output
    assert "50Gi" in denied.message and "40Gi" in denied.message, denied.message
    rounded = run.by_name("notebook-7gi")
    assert rounded.admitted, run.output
    # reason first, then the figure, in ASCII (Warning headers reach many clients as Latin-1)
    assert rounded.warnings == ['CapacityRounded: 7Gi->10Gi memory for request "gpu" (policy rounds up)'], rounded.warnings
