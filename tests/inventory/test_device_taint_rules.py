"""DeviceTaintRule: validated, and its taint applied to the devices it selects, as the scheduler does.

Semantics from upstream: the ResourceSlice tracker (k8s.io/dynamic-resource-allocation
``resourceslice/tracker``, ``applyPatches``) appends a rule's taint to every device whose driver,
pool and name match the criteria set; a missing selector matches every device in 1.36.3's tracker
and none in 1.37.1+ / 1.38 (kubernetes#141998, #141648); ``deviceSelector: {}`` matches all.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.inventory import build_inventory
from draguard.k8s import parse_target, structural_pass
from draguard.validation import validate

DRIVER = "gpu.example.com"
BETA2 = "resource.k8s.io/v1beta2"

SLICE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "node-1-gpus"},
    "spec": {"driver": DRIVER, "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
             "nodeName": "node-1",
             "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}}},
                         {"name": "gpu-1", "attributes": {"model": {"string": "a100"}}}]},
}
CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
         "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}


def rule(name: str = "maintenance", selector: dict[str, Any] | None = None, *, effect: str = "NoSchedule",
         api_version: str = "resource.k8s.io/v1", with_selector: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {"taint": {"key": "example.com/maintenance", "value": "true", "effect": effect}}
    if with_selector:
        spec["deviceSelector"] = selector if selector is not None else {"driver": DRIVER}
    return {"apiVersion": api_version, "kind": "DeviceTaintRule", "metadata": {"name": name}, "spec": spec}


def claim(count: int = 1, tolerate: bool = False) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": DRIVER, "count": count}
    if tolerate:
        exactly["tolerations"] = [{"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}


def tainted(objects: list[dict[str, Any]], version: str = "1.37", gates: str = "") -> dict[str, tuple[str, ...]]:
    inv = build_inventory(objects, target=parse_target(version, gates))
    return {d.name: tuple(f"{t.key}={t.value}:{t.effect}" for t in d.taints) for d in inv.devices}


# ---------------------------------------------------------------------------- validation
def _errors(obj: dict[str, Any], version: str = "1.37") -> set[tuple[str, str]]:
    target = parse_target(version)
    st = structural_pass("DeviceTaintRule", obj, target=target)
    assert st.model is not None, st
    from draguard.validation import ValidationContext

    return {(str(e.path), e.reason) for e in validate(st.model, ValidationContext(target=target)).errors}


def test_a_valid_rule_is_accepted() -> None:
    assert _errors(rule(selector={"driver": DRIVER, "pool": "node-1", "device": "gpu-0"})) == set()
    assert _errors(rule(with_selector=False)) == set()  # no selector: valid (it matches nothing)


@pytest.mark.parametrize(
    ("spec_change", "expected"),
    [
        ({"deviceSelector": {"driver": "Not_A_Driver!"}}, ("spec.deviceSelector.driver", "FieldValueInvalid")),
        ({"deviceSelector": {"driver": ""}}, ("spec.deviceSelector.driver", "FieldValueRequired")),
        ({"deviceSelector": {"pool": ""}}, ("spec.deviceSelector.pool", "FieldValueRequired")),
        ({"deviceSelector": {"device": "GPU_0"}}, ("spec.deviceSelector.device", "FieldValueInvalid")),
        ({"taint": {"key": "k", "effect": "Sometimes"}}, ("spec.taint.effect", "FieldValueNotSupported")),
        ({"taint": {"key": "k"}}, ("spec.taint.effect", "FieldValueRequired")),
        ({"taint": {"key": "", "effect": "NoSchedule"}}, ("spec.taint.key", "FieldValueInvalid")),
        ({"taint": {"key": "k", "value": "a b", "effect": "None"}}, ("spec.taint.value", "FieldValueInvalid")),
    ],
)
def test_an_invalid_rule_is_rejected(spec_change: dict[str, Any], expected: tuple[str, str]) -> None:
    obj = rule()
    obj["spec"].update(spec_change)
    assert expected in _errors(obj)


def test_a_bad_name_is_rejected() -> None:
    assert ("metadata.name", "FieldValueInvalid") in _errors(rule(name="Bad_Name"))


def test_status_is_cleared_on_create_and_its_limit_applies_to_status_updates() -> None:
    from draguard.validation.devicetaintrule import validate_device_taint_rule_status

    obj = rule()
    conditions = [{"type": f"T{i}", "status": "True", "reason": "R"} for i in range(9)]
    obj["status"] = {"conditions": conditions}
    assert _errors(obj) == set()  # PrepareForCreate drops the status
    assert [e.reason for e in validate_device_taint_rule_status(conditions)] == ["FieldValueTooMany"]
    assert validate_device_taint_rule_status(conditions[:8]) == []


@pytest.mark.parametrize(
    ("api_version", "version", "served"),
    [
        ("resource.k8s.io/v1", "1.37", True),
        ("resource.k8s.io/v1", "1.36", False),  # v1 from 1.37 (#138676)
        ("resource.k8s.io/v1beta2", "1.36", True),
        ("resource.k8s.io/v1beta2", "1.35", False),
        ("resource.k8s.io/v1alpha3", "1.35", True),
        ("resource.k8s.io/v1alpha3", "1.38", True),
        ("resource.k8s.io/v1beta1", "1.37", False),
    ],
)
def test_served_versions_follow_the_target(api_version: str, version: str, served: bool) -> None:
    st = structural_pass("DeviceTaintRule", rule(api_version=api_version), target=parse_target(version))
    assert (st.api_version_error is None) is served, st.api_version_error
    assert st.deprecation is None


def test_selectors_of_1_34_are_unknown_fields_from_1_35_on() -> None:
    obj = rule(selector={"deviceClassName": "x", "driver": DRIVER}, api_version="resource.k8s.io/v1alpha3")
    assert structural_pass("DeviceTaintRule", obj, target=parse_target("1.34")).unknown_fields == []
    st = structural_pass("DeviceTaintRule", obj, target=parse_target("1.35"))
    assert [str(p) for p in st.unknown_fields] == ["spec.deviceSelector.deviceClassName"]


# ---------------------------------------------------------------------------- the inventory
def test_a_rule_taints_the_devices_it_selects_and_no_others() -> None:
    got = tainted([CLASS, SLICE, rule(selector={"driver": DRIVER, "device": "gpu-1"})])
    assert got == {"gpu-0": (), "gpu-1": ("example.com/maintenance=true:NoSchedule",)}
    other_pool = tainted([CLASS, SLICE, rule(selector={"pool": "node-2"})])
    assert other_pool == {"gpu-0": (), "gpu-1": ()}


def test_an_empty_selector_taints_every_device() -> None:
    for version in ("1.37", "1.38"):
        assert all(tainted([SLICE, rule(selector={})], version).values())


@pytest.mark.parametrize(("version", "matches"), [("1.37", False), ("1.38", False)])
def test_a_rule_without_selector_matches_no_device_from_1_37(version: str, matches: bool) -> None:
    got = tainted([SLICE, rule(with_selector=False)], version)
    assert any(got.values()) is matches


def test_a_rule_without_selector_matched_every_device_in_1_36() -> None:
    got = tainted([SLICE, rule(with_selector=False, api_version=BETA2)], "1.36", "DRADeviceTaintRules=true")
    assert all(got.values())


def test_rules_are_ignored_where_the_gate_is_off() -> None:
    beta = rule(selector={}, api_version=BETA2)  # (v1 is not served by 1.36)
    assert not any(tainted([SLICE, beta], "1.36").values())  # beta, off by default
    assert all(tainted([SLICE, beta], "1.36", "DRADeviceTaintRules=true").values())
    assert not any(tainted([SLICE, rule(selector={})], "1.36", "DRADeviceTaintRules=true").values())


# ---------------------------------------------------------------------------- through draguard lint
def _lint(tmp_path: Path, claim_obj: dict[str, Any], rules: list[dict[str, Any]], version: str) -> dict[str, Any]:
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(yaml.safe_dump_all([CLASS, SLICE, NODE, *rules]))
    claims = tmp_path / "claim.yaml"
    claims.write_text(yaml.safe_dump(claim_obj))
    out = subprocess.run(
        [sys.executable, "-m", "draguard", "lint", str(claims), "--inventory", str(inventory), "--format", "json",
         "--kubernetes-version", version, "--no-cache"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def _reasons(report: dict[str, Any]) -> set[str]:
    return {f["reason"] for f in report["findings"]}


@pytest.mark.parametrize("version", ["1.37", "1.38"])
def test_lint_denies_a_claim_every_device_of_which_a_rule_taints(tmp_path: Path, version: str) -> None:
    report = _lint(tmp_path, claim(), [rule(selector={"driver": DRIVER})], version)
    unsat = [f for f in report["findings"] if f["reason"] == "Unsatisfiable"]
    assert unsat and "taint" in unsat[0]["message"], report


def test_lint_accepts_the_claim_that_tolerates_the_rule(tmp_path: Path) -> None:
    report = _lint(tmp_path, claim(tolerate=True), [rule(selector={"driver": DRIVER})], "1.37")
    assert "Unsatisfiable" not in _reasons(report), report


def test_lint_accepts_when_the_rule_leaves_enough_devices(tmp_path: Path) -> None:
    report = _lint(tmp_path, claim(count=1), [rule(selector={"driver": DRIVER, "device": "gpu-0"})], "1.37")
    assert "Unsatisfiable" not in _reasons(report), report
    report = _lint(tmp_path, claim(count=2), [rule(selector={"driver": DRIVER, "device": "gpu-0"})], "1.37")
    assert "Unsatisfiable" in _reasons(report), report


def test_lint_a_rule_without_selector_blocks_nothing_in_1_37_and_1_38(tmp_path: Path) -> None:
    for version in ("1.37", "1.38"):
        report = _lint(tmp_path, claim(), [rule(with_selector=False)], version)
        assert "Unsatisfiable" not in _reasons(report), (version, report)
    report = _lint(tmp_path, claim(), [rule(selector={})], "1.38")
    assert "Unsatisfiable" in _reasons(report), report


def test_lint_a_rule_among_the_linted_files_is_validated_and_joins_the_inventory(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(yaml.safe_dump_all([CLASS, SLICE, NODE]))
    files = tmp_path / "objects.yaml"
    bad = rule(name="bad")
    bad["spec"]["taint"]["effect"] = "Sometimes"
    files.write_text(yaml.safe_dump_all([claim(), rule(selector={"driver": DRIVER}), bad]))
    out = subprocess.run(
        [sys.executable, "-m", "draguard", "lint", str(files), "--inventory", str(inventory), "--format", "json",
         "--no-cache"], capture_output=True, text=True, timeout=120, check=False)
    report = json.loads(out.stdout)
    by_kind = {(f["kind"], f["reason"]) for f in report["findings"]}
    assert ("DeviceTaintRule", "FieldValueNotSupported") in by_kind, report
    assert ("ResourceClaim", "Unsatisfiable") in by_kind, report
