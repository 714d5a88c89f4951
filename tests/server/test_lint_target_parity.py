"""``POST /lint?kubernetes-version=V`` and ``draguard lint --kubernetes-version V`` give the same
findings for the same file and inventory files (issue #34 item 4, #35's door table).

Why it failed before: the server built its file inventory once, for its own target, and a query
for another target reused it — a slice's ``allowMultipleAllocations`` is dropped on a 1.34/1.35
API server (its device cannot be shared there), so the CLI (which builds the inventory for the
asked target) and the endpoint disagreed on claims over shared devices.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from draguard.cli import main
from draguard.inventory import StaticInventory
from draguard.server.state import ServerState

from server.conftest import Served

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "examples" / "inventory"

# four A100 shares with one model: the 1.36+ inventory shares each GPU, 1.34/1.35 store the
# slices without allowMultipleAllocations (and the shared class then matches nothing)
CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: four, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: shared-gpu.example.com
        count: 4
        selectors: [{cel: {expression: 'device.attributes["gpu.example.com"].model == "A100"'}}]
    constraints:
    - matchAttribute: gpu.example.com/model
"""


def _verdicts(findings: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return sorted((f["severity"], f["reason"], f["field"], f["message"]) for f in findings)


def _cli(capsys: pytest.CaptureFixture[str], path: Path, version: str) -> list[tuple[object, ...]]:
    main(["lint", str(path), "--inventory", str(INVENTORY), "--kubernetes-version", version, "--format", "json",
          "--no-cache"])
    return _verdicts(json.loads(capsys.readouterr().out)["findings"])


@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36", "1.37", "1.38"])
def test_the_endpoint_answers_for_the_asked_target_as_the_cli_does(
    serve: Callable[..., Served], capsys: pytest.CaptureFixture[str], tmp_path: Path, version: str
) -> None:
    path = tmp_path / "claim.yaml"
    path.write_text(CLAIM)
    s = serve(ServerState(inventory=StaticInventory([str(INVENTORY)])))
    response = s.client.post(f"/lint?kubernetes-version={version}&file=claim.yaml", content=CLAIM)
    assert response.status_code == 200, response.text
    endpoint = _verdicts(response.json()["findings"])
    cli = [(sev, reason, field, msg) for sev, reason, field, msg in _cli(capsys, path, version)]
    assert endpoint == cli


def test_targets_really_differ_on_this_claim(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The parity above is not vacuous: the two ends of the version range answer differently."""
    path = tmp_path / "claim.yaml"
    path.write_text(CLAIM)
    assert _cli(capsys, path, "1.34") != _cli(capsys, path, "1.37")
