"""v1beta1 and v1beta2 objects: decoded in their own shape, converted like the API server does,
validated at v1 paths, with the API server's deprecation warning; v1alpha* and a missing
apiVersion are clear errors.  Every expectation below was checked on a real 1.36 API server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from draguard.inventory import load_paths
from draguard.k8s.field import Path as FieldPath
from draguard.k8s.finding import Finding
from draguard.k8s.structure import structural_pass
from draguard.k8s.versions import source_path, v1beta1_to_v1
from draguard.review.pipeline import ReviewOptions, review_documents


def lint(tmp_path: Path, text: str, **options: Any) -> list[Finding]:
    f = tmp_path / "objects.yaml"
    f.write_text(text)
    decoded = load_paths([str(f)])
    review = review_documents(decoded.documents, inventory=None, options=ReviewOptions(**options),
                              decode_findings=decoded.findings)
    return review.findings


V1BETA1_CLAIM = """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: b1}
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: Bad_Class
"""


def test_v1beta1_claim_is_validated_at_v1_paths_and_positioned_at_its_own(tmp_path: Path) -> None:
    findings = lint(tmp_path, V1BETA1_CLAIM)
    (error,) = [f for f in findings if f.severity.value == "error"]
    assert error.field == "spec.devices.requests[0].exactly.deviceClassName"
    assert error.reason == "FieldValueInvalid"
    assert error.line == 8  # the flat deviceClassName line of the v1beta1 document
    (note,) = [f for f in findings if f.reason == "Deprecated"]
    assert note.severity.value == "info"
    assert "resource.k8s.io/v1beta1 ResourceClaim is deprecated in v1.35+, unavailable in v1.38+" in note.message


def test_valid_v1beta1_objects_pass_with_only_the_deprecation_note(tmp_path: Path) -> None:
    text = V1BETA1_CLAIM.replace("Bad_Class", "gpu.example.com") + """\
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  pool: {name: p, resourceSliceCount: 1}
  nodeName: n1
  devices:
  - name: gpu-0
    basic:
      attributes: {model: {string: a100}}
      capacity: {memory: {value: 40Gi}}
---
apiVersion: resource.k8s.io/v1beta2
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
"""
    findings = lint(tmp_path, text)
    assert sorted(f.reason for f in findings) == ["Deprecated", "Deprecated", "Deprecated"]
    assert any("v1beta2 DeviceClass is deprecated in v1.36+, unavailable in v1.39+" in f.message for f in findings)


def test_unknown_fields_and_types_keep_the_versioned_path(tmp_path: Path) -> None:
    text = """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  pool: {name: p, resourceSliceCount: 1}
  nodeName: n1
  devices:
  - name: gpu-0
    basic:
      atributes: {}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - {name: gpu, deviceClassName: gpu.example.com, count: two}
"""
    by_reason = {f.reason: f for f in lint(tmp_path, text)}
    assert by_reason["UnknownField"].field == "spec.devices[0].basic.atributes"
    assert by_reason["UnknownField"].line == 11
    assert by_reason["FieldValueTypeInvalid"].field == "spec.devices.requests[0].count"


def test_flat_request_conversion_follows_upstream() -> None:
    def convert(request: dict[str, Any]) -> dict[str, Any]:
        obj = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
               "spec": {"devices": {"requests": [request]}}}
        return v1beta1_to_v1("ResourceClaim", obj)["spec"]["devices"]["requests"][0]  # type: ignore[no-any-return]

    assert convert({"name": "a", "tolerations": [{"key": "k", "operator": "Exists"}]}) == {
        "name": "a", "exactly": {"tolerations": [{"key": "k", "operator": "Exists"}]}}
    assert convert({"name": "a", "selectors": []}) == {"name": "a", "exactly": {"selectors": []}}
    assert convert({"name": "a", "count": 0, "firstAvailable": [{"name": "s"}]}) == {
        "name": "a", "firstAvailable": [{"name": "s"}]}


def test_flat_request_with_first_available_and_class_is_two_kinds(tmp_path: Path) -> None:
    text = V1BETA1_CLAIM.replace("Bad_Class", "gpu.example.com") + "      firstAvailable: [{name: a, deviceClassName: x}]\n"
    (error,) = [f for f in lint(tmp_path, text) if f.severity.value == "error"]
    assert error.field == "spec.devices.requests[0]"
    assert "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set" in error.message


def test_v1beta1_defaulting_only_with_a_class_name() -> None:
    obj = yaml.safe_load(V1BETA1_CLAIM.replace("deviceClassName: Bad_Class", "count: 2"))
    st = structural_pass("ResourceClaim", obj)
    assert st.model is not None
    exactly = st.model.spec.devices.requests[0].exactly  # type: ignore[union-attr]
    assert exactly is not None and exactly.allocation_mode == "" and exactly.count == 2


def test_source_path_inserts_basic_and_removes_exactly() -> None:
    slice_path = FieldPath.root("spec", "devices").index(0).child("attributes").key("a")
    assert str(source_path("ResourceSlice", "resource.k8s.io/v1beta1", slice_path)) == "spec.devices[0].basic.attributes[a]"
    assert source_path("ResourceSlice", "resource.k8s.io/v1", slice_path) == slice_path
    claim_path = FieldPath.root("spec", "spec", "devices", "requests").index(1).child("exactly", "count")
    assert str(source_path("ResourceClaimTemplate", "resource.k8s.io/v1beta1", claim_path)) == (
        "spec.spec.devices.requests[1].count"
    )


def test_alpha_versions_and_missing_api_version_are_clear_errors(tmp_path: Path) -> None:
    text = V1BETA1_CLAIM.replace("v1beta1", "v1alpha3") + "---\n" + "kind: DeviceClass\nmetadata: {name: x}\n"
    messages = [f.message for f in lint(tmp_path, text) if f.reason == "DecodeError"]
    assert len(messages) == 2
    assert "resource.k8s.io/v1, resource.k8s.io/v1beta2, resource.k8s.io/v1beta1" in messages[0]
    assert "v1alpha3" in messages[0]
    assert messages[1].startswith("apiVersion is missing") and "None" not in messages[1]


def test_v1beta1_is_no_longer_served_from_1_38() -> None:
    """A real 1.38.0-beta.0 API server answers 404 for resource.k8s.io/v1beta1 (its deprecation
    warning said "unavailable in v1.38+"); 1.37 still serves it, with the warning."""
    from draguard.cli import main as cli_main

    claim = ("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: old, namespace: default}\n"
             "spec:\n  devices:\n    requests:\n    - name: gpu\n      deviceClassName: gpu.example.com\n")
    import io
    import json
    import sys

    def reasons(version: str) -> list[tuple[str, str]]:
        out, stdin = io.StringIO(), sys.stdin
        sys.stdin = io.StringIO(claim)
        real = sys.stdout
        sys.stdout = out
        try:
            cli_main(["lint", "-", "--kubernetes-version", version, "--format", "json"])
        finally:
            sys.stdin, sys.stdout = stdin, real
        return [(f["severity"], f["reason"]) for f in json.loads(out.getvalue())["findings"]]

    assert ("error", "DecodeError") in reasons("1.38")
    assert reasons("1.37") == [("info", "Deprecated")]
