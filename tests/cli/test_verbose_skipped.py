"""``lint --verbose`` lists what the review skipped — the review decides, not a fixed list of kinds:
a PodGroup is checked where the target serves the Workload API and skipped where it does not."""

from __future__ import annotations

from pathlib import Path

import pytest
from draguard.cli import main

POD_GROUP = """apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train}
spec:
  schedulingPolicy: {gang: {minCount: 2}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
"""


@pytest.mark.parametrize(("gates", "pod_group_skipped"), [([], True), (["--feature-gates", "GenericWorkload=true"], False)])
def test_verbose_names_exactly_what_the_review_skipped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, gates: list[str], pod_group_skipped: bool
) -> None:
    path = tmp_path / "objects.yaml"
    path.write_text(POD_GROUP)
    assert main(["lint", str(path), "--verbose", "--kubernetes-version", "1.37", *gates]) == 0
    err = capsys.readouterr().err
    assert f"{path}:7: skipped ConfigMap settings" in err, err
    assert (f"{path}:1: skipped PodGroup train" in err) is pod_group_skipped, err
