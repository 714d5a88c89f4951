"""Live references through a real API server (issue #35 item 3): ``kubectl apply -f`` of a
ResourceClaimTemplate and the Deployments that use it, in one apply, with ``draguard serve --kube``
registered as the webhook (the shipped pods-and-workloads entry too).

Before the fix every Deployment got ``ReferenceNotFound … is in none of the cluster`` (the template's
watch event arrives after the Deployment's review) and was not checked any further — so the
Deployment whose nodeSelector excludes every GPU node was admitted.  Now the webhook GETs the
template it has not seen yet and checks the Deployments in full: the answers are lint's for the
same files, with the Nodes as the API server stores them (``node.kubernetes.io/not-ready``, see
tests/doors/test_door_parity_webhook.py).  Skips cleanly without the binaries (tests/realapi.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest
import realapi
import yaml
from draguard.cli import main

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "examples" / "workloads" / "chart" / "templates"
NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}


def _apply_and_keep(cases: Sequence[Path], inventory: Path) -> list[dict[str, object]]:
    """POST ``cases`` in order for real (no dry run) and keep what is admitted, as ``kubectl apply``
    does — the harness of ``realapi.run`` with ``--keep-objects`` (``run`` deletes each admitted
    object at once, and a dry-run stores nothing)."""
    with tempfile.TemporaryDirectory(prefix="realapi-refs-") as tmp:
        out = Path(tmp) / "results.json"
        argv = [sys.executable, str(ROOT / "tests" / "e2e_workloads.py"), "--json-out", str(out),
                "--cases", *map(str, cases), "--inventory", str(inventory),
                "--webhook-cmd", f"{sys.executable} -m draguard", "--mode", "live", "--keep-objects"]
        env = {**os.environ, "KUBE_APISERVER": realapi.find_apiserver() or "kube-apiserver",
               "ETCD": realapi.find_etcd() or "etcd"}
        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False)
        if not out.is_file():
            raise AssertionError(f"the harness wrote no results (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}")
        records: list[dict[str, object]] = json.loads(out.read_text())
        return records


def _inventory(out: Path, *, not_ready: bool) -> Path:
    out.mkdir()
    for source in [*sorted((CHART.parent.parent / "inventory").glob("*.yaml")), CHART / "deviceclass.yaml"]:
        docs = [d for d in yaml.safe_load_all(source.read_text()) if d]
        for doc in docs:
            if not_ready and doc["kind"] == "Node":
                doc.setdefault("spec", {}).setdefault("taints", []).append(dict(NOT_READY))
        (out / source.name).write_text(yaml.safe_dump_all(docs))
    return out


def test_a_template_and_its_deployments_in_one_apply_are_checked_in_full(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    realapi.require()
    apply = tmp_path / "apply.yaml"  # the template first, then what uses it: one `kubectl apply -f`
    template = next(d for d in yaml.safe_load_all((CHART / "claim-templates.yaml").read_text()) if d["metadata"]["name"] == "one-gpu")
    docs = [template, *yaml.safe_load_all((CHART / "deployment-train.yaml").read_text()),
            *yaml.safe_load_all((CHART / "deployment-zone.yaml").read_text())]
    apply.write_text(yaml.safe_dump_all([d for d in docs if d]))
    records = _apply_and_keep([apply], _inventory(tmp_path / "cluster", not_ready=False))
    main(["lint", str(apply), "--inventory", str(_inventory(tmp_path / "lint", not_ready=True)), "--format", "json",
          "--no-cache"])
    lint = json.loads(capsys.readouterr().out)["findings"]
    by_name = {str(r["name"]): r for r in records}
    assert by_name["one-gpu"]["admitted"], records
    for name in ("train", "inference"):
        record = by_name[name]
        warnings = [str(w) for w in record["warnings"]]  # type: ignore[attr-defined]
        causes = {str(c.get("reason")) for c in record["causes"]}  # type: ignore[attr-defined]
        said = causes | {w.split(":", 1)[0] for w in warnings}
        assert "ReferenceNotFound" not in said, record
        assert said == {f["reason"] for f in lint if f["name"] == name}, (record, lint)
    # checked in full: the Deployment whose nodeSelector excludes every GPU node is denied
    inference = by_name["inference"]
    assert not inference["admitted"] and "Unsatisfiable" in {c.get("reason") for c in inference["causes"]}  # type: ignore[attr-defined]
    assert by_name["train"]["admitted"], records
