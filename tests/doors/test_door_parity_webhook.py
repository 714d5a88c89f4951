"""Door parity through the real webhook (issue #35 item 1): the same files posted to a real
kube-apiserver with draguard registered as its webhook — static (``--inventory``) and live
(``--kube``, watching that API server) — get the verdicts and reasons ``draguard lint`` gives them.

What may differ is only what the README's table says (the soundness contract):

* an error the API server itself checks (``FieldValue*``, ``UnknownField``, ``DecodeError``): the
  API server refuses the object before any webhook is called;
* else an error whose reason is in ``--deny`` (``DEFAULT_DENY``): the webhook denies, and its causes
  are exactly those reasons;
* else the object is admitted, and its warnings lead with exactly the reasons lint gives (every
  other error, warnings and notes travel as warnings).

The API server is the default target's own (1.37, its default gates), so every door answers for
the same Kubernetes; the API server's own warnings travel beside the webhook's, and a capped
warning list counts the rest.  Lint is given the cluster as the webhook sees it: the same inventory, and in live mode its Nodes as
the API server stores them — a Node created without a kubelet carries
``node.kubernetes.io/not-ready:NoSchedule`` (the ``TaintNodesByCondition`` admission plugin; no node
lifecycle controller runs to lift it).  Cases: every file of examples/claims against the example
inventory, the conformance sample's hand-written cases (gpu-shared, nic), the scheduler scenarios
(their classes, templates and claims in the cluster, their pods posted), and the example chart's workloads with the templates they use already in the cluster (the
mistaken ones — a typo'd and a 50Gi template — are absent, so both doors say ``ReferenceNotFound``).
Skips cleanly without the binaries (tests/realapi.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import realapi
import yaml
from draguard.cli import main
from draguard.k8s import DEFAULT_VERSION
from draguard.review import DEFAULT_DENY

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CHART = EXAMPLES / "workloads" / "chart" / "templates"
WORKLOADS = [CHART / f"{name}.yaml" for name in ("deployment-train", "deployment-zone", "job-gpu-nic", "jobs-misc")]
IN_CLUSTER_TEMPLATES = ("one-gpu", "one-nic")
NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
API_CHECKED = ("FieldValue", "UnknownField", "DecodeError")
EXPECTED_ANSWERS = {"oracle": ("denied", "admitted"), "conformance-nic": ("admitted",)}


def _copy_inventory(sources: list[Path], out: Path, *, not_ready: bool) -> Path:
    """The inventory files in ``out``; with ``not_ready``, every Node as a real API server stores it."""
    out.mkdir(parents=True)
    for source in sources:
        docs = [d for d in yaml.safe_load_all(source.read_text()) if d]
        if not_ready:
            for doc in docs:
                if doc.get("kind") == "Node":
                    doc.setdefault("spec", {}).setdefault("taints", []).append(dict(NOT_READY))
        (out / source.name).write_text(yaml.safe_dump_all(docs))
    return out


CONFORMANCE = ROOT / "tests" / "data" / "conformance"
ORACLE = ROOT / "tests" / "data" / "workloads" / "oracle"
GROUPS = ("claims", "workloads", "conformance-gpu-shared", "conformance-nic", "oracle")
POD_KINDS = ("Pod", "Deployment", "Job", "StatefulSet", "DaemonSet", "ReplicaSet", "CronJob")


def _conformance(inventory: str) -> list[Path]:
    manifest = json.loads((CONFORMANCE / "manifest.json").read_text())
    return [CONFORMANCE / e["file"] for e in manifest["files"] if e["inventory"] == [f"inventories/{inventory}"]]


def _split_oracle(tmp: Path) -> tuple[Path, list[Path]]:
    """The scheduler scenarios as a cluster meets them: their classes, slices, templates and claims
    exist (one file; the scenarios' copies are identical), their pods and workloads are posted."""
    shared: dict[tuple[str, str], dict[str, Any]] = {}
    cases: list[Path] = []
    (tmp / "posted").mkdir()
    for case in sorted((ORACLE / "cases").glob("*.yaml")):
        docs = [d for d in yaml.safe_load_all(case.read_text()) if d]
        for d in docs:
            if d["kind"] not in POD_KINDS:
                shared[(d["kind"], d["metadata"]["name"])] = d
        pods = [d for d in docs if d["kind"] in POD_KINDS]
        (tmp / "posted" / case.name).write_text(yaml.safe_dump_all(pods))
        cases.append(tmp / "posted" / case.name)
    objects = tmp / "scenario-objects.yaml"
    objects.write_text(yaml.safe_dump_all(list(shared.values())))
    return objects, cases


def _inventories(group: str, tmp: Path) -> tuple[Path, Path, Path]:
    """(what the API server is given, what lint is given in static mode, in live mode)."""
    if group == "claims":
        sources = sorted((EXAMPLES / "inventory").glob("*.yaml"))
    elif group.startswith("conformance-"):
        sources = sorted((CONFORMANCE / "inventories" / group.removeprefix("conformance-")).glob("*.yaml"))
    elif group == "oracle":
        sources = [*sorted((ORACLE / "inventory").glob("*.yaml")), _split_oracle(tmp)[0],
                   ROOT / "tests" / "data" / "workloads" / "parity-inventory" / "serviceaccount.yaml"]
    else:
        templates = tmp / "templates" / "claim-templates.yaml"
        templates.parent.mkdir()
        templates.write_text(yaml.safe_dump_all([
            d for d in yaml.safe_load_all((CHART / "claim-templates.yaml").read_text())
            if d and d["metadata"]["name"] in IN_CLUSTER_TEMPLATES]))
        sources = [*sorted((EXAMPLES / "workloads" / "inventory").glob("*.yaml")), CHART / "deviceclass.yaml", templates]
    cluster = _copy_inventory(sources, tmp / "cluster", not_ready=False)
    return cluster, cluster, _copy_inventory(sources, tmp / "live", not_ready=True)


def _cases(group: str, tmp: Path) -> list[Path]:
    if group == "claims":
        return sorted((EXAMPLES / "claims").rglob("*.yaml"))
    if group.startswith("conformance-"):
        return _conformance(group.removeprefix("conformance-"))
    if group == "oracle":
        return sorted((tmp / "posted").glob("*.yaml"))
    return WORKLOADS


def _lint(capsys: pytest.CaptureFixture[str], cases: list[Path], inventory: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    main(["lint", *map(str, cases), "--inventory", str(inventory), "--format", "json", "--no-cache"])
    by_object: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for f in json.loads(capsys.readouterr().out)["findings"]:
        by_object.setdefault((f["kind"], f["name"]), []).append(f)
    return by_object


def _webhook_warnings(verdict: realapi.Verdict) -> list[str]:
    """The webhook's warnings: each leads with its reason (``Reason: …``) or ``draguard:``; the API
    server's own warnings (``spec.driver: driver names should be lowercase …``, which lint reports
    as ``APIServerWarning``, and the webhook too) travel beside them."""
    return [w for w in verdict.warnings if re.match(r"([A-Z][A-Za-z0-9]+|draguard): ", w)]


def _webhook_reasons(verdict: realapi.Verdict) -> set[str]:
    return {w.split(":", 1)[0] for w in _webhook_warnings(verdict)}


def _shown(verdict: realapi.Verdict) -> tuple[set[str], int]:
    """The reasons the webhook's warnings lead with, and how many more its last warning counts
    (``draguard: N more warnings; …``) when the list was capped."""
    warnings = _webhook_warnings(verdict)
    more = re.match(r"draguard: (\d+) more warnings", warnings[-1] if warnings else "")
    if more is None:
        return _webhook_reasons(verdict), 0
    return {w.split(":", 1)[0] for w in warnings[:-1]}, int(more.group(1))


@pytest.mark.parametrize("mode", ["static", "live"])
@pytest.mark.parametrize("group", GROUPS)
def test_the_real_webhook_says_what_lint_says(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, group: str, mode: str
) -> None:
    realapi.require()
    cluster, lint_static, lint_live = _inventories(group, tmp_path)
    cases = _cases(group, tmp_path)
    # the API server of draguard's default target, with that version's default gates: the doors
    # answer for the same Kubernetes (1.37 changed validation the conformance sample exercises)
    run = realapi.run(cases, inventory=cluster, webhook=True, workloads=True, live=mode == "live",
                      kube_version=DEFAULT_VERSION, feature_gates="")
    lint = _lint(capsys, cases, lint_live if mode == "live" else lint_static)
    posted = len([d for p in cases for d in yaml.safe_load_all(p.read_text()) if d])
    assert len(run.verdicts) == posted, run.output
    checked = {"api": 0, "denied": 0, "admitted": 0}
    for v in run.verdicts:
        # lint's joint placement (details.pinnedBy) orders the pods of one run; the webhook reviews
        # each pod while the shared claim is unallocated (test_door_parity.py says why)
        mine = [f for f in lint.get((str(v.kind), str(v.name)), []) if "pinnedBy" not in f.get("details", {})]
        errors = {f["reason"] for f in mine if f["severity"] == "error"}
        by_webhook = "admission webhook" in v.message
        where = f"{v.kind} {v.name}: lint {sorted((f['reason'], f['severity']) for f in mine)}\n{run.output}"
        if any(r.startswith(API_CHECKED) for r in errors):
            assert not v.admitted and not by_webhook, where  # the API server refuses it before any webhook
            checked["api"] += 1
        elif errors & set(DEFAULT_DENY):
            assert not v.admitted and by_webhook, where
            assert {str(c.get("reason")) for c in v.causes} == errors & set(DEFAULT_DENY), where
            checked["denied"] += 1
        else:
            assert v.admitted, where
            shown, more = _shown(v)
            if more:  # the warning count is capped (API-server limits): the rest are counted, never lost
                assert shown <= {f["reason"] for f in mine} and len(_webhook_warnings(v)) - 1 + more == len(mine), (v.warnings, where)
            else:
                assert shown == {f["reason"] for f in mine}, (v.warnings, where)
            checked["admitted"] += 1
    # each kind of answer the group holds occurs: the comparison cannot pass vacuously
    assert all(checked[k] for k in EXPECTED_ANSWERS.get(group, checked)), checked
    if group == "workloads":
        assert "ReferenceNotFound" in _webhook_reasons(run.by_name("finetune"))  # a template absent from both
        for name in ("train", "smoke"):  # their templates exist: never a ReferenceNotFound
            assert "ReferenceNotFound" not in _webhook_reasons(run.by_name(name)), run.output


def test_the_inventory_copies_differ_only_by_the_not_ready_taint(tmp_path: Path) -> None:
    """The live comparison gives lint the Nodes as the API server stores them, and nothing else changed."""
    cluster, static, live = _inventories("workloads", tmp_path)
    assert static == cluster
    for path in sorted(cluster.iterdir()):
        plain = [d for d in yaml.safe_load_all(path.read_text()) if d]
        tainted = [d for d in yaml.safe_load_all((live / path.name).read_text()) if d]
        for a, b in zip(plain, tainted, strict=True):
            if a["kind"] == "Node":
                assert b["spec"]["taints"] == [*a.get("spec", {}).get("taints", []), NOT_READY]
                assert {k: v for k, v in b.items() if k != "spec"} == {k: v for k, v in a.items() if k != "spec"}
            else:
                assert a == b
    names = {d["metadata"]["name"] for d in yaml.safe_load_all((cluster / "claim-templates.yaml").read_text())}
    assert names == set(IN_CLUSTER_TEMPLATES)
