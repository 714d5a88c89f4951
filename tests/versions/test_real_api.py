"""draguard against real kube-apiservers (1.36.2, and 1.37 and 1.38 built from Go modules) on
real-world manifests, for every target.

The corpus (``corpus/``: driver demos, Kubernetes' own test templates, kubernetes.io examples,
each with its source) and the gated-field objects (``gated/``) are posted, dry-run with strict
field validation, to a real API server configured as each target: 1.36 with default gates, 1.36
with every DRA gate on, and 1.35 / 1.34 by ``--emulated-version``.  draguard, given the same
target, must accept exactly what the API server accepts and reject what it rejects — with the
same ``(field, cause)`` pairs when it is a validation (422) rejection.  Skipped, with the reason,
where the binaries are absent (tests/realapi.py).  The 1.37 and 1.38 rows run that version's own
binary (``scripts/build-kubernetes.sh``); 1.34–1.36 run 1.36.2's, emulating the older versions.
A 1.37 binary emulating 1.36 is not a 1.36 API server: it no longer knows 1.36's alpha field
``nodeAllocatableResourceMappings`` (renamed ``nodeAllocatableResources``), so a 1.36 target is
checked against the 1.36 binary only.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from draguard.k8s import parse_target
from realapi import require_version, run

from .compare import compare_run, normalize

HERE = Path(__file__).parent
SERVICE_ACCOUNT = HERE.parent / "data" / "workloads" / "parity-inventory"
SOURCES = sorted((HERE / "corpus").glob("*.yaml")) + sorted((HERE / "gated").glob("*.yaml"))
ALL_DRA_GATES = "DRAListTypeAttributes=true,DRANodeAllocatableResources=true,DRADeviceTaintRules=true,DRAResourcePoolStatus=true"

# every DRA gate that 1.37 / 1.38 can turn on (their dependencies included)
ALL_DRA_GATES_137 = (
    "DRAListTypeAttributes=true,DRANodeAllocatableResources=true,DRAResourcePoolStatus=true,"
    "DRAFractionalCapacityRange=true,DRADerivedAttributes=true,DRADeviceCompatibilityGroups=true,"
    "DRAPartitionableDevicesType=true,DRAWorkloadResourceClaims=true,GenericWorkload=true"
)
ALL_DRA_GATES_138 = ALL_DRA_GATES_137.replace("DRAFractionalCapacityRange=true,", "")

TARGETS = {
    # id: (draguard --kubernetes-version, draguard --feature-gates, API server --feature-gates, extra
    #      flags, the binary's minor: None for 1.36.2)
    "1.36-defaults": ("1.36", "", "", [], None),
    "1.36-all-dra-gates": ("1.36", ALL_DRA_GATES, ALL_DRA_GATES, [], None),
    "1.35": ("1.35", "", "", ["--emulated-version=1.35"], None),
    "1.34": ("1.34", "", "", ["--emulated-version=1.34"], None),
    "1.37-defaults": ("1.37", "", "", [], "1.37"),
    "1.37-all-dra-gates": ("1.37", ALL_DRA_GATES_137, ALL_DRA_GATES_137, [], "1.37"),
    "1.38-defaults": ("1.38", "", "", [], "1.38"),
    "1.38-all-dra-gates": ("1.38", ALL_DRA_GATES_138, ALL_DRA_GATES_138, [], "1.38"),
}


@pytest.mark.parametrize("target_id", sorted(TARGETS))
def test_draguard_agrees_with_the_api_server(target_id: str, tmp_path: Path) -> None:
    version, gates, server_gates, flags, binary = TARGETS[target_id]
    require_version(binary)
    files = normalize(SOURCES, tmp_path)
    # pods of the corpus are compared too; the API server admits them only with their service account
    result = run(files, inventory=SERVICE_ACCOUNT, feature_gates=server_gates, apiserver_args=flags,
                 kube_version=binary)
    compared, problems = compare_run(result.verdicts, files, parse_target(version, gates))
    assert compared >= 45, result.output  # every DRA object of corpus/ and gated/ (47 today)
    assert problems == [], "\n".join(problems)
