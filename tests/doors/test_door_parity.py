"""Door parity (issue #35 item 1): the same objects through every door give the same verdicts,
reasons and counts — CLI (text, JSON, JUnit, SARIF), ``POST /lint`` (its door function), the
webhook (its door function, with a file inventory), ``explain`` and ``capacity --fit``.

Severity differs only where the README's table says so: at the webhook only ``--deny`` reasons deny
and every other error travels as a warning.  Cases: every file of examples/claims against the
example inventory, the example chart (examples/workloads) against its inventory, every file of the
conformance sample against the inventory its manifest names, and every workload scenario (the
scheduler-oracle cases and the API-server parity cases) against theirs.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.cli import main
from draguard.inventory import StaticInventory
from draguard.review import DEFAULT_DENY, ReviewOptions, review_admission
from draguard.server.lint import lint_bytes

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DATA = ROOT / "tests" / "data"
CHART = EXAMPLES / "workloads" / "chart"
CONFORMANCE = DATA / "conformance"
ORACLE = DATA / "workloads" / "oracle"


def _sample_cases() -> list[tuple[str, Path, list[Path]]]:
    """(id, a case file or folder, its inventories) for every sample the doors are compared on."""
    cases = [(f"examples/{p.relative_to(EXAMPLES)}", p, [EXAMPLES / "inventory"])
             for p in sorted((EXAMPLES / "claims").rglob("*.yaml"))]
    cases.append(("examples/workloads/chart", CHART, [EXAMPLES / "workloads" / "inventory"]))
    manifest = json.loads((CONFORMANCE / "manifest.json").read_text())
    cases += [(f"conformance/{entry['file']}", CONFORMANCE / entry["file"], [CONFORMANCE / i for i in entry["inventory"]])
              for entry in manifest["files"]]
    cases += [(f"workloads/oracle/{p.name}", p, [ORACLE / "inventory"]) for p in sorted((ORACLE / "cases").glob("*.yaml"))]
    cases.append(("workloads/parity", DATA / "workloads" / "parity" / "cases.yaml", [DATA / "workloads" / "parity-inventory"]))
    return cases


SAMPLES = _sample_cases()
CASES = [(path, inventories) for _, path, inventories in SAMPLES]
IDS = [case_id for case_id, _, _ in SAMPLES]
WORKLOAD_KINDS = {"Deployment": "deployment", "StatefulSet": "statefulset", "DaemonSet": "daemonset",
                  "ReplicaSet": "replicaset", "Job": "job", "CronJob": "cronjob"}
EXPLAINED = {"Pod": "pod", "ResourceClaim": "claim", **WORKLOAD_KINDS}
API_CHECKED = ("FieldValue", "UnknownField", "DecodeError")

Verdict = tuple[str, str, str, str, str]


def _inventory_args(inventories: list[Path]) -> list[str]:
    return [arg for inventory in inventories for arg in ("--inventory", str(inventory))]


def _cli(capsys: pytest.CaptureFixture[str], path: Path, inventories: list[Path], fmt: str) -> tuple[int, str]:
    code = main(["lint", str(path), *_inventory_args(inventories), "--format", fmt, "--no-cache"])
    return code, capsys.readouterr().out


def _verdicts(findings: list[dict[str, Any]]) -> Counter[Verdict]:
    return Counter((f["kind"], f["namespace"], f["name"], f["reason"], f["severity"]) for f in findings)


def _files(path: Path) -> list[Path]:
    return sorted(path.rglob("*.yaml")) if path.is_dir() else [path]


@pytest.mark.parametrize(("path", "inventory"), CASES, ids=IDS)
def test_cli_formats_and_post_lint_agree(capsys: pytest.CaptureFixture[str], path: Path, inventory: list[Path]) -> None:
    code, out = _cli(capsys, path, inventory, "json")
    doc = json.loads(out)
    want = _verdicts(doc["findings"])
    # text: one line per finding, with its severity and object
    _, text = _cli(capsys, path, inventory, "text")
    for (kind, ns, name, _reason, severity), n in want.items():
        who = f"{severity}: {kind} {ns + '/' if ns else ''}{name}"
        assert sum(who in line for line in text.splitlines()) >= n, (who, text)
    # SARIF: one result per finding, rule = reason, level = severity
    _, sarif = _cli(capsys, path, inventory, "sarif")
    level = {"error": "error", "warning": "warning", "info": "note"}
    results = json.loads(sarif)["runs"][0]["results"]
    assert Counter((r["ruleId"], r["level"]) for r in results) == Counter(
        (reason, level[sev]) for (_, _, _, reason, sev), n in want.items() for _ in range(n))
    # JUnit: a failing test case exactly for the objects with an error
    junit_code, junit = _cli(capsys, path, inventory, "junit")
    failing = {(k, ns, name) for (k, ns, name, _, sev) in want if sev == "error"}
    suite = ET.fromstring(junit).find("testsuite")
    assert suite is not None and int(suite.get("failures", "0")) == len(failing)
    assert junit_code == code
    # POST /lint's door function, on the same bytes
    body = b"---\n".join(p.read_bytes() for p in _files(path))
    posted = json.loads(lint_bytes(body, "json", StaticInventory([str(i) for i in inventory]), ReviewOptions()).body)
    assert _verdicts(posted["findings"]) == want
    assert posted["summary"]["errors"] == doc["summary"]["errors"]


def _objects(path: Path) -> list[dict[str, Any]]:
    return [d for p in _files(path) for d in yaml.safe_load_all(p.read_text()) if isinstance(d, dict)]


@pytest.mark.parametrize(("path", "inventory"), CASES, ids=IDS)
def test_the_webhook_denies_exactly_the_proofs_lint_reports(
    capsys: pytest.CaptureFixture[str], path: Path, inventory: list[Path]
) -> None:
    _, out = _cli(capsys, path, inventory, "json")
    lint = json.loads(out)["findings"]
    objects = _objects(path)
    # in a cluster the classes and templates of the same files exist before the pods that use them
    cluster = StaticInventory([*(str(i) for i in inventory), *(str(p) for p in _files(path))])
    for obj in objects:
        kind, meta = obj.get("kind", ""), obj.get("metadata") or {}
        if kind in ("DeviceClass", "ResourceSlice", "Namespace"):
            continue
        name, ns = meta.get("name", ""), meta.get("namespace", "default")
        # lint's joint placement (``details.pinnedBy``) places the pods of one run in order; the webhook
        # reviews one pod while the claim is still unallocated, so it cannot know which pod comes
        # first (issue #37: never a denial without that proof)
        mine = [f for f in lint if f["kind"] == kind and f["name"] == name and "pinnedBy" not in f.get("details", {})]
        proofs = {f["reason"] for f in mine if f["severity"] == "error" and f["reason"] in DEFAULT_DENY}
        if any(f["reason"] == "ReferenceNotFound" for f in mine):
            continue  # not in the cluster either: the webhook's answer depends on what exists there
        review = review_admission(kind=kind, operation="CREATE", obj=obj, old_obj=None, namespace=ns,
                                  inventory=cluster.snapshot(), inventory_problem=None,
                                  options=ReviewOptions(admission=True))
        denied_by = {f.reason for f in review.findings if f.severity.value == "error"}
        assert review.denied == bool(proofs), (kind, name, proofs, review.findings)
        assert denied_by == proofs, (kind, name, denied_by, proofs)
        # every other lint error is at least a warning at the webhook, with the same reason
        said = {f.reason for f in review.findings}
        for f in mine:
            if f["severity"] == "error" and f["reason"] not in ("UnknownField", "DecodeError"):
                assert f["reason"] in said, (kind, name, f, said)


def test_capacity_fit_counts_what_lint_counts(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Each workload ``lint`` gives a replica count gets the same count from ``capacity --fit``."""
    inventory = EXAMPLES / "workloads" / "inventory"
    _, out = _cli(capsys, CHART, [inventory], "json")
    counted = [f for f in json.loads(out)["findings"] if f["reason"] == "ReplicasExceedCapacity"]
    assert counted, "the example chart has a workload whose replicas do not all fit"
    objects = _objects(CHART)
    templates = [o for o in objects if o.get("kind") == "ResourceClaimTemplate"]
    for finding in counted:
        (workload,) = [o for o in objects if o.get("kind") == finding["kind"] and o["metadata"]["name"] == finding["name"]]
        fit_file = tmp_path / f"{finding['name']}.yaml"
        fit_file.write_text(yaml.safe_dump_all([*templates, workload]))
        # lint adds the linted files' DeviceClasses to the inventory: so does the cluster they are applied to
        code = main(["capacity", "--inventory", str(inventory), "--inventory", str(CHART / "templates" / "deviceclass.yaml"),
                     "--fit", str(fit_file), "--format", "json"])
        fit = json.loads(capsys.readouterr().out)["fit"]
        assert code == 0 and fit["ever"]["fit"] == finding["details"]["fit"], (finding, fit)
        assert fit["ever"]["bound"] == ("exact" if finding["details"]["exact"] else "at most")


def _explain(capsys: pytest.CaptureFixture[str], what: str, namespace: str, path: Path, inventories: list[Path]) -> dict[str, Any]:
    """``explain`` over files: the case's objects are part of the cluster it reads."""
    files = [arg for p in _files(path) for arg in ("--inventory", str(p))]
    code = main(["explain", what, "-n", namespace, *_inventory_args(inventories), *files, "--format", "json"])
    out = capsys.readouterr().out
    assert code in (0, 1), (what, code, out)
    return dict(json.loads(out))


@pytest.mark.parametrize(("path", "inventory"), CASES, ids=IDS)
def test_explain_says_what_lint_says(capsys: pytest.CaptureFixture[str], path: Path, inventory: list[Path]) -> None:
    """For every pod, claim and workload: an object the API server rejects is shown rejected; one lint
    proves can never run is "could ever run: no"; one lint finds nothing wrong with could run."""
    _, out = _cli(capsys, path, inventory, "json")
    lint = json.loads(out)["findings"]
    names = Counter((o.get("kind"), (o.get("metadata") or {}).get("name")) for o in _objects(path))
    compared = 0
    for obj in _objects(path):
        kind, meta = str(obj.get("kind", "")), obj.get("metadata") or {}
        name, ns = str(meta.get("name", "")), str(meta.get("namespace", "default"))
        if kind not in EXPLAINED or not name or names[(kind, name)] > 1:
            continue  # explain names one object: a sample that repeats a name is not explainable by name
        mine = [f for f in lint if f["kind"] == kind and f["name"] == name]
        errors = {f["reason"] for f in mine if f["severity"] == "error"}
        if errors & {"ReferenceNotFound", "DecodeError"} or "pinnedBy" in str(mine):
            continue  # explain reads the cluster as it is: a missing object is its own answer; see above for pinnedBy
        exp = _explain(capsys, f"{EXPLAINED[kind]}/{name}", ns, path, inventory)
        where = (kind, name, sorted(errors), exp.get("rejected"), exp.get("ever"))
        if any(r.startswith(API_CHECKED) for r in errors):
            assert exp["rejected"], where  # API-server rejections come first
        elif "Unsatisfiable" in errors:
            assert exp["ever"] is False and not exp["rejected"], where
        elif not errors:
            assert exp["ever"] is not False and not exp["rejected"], where
        compared += 1
    if any(o.get("kind") in EXPLAINED for o in _objects(path)):
        assert compared, "no object of the case was compared"


@pytest.mark.parametrize(("path", "inventory"), [c for c in CASES if c[0].is_relative_to(ORACLE)],
                         ids=[i for i, c in zip(IDS, CASES, strict=True) if c[0].is_relative_to(ORACLE)])
def test_capacity_fit_counts_what_lint_counts_for_every_scenario(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, path: Path, inventory: list[Path]
) -> None:
    """``capacity --fit`` of each workload of the scheduler scenarios gives lint's replica count, or
    0 where lint proves none ever runs."""
    _, out = _cli(capsys, path, inventory, "json")
    lint = json.loads(out)["findings"]
    objects = _objects(path)
    workloads = [o for o in objects if o.get("kind") in WORKLOAD_KINDS]
    others = [o for o in objects if o.get("kind") not in WORKLOAD_KINDS and o.get("kind") != "Pod"]
    for workload in workloads:
        name = workload["metadata"]["name"]
        mine = [f for f in lint if f["kind"] == workload["kind"] and f["name"] == name]
        fit_file = tmp_path / f"{name}.yaml"
        fit_file.write_text(yaml.safe_dump_all([*others, workload]))
        # lint adds the linted files' classes and slices to the inventory: so does the cluster they are applied to
        code = main(["capacity", *_inventory_args([*inventory, path]), "--fit", str(fit_file), "--format", "json"])
        answer = capsys.readouterr().out
        assert code == 0, answer
        ever = json.loads(answer)["fit"]["ever"]
        counted = [f for f in mine if f["reason"] == "ReplicasExceedCapacity"]
        if counted:
            assert ever["fit"] == counted[0]["details"]["fit"], (name, ever, counted)
        elif any(f["reason"] == "Unsatisfiable" for f in mine):
            assert ever["fit"] == 0, (name, ever)
        elif not any(f["severity"] == "error" for f in mine):
            replicas = int(workload.get("spec", {}).get("replicas") or workload.get("spec", {}).get("parallelism") or 1)
            assert ever["fit"] is None or ever["fit"] >= replicas, (name, ever)
